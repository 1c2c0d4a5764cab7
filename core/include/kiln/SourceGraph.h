//===- kiln/SourceGraph.h - The source model's own graph -------*- C++ -*-===//
//
// The model as its file describes it, before Kiln compiles anything: its
// operators (TFLite operators, ONNX nodes) with their attributes, and the
// tensors between them with names, shapes, element types, quantization and
// the byte sizes of the constant ones (weights). The workbench draws it
// beside the dispatch graph (Netron's view of a model) and links the two
// through sourceDispatchMap(): a dispatch's SourceOp::sourceIndex is a
// SourceOperator::index.
//
// readSourceGraph reads the file with the importers' own readers (the
// generated TFLite schema code of core/schema/tflite.fbs, readONNXModel of
// ONNX ModelProto with libonnx's shape inference), so indices, names and
// shapes are those the importers and the plan use.
//
// Plain data: no MLIR, LLVM or Qt types in the structs.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_SOURCEGRAPH_H
#define KILN_SOURCEGRAPH_H

#include "kiln/Plan.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// One tensor of the source model: a model input or output, an operator's
/// output, or a constant (weights, biases, shape operands).
struct SourceTensor {
  /// The name in the file; "tensorN" for an unnamed TFLite tensor N (as the
  /// importer names it).
  std::string name;
  /// NumPy-style element type name: "float32", "int8", "int64", ... ("type
  /// N" for a code Kiln does not know).
  std::string elementType;
  /// One entry per dimension, -1 where it is dynamic or unknown (TFLite -1
  /// in shape_signature, an ONNX symbolic dimension). Empty for a scalar or
  /// when `hasShape` is false.
  std::vector<int64_t> shape;
  /// False when the file and shape inference give no shape at all.
  bool hasShape = true;
  /// True for a constant with data in the file (TFLite: a tensor with a
  /// non-empty buffer; ONNX: an initializer).
  bool isConstant = false;
  /// Bytes of a constant's data as the file stores it (TFLite: its buffer;
  /// ONNX: elements x the element type's size); 0 for other tensors.
  int64_t bytes = 0;
  /// The affine quantization the file records (TFLite
  /// QuantizationParameters with scales; `readers` left empty); unset for
  /// a float tensor and for ONNX (whose quantization is operators:
  /// QuantizeLinear, DequantizeLinear).
  std::optional<TensorQuantization> quantization;
  /// Index into SourceGraph::operators of the operator writing the tensor,
  /// -1 for a model input or a constant.
  int producer = -1;
};

/// One attribute of an operator, as text.
struct SourceAttribute {
  std::string name;
  /// TFLite: the builtin option's value as flatbuffers' minireflect writes
  /// it ("SAME", "2", "RELU6", "[ 0, 1 ]"), defaults included. ONNX: an INT
  /// or FLOAT as a number, INTS and FLOATS as "[2, 2]", a STRING as is, a
  /// TENSOR as "tensor float32 [3]", a GRAPH as "graph, N nodes".
  std::string value;
};

/// One operator (TFLite) or node (ONNX) of the source model.
struct SourceOperator {
  /// The index SourceOp::sourceIndex uses: the position in the TFLite
  /// subgraph's operator list, or in ONNX GraphProto.node.
  int64_t index = 0;
  /// The operator type: "CONV_2D" (TFLite builtin code name, CUSTOM
  /// operators by their custom code), "Conv" (ONNX op_type).
  std::string type;
  /// The node's name (ONNX; may be empty), or the name of its first output
  /// tensor (TFLite operators have no names).
  std::string name;
  /// The name the plan gives the operator (SourceOp::name, before " #N"):
  /// the TFLite type, or the ONNX type and quoted node name ("Conv
  /// \"conv1\""), as the importers write their locations.
  std::string planName;
  std::vector<SourceAttribute> attributes;
  /// Indices into SourceGraph::tensors, in operand order; -1 marks an
  /// omitted optional input.
  std::vector<int> inputs;
  std::vector<int> outputs;
};

/// The whole source graph.
struct SourceGraph {
  /// The file name (no folders).
  std::string source;
  /// "tflite", "onnx" or "mlir".
  std::string format;
  std::vector<SourceOperator> operators;
  std::vector<SourceTensor> tensors;
  /// The model's inputs and outputs, indices into `tensors`, in signature
  /// order.
  std::vector<int> inputs;
  std::vector<int> outputs;
  /// What the graph leaves out, for people, e.g. "TOSA .mlir files have no
  /// source model: the dispatch graph is the model" or "subgraph 0 of 3";
  /// empty when nothing is left out.
  std::string note;

  /// The operator whose `index` is `sourceIndex`, or null.
  const SourceOperator *findOperator(int64_t sourceIndex) const;
};

/// Reads the graph of the model at `path`: a TFLite flatbuffer (subgraph 0
/// with a note when there are several; custom operators by their custom
/// code) or an ONNX ModelProto (the top-level graph; the nodes of If, Loop
/// and Scan bodies stay inside their node, listed as a GRAPH attribute).
/// A TOSA .mlir file gives an empty graph whose `note` says why (it is the
/// compiler's own input: the dispatch graph is its graph). The file is
/// picked by contents and extension as readModelInputs picks it. Errors are
/// one line naming the file: unreadable, not a model (a .kiln artifact, an
/// unknown extension), or the reader's own error (a truncated flatbuffer,
/// an ONNX file that does not parse).
llvm::Expected<SourceGraph> readSourceGraph(const std::string &path);

/// Which dispatches of a plan cover which source operators: the one place
/// the two graphs are linked (Dispatch::ops, SourceOp::sourceIndex).
struct SourceDispatchMap {
  /// Source operator index -> ids of the dispatches it was fused into, in
  /// plan order (several for an operator split into parts, e.g. a
  /// SOFTMAX's maximum, sum and quotient).
  std::map<int64_t, std::vector<int64_t>> dispatchesOfOperator;
  /// Dispatch id -> the source operator indices it covers, in Dispatch::ops
  /// order without repeats (operators of unknown index, -1, left out).
  std::map<int64_t, std::vector<int64_t>> operatorsOfDispatch;

  /// dispatchesOfOperator[sourceIndex], empty if none.
  const std::vector<int64_t> &dispatchesOf(int64_t sourceIndex) const;
  /// operatorsOfDispatch[dispatch], empty if none.
  const std::vector<int64_t> &operatorsOf(int64_t dispatch) const;
};

/// The map of `plan`'s dispatches and their source operators.
SourceDispatchMap sourceDispatchMap(const CompilationPlan &plan);

/// "1x112x112x32" (-1 as "?"), "scalar" for rank 0, "?" for an unknown
/// shape: how the source graph writes a tensor's shape.
std::string sourceShapeText(const SourceTensor &tensor);

} // namespace kiln

#endif
