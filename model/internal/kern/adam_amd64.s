#include "textflag.h"

// func AdamS(w, gr, m, v *float32, n int, p *[8]float32)
//
// One Adam step on n elements (n a multiple of 8), AVX: with p = (β1,
// 1−β1, β2, 1−β2, lr·c1, √c2, eps):
//	m ← β1·m + (1−β1)·g;  v ← β2·v + ((1−β2)·g)·g
//	w ← w − (lr·c1·m) / (√v·√c2 + eps);  g ← 0
// No fused multiply-adds, so results equal the scalar Go code bit for bit.
TEXT ·AdamS(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), DX
	MOVQ gr+8(FP), SI
	MOVQ m+16(FP), DI
	MOVQ v+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ p+40(FP), R8
	VBROADCASTSS 0(R8), Y8
	VBROADCASTSS 4(R8), Y9
	VBROADCASTSS 8(R8), Y10
	VBROADCASTSS 12(R8), Y11
	VBROADCASTSS 16(R8), Y12
	VBROADCASTSS 20(R8), Y13
	VBROADCASTSS 24(R8), Y14
	VXORPS Y15, Y15, Y15
	TESTQ CX, CX
	JE    sdone

sloop:
	VMOVUPS (SI), Y0
	VMOVUPS (DI), Y1
	VMOVUPS (R9), Y2
	VMULPS  Y8, Y1, Y1
	VMULPS  Y9, Y0, Y3
	VADDPS  Y3, Y1, Y1
	VMULPS  Y11, Y0, Y4
	VMULPS  Y0, Y4, Y4
	VMULPS  Y10, Y2, Y2
	VADDPS  Y4, Y2, Y2
	VMOVUPS Y1, (DI)
	VMOVUPS Y2, (R9)
	VSQRTPS Y2, Y5
	VMULPS  Y13, Y5, Y5
	VADDPS  Y14, Y5, Y5
	VMULPS  Y12, Y1, Y6
	VDIVPS  Y5, Y6, Y6
	VMOVUPS (DX), Y7
	VSUBPS  Y6, Y7, Y7
	VMOVUPS Y7, (DX)
	VMOVUPS Y15, (SI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, R9
	ADDQ    $32, DX
	SUBQ    $8, CX
	JNE     sloop

sdone:
	VZEROUPPER
	RET

// func AdamD(w, gr, m, v *float64, n int, p *[8]float64)
//
// The float64 analogue (n a multiple of 4).
TEXT ·AdamD(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), DX
	MOVQ gr+8(FP), SI
	MOVQ m+16(FP), DI
	MOVQ v+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ p+40(FP), R8
	VBROADCASTSD 0(R8), Y8
	VBROADCASTSD 8(R8), Y9
	VBROADCASTSD 16(R8), Y10
	VBROADCASTSD 24(R8), Y11
	VBROADCASTSD 32(R8), Y12
	VBROADCASTSD 40(R8), Y13
	VBROADCASTSD 48(R8), Y14
	VXORPD Y15, Y15, Y15
	TESTQ CX, CX
	JE    ddone

dloop:
	VMOVUPD (SI), Y0
	VMOVUPD (DI), Y1
	VMOVUPD (R9), Y2
	VMULPD  Y8, Y1, Y1
	VMULPD  Y9, Y0, Y3
	VADDPD  Y3, Y1, Y1
	VMULPD  Y11, Y0, Y4
	VMULPD  Y0, Y4, Y4
	VMULPD  Y10, Y2, Y2
	VADDPD  Y4, Y2, Y2
	VMOVUPD Y1, (DI)
	VMOVUPD Y2, (R9)
	VSQRTPD Y2, Y5
	VMULPD  Y13, Y5, Y5
	VADDPD  Y14, Y5, Y5
	VMULPD  Y12, Y1, Y6
	VDIVPD  Y5, Y6, Y6
	VMOVUPD (DX), Y7
	VSUBPD  Y6, Y7, Y7
	VMOVUPD Y7, (DX)
	VMOVUPD Y15, (SI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, R9
	ADDQ    $32, DX
	SUBQ    $4, CX
	JNE     dloop

ddone:
	VZEROUPPER
	RET

// func AdamGS(w, gr, m, v *float32, n int, p *[8]float32)
//
// AdamS on a gradient that is read, not accumulated: g is taken as
// g + 0 (the value Gorgonia's accumulation into a zeroed dual value
// gives: −0 becomes +0, every other value is unchanged) and left as it
// is. Every other operation is AdamS's, in the same order.
TEXT ·AdamGS(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), DX
	MOVQ gr+8(FP), SI
	MOVQ m+16(FP), DI
	MOVQ v+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ p+40(FP), R8
	VBROADCASTSS 0(R8), Y8
	VBROADCASTSS 4(R8), Y9
	VBROADCASTSS 8(R8), Y10
	VBROADCASTSS 12(R8), Y11
	VBROADCASTSS 16(R8), Y12
	VBROADCASTSS 20(R8), Y13
	VBROADCASTSS 24(R8), Y14
	VXORPS Y15, Y15, Y15
	TESTQ CX, CX
	JE    sdoneg

sloopg:
	VMOVUPS (SI), Y0
	VADDPS  Y15, Y0, Y0
	VMOVUPS (DI), Y1
	VMOVUPS (R9), Y2
	VMULPS  Y8, Y1, Y1
	VMULPS  Y9, Y0, Y3
	VADDPS  Y3, Y1, Y1
	VMULPS  Y11, Y0, Y4
	VMULPS  Y0, Y4, Y4
	VMULPS  Y10, Y2, Y2
	VADDPS  Y4, Y2, Y2
	VMOVUPS Y1, (DI)
	VMOVUPS Y2, (R9)
	VSQRTPS Y2, Y5
	VMULPS  Y13, Y5, Y5
	VADDPS  Y14, Y5, Y5
	VMULPS  Y12, Y1, Y6
	VDIVPS  Y5, Y6, Y6
	VMOVUPS (DX), Y7
	VSUBPS  Y6, Y7, Y7
	VMOVUPS Y7, (DX)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, R9
	ADDQ    $32, DX
	SUBQ    $8, CX
	JNE     sloopg

sdoneg:
	VZEROUPPER
	RET

// func AdamGD(w, gr, m, v *float64, n int, p *[8]float64)
//
// The float64 analogue of AdamGS (n a multiple of 4).
TEXT ·AdamGD(SB), NOSPLIT, $0-48
	MOVQ w+0(FP), DX
	MOVQ gr+8(FP), SI
	MOVQ m+16(FP), DI
	MOVQ v+24(FP), R9
	MOVQ n+32(FP), CX
	MOVQ p+40(FP), R8
	VBROADCASTSD 0(R8), Y8
	VBROADCASTSD 8(R8), Y9
	VBROADCASTSD 16(R8), Y10
	VBROADCASTSD 24(R8), Y11
	VBROADCASTSD 32(R8), Y12
	VBROADCASTSD 40(R8), Y13
	VBROADCASTSD 48(R8), Y14
	VXORPD Y15, Y15, Y15
	TESTQ CX, CX
	JE    ddoneg

dloopg:
	VMOVUPD (SI), Y0
	VADDPD  Y15, Y0, Y0
	VMOVUPD (DI), Y1
	VMOVUPD (R9), Y2
	VMULPD  Y8, Y1, Y1
	VMULPD  Y9, Y0, Y3
	VADDPD  Y3, Y1, Y1
	VMULPD  Y11, Y0, Y4
	VMULPD  Y0, Y4, Y4
	VMULPD  Y10, Y2, Y2
	VADDPD  Y4, Y2, Y2
	VMOVUPD Y1, (DI)
	VMOVUPD Y2, (R9)
	VSQRTPD Y2, Y5
	VMULPD  Y13, Y5, Y5
	VADDPD  Y14, Y5, Y5
	VMULPD  Y12, Y1, Y6
	VDIVPD  Y5, Y6, Y6
	VMOVUPD (DX), Y7
	VSUBPD  Y6, Y7, Y7
	VMOVUPD Y7, (DX)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, R9
	ADDQ    $32, DX
	SUBQ    $4, CX
	JNE     dloopg

ddoneg:
	VZEROUPPER
	RET
