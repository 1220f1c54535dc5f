#include "textflag.h"

// func PoolReluD(r0, r2, bias *float64, k int, out *float64, arg *int32, stride, p0, p2 int)
//
// One pooled position of the fused conv–ReLU–2×2-max-pool layer, four
// channels at a time (k a multiple of 4, AVX2): for channel j the window is
// a = r0[j], b = r0[k+j], c = r2[j], d = r2[k+j];
//	m01 = max(a, b), m23 = max(c, d), v = max(m01, m23) + bias[j]
//	out[j*stride] = max(v, 0)
//	arg[j*stride] = −1 if !(v > 0), else the winner's index: p0+j (+k if
//	b > a) when !(m23 > m01), p2+j (+k if d > c) otherwise.
// max is Go's built-in max, computed as the compiler does on amd64:
// −(t1 | t2) with t1 = MIN(−x, −y), t2 = MIN(t1, −x) (MINPD keeps its
// second operand on ties and NaN), so NaN, ±0 and ties give Go's bits.
// Comparisons are ordered (false with a NaN), as Go's >.
TEXT ·PoolReluD(SB), NOSPLIT, $0-72
	MOVQ r0+0(FP), SI
	MOVQ r2+8(FP), DI
	MOVQ bias+16(FP), R8
	MOVQ k+24(FP), CX
	MOVQ out+32(FP), DX
	MOVQ arg+40(FP), R9
	MOVQ stride+48(FP), R10
	MOVQ CX, R11
	SHLQ $3, R11          // k·8: b and d lie k float64s on
	LEAQ (R10*4), R12     // stride·4: arg bytes per channel
	SHLQ $3, R10          // stride·8: out bytes per channel
	LEAQ (R10)(R10*2), R13 // 3·stride·8
	LEAQ (R12)(R12*2), BX  // 3·stride·4

	MOVQ $0x8000000000000000, AX
	MOVQ AX, X15
	VPBROADCASTQ X15, Y15 // sign bit; as a float64, −0
	VPBROADCASTQ k+24(FP), Y14
	MOVQ $4, AX
	MOVQ AX, X11
	VPBROADCASTQ X11, Y11
	VPCMPEQQ Y10, Y10, Y10 // −1 in every lane
	VXORPD Y9, Y9, Y9
	// lane offsets 0..3 added to p0 and p2
	MOVQ $0, AX
	MOVQ AX, X0
	MOVQ $1, AX
	MOVQ AX, X1
	VPUNPCKLQDQ X1, X0, X0 // (0, 1)
	MOVQ $2, AX
	MOVQ AX, X1
	MOVQ $3, AX
	MOVQ AX, X2
	VPUNPCKLQDQ X2, X1, X1 // (2, 3)
	VINSERTI128 $1, X1, Y0, Y0 // (0, 1, 2, 3)
	VPBROADCASTQ p0+56(FP), Y13
	VPADDQ Y0, Y13, Y13
	VPBROADCASTQ p2+64(FP), Y12
	VPADDQ Y0, Y12, Y12
	TESTQ CX, CX
	JE    done

loop:
	VMOVUPD (SI), Y0
	VMOVUPD (SI)(R11*1), Y1
	VMOVUPD (DI), Y2
	VMOVUPD (DI)(R11*1), Y3
	// m01 = max(a, b) → Y4
	VXORPD Y15, Y0, Y5
	VXORPD Y15, Y1, Y6
	VMINPD Y6, Y5, Y7
	VMINPD Y5, Y7, Y8
	VORPD  Y8, Y7, Y4
	VXORPD Y15, Y4, Y4
	// m23 = max(c, d) → Y5
	VXORPD Y15, Y2, Y6
	VXORPD Y15, Y3, Y7
	VMINPD Y7, Y6, Y8
	VMINPD Y6, Y8, Y7
	VORPD  Y7, Y8, Y5
	VXORPD Y15, Y5, Y5
	// b > a, d > c, m23 > m01 (ordered)
	VCMPPD $0x1E, Y0, Y1, Y6
	VCMPPD $0x1E, Y2, Y3, Y7
	VCMPPD $0x1E, Y4, Y5, Y8
	// indices: i01 = p0+j + k·(b > a), i23 = p2+j + k·(d > c)
	VPAND  Y14, Y6, Y6
	VPADDQ Y13, Y6, Y6
	VPAND  Y14, Y7, Y7
	VPADDQ Y12, Y7, Y7
	VBLENDVPD Y8, Y7, Y6, Y6
	// v = max(m01, m23) + bias
	VXORPD Y15, Y4, Y0
	VXORPD Y15, Y5, Y1
	VMINPD Y1, Y0, Y2
	VMINPD Y0, Y2, Y3
	VORPD  Y3, Y2, Y2
	VXORPD Y15, Y2, Y2
	VADDPD (R8), Y2, Y2
	// !(v > 0): index −1
	VCMPPD $0x1E, Y9, Y2, Y3
	VBLENDVPD Y3, Y6, Y10, Y6
	// out = max(v, 0)
	VXORPD Y15, Y2, Y0
	VMINPD Y15, Y0, Y1
	VMINPD Y0, Y1, Y4
	VORPD  Y4, Y1, Y1
	VXORPD Y15, Y1, Y1
	// four channels, stride apart
	VMOVSD  X1, (DX)
	VMOVHPD X1, (DX)(R10*1)
	VEXTRACTF128 $1, Y1, X1
	VMOVSD  X1, (DX)(R10*2)
	VMOVHPD X1, (DX)(R13*1)
	VMOVQ   X6, AX
	MOVL    AX, (R9)
	VPEXTRQ $1, X6, AX
	MOVL    AX, (R9)(R12*1)
	VEXTRACTI128 $1, Y6, X6
	VMOVQ   X6, AX
	MOVL    AX, (R9)(R12*2)
	VPEXTRQ $1, X6, AX
	MOVL    AX, (R9)(BX*1)

	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, R8
	LEAQ (DX)(R10*4), DX
	LEAQ (R9)(R12*4), R9
	VPADDQ Y11, Y13, Y13
	VPADDQ Y11, Y12, Y12
	SUBQ $4, CX
	JNE  loop

done:
	VZEROUPPER
	RET
