//go:build amd64

#include "textflag.h"

// Constants, each replicated in four lanes: log2e, magic (1.5·2⁵²), ln2hi,
// ln2lo, then the Taylor coefficients 1/13! … 1/2!, then 1.
DATA expc<>+0(SB)/8, $0x3ff71547652b82fe // log2e
DATA expc<>+8(SB)/8, $0x3ff71547652b82fe // log2e
DATA expc<>+16(SB)/8, $0x3ff71547652b82fe // log2e
DATA expc<>+24(SB)/8, $0x3ff71547652b82fe // log2e
DATA expc<>+32(SB)/8, $0x4338000000000000 // magic
DATA expc<>+40(SB)/8, $0x4338000000000000 // magic
DATA expc<>+48(SB)/8, $0x4338000000000000 // magic
DATA expc<>+56(SB)/8, $0x4338000000000000 // magic
DATA expc<>+64(SB)/8, $0x3fe62e42fefa39ef // ln2hi
DATA expc<>+72(SB)/8, $0x3fe62e42fefa39ef // ln2hi
DATA expc<>+80(SB)/8, $0x3fe62e42fefa39ef // ln2hi
DATA expc<>+88(SB)/8, $0x3fe62e42fefa39ef // ln2hi
DATA expc<>+96(SB)/8, $0x3c7abc9e3b39803f // ln2lo
DATA expc<>+104(SB)/8, $0x3c7abc9e3b39803f // ln2lo
DATA expc<>+112(SB)/8, $0x3c7abc9e3b39803f // ln2lo
DATA expc<>+120(SB)/8, $0x3c7abc9e3b39803f // ln2lo
DATA expc<>+128(SB)/8, $0x3de6124613a86d09 // c13
DATA expc<>+136(SB)/8, $0x3de6124613a86d09 // c13
DATA expc<>+144(SB)/8, $0x3de6124613a86d09 // c13
DATA expc<>+152(SB)/8, $0x3de6124613a86d09 // c13
DATA expc<>+160(SB)/8, $0x3e21eed8eff8d898 // c12
DATA expc<>+168(SB)/8, $0x3e21eed8eff8d898 // c12
DATA expc<>+176(SB)/8, $0x3e21eed8eff8d898 // c12
DATA expc<>+184(SB)/8, $0x3e21eed8eff8d898 // c12
DATA expc<>+192(SB)/8, $0x3e5ae64567f544e4 // c11
DATA expc<>+200(SB)/8, $0x3e5ae64567f544e4 // c11
DATA expc<>+208(SB)/8, $0x3e5ae64567f544e4 // c11
DATA expc<>+216(SB)/8, $0x3e5ae64567f544e4 // c11
DATA expc<>+224(SB)/8, $0x3e927e4fb7789f5c // c10
DATA expc<>+232(SB)/8, $0x3e927e4fb7789f5c // c10
DATA expc<>+240(SB)/8, $0x3e927e4fb7789f5c // c10
DATA expc<>+248(SB)/8, $0x3e927e4fb7789f5c // c10
DATA expc<>+256(SB)/8, $0x3ec71de3a556c734 // c9
DATA expc<>+264(SB)/8, $0x3ec71de3a556c734 // c9
DATA expc<>+272(SB)/8, $0x3ec71de3a556c734 // c9
DATA expc<>+280(SB)/8, $0x3ec71de3a556c734 // c9
DATA expc<>+288(SB)/8, $0x3efa01a01a01a01a // c8
DATA expc<>+296(SB)/8, $0x3efa01a01a01a01a // c8
DATA expc<>+304(SB)/8, $0x3efa01a01a01a01a // c8
DATA expc<>+312(SB)/8, $0x3efa01a01a01a01a // c8
DATA expc<>+320(SB)/8, $0x3f2a01a01a01a01a // c7
DATA expc<>+328(SB)/8, $0x3f2a01a01a01a01a // c7
DATA expc<>+336(SB)/8, $0x3f2a01a01a01a01a // c7
DATA expc<>+344(SB)/8, $0x3f2a01a01a01a01a // c7
DATA expc<>+352(SB)/8, $0x3f56c16c16c16c17 // c6
DATA expc<>+360(SB)/8, $0x3f56c16c16c16c17 // c6
DATA expc<>+368(SB)/8, $0x3f56c16c16c16c17 // c6
DATA expc<>+376(SB)/8, $0x3f56c16c16c16c17 // c6
DATA expc<>+384(SB)/8, $0x3f81111111111111 // c5
DATA expc<>+392(SB)/8, $0x3f81111111111111 // c5
DATA expc<>+400(SB)/8, $0x3f81111111111111 // c5
DATA expc<>+408(SB)/8, $0x3f81111111111111 // c5
DATA expc<>+416(SB)/8, $0x3fa5555555555555 // c4
DATA expc<>+424(SB)/8, $0x3fa5555555555555 // c4
DATA expc<>+432(SB)/8, $0x3fa5555555555555 // c4
DATA expc<>+440(SB)/8, $0x3fa5555555555555 // c4
DATA expc<>+448(SB)/8, $0x3fc5555555555555 // c3
DATA expc<>+456(SB)/8, $0x3fc5555555555555 // c3
DATA expc<>+464(SB)/8, $0x3fc5555555555555 // c3
DATA expc<>+472(SB)/8, $0x3fc5555555555555 // c3
DATA expc<>+480(SB)/8, $0x3fe0000000000000 // c2
DATA expc<>+488(SB)/8, $0x3fe0000000000000 // c2
DATA expc<>+496(SB)/8, $0x3fe0000000000000 // c2
DATA expc<>+504(SB)/8, $0x3fe0000000000000 // c2
DATA expc<>+512(SB)/8, $0x3ff0000000000000 // one
DATA expc<>+520(SB)/8, $0x3ff0000000000000 // one
DATA expc<>+528(SB)/8, $0x3ff0000000000000 // one
DATA expc<>+536(SB)/8, $0x3ff0000000000000 // one
GLOBL expc<>(SB), RODATA|NOPTR, $544

// EXPY0 sets Y0 = e^Y0 exactly as vexp.Exp does (same fused operations in
// the same order). Clobbers Y1–Y3.
#define EXPY0 \
	VMOVUPD expc<>+0(SB), Y1 \
	VFMADD213PD expc<>+32(SB), Y0, Y1 \
	VSUBPD expc<>+32(SB), Y1, Y2 \
	VMOVAPD Y0, Y3 \
	VFNMADD231PD expc<>+64(SB), Y2, Y3 \
	VFNMADD231PD expc<>+96(SB), Y2, Y3 \
	VMOVUPD expc<>+128(SB), Y0 \
	VFMADD213PD expc<>+160(SB), Y3, Y0 \
	VFMADD213PD expc<>+192(SB), Y3, Y0 \
	VFMADD213PD expc<>+224(SB), Y3, Y0 \
	VFMADD213PD expc<>+256(SB), Y3, Y0 \
	VFMADD213PD expc<>+288(SB), Y3, Y0 \
	VFMADD213PD expc<>+320(SB), Y3, Y0 \
	VFMADD213PD expc<>+352(SB), Y3, Y0 \
	VFMADD213PD expc<>+384(SB), Y3, Y0 \
	VFMADD213PD expc<>+416(SB), Y3, Y0 \
	VFMADD213PD expc<>+448(SB), Y3, Y0 \
	VFMADD213PD expc<>+480(SB), Y3, Y0 \
	VFMADD213PD expc<>+512(SB), Y3, Y0 \
	VFMADD213PD expc<>+512(SB), Y3, Y0 \
	VPSLLQ $52, Y1, Y1 \
	VPADDQ Y1, Y0, Y0

// MASKEDEXPY0 sets Y0 = e^Y0 where Y0 ≥ Y14 (the negated cut) and 0
// elsewhere, NaN included. Clobbers Y1–Y4.
#define MASKEDEXPY0 \
	VCMPPD $0x1D, Y14, Y0, Y4 \
	EXPY0 \
	VANDPD Y4, Y0, Y0

// func affineMaxAVX(dst, c, rm *float64, n int, a, b float64)
TEXT ·affineMaxAVX(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ c+8(FP), SI
	MOVQ rm+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSD a+32(FP), Y8
	VBROADCASTSD b+40(FP), Y9
	TESTQ CX, CX
	JE    amdone

amloop:
	VMOVUPD (SI), Y0
	VMOVAPD Y8, Y1
	VFMADD231PD Y0, Y9, Y1
	VMOVUPD Y1, (DI)
	VMOVUPD (DX), Y2
	VMAXPD  Y2, Y1, Y2
	VMOVUPD Y2, (DX)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, DX
	SUBQ    $4, CX
	JNE     amloop

amdone:
	VZEROUPPER
	RET

// func expSubAccAVX(k, rm, sm *float64, n int, negCut float64)
TEXT ·expSubAccAVX(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), DI
	MOVQ rm+8(FP), SI
	MOVQ sm+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSD negCut+32(FP), Y14
	TESTQ CX, CX
	JE    esdone

esloop:
	VMOVUPD (DI), Y0
	VSUBPD  (SI), Y0, Y0
	MASKEDEXPY0
	VMOVUPD Y0, (DI)
	VADDPD  (DX), Y0, Y5
	VMOVUPD Y5, (DX)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	SUBQ    $4, CX
	JNE     esloop

esdone:
	VZEROUPPER
	RET

// func expMomentsAVX(x, c *float64, n int, sh, negCut float64, acc *[12]float64)
TEXT ·expMomentsAVX(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), DI
	MOVQ c+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSD sh+24(FP), Y13
	VBROADCASTSD negCut+32(FP), Y14
	MOVQ acc+40(FP), DX
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	VXORPD Y12, Y12, Y12
	TESTQ CX, CX
	JE    emdone

emloop:
	VMOVUPD (DI), Y0
	VSUBPD  Y13, Y0, Y0
	MASKEDEXPY0
	VMOVUPD (SI), Y5
	VADDPD  Y0, Y10, Y10
	VMULPD  Y5, Y0, Y6
	VADDPD  Y6, Y11, Y11
	VFMADD231PD Y5, Y6, Y12
	ADDQ    $32, DI
	ADDQ    $32, SI
	SUBQ    $4, CX
	JNE     emloop

emdone:
	VMOVUPD Y10, 0(DX)
	VMOVUPD Y11, 32(DX)
	VMOVUPD Y12, 64(DX)
	VZEROUPPER
	RET

// func expShiftSumAVX(x *float64, n int, sh, negCut float64, acc *[4]float64)
TEXT ·expShiftSumAVX(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSD sh+16(FP), Y13
	VBROADCASTSD negCut+24(FP), Y14
	MOVQ acc+32(FP), DX
	VXORPD Y10, Y10, Y10
	TESTQ CX, CX
	JE    xsdone

xsloop:
	VMOVUPD (DI), Y0
	VSUBPD  Y13, Y0, Y0
	MASKEDEXPY0
	VMOVUPD Y0, (DI)
	VADDPD  Y0, Y10, Y10
	ADDQ    $32, DI
	SUBQ    $4, CX
	JNE     xsloop

xsdone:
	VMOVUPD Y10, 0(DX)
	VZEROUPPER
	RET

// func weightedMomentsAVX(k, u, c *float64, n int, acc *[12]float64)
TEXT ·weightedMomentsAVX(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), DI
	MOVQ u+8(FP), SI
	MOVQ c+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ acc+32(FP), DX
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	VXORPD Y12, Y12, Y12
	TESTQ CX, CX
	JE    wmdone

wmloop:
	VMOVUPD (DI), Y0
	VMULPD  (SI), Y0, Y0
	VMOVUPD (R8), Y5
	VADDPD  Y0, Y10, Y10
	VMULPD  Y5, Y0, Y6
	VADDPD  Y6, Y11, Y11
	VFMADD231PD Y5, Y6, Y12
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, R8
	SUBQ    $4, CX
	JNE     wmloop

wmdone:
	VMOVUPD Y10, 0(DX)
	VMOVUPD Y11, 32(DX)
	VMOVUPD Y12, 64(DX)
	VZEROUPPER
	RET

// func pairUpdateAVX(f float64, xi, xj, oi, oj *float64, n int)
// For k < n (a multiple of 4): d = f·(xi[k] − xj[k]); oi[k] += d; oj[k] −= d.
// A difference, a product and a sum per entry, never fused: the plain Go
// loop's roundings.
TEXT ·pairUpdateAVX(SB), NOSPLIT, $0-48
	VBROADCASTSD f+0(FP), Y0
	MOVQ xi+8(FP), SI
	MOVQ xj+16(FP), DI
	MOVQ oi+24(FP), R8
	MOVQ oj+32(FP), R9
	MOVQ n+40(FP), CX
	XORQ AX, AX

pairloop:
	CMPQ AX, CX
	JGE  pairdone
	VMOVUPD (SI)(AX*8), Y1
	VSUBPD  (DI)(AX*8), Y1, Y1
	VMULPD  Y1, Y0, Y1
	VMOVUPD (R8)(AX*8), Y2
	VADDPD  Y1, Y2, Y2
	VMOVUPD Y2, (R8)(AX*8)
	VMOVUPD (R9)(AX*8), Y3
	VSUBPD  Y1, Y3, Y3
	VMOVUPD Y3, (R9)(AX*8)
	ADDQ    $4, AX
	JMP     pairloop

pairdone:
	VZEROUPPER
	RET

// func sqDist16AVX(a, b *float64, n int, acc *[16]float64)
// For k < n: e = a[k] − b[16k+l]; acc[l] += e·e for l < 16 (four lanes in
// each of four registers). A difference, a product and a sum per entry,
// never fused: the plain Go loop's roundings.
TEXT ·sqDist16AVX(SB), NOSPLIT, $0-32
	MOVQ    a+0(FP), SI
	MOVQ    b+8(FP), DI
	MOVQ    n+16(FP), CX
	MOVQ    acc+24(FP), R8
	VMOVUPD 0(R8), Y4
	VMOVUPD 32(R8), Y5
	VMOVUPD 64(R8), Y6
	VMOVUPD 96(R8), Y7

sqloop:
	TESTQ        CX, CX
	JZ           sqdone
	VBROADCASTSD (SI), Y0
	VSUBPD       0(DI), Y0, Y1
	VSUBPD       32(DI), Y0, Y2
	VSUBPD       64(DI), Y0, Y3
	VSUBPD       96(DI), Y0, Y8
	VMULPD       Y1, Y1, Y1
	VMULPD       Y2, Y2, Y2
	VMULPD       Y3, Y3, Y3
	VMULPD       Y8, Y8, Y8
	VADDPD       Y1, Y4, Y4
	VADDPD       Y2, Y5, Y5
	VADDPD       Y3, Y6, Y6
	VADDPD       Y8, Y7, Y7
	ADDQ         $8, SI
	ADDQ         $128, DI
	DECQ         CX
	JMP          sqloop

sqdone:
	VMOVUPD Y4, 0(R8)
	VMOVUPD Y5, 32(R8)
	VMOVUPD Y6, 64(R8)
	VMOVUPD Y7, 96(R8)
	VZEROUPPER
	RET

// Constants of logAddAVX, each replicated in four lanes.
DATA logc<>+0(SB)/8, $0x4330000000000000 // 2⁵² (exponent field to double)
DATA logc<>+8(SB)/8, $0x4330000000000000
DATA logc<>+16(SB)/8, $0x4330000000000000
DATA logc<>+24(SB)/8, $0x4330000000000000
DATA logc<>+32(SB)/8, $0x000fffffffffffff // fraction mask
DATA logc<>+40(SB)/8, $0x000fffffffffffff
DATA logc<>+48(SB)/8, $0x000fffffffffffff
DATA logc<>+56(SB)/8, $0x000fffffffffffff
DATA logc<>+64(SB)/8, $0x3fe0000000000000 // 0.5
DATA logc<>+72(SB)/8, $0x3fe0000000000000
DATA logc<>+80(SB)/8, $0x3fe0000000000000
DATA logc<>+88(SB)/8, $0x3fe0000000000000
DATA logc<>+96(SB)/8, $0x408ff00000000000 // 1022
DATA logc<>+104(SB)/8, $0x408ff00000000000
DATA logc<>+112(SB)/8, $0x408ff00000000000
DATA logc<>+120(SB)/8, $0x408ff00000000000
DATA logc<>+128(SB)/8, $0x3fe6a09e667f3bcd // √2/2
DATA logc<>+136(SB)/8, $0x3fe6a09e667f3bcd
DATA logc<>+144(SB)/8, $0x3fe6a09e667f3bcd
DATA logc<>+152(SB)/8, $0x3fe6a09e667f3bcd
DATA logc<>+160(SB)/8, $0x3ff0000000000000 // 1
DATA logc<>+168(SB)/8, $0x3ff0000000000000
DATA logc<>+176(SB)/8, $0x3ff0000000000000
DATA logc<>+184(SB)/8, $0x3ff0000000000000
DATA logc<>+192(SB)/8, $0x4000000000000000 // 2
DATA logc<>+200(SB)/8, $0x4000000000000000
DATA logc<>+208(SB)/8, $0x4000000000000000
DATA logc<>+216(SB)/8, $0x4000000000000000
DATA logc<>+224(SB)/8, $0x3fc2f112df3e5244 // L7
DATA logc<>+232(SB)/8, $0x3fc2f112df3e5244
DATA logc<>+240(SB)/8, $0x3fc2f112df3e5244
DATA logc<>+248(SB)/8, $0x3fc2f112df3e5244
DATA logc<>+256(SB)/8, $0x3fc7466496cb03de // L5
DATA logc<>+264(SB)/8, $0x3fc7466496cb03de
DATA logc<>+272(SB)/8, $0x3fc7466496cb03de
DATA logc<>+280(SB)/8, $0x3fc7466496cb03de
DATA logc<>+288(SB)/8, $0x3fd2492494229359 // L3
DATA logc<>+296(SB)/8, $0x3fd2492494229359
DATA logc<>+304(SB)/8, $0x3fd2492494229359
DATA logc<>+312(SB)/8, $0x3fd2492494229359
DATA logc<>+320(SB)/8, $0x3fe5555555555593 // L1
DATA logc<>+328(SB)/8, $0x3fe5555555555593
DATA logc<>+336(SB)/8, $0x3fe5555555555593
DATA logc<>+344(SB)/8, $0x3fe5555555555593
DATA logc<>+352(SB)/8, $0x3fc39a09d078c69f // L6
DATA logc<>+360(SB)/8, $0x3fc39a09d078c69f
DATA logc<>+368(SB)/8, $0x3fc39a09d078c69f
DATA logc<>+376(SB)/8, $0x3fc39a09d078c69f
DATA logc<>+384(SB)/8, $0x3fcc71c51d8e78af // L4
DATA logc<>+392(SB)/8, $0x3fcc71c51d8e78af
DATA logc<>+400(SB)/8, $0x3fcc71c51d8e78af
DATA logc<>+408(SB)/8, $0x3fcc71c51d8e78af
DATA logc<>+416(SB)/8, $0x3fd999999997fa04 // L2
DATA logc<>+424(SB)/8, $0x3fd999999997fa04
DATA logc<>+432(SB)/8, $0x3fd999999997fa04
DATA logc<>+440(SB)/8, $0x3fd999999997fa04
DATA logc<>+448(SB)/8, $0x3fe62e42fee00000 // Ln2Hi
DATA logc<>+456(SB)/8, $0x3fe62e42fee00000
DATA logc<>+464(SB)/8, $0x3fe62e42fee00000
DATA logc<>+472(SB)/8, $0x3fe62e42fee00000
DATA logc<>+480(SB)/8, $0x3dea39ef35793c76 // Ln2Lo
DATA logc<>+488(SB)/8, $0x3dea39ef35793c76
DATA logc<>+496(SB)/8, $0x3dea39ef35793c76
DATA logc<>+504(SB)/8, $0x3dea39ef35793c76
DATA logc<>+512(SB)/8, $0x0010000000000000 // smallest normal
DATA logc<>+520(SB)/8, $0x0010000000000000
DATA logc<>+528(SB)/8, $0x0010000000000000
DATA logc<>+536(SB)/8, $0x0010000000000000
DATA logc<>+544(SB)/8, $0x7fefffffffffffff // largest finite
DATA logc<>+552(SB)/8, $0x7fefffffffffffff
DATA logc<>+560(SB)/8, $0x7fefffffffffffff
DATA logc<>+568(SB)/8, $0x7fefffffffffffff
DATA logc<>+576(SB)/8, $0xfff0000000000000 // −∞
DATA logc<>+584(SB)/8, $0xfff0000000000000
DATA logc<>+592(SB)/8, $0xfff0000000000000
DATA logc<>+600(SB)/8, $0xfff0000000000000
GLOBL logc<>(SB), RODATA|NOPTR, $608

// func logAddAVX(dst, x, add *float64, n int) (bad int)
// For k < n (a multiple of 4): dst[k] = logNormal(x[k]) + add[k], or −∞
// where x[k] = 0, with logNormal's operations in its order (vexp.go). bad
// is nonzero when some x[k] is neither 0 nor a normal finite positive number
// (those lanes are then wrong and the caller recomputes).
TEXT ·logAddAVX(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ add+16(FP), DX
	MOVQ n+24(FP), CX
	XORQ R8, R8
	TESTQ CX, CX
	JE    lgdone

lgloop:
	VMOVUPD (SI), Y0
	// domain: 0, or normal and finite (anything else sets bad)
	VCMPPD $0x1D, logc<>+512(SB), Y0, Y13  // x ≥ smallest normal
	VCMPPD $0x12, logc<>+544(SB), Y0, Y12  // x ≤ largest finite
	VANDPD Y12, Y13, Y13
	VXORPD Y12, Y12, Y12
	VCMPPD $0x00, Y12, Y0, Y15             // x == 0
	VORPD  Y15, Y13, Y12
	VMOVMSKPD Y12, AX
	XORQ  $15, AX
	ORQ   AX, R8
	// e = exponent field as a double; f1 = fraction in [0.5, 1)
	VPSRLQ $52, Y0, Y1
	VPOR   logc<>+0(SB), Y1, Y1
	VSUBPD logc<>+0(SB), Y1, Y1
	VANDPD logc<>+32(SB), Y0, Y2
	VORPD  logc<>+64(SB), Y2, Y2
	VSUBPD logc<>+96(SB), Y1, Y1           // k = e − 1022
	VCMPPD $0x11, logc<>+128(SB), Y2, Y3   // f1 < √2/2
	VANDPD Y3, Y2, Y4
	VADDPD Y4, Y2, Y2                      // f1 += f1 there
	VANDPD logc<>+160(SB), Y3, Y4
	VSUBPD Y4, Y1, Y1                      // k −= 1 there
	VSUBPD logc<>+160(SB), Y2, Y2          // f = f1 − 1
	VADDPD logc<>+192(SB), Y2, Y5
	VDIVPD Y5, Y2, Y5                      // s = f / (2 + f)
	VMULPD Y5, Y5, Y6                      // s2
	VMULPD Y6, Y6, Y7                      // s4
	VMOVUPD logc<>+224(SB), Y8
	VFMADD213PD logc<>+256(SB), Y7, Y8     // s4·L7 + L5
	VFMADD213PD logc<>+288(SB), Y7, Y8     // s4·… + L3
	VFMADD213PD logc<>+320(SB), Y7, Y8     // s4·… + L1
	VMULPD Y8, Y6, Y8                      // t1 = s2·(…)
	VMOVUPD logc<>+352(SB), Y9
	VFMADD213PD logc<>+384(SB), Y7, Y9     // s4·L6 + L4
	VFMADD213PD logc<>+416(SB), Y7, Y9     // s4·… + L2
	VMULPD Y9, Y7, Y9                      // t2 = s4·(…)
	VADDPD Y9, Y8, Y8                      // R = t1 + t2
	VMULPD logc<>+64(SB), Y2, Y10
	VMULPD Y2, Y10, Y10                    // hfsq = (0.5·f)·f
	VADDPD Y8, Y10, Y11                    // hfsq + R
	VMULPD Y11, Y5, Y11                    // s·(hfsq + R)
	VMULPD logc<>+480(SB), Y1, Y4          // k·Ln2Lo
	VADDPD Y4, Y11, Y11                    // s·(hfsq + R) + k·Ln2Lo
	VSUBPD Y11, Y10, Y11                   // hfsq − (…)
	VSUBPD Y2, Y11, Y11                    // (…) − f
	VMULPD logc<>+448(SB), Y1, Y4          // k·Ln2Hi
	VSUBPD Y11, Y4, Y4                     // k·Ln2Hi − (…)
	VADDPD (DX), Y4, Y4                    // + add
	VBLENDVPD Y15, logc<>+576(SB), Y4, Y4  // −∞ where x == 0
	VMOVUPD Y4, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	ADDQ    $32, DX
	SUBQ    $4, CX
	JNE     lgloop

lgdone:
	MOVQ R8, bad+32(FP)
	VZEROUPPER
	RET

// Constants of expGoAVX, each in four lanes: archExp's (math/exp_amd64.s),
// written with the same literals so the assembler gives the same bits.
DATA expgoc<>+0(SB)/8, $1.4426950408889634073599246810018920 // LOG2E
DATA expgoc<>+8(SB)/8, $1.4426950408889634073599246810018920
DATA expgoc<>+16(SB)/8, $1.4426950408889634073599246810018920
DATA expgoc<>+24(SB)/8, $1.4426950408889634073599246810018920
DATA expgoc<>+32(SB)/8, $0.69314718055966295651160180568695068359375 // LN2U
DATA expgoc<>+40(SB)/8, $0.69314718055966295651160180568695068359375
DATA expgoc<>+48(SB)/8, $0.69314718055966295651160180568695068359375
DATA expgoc<>+56(SB)/8, $0.69314718055966295651160180568695068359375
DATA expgoc<>+64(SB)/8, $0.28235290563031577122588448175013436025525412068e-12 // LN2L
DATA expgoc<>+72(SB)/8, $0.28235290563031577122588448175013436025525412068e-12
DATA expgoc<>+80(SB)/8, $0.28235290563031577122588448175013436025525412068e-12
DATA expgoc<>+88(SB)/8, $0.28235290563031577122588448175013436025525412068e-12
DATA expgoc<>+96(SB)/8, $0.0625 // 1/16
DATA expgoc<>+104(SB)/8, $0.0625
DATA expgoc<>+112(SB)/8, $0.0625
DATA expgoc<>+120(SB)/8, $0.0625
DATA expgoc<>+128(SB)/8, $7.09782712893384e+02 // Overflow
DATA expgoc<>+136(SB)/8, $7.09782712893384e+02
DATA expgoc<>+144(SB)/8, $7.09782712893384e+02
DATA expgoc<>+152(SB)/8, $7.09782712893384e+02
DATA expgoc<>+160(SB)/8, $2.4801587301587301587e-5 // 1/8!
DATA expgoc<>+168(SB)/8, $2.4801587301587301587e-5
DATA expgoc<>+176(SB)/8, $2.4801587301587301587e-5
DATA expgoc<>+184(SB)/8, $2.4801587301587301587e-5
DATA expgoc<>+192(SB)/8, $1.9841269841269841270e-4 // 1/7!
DATA expgoc<>+200(SB)/8, $1.9841269841269841270e-4
DATA expgoc<>+208(SB)/8, $1.9841269841269841270e-4
DATA expgoc<>+216(SB)/8, $1.9841269841269841270e-4
DATA expgoc<>+224(SB)/8, $1.3888888888888888889e-3 // 1/6!
DATA expgoc<>+232(SB)/8, $1.3888888888888888889e-3
DATA expgoc<>+240(SB)/8, $1.3888888888888888889e-3
DATA expgoc<>+248(SB)/8, $1.3888888888888888889e-3
DATA expgoc<>+256(SB)/8, $8.3333333333333333333e-3 // 1/5!
DATA expgoc<>+264(SB)/8, $8.3333333333333333333e-3
DATA expgoc<>+272(SB)/8, $8.3333333333333333333e-3
DATA expgoc<>+280(SB)/8, $8.3333333333333333333e-3
DATA expgoc<>+288(SB)/8, $4.1666666666666666667e-2 // 1/4!
DATA expgoc<>+296(SB)/8, $4.1666666666666666667e-2
DATA expgoc<>+304(SB)/8, $4.1666666666666666667e-2
DATA expgoc<>+312(SB)/8, $4.1666666666666666667e-2
DATA expgoc<>+320(SB)/8, $1.6666666666666666667e-1 // 1/3!
DATA expgoc<>+328(SB)/8, $1.6666666666666666667e-1
DATA expgoc<>+336(SB)/8, $1.6666666666666666667e-1
DATA expgoc<>+344(SB)/8, $1.6666666666666666667e-1
DATA expgoc<>+352(SB)/8, $0.5 // 1/2
DATA expgoc<>+360(SB)/8, $0.5
DATA expgoc<>+368(SB)/8, $0.5
DATA expgoc<>+376(SB)/8, $0.5
DATA expgoc<>+384(SB)/8, $1.0 // 1
DATA expgoc<>+392(SB)/8, $1.0
DATA expgoc<>+400(SB)/8, $1.0
DATA expgoc<>+408(SB)/8, $1.0
DATA expgoc<>+416(SB)/8, $2.0 // 2
DATA expgoc<>+424(SB)/8, $2.0
DATA expgoc<>+432(SB)/8, $2.0
DATA expgoc<>+440(SB)/8, $2.0
DATA expgoc<>+448(SB)/4, $0x3ff // bias 0x3FF (int32)
DATA expgoc<>+452(SB)/4, $0x3ff
DATA expgoc<>+456(SB)/4, $0x3ff
DATA expgoc<>+460(SB)/4, $0x3ff
DATA expgoc<>+464(SB)/4, $0x7fe // 0x7FE (int32)
DATA expgoc<>+468(SB)/4, $0x7fe
DATA expgoc<>+472(SB)/4, $0x7fe
DATA expgoc<>+476(SB)/4, $0x7fe
DATA expgoc<>+480(SB)/4, $0xffffffcb // -53 (int32)
DATA expgoc<>+484(SB)/4, $0xffffffcb
DATA expgoc<>+488(SB)/4, $0xffffffcb
DATA expgoc<>+492(SB)/4, $0xffffffcb
GLOBL expgoc<>(SB), RODATA|NOPTR, $496

// func expGoAVX(x *float64, n int) (done int)
// For k < n (a multiple of 4), four at a time: x[k] = math.Exp(x[k]) by
// archExp's FMA sequence (math/exp_amd64.s, branch avxfma) in four lanes:
// the same constants, operations and order; the exponent by VCVTPD2DQ and
// VCVTDQ2PD (CVTSD2SL and CVTSL2SD, rounding to nearest). A lane whose
// biased exponent is ≤ −53 (or whose x is −∞ or a large negative number,
// the conversion giving 0x80000000) is 0, archExp's underflow. A group with
// a lane that archExp would take elsewhere (NaN, > Overflow, a biased
// exponent in [−52, 0] or ≥ 0x7FF) stops the loop before it is stored:
// done is the number of entries written.
TEXT ·expGoAVX(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	XORQ AX, AX

egloop:
	CMPQ AX, CX
	JGE  egdone
	VMOVUPD (DI)(AX*8), Y0
	VCMPPD  $0x12, expgoc<>+128(SB), Y0, Y15 // x ≤ Overflow (false for NaN)
	VMULPD  expgoc<>+0(SB), Y0, Y1           // LOG2E·x
	VCVTPD2DQY Y1, X2                        // exponent (int32)
	VCVTDQ2PD X2, Y1
	VFNMADD231PD expgoc<>+32(SB), Y1, Y0     // x − k·LN2U
	VFNMADD231PD expgoc<>+64(SB), Y1, Y0     // … − k·LN2L
	VMULPD  expgoc<>+96(SB), Y0, Y0          // ·1/16
	VMOVUPD expgoc<>+160(SB), Y3
	VFMADD213PD expgoc<>+192(SB), Y0, Y3
	VFMADD213PD expgoc<>+224(SB), Y0, Y3
	VFMADD213PD expgoc<>+256(SB), Y0, Y3
	VFMADD213PD expgoc<>+288(SB), Y0, Y3
	VFMADD213PD expgoc<>+320(SB), Y0, Y3
	VFMADD213PD expgoc<>+352(SB), Y0, Y3
	VFMADD213PD expgoc<>+384(SB), Y0, Y3
	VMULPD  Y3, Y0, Y0
	VADDPD  expgoc<>+416(SB), Y0, Y3
	VMULPD  Y3, Y0, Y0
	VADDPD  expgoc<>+416(SB), Y0, Y3
	VMULPD  Y3, Y0, Y0
	VADDPD  expgoc<>+416(SB), Y0, Y3
	VMULPD  Y3, Y0, Y0
	VADDPD  expgoc<>+416(SB), Y0, Y3
	VFMADD213PD expgoc<>+384(SB), Y3, Y0     // ·(…) + 1
	// ldexp: biased exponent b = k + 0x3FF; plain where 0 < b < 0x7FF,
	// 0 where b < −52 (and x ≤ Overflow)
	VPADDD   expgoc<>+448(SB), X2, X2
	VPXOR    X4, X4, X4
	VPCMPGTD X4, X2, X4                      // b > 0
	VPCMPGTD expgoc<>+464(SB), X2, X5        // b > 0x7FE
	VPANDN   X4, X5, X4                      // 0 < b < 0x7FF
	VPCMPGTD expgoc<>+480(SB), X2, X6        // b > −53
	VPMOVSXDQ X4, Y4
	VPMOVSXDQ X6, Y6
	VANDPD   Y15, Y4, Y4                     // plain lanes
	VANDNPD  Y15, Y6, Y6                     // underflow lanes: x ≤ Overflow, b ≤ −53
	VORPD    Y4, Y6, Y6
	VMOVMSKPD Y6, BX
	CMPQ     BX, $15
	JNE      egdone
	VPMOVZXDQ X2, Y5
	VPSLLQ   $52, Y5, Y5                     // 2^(b−0x3FF)
	VMULPD   Y5, Y0, Y0
	VANDPD   Y4, Y0, Y0                      // 0 in the underflow lanes
	VMOVUPD  Y0, (DI)(AX*8)
	ADDQ     $4, AX
	JMP      egloop

egdone:
	MOVQ AX, done+16(FP)
	VZEROUPPER
	RET

// func logGoAVX(dst, x, add *float64, n int) (done int)
// For k < n (a multiple of 4), four at a time: dst[k] = math.Log(x[k]) +
// add[k] where x[k] > 0, −∞ where x[k] ≤ 0 or NaN, the logarithm by
// archLog's sequence (math/log_amd64.s: no fused operations, f1 ≤ √2/2
// doubled). A group with a positive x[k] that is not a normal finite
// number stops the loop before it is stored: done is the number of entries
// written.
TEXT ·logGoAVX(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ add+16(FP), DX
	MOVQ n+24(FP), CX
	XORQ AX, AX

lploop:
	CMPQ AX, CX
	JGE  lpdone
	VMOVUPD (SI)(AX*8), Y0
	VXORPD  Y12, Y12, Y12
	VCMPPD  $0x1A, Y12, Y0, Y12            // !(x > 0): ≤ 0 or NaN, −∞
	VCMPPD  $0x1D, logc<>+512(SB), Y0, Y13 // x ≥ smallest normal
	VCMPPD  $0x12, logc<>+544(SB), Y0, Y14 // x ≤ largest finite
	VANDPD  Y14, Y13, Y13                  // normal
	VMOVMSKPD Y12, R8
	VMOVMSKPD Y13, R9
	XORQ    R8, R9
	CMPQ    R9, $15                        // every lane one or the other
	JNE     lpdone
	// k = exponent field − 0x3FE; f1 = fraction in [0.5, 1)
	VPSRLQ $52, Y0, Y1
	VPOR   logc<>+0(SB), Y1, Y1
	VSUBPD logc<>+0(SB), Y1, Y1
	VANDPD logc<>+32(SB), Y0, Y2
	VORPD  logc<>+64(SB), Y2, Y2
	VSUBPD logc<>+96(SB), Y1, Y1           // k
	VCMPPD $0x12, logc<>+128(SB), Y2, Y3   // f1 ≤ √2/2 (archLog's CMPSD NLT)
	VANDPD logc<>+160(SB), Y3, Y4          // 1 there, else 0
	VSUBPD Y4, Y1, Y1                      // k −= 1
	VADDPD logc<>+160(SB), Y4, Y4          // 2 there, else 1
	VMULPD Y4, Y2, Y2                      // f1 ·= 2
	VSUBPD logc<>+160(SB), Y2, Y2          // f = f1 − 1
	VADDPD logc<>+192(SB), Y2, Y5          // 2 + f
	VDIVPD Y5, Y2, Y5                      // s = f / (2 + f)
	VMULPD Y5, Y5, Y6                      // s2
	VMULPD Y6, Y6, Y7                      // s4
	VMULPD logc<>+224(SB), Y7, Y8          // L7·s4
	VADDPD logc<>+256(SB), Y8, Y8          // + L5
	VMULPD Y7, Y8, Y8
	VADDPD logc<>+288(SB), Y8, Y8          // + L3
	VMULPD Y7, Y8, Y8
	VADDPD logc<>+320(SB), Y8, Y8          // + L1
	VMULPD Y8, Y6, Y8                      // t1 = s2·(…)
	VMULPD logc<>+352(SB), Y7, Y9          // L6·s4
	VADDPD logc<>+384(SB), Y9, Y9          // + L4
	VMULPD Y7, Y9, Y9
	VADDPD logc<>+416(SB), Y9, Y9          // + L2
	VMULPD Y9, Y7, Y9                      // t2 = s4·(…)
	VADDPD Y9, Y8, Y8                      // R = t1 + t2
	VMULPD logc<>+64(SB), Y2, Y10
	VMULPD Y2, Y10, Y10                    // hfsq = (0.5·f)·f
	VADDPD Y10, Y8, Y11                    // R + hfsq
	VMULPD Y11, Y5, Y11                    // s·(…)
	VMULPD logc<>+480(SB), Y1, Y4          // k·Ln2Lo
	VADDPD Y4, Y11, Y11                    // s·(…) + k·Ln2Lo
	VSUBPD Y11, Y10, Y11                   // hfsq − (…)
	VSUBPD Y2, Y11, Y11                    // (…) − f
	VMULPD logc<>+448(SB), Y1, Y4          // k·Ln2Hi
	VSUBPD Y11, Y4, Y4                     // k·Ln2Hi − (…)
	VADDPD (DX)(AX*8), Y4, Y4              // + add
	VBLENDVPD Y12, logc<>+576(SB), Y4, Y4  // −∞ where not x > 0
	VMOVUPD Y4, (DI)(AX*8)
	ADDQ    $4, AX
	JMP     lploop

lpdone:
	MOVQ AX, done+32(FP)
	VZEROUPPER
	RET
