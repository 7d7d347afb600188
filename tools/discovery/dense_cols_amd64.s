#include "textflag.h"

// func colDotsAVX2(acc *float32, n int, cols *int8, stride int, dims *int32, vals *float32, nd int)
//
// For k in [0, nd): v = vals[k], col = cols + dims[k]*stride; for i in
// [0, n) by 8: acc[i:i+8] = acc[i:i+8] + v*float32(col[i:i+8]), a product
// then a sum, each rounded (no fused multiply-add). n is a positive
// multiple of 8 and nd is positive. Thirty-two cards per pass, then eight.
TEXT ·colDotsAVX2(SB), NOSPLIT, $0-56
	MOVQ acc+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ cols+16(FP), SI
	MOVQ stride+24(FP), R8
	MOVQ dims+32(FP), R9
	MOVQ vals+40(FP), R10
	MOVQ nd+48(FP), R11
	MOVQ CX, R13
	ANDQ $-32, R13 // the cards the 32-card passes take
	XORQ R12, R12

dim:
	MOVLQSX      (R9)(R12*4), AX
	IMULQ        R8, AX
	LEAQ         (SI)(AX*1), BX
	VBROADCASTSS (R10)(R12*4), Y1
	XORQ         DX, DX
	CMPQ         DX, R13
	JGE          eight

thirtytwo:
	VPMOVSXBD (BX)(DX*1), Y2
	VPMOVSXBD 8(BX)(DX*1), Y3
	VPMOVSXBD 16(BX)(DX*1), Y4
	VPMOVSXBD 24(BX)(DX*1), Y5
	VCVTDQ2PS Y2, Y2
	VCVTDQ2PS Y3, Y3
	VCVTDQ2PS Y4, Y4
	VCVTDQ2PS Y5, Y5
	VMULPS    Y1, Y2, Y2
	VMULPS    Y1, Y3, Y3
	VMULPS    Y1, Y4, Y4
	VMULPS    Y1, Y5, Y5
	VADDPS    (DI)(DX*4), Y2, Y2
	VADDPS    32(DI)(DX*4), Y3, Y3
	VADDPS    64(DI)(DX*4), Y4, Y4
	VADDPS    96(DI)(DX*4), Y5, Y5
	VMOVUPS   Y2, (DI)(DX*4)
	VMOVUPS   Y3, 32(DI)(DX*4)
	VMOVUPS   Y4, 64(DI)(DX*4)
	VMOVUPS   Y5, 96(DI)(DX*4)
	ADDQ      $32, DX
	CMPQ      DX, R13
	JLT       thirtytwo

eight:
	CMPQ DX, CX
	JGE  next
	VPMOVSXBD (BX)(DX*1), Y2
	VCVTDQ2PS Y2, Y2
	VMULPS    Y1, Y2, Y2
	VADDPS    (DI)(DX*4), Y2, Y2
	VMOVUPS   Y2, (DI)(DX*4)
	ADDQ      $8, DX
	JMP       eight

next:
	INCQ R12
	CMPQ R12, R11
	JLT  dim
	VZEROUPPER
	RET
