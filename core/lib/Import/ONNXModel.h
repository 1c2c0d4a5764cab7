//===- ONNXModel.h - An ONNX model as plain data ---------------*- C++ -*-===//
//
// readONNXModel() parses an ONNX ModelProto (onnx/onnx.proto, IR version <= 10)
// with Debian's libonnx 1.12, checks it with libonnx's checker, runs
// onnx::shape_inference::InferShapes (both skip the nodes whose operator
// version, opset 18 to 21, libonnx does not know: newerThanLibonnx), and hands the graph on as the
// plain structs below. Nothing here includes protobuf or MLIR headers: the reader (ONNXModel.cpp)
// is the only translation unit built with RTTI and exceptions for libonnx; the importer
// (ONNXImporter.cpp, ONNX*Ops.cpp) reads these structs.
//
// Element types use the TensorProto.DataType codes of onnx.proto (1 FLOAT,
// 2 UINT8, 3 INT8, 4 UINT16, 5 INT16, 6 INT32, 7 INT64, 8 STRING, 9 BOOL,
// 10 FLOAT16, 11 DOUBLE, 12 UINT32, 13 UINT64, 16 BFLOAT16).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_ONNXMODEL_H
#define KILN_CORE_IMPORT_ONNXMODEL_H

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::onnx {

/// TensorProto.DataType codes (onnx.proto).
enum DataType : int32_t {
  kUndefined = 0,
  kFloat = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kDouble = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kBFloat16 = 16,
};

/// "float32", "int64", ... (numpy names) for messages; "type 14" if unknown.
std::string dataTypeName(int32_t type);
/// True for FLOAT, FLOAT16, DOUBLE, BFLOAT16.
bool isFloatType(int32_t type);

/// A constant tensor (an initializer, a Constant node's value, or a value the
/// importer folded). Floating-point data (any float type) is held widened or
/// narrowed to float32 in `floats`; integer and bool data in `ints`. Exactly
/// one of the two is filled, with product(dims) elements (a scalar has no dims
/// and one element).
struct Tensor {
  std::string name;
  int32_t dataType = kFloat;
  std::vector<int64_t> dims;
  std::vector<float> floats;
  std::vector<int64_t> ints;

  /// Number of elements (product of dims; 1 for a scalar).
  int64_t numElements() const;
  bool isFloat() const { return isFloatType(dataType); }
  /// Element `i` as double, whichever vector holds it.
  double at(int64_t i) const { return isFloat() ? floats[i] : double(ints[i]); }
};

struct Graph;

/// One NodeProto attribute. `kind` follows AttributeProto.AttributeType.
struct Attribute {
  enum Kind { Undefined, Float, Int, String, TensorValue, Graph, Floats, Ints, Strings, Other };
  std::string name;
  Kind kind = Undefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::shared_ptr<Tensor> t;
  /// The subgraph of a GRAPH attribute (If's branches, Loop's and Scan's
  /// body); null for other kinds.
  std::shared_ptr<const onnx::Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
};

/// One NodeProto, in graph order (ONNX requires a topological order).
struct Node {
  /// Position in GraphProto.node (0-based): the "#12" of messages.
  int index = 0;
  std::string name;   ///< May be empty.
  std::string opType; ///< "Conv".
  std::string domain; ///< "" (or "ai.onnx") for the default domain.
  /// Input value names; "" marks an omitted optional input.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<Attribute> attributes;

  /// The attribute called `name`, or nullptr.
  const Attribute *attribute(const std::string &name) const;
};

/// A subgraph (GraphProto of a GRAPH attribute): its formal inputs and
/// outputs by name (in order), its own initializers and its nodes (indices
/// 0-based within the subgraph). Names of the enclosing graphs it reads are
/// plain node inputs (ONNX's outer-scope references); the importer folds
/// If/Loop/Scan by walking these nodes (ONNXControlFlow.cpp).
struct Graph {
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, Tensor> initializers;
  std::vector<Node> nodes;
};

/// A graph input, output or inferred intermediate value: element type and
/// shape as declared or inferred. `dims[k]` is -1 where the dimension is
/// symbolic or unknown; `dimParams[k]` then holds its symbol ("batch"), or
/// "" when the dimension has neither a value nor a symbol.
struct ValueInfo {
  std::string name;
  int32_t elementType = kUndefined;
  /// False when no shape (not even a rank) is known.
  bool hasShape = false;
  std::vector<int64_t> dims;
  std::vector<std::string> dimParams;
};

/// What readONNXModel hands on.
struct Model {
  int64_t irVersion = 0;
  /// The default domain's opset version (opset_import for "" / "ai.onnx").
  int64_t opset = 0;
  std::string producer; ///< "pytorch 1.13", "tf2onnx 1.9.3", ...
  /// Graph inputs that are not initializers, in GraphProto.input order.
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  /// Every value with a type after shape inference (inputs, outputs,
  /// intermediates), by name.
  std::map<std::string, ValueInfo> values;
  /// Initializers (weights), by name, external data already read.
  std::map<std::string, Tensor> initializers;
  std::vector<Node> nodes;
};

/// A static shape given to a model input before shape inference: `input` is
/// the input's name or its index (decimal) among Model::inputs.
struct InputShape {
  std::string input;
  std::vector<int64_t> shape;
};

/// The newest IR version and default-domain opset Kiln reads (ONNX 1.16),
/// and the opset older models are converted to.
inline constexpr int64_t kMaxIrVersion = 10;
inline constexpr int64_t kMaxOpset = 21;
inline constexpr int64_t kMinOpset = 7;
/// The newest IR version and opset libonnx 1.12 (the checker and shape
/// inference Kiln runs) knows.
inline constexpr int64_t kLibonnxIrVersion = 8;
inline constexpr int64_t kLibonnxOpset = 17;

/// Whether the version of default-domain operator `opType` in force at
/// `opset` is newer than libonnx 1.12's (its schema changed, or it is new,
/// in opsets 18 to 21). libonnx's checker and shape inference skip such
/// nodes; Kiln's converter checks their inputs and attributes itself.
bool newerThanLibonnx(const std::string &opType, int64_t opset);

/// Parses `size` bytes at `data` as an ONNX ModelProto and checks it:
///  - protobuf parse (a truncated or garbled file fails here);
///  - IR version <= kMaxIrVersion, default-domain opset at most kMaxOpset
///    (opsets 1 to kMinOpset - 1 are brought to kMinOpset with libonnx's
///    version converter, and Model::opset is then kMinOpset), no node of
///    another domain (ai.onnx.ml,
///    com.microsoft, ...);
///  - external data (TensorProto.data_location EXTERNAL) read from files
///    beside the model in `directory` (relative paths inside it only);
///  - `shapes` set the named/indexed inputs' dimensions (checked beforehand
///    by kiln::checkShapeFixes, which importModelFile runs; a fix naming no
///    input is ignored here);
///  - `values` (inputs fixed to values, each named by its input's name and
///    of its type and shape: kiln::checkValueFixes resolved them) become
///    initializers: with IR version 4 and up the graph input goes (an
///    initializer needs none), before it the input stays, with the value's
///    shape. The checker and shape inference (with data propagation) then
///    see constants, as does the importer (If conditions fold);
///  - libonnx's checker (check_graph; above opset 17 its per-node checks,
///    skipping the nodes newerThanLibonnx), then
///    onnx::shape_inference::InferShapes (with data propagation, no schema
///    for those nodes) for the `values` map.
/// On failure returns nullopt and sets `error` to one line without the file
/// name (the caller prefixes it), e.g. "opset 22 of the default domain; Kiln
/// reads opsets 7 to 21".
std::optional<Model> readONNXModel(const uint8_t *data, size_t size, const std::string &directory,
                                   const std::vector<InputShape> &shapes, std::string &error,
                                   const std::vector<Tensor> &values = {});

/// The `location` of every initializer whose data lies in an external file
/// (ONNX external data: paths relative to the model's folder), in graph
/// order without repeats; empty when `data` does not parse.
std::vector<std::string> externalDataLocations(const uint8_t *data, size_t size);

/// Reads one serialized TensorProto (the backend tests' input_K.pb and
/// output_K.pb) into a Tensor. Returns nullopt and sets `error` if the bytes
/// do not parse or the element type is not a numeric type.
std::optional<Tensor> readTensorProto(const uint8_t *data, size_t size, std::string &error);

} // namespace kiln::onnx

#endif
