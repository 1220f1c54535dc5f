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
