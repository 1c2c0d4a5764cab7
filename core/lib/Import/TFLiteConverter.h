//===- TFLiteConverter.h - TFLite operator -> TOSA converters --*- C++ -*-===//
//
// The importer walks the operators of a TFLite subgraph in order and hands
// each one, wrapped in an OpContext, to the converter registered for its
// BuiltinOperator. A converter reads the operator's inputs (SSA values or
// constant buffers) and options, emits TOSA ops and binds the outputs.
//
// Converters are grouped by family, one file each:
//   TFLiteConvOps.cpp        CONV_2D DEPTHWISE_CONV_2D TRANSPOSE_CONV
//                            FULLY_CONNECTED BATCH_MATMUL pools (max, avg, L2)
//   TFLiteElementwiseOps.cpp binary and unary elementwise, activations
//   TFLiteLogicalOps.cpp     comparisons, LOGICAL_*, SELECT/SELECT_V2, CAST
//   TFLiteShapeOps.cpp       reshape/squeeze/expand_dims/transpose/concat/
//                            pad/slice/strided_slice/gather/embedding_lookup/
//                            resize/dequantize
//   TFLiteReductionOps.cpp   MEAN SUM REDUCE_MAX REDUCE_MIN SOFTMAX LOG_SOFTMAX
//                            L2_NORMALIZATION REDUCE_ALL
//   TFLiteMovementOps.cpp    pack/unpack/split/split_v/shape/broadcast_to/
//                            broadcast_args/fill/depth_to_space/
//                            space_to_depth/arg_max/arg_min/reverse_v2/
//                            gather_nd/space_to_batch_nd/batch_to_space_nd/
//                            dynamic_update_slice
//   TFLiteRecurrentOps.cpp   UNIDIRECTIONAL_SEQUENCE_LSTM
//                            BIDIRECTIONAL_SEQUENCE_LSTM
//                            UNIDIRECTIONAL_SEQUENCE_RNN (float32, unrolled;
//                            state in variable tensors)
//   TFLiteSvdfOps.cpp        SVDF, float32 and int8 (int16 or int8 state)
// and their int8 forms in TFLiteQuantized<Family>Ops.cpp (TFLiteQuantizedOps.h).
// The importer itself: TFLiteModelImporter.h.
//
// TFLite semantics follow the TensorFlow Lite builtin operator reference
// (tensorflow/lite/kernels, schema v3); TOSA semantics follow the TOSA 0.60
// specification that MLIR 16's tosa dialect implements.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_TFLITECONVERTER_H
#define KILN_CORE_IMPORT_TFLITECONVERTER_H

#include "TFLiteQuant.h"
#include "TosaBuilder.h"
#include "tflite_generated.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::tfl {

namespace schema = ::kiln::tflite;
using schema::BuiltinOperator;

class ModelImporter;

/// One TFLite operator being converted.
class OpContext : public TosaBuilder {
public:
  OpContext(ModelImporter &importer, const schema::Operator *op, int index,
            BuiltinOperator code);

  mlir::MLIRContext *context();
  int index() const { return opIndex; }
  BuiltinOperator code() const { return opCode; }
  /// e.g. "CONV_2D".
  const char *name() const;

  /// Number of input/output slots (optional inputs count, with index -1).
  int numInputs() const;
  int numOutputs() const;
  /// True if input slot `i` exists and is not the "absent" marker -1.
  bool hasInput(int i) const;
  /// The model's tensor index of input / output `i` (-1 if absent).
  int inputIndex(int i) const { return hasInput(i) ? op->inputs()->Get(i) : -1; }
  int outputIndex(int i) const { return i >= 0 && i < numOutputs() ? op->outputs()->Get(i) : -1; }
  const schema::Tensor *inputTensor(int i) const;
  const schema::Tensor *outputTensor(int i) const;

  /// SSA value of input `i`; constants become tosa.const (f16 data is
  /// widened to f32). Fails (with a message) if the slot is absent.
  mlir::FailureOr<mlir::Value> input(int i);
  /// True if input `i` is backed by a constant buffer (or was folded by an
  /// earlier operator, setConstantOutput).
  bool isConstant(int i) const;
  /// Constant input `i` as integers (int32/int64 buffers); fails if not a
  /// constant integer tensor.
  mlir::FailureOr<std::vector<int64_t>> constantInts(int i);
  /// Constant input `i` as f32 values (f32 or f16 buffers).
  mlir::FailureOr<std::vector<float>> constantFloats(int i);
  /// The type of input `i`'s SSA value (materializing a constant); fails
  /// like input().
  mlir::RankedTensorType inputType(int i) {
    auto v = input(i);
    return mlir::succeeded(v) ? v->getType().cast<mlir::RankedTensorType>()
                              : mlir::RankedTensorType();
  }
  /// Static shape of input tensor `i`: its SSA value's (computed) shape, or
  /// the recorded one for a constant.
  std::vector<int64_t> inputShape(int i) const;
  /// Shape output `i` must have: the recorded one, except that once
  /// --fix-shape sized a dynamic input (propagating()), the -1 dimensions of
  /// the tensor's shape signature are ShapedType::kDynamic, left to shape
  /// inference (create() fills them from the operands).
  std::vector<int64_t> outputShape(int i) const;
  /// The declared type of output `i` (outputShape(), element type).
  mlir::RankedTensorType outputType(int i) const;
  /// True once --fix-shape sized a dynamic input dimension: shapes of
  /// tensors with -1 in their signature are inferred, not read.
  bool propagating() const;

  /// Affine quantization of input/output `i` (checked at load), or nullptr
  /// for a float or unquantized tensor.
  const TensorQuant *inputQuant(int i) const;
  const TensorQuant *outputQuant(int i) const;
  /// True if any input or output of the operator is an int8/uint8 tensor:
  /// the importer then converts it with the integer converter table.
  bool isQuantized() const;

  /// Options table, or nullptr when absent/other type.
  template <typename T> const T *options() const {
    return op->builtin_options_as<T>();
  }

  /// True when input `i` is a variable tensor (is_variable: the state of
  /// LSTM, RNN and SVDF). input(i) then gives the value the previous
  /// invocation left in it (0, or an int8 tensor's zero point, after load
  /// and after a reset; TFLiteStateOps.cpp).
  bool isVariable(int i) const;
  /// Writes `value` (the variable's type and shape) into variable input
  /// `i`: later operators of this invocation and the next invocation read
  /// it, as TFLite's kernels overwrite their state tensors in place.
  /// Errors on an input that is not a variable tensor or a type mismatch.
  mlir::LogicalResult assignVariable(int i, mlir::Value value);
  /// Binds output `i` to `value`. If the value's static type differs from
  /// the declared output type only in shape with equal element count, a
  /// tosa.reshape is inserted; any other mismatch is an error.
  mlir::LogicalResult setOutput(int i, mlir::Value value);

  /// Binds output `i` (an INT32 or INT64 tensor) to the constant `values`
  /// computed at import, shaped as the output records it; later operators
  /// see it as a constant input (isConstant, constantInts). SHAPE and
  /// BROADCAST_ARGS fold this way.
  mlir::LogicalResult setConstantOutput(int i, llvm::ArrayRef<int64_t> values);

  /// The elements of input `i` when known at import: an INT32, INT64 or
  /// BOOL constant (bools as 0/1), or a tensor an earlier operator folded
  /// (setConstantOutput, setKnownOutput); nothing otherwise.
  std::optional<std::vector<int64_t>> knownInts(int i) const;

  /// setConstantOutput for INT32/INT64 outputs; a BOOL output becomes a
  /// bool constant of its recorded shape (`values` 0 or 1), known to later
  /// operators the same way.
  mlir::LogicalResult setKnownOutput(int i, llvm::ArrayRef<int64_t> values);

  /// The importer (control flow converts subgraphs through it).
  ModelImporter &owner() { return importer; }

  /// Records an error "operator #N (NAME): <message>" and returns failure.
  mlir::LogicalResult fail(const llvm::Twine &message);

  // The TOSA builders (f32Type, constF32/I32/I64, scalarF32, reshape,
  // transpose, broadcastRank, clamp) come from TosaBuilder.
  /// Applies a fused activation as TFLite's float kernels do (a clamp range;
  /// TANH applies nothing there); fails for SIGN_BIT.
  mlir::FailureOr<mlir::Value>
  applyActivation(mlir::Value value, schema::ActivationFunctionType act);

  /// Builds `OpTy` with result type `type`; dynamic dimensions of `type`
  /// (open outputShape() dimensions) are filled by the op's TOSA shape
  /// inference from its operands and attributes.
  template <typename OpTy, typename... Args>
  mlir::Value create(mlir::Type type, Args &&...args) {
    return inferDynamicDims(
        builder().create<OpTy>(location, type, std::forward<Args>(args)...)
            .getOperation());
  }

  /// Result 0 of `op`, its dynamic dimensions set to what the op's
  /// InferShapedTypeOpInterface computes (left dynamic where it cannot).
  mlir::Value inferDynamicDims(mlir::Operation *op);

private:
  ModelImporter &importer;
  const schema::Operator *op;
  int opIndex;
  BuiltinOperator opCode;
};

/// BATCH_MATMUL's product of inputs 0 and 1 (adj_x/adj_y and numpy batch
/// broadcasting from BatchMatMulOptions) as a tosa.matmul with `accumulator`
/// elements (f32, or i32 with `quantization`'s zero points for int8), shaped
/// [batch, M, N] or [1, batch*M, N]; the caller binds (and reshapes) it.
mlir::FailureOr<mlir::Value>
buildBatchMatMul(OpContext &ctx, mlir::Type accumulator,
                 mlir::tosa::MatMulOpQuantizationAttr quantization);

/// Converts one operator. Returns failure after calling OpContext::fail.
using ConverterFn = mlir::LogicalResult (*)(OpContext &);
using ConverterTable = std::map<BuiltinOperator, ConverterFn>;

void registerConvOps(ConverterTable &table);
void registerElementwiseOps(ConverterTable &table);
void registerLogicalOps(ConverterTable &table);
void registerShapeOps(ConverterTable &table);
void registerReductionOps(ConverterTable &table);
/// PACK UNPACK SPLIT SPLIT_V SHAPE BROADCAST_TO BROADCAST_ARGS FILL
/// DEPTH_TO_SPACE SPACE_TO_DEPTH ARG_MAX ARG_MIN REVERSE_V2 GATHER_ND
/// SPACE_TO_BATCH_ND BATCH_TO_SPACE_ND DYNAMIC_UPDATE_SLICE (TFLiteMovementOps.cpp).
void registerMovementOps(ConverterTable &table);
/// SVDF, float32 (TFLiteSvdfOps.cpp).
void registerSvdfOps(ConverterTable &table);
/// The int8 converters (TFLiteQuantizedOps.cpp): operators with int8/uint8
/// tensors, bit-exact with TensorFlow Lite's integer kernels.
void registerQuantizedOps(ConverterTable &table);
void registerControlFlowOps(ConverterTable &table);
/// VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE (TFLiteStateOps.cpp).
void registerStateOps(ConverterTable &table);
/// DENSIFY (TFLiteSparsity.cpp), in the float and the int8 table.
void registerSparsityOps(ConverterTable &table);
/// UNIDIRECTIONAL_SEQUENCE_LSTM BIDIRECTIONAL_SEQUENCE_LSTM
/// UNIDIRECTIONAL_SEQUENCE_RNN (TFLiteRecurrentOps.cpp).
void registerRecurrentOps(ConverterTable &table);
/// True for operators whose float converter also takes their int8/hybrid
/// forms, to refuse them with their own message (the recurrent operators:
/// int8 LSTM keeps an int16 cell state, hybrid models int8 weights).
bool convertsIntegerForms(BuiltinOperator code);

/// Folds operator `ctx` when every input is known at import (knownInts)
/// and it is integer or bool arithmetic on at most 64 elements (ADD, SUB,
/// MUL, MAXIMUM, MINIMUM of INT32 without fused activation; the
/// comparisons; LOGICAL_AND/OR/NOT): its outputs become known constants
/// (setKnownOutput), so a WHILE's loop counter and condition are computed
/// while importing. Returns true when it folded the operator.
mlir::FailureOr<bool> foldKnownOperator(OpContext &ctx);

/// All registered float converters.
const ConverterTable &converters();
/// All registered int8 converters.
const ConverterTable &quantizedConverters();

/// Inputs 0 .. count-1 of the operator, reshaped to one rank (the largest of
/// theirs and output 0's, by prepending 1s), after checking that their
/// shapes broadcast numpy-style (each dimension equal or 1). Fails, naming
/// the dimension, when they do not.
mlir::FailureOr<llvm::SmallVector<mlir::Value, 4>> broadcastOperands(OpContext &ctx, int count);

/// An element type as the converters' errors name it: "float32", "int32",
/// "bool", "int8" (others as MLIR prints them).
std::string typeText(mlir::Type element);
/// A tensor type as errors name it: its shape and typeText(element).
std::string typeText(mlir::RankedTensorType type);

/// Bytes of a TFLite element type (0 if unknown).
size_t tensorTypeSize(schema::TensorType type);

} // namespace kiln::tfl

#endif
