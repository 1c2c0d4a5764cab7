//===- TosaReduce.h - Multi-axis reductions in TOSA ------------*- C++ -*-===//
//
// TOSA 0.60 reductions (tosa.reduce_sum/max/min/prod) take one axis of a
// rank 1-4 tensor and keep it as a size-1 dimension. Both importers (TFLite
// MEAN/SUM/REDUCE_*, ONNX Reduce*) reduce several axes of a tensor of any
// rank the same way: size-1 dimensions are dropped and runs of neighbouring
// reduced (or kept) dimensions merged, which leaves at most 4 dimensions for
// almost any input (otherwise the kept dimensions are transposed in front of
// the reduced ones and the tensor viewed as [kept, reduced]); each remaining
// reduced dimension is one TOSA reduction.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_TOSAREDUCE_H
#define KILN_CORE_IMPORT_TOSAREDUCE_H

#include "mlir/IR/Builders.h"
#include "llvm/ADT/ArrayRef.h"

namespace kiln {

/// The TOSA reduction applied (a mean is a Sum scaled by the caller).
enum class TosaReduction { Sum, Max, Min, Prod };

/// Reduces `value` (a ranked tensor of static shape, any rank, any element
/// type TOSA reduces) over the dimensions flagged in `reduced` (one flag per
/// dimension). The result has the input's rank with the reduced dimensions
/// of size 1 (keep-dims form). Ops are created at `loc` with `builder`.
mlir::Value reduceDims(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value value,
                       llvm::ArrayRef<bool> reduced, TosaReduction kind);

} // namespace kiln

#endif
