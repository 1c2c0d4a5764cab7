//===- ONNXConverter.h - ONNX node -> TOSA converters ----------*- C++ -*-===//
//
// The ONNX importer walks the nodes of the (checked, shape-inferred) graph in
// order and hands each one, wrapped in a NodeContext, to the converter
// registered for its op_type. A converter reads the node's inputs (SSA values,
// or constants known at import time), its attributes (with the defaults of
// the node's opset), emits TOSA ops and binds the outputs, either to SSA
// values or to constants it folded.
//
// Values: float tensors (FLOAT, FLOAT16, DOUBLE, BFLOAT16) are f32 in the
// IR; INT32 is i32, INT64 is i64, BOOL is i1; INT8 and UINT8 are i8 (a
// uint8 value q held as q - 128, as the TFLite front end does; see
// ONNXQuantOps.cpp), made by the quantized operators and moved by the data
// movement ones (movesQuantizedData); other integer types only as
// constants. Shapes are static: graph inputs are fixed (their symbolic
// dimensions by --fix-shape), and every converter computes its output shape
// from its inputs'.
//
// Layout: ONNX tensors are NCHW. Converters of convolutions and pools
// transpose to NHWC around the TOSA op (transposeToChannelsLast /
// transposeToChannelsFirst);
// the kiln-sink-transposes pass cancels the pairs between consecutive ops.
//
// Converters are grouped by family, one file each:
//   ONNXConvOps.cpp        Conv ConvTranspose Gemm MatMul BatchNormalization
//                          pools, LayerNormalization InstanceNormalization
//                          GroupNormalization
//   ONNXElementwiseOps.cpp unary and binary elementwise, activations, Where,
//                          comparisons, logic, Clip, Cast of float values,
//                          Mish Gelu Bitwise{And,Or,Xor,Not}
//   ONNXShapeOps.cpp       Shape Size Reshape Flatten Squeeze Unsqueeze
//                          Transpose Concat Split Slice Gather Pad Tile Expand
//                          ConstantOfShape Range Constant Identity Dropout
//                          Cast CastLike
//   ONNXReductionOps.cpp   Reduce* Softmax LogSoftmax ArgMax ArgMin
//   ONNXResizeOps.cpp      Resize Upsample DepthToSpace SpaceToDepth
//   ONNXLossOps.cpp        NegativeLogLikelihoodLoss SoftmaxCrossEntropyLoss
//   ONNXWindowOps.cpp      HannWindow HammingWindow BlackmanWindow (folded)
//   ONNXRecurrentOps.cpp   LSTM GRU RNN (unrolled over the time steps)
//   ONNXIndexOps.cpp       GatherElements GatherND; refusals of NonZero Unique
//                          Compress NonMaxSuppression (data-dependent shapes)
//   ONNXQuantOps.cpp       QuantizeLinear DequantizeLinear DynamicQuantizeLinear
//                          QLinearConv QLinearMatMul ConvInteger MatMulInteger,
//                          and the QDQ groups (fuseQDQ) rewritten into them
//   ONNXScatterOps.cpp     ScatterElements Scatter ScatterND OneHot MaxUnpool
//   ONNXMatrixOps.cpp      Trilu EyeLike CumSum TopK ReverseSequence Det
//   ONNXEinsumOps.cpp      Einsum
//   ONNXArithmeticOps.cpp  Mod Shrink MeanVarianceNormalization GlobalLpPool
//   ONNXGridSampleOps.cpp  GridSample RoiAlign AffineGrid DeformConv
//   ONNXImageOps.cpp       CenterCropPad Col2Im
//   ONNXSignalOps.cpp      DFT STFT
//   ONNXTextOps.cpp        TfIdfVectorizer (integer pools)
//   ONNXMaxPoolIndexOps.cpp MaxPool's Indices output (convertMaxPoolWithIndices)
//
// ONNX semantics follow the operator specification of onnx 1.16
// (docs/Operators.md, with each operator's version history, opsets to 21); TOSA semantics
// follow the TOSA 0.60 specification that MLIR 16's tosa dialect implements.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_ONNXCONVERTER_H
#define KILN_CORE_IMPORT_ONNXCONVERTER_H

#include "Import.h"
#include "ONNXModel.h"
#include "TosaBuilder.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kiln::onnx {
using kiln::shapeString;

class GraphImporter;

/// One ONNX node being converted.
class NodeContext : public TosaBuilder {
public:
  NodeContext(GraphImporter &importer, const Node &node, mlir::Location loc);

  const Node &node() const { return onnxNode; }
  /// The model's default-domain opset (converters pick the semantics of the
  /// operator version in force at this opset).
  int64_t opset() const;
  mlir::MLIRContext *context();

  // --- Inputs ------------------------------------------------------------
  /// Number of input slots, omitted optional ones ("") included.
  int numInputs() const { return int(onnxNode.inputs.size()); }
  /// True if slot `i` exists and is not omitted.
  bool hasInput(int i) const;
  /// SSA value of input `i`; a constant becomes a tosa.const (float data as
  /// f32, INT32 as i32, INT64 as i64, BOOL as i1). Fails (with a message
  /// naming the input) if the slot is absent or its type is unsupported.
  mlir::FailureOr<mlir::Value> input(int i);
  /// The contents of input `i` when known at import time (an initializer, a
  /// Constant node, or a value folded by an earlier converter); else nullptr.
  const Tensor *constant(int i) const;
  /// Static shape of input `i` (also for a constant).
  std::vector<int64_t> inputShape(int i) const;
  int64_t inputRank(int i) const { return int64_t(inputShape(i).size()); }
  /// ONNX element type of input `i` (DataType code).
  int32_t inputType(int i) const;
  /// Constant input `i` as integers; fails naming the input unless it is a
  /// constant integer tensor (what shape inputs such as Reshape's `shape`
  /// must be: "its value must be known when the model is compiled").
  mlir::FailureOr<std::vector<int64_t>> constantInts(int i);
  /// Constant input `i` as floats (any numeric type); fails as constantInts.
  mlir::FailureOr<std::vector<float>> constantFloats(int i);
  /// Input `i`, an int8 or uint8 tensor, as its i8 SSA value (a uint8
  /// constant's values minus 128); fails naming the input for other types.
  mlir::FailureOr<mlir::Value> quantizedInput(int i);

  // --- Attributes (defaults as the operator's spec gives them) -----------
  bool hasAttr(const std::string &name) const;
  int64_t attrInt(const std::string &name, int64_t def) const;
  float attrFloat(const std::string &name, float def) const;
  std::string attrString(const std::string &name, const std::string &def) const;
  std::vector<int64_t> attrInts(const std::string &name,
                                std::vector<int64_t> def = {}) const;
  std::vector<float> attrFloats(const std::string &name, std::vector<float> def = {}) const;
  /// A TENSOR attribute (Constant's value), or nullptr.
  const Tensor *attrTensor(const std::string &name) const;

  // --- Outputs -------------------------------------------------------------
  int numOutputs() const { return int(onnxNode.outputs.size()); }
  /// True if output slot `i` exists and is named (optional outputs are "").
  bool hasOutput(int i) const;
  /// Binds output `i` to `value` (a ranked tensor of static shape). An i8
  /// value is typed int8/uint8 as shape inference types the output, else
  /// as the node's first int8/uint8 input.
  mlir::LogicalResult setOutput(int i, mlir::Value value);
  /// Binds output `i` to the i8 `value` holding ONNX type `dataType` (kInt8,
  /// or kUInt8 as q - 128).
  mlir::LogicalResult setQuantizedOutput(int i, mlir::Value value, int32_t dataType);
  /// Whether libonnx's shape inference is known to infer `inferred` where
  /// this node computes `computed` (ceil_mode pools; see setOutput).
  bool inferenceKnownWrong(llvm::ArrayRef<int64_t> inferred,
                           llvm::ArrayRef<int64_t> computed) const;
  /// Binds output `i` to a constant computed at import (shape arithmetic,
  /// folded Constant/Shape/...): later nodes see it through constant(), and
  /// it becomes a tosa.const only if a non-folding consumer asks input().
  mlir::LogicalResult setConstant(int i, Tensor value);

  /// Records "node #N Conv \"name\" (opset 13): <message>" and returns
  /// failure.
  mlir::LogicalResult fail(const llvm::Twine &message);

  // The TOSA builders (f32Type, constF32/I32/I64, scalarF32, reshape,
  // transpose, broadcastRank, clamp) come from TosaBuilder.
  /// A tosa.const holding `tensor` (f32 / i32 / i64 / i1).
  mlir::FailureOr<mlir::Value> constTensor(const Tensor &tensor);
  /// Rank-4 NCHW -> NHWC and NHWC -> NCHW (also rank 3 / 5: channels moved
  /// from dim 1 to last and back).
  mlir::Value transposeToChannelsLast(mlir::Value value);
  mlir::Value transposeToChannelsFirst(mlir::Value value);

  /// Builds `OpTy` at this node's location.
  template <typename OpTy, typename... Args>
  mlir::Value create(mlir::Type type, Args &&...args) {
    return builder().create<OpTy>(location, type, std::forward<Args>(args)...)
        .getResult();
  }

private:
  GraphImporter &importer;
  const Node &onnxNode;
};

/// Converts one node. Returns failure after calling NodeContext::fail.
using ConverterFn = mlir::LogicalResult (*)(NodeContext &);
using ConverterTable = std::map<std::string, ConverterFn>;

void registerConvOps(ConverterTable &table);
void registerElementwiseOps(ConverterTable &table);
void registerShapeOps(ConverterTable &table);
void registerReductionOps(ConverterTable &table);
void registerResizeOps(ConverterTable &table);
void registerLossOps(ConverterTable &table);
void registerWindowOps(ConverterTable &table);
/// LSTM, GRU and RNN, unrolled over their static time steps
/// (ONNXRecurrentOps.cpp).
void registerRecurrentOps(ConverterTable &table);
void registerIndexOps(ConverterTable &table);
/// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearConv,
/// QLinearMatMul, ConvInteger, MatMulInteger (ONNXQuantOps.cpp).
void registerQuantOps(ConverterTable &table);

/// Whether `opType` only moves elements (Reshape, Flatten, Squeeze,
/// Unsqueeze, Transpose, Identity, Concat), so its converter takes
/// int8/uint8 values as they are.
bool movesQuantizedData(const std::string &opType);

/// The QDQ groups of `nodes` rewritten into integer operators as ONNX
/// Runtime's QDQ transformer selects them (ONNXQuantOps.cpp): DQ -> Conv /
/// MatMul -> Q becomes QLinearConv / QLinearMatMul, with a Relu between the
/// op and Q folded into the output range where Q's zero point is its
/// type's minimum. Other nodes are kept; node indices stay the original
/// ones (messages name the Conv).
std::vector<Node> fuseQDQ(const std::vector<Node> &nodes, const Model &model);

/// ScatterElements, Scatter, ScatterND, OneHot and MaxUnpool
/// (ONNXScatterOps.cpp: compare masks, selects and reductions).
void registerScatterOps(ConverterTable &table);
/// Trilu, EyeLike, CumSum, TopK, ReverseSequence and Det (ONNXMatrixOps.cpp).
void registerMatrixOps(ConverterTable &table);
/// Einsum (ONNXEinsumOps.cpp: transposes, reshapes, batched matmuls and
/// reductions).
void registerEinsumOps(ConverterTable &table);
/// Mod, Shrink, MeanVarianceNormalization and GlobalLpPool
/// (ONNXArithmeticOps.cpp).
void registerArithmeticOps(ConverterTable &table);
/// GridSample, RoiAlign, AffineGrid and DeformConv (ONNXGridSampleOps.cpp:
/// one tosa.gather per tap; AffineGrid one tosa.matmul).
void registerGridSampleOps(ConverterTable &table);
/// CenterCropPad and Col2Im (ONNXImageOps.cpp: slices, pads and adds).
void registerImageOps(ConverterTable &table);
/// DFT and STFT (ONNXSignalOps.cpp: matmuls by constant cos/sin tables).
void registerSignalOps(ConverterTable &table);
/// TfIdfVectorizer of integer n-gram pools (ONNXTextOps.cpp).
void registerTextOps(ConverterTable &table);

/// MaxPool with its Indices output (ONNXMaxPoolIndexOps.cpp; the MaxPool
/// converter of ONNXConvOps.cpp hands such nodes here).
mlir::LogicalResult convertMaxPoolWithIndices(NodeContext &ctx);

/// All registered converters, by op_type.
const ConverterTable &converters();

/// Element count of `dims` (1 for a scalar), saturating at INT64_MAX (a
/// model may declare shapes whose product overflows).
int64_t product(llvm::ArrayRef<int64_t> dims);

/// Normalizes a possibly negative axis of a rank-`rank` tensor; -1 if out
/// of range.
int64_t normalizeAxis(int64_t axis, int64_t rank);

/// numpy broadcast of two shapes; fails (empty optional) if incompatible.
std::optional<std::vector<int64_t>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                    llvm::ArrayRef<int64_t> b);

/// The types of the converters' static-shaped values, one definition for
/// every ONNX*Ops.cpp (a file takes them with `using shapes::shapeOf;`).
namespace shapes {
/// The shape of the ranked tensor `v`, elements per dimension.
std::vector<int64_t> shapeOf(mlir::Value v);
/// The element type of the ranked tensor `v`.
mlir::Type elementOf(mlir::Value v);
/// The ranked tensor type of `shape` and `element`.
mlir::RankedTensorType tensorOf(llvm::ArrayRef<int64_t> shape, mlir::Type element);
} // namespace shapes

} // namespace kiln::onnx

#endif
