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

// DOT adds to the sum S the query value X8 times row R's value at DX,
// read through the table BX, with T as the product.
#define DOT(R, T, S) \
	MOVBLZX (R)(DX*1), AX \
	MOVSS   (BX)(AX*4), T \
	MULSS   X8, T         \
	ADDSS   T, S

// func rowDotsSSE(rows *[8]*[512]int8, dims *int32, vals *float32, nd int, tab *[256]float32, sums *[8]float32)
//
// For i in [0, 8): sums[i] = the sum over k in [0, nd), in order, of
// vals[k]·tab[uint8(rows[i][dims[k]&511])], a product then a sum, each
// rounded (MULSS, ADDSS). The eight row pointers live in R8–R15 (R14 is
// undefined in ABI0 code and restored by the caller's wrapper; R15 is
// scratch outside dynamic linking, and no global is referenced here), the
// sums in X0–X7; CX counts up from -nd to 0.
TEXT ·rowDotsSSE(SB), NOSPLIT, $0-48
	MOVQ  rows+0(FP), AX
	MOVQ  0(AX), R8
	MOVQ  8(AX), R9
	MOVQ  16(AX), R10
	MOVQ  24(AX), R11
	MOVQ  32(AX), R12
	MOVQ  40(AX), R13
	MOVQ  48(AX), R14
	MOVQ  56(AX), R15
	MOVQ  dims+8(FP), SI
	MOVQ  vals+16(FP), DI
	MOVQ  nd+24(FP), CX
	MOVQ  tab+32(FP), BX
	LEAQ  (SI)(CX*4), SI
	LEAQ  (DI)(CX*4), DI
	NEGQ  CX
	XORPS X0, X0
	XORPS X1, X1
	XORPS X2, X2
	XORPS X3, X3
	XORPS X4, X4
	XORPS X5, X5
	XORPS X6, X6
	XORPS X7, X7
	TESTQ CX, CX
	JEQ   done

loop:
	MOVLQSX (SI)(CX*4), DX
	ANDQ    $511, DX
	MOVSS   (DI)(CX*4), X8
	DOT(R8, X9, X0)
	DOT(R9, X10, X1)
	DOT(R10, X11, X2)
	DOT(R11, X12, X3)
	DOT(R12, X9, X4)
	DOT(R13, X10, X5)
	DOT(R14, X11, X6)
	DOT(R15, X12, X7)
	INCQ    CX
	JNE     loop

done:
	MOVQ  sums+40(FP), AX
	MOVSS X0, 0(AX)
	MOVSS X1, 4(AX)
	MOVSS X2, 8(AX)
	MOVSS X3, 12(AX)
	MOVSS X4, 16(AX)
	MOVSS X5, 20(AX)
	MOVSS X6, 24(AX)
	MOVSS X7, 28(AX)
	RET
