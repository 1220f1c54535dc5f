#include "textflag.h"

// func NonFiniteD(x *float64, n int) bool
//
// Reports whether x[0:n] (n a multiple of 16) holds a NaN or ±Inf, AVX:
// x − x is +0 for a finite x and NaN otherwise; the bits of those
// differences are ORed in four registers (an OR of ±0s is ±0, and an OR
// with a NaN's bits is a NaN), then tested for NaN.
TEXT ·NonFiniteD(SB), NOSPLIT, $0-17
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	TESTQ CX, CX
	JE    dtest

dloop:
	VMOVUPD 0(SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVUPD 64(SI), Y2
	VMOVUPD 96(SI), Y3
	VSUBPD  Y0, Y0, Y0
	VSUBPD  Y1, Y1, Y1
	VSUBPD  Y2, Y2, Y2
	VSUBPD  Y3, Y3, Y3
	VORPD   Y0, Y4, Y4
	VORPD   Y1, Y5, Y5
	VORPD   Y2, Y6, Y6
	VORPD   Y3, Y7, Y7
	ADDQ    $128, SI
	SUBQ    $16, CX
	JNE     dloop

dtest:
	VORPD    Y5, Y4, Y4
	VORPD    Y7, Y6, Y6
	VORPD    Y6, Y4, Y4
	VCMPPD   $3, Y4, Y4, Y4 // unordered: NaN
	VMOVMSKPD Y4, AX
	TESTL    AX, AX
	SETNE    ret+16(FP)
	VZEROUPPER
	RET

// func NonFiniteS(x *float32, n int) bool
//
// NonFiniteD for float32 (n a multiple of 32).
TEXT ·NonFiniteS(SB), NOSPLIT, $0-17
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TESTQ CX, CX
	JE    stest

sloop:
	VMOVUPS 0(SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VSUBPS  Y0, Y0, Y0
	VSUBPS  Y1, Y1, Y1
	VSUBPS  Y2, Y2, Y2
	VSUBPS  Y3, Y3, Y3
	VORPS   Y0, Y4, Y4
	VORPS   Y1, Y5, Y5
	VORPS   Y2, Y6, Y6
	VORPS   Y3, Y7, Y7
	ADDQ    $128, SI
	SUBQ    $32, CX
	JNE     sloop

stest:
	VORPS    Y5, Y4, Y4
	VORPS    Y7, Y6, Y6
	VORPS    Y6, Y4, Y4
	VCMPPS   $3, Y4, Y4, Y4
	VMOVMSKPS Y4, AX
	TESTL    AX, AX
	SETNE    ret+16(FP)
	VZEROUPPER
	RET
