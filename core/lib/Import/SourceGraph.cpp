//===- SourceGraph.cpp - The source model's own graph (kiln/SourceGraph.h) ===//
//
// Reads a model's operators and tensors through the importers' readers:
// readTFLiteModel (TFLiteModel.h) and the generated schema code for TFLite,
// readONNXModel (ONNXModel.h) for ONNX. TFLite builtin options are written
// with flatbuffers' minireflect (flatc --reflect-names) after a round trip
// through the generated object API with ForceDefaults, so that options the
// file leaves at their schema defaults (padding SAME is 0) show too.
//
//===----------------------------------------------------------------------===//
#include "kiln/SourceGraph.h"
#include "kiln/Artifact.h"
#include "kiln/Error.h"

#include "ONNXModel.h"
#include "ONNXNodeTitle.h"
#include "TFLiteModel.h"
#include "TFLiteModelImporter.h"

#include "flatbuffers/minireflect.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstdio>

namespace kiln {

std::string onnx::nodeTitle(const Node &node) {
  std::string name = node.name;
  for (char &c : name) // messages are one line
    if (static_cast<unsigned char>(c) < 0x20)
      c = ' ';
  return node.opType + (name.empty() ? "" : " \"" + name + "\"");
}

const SourceOperator *SourceGraph::findOperator(int64_t sourceIndex) const {
  for (const SourceOperator &op : operators)
    if (op.index == sourceIndex)
      return &op;
  return nullptr;
}

std::string sourceShapeText(const SourceTensor &tensor) {
  if (!tensor.hasShape)
    return "?";
  if (tensor.shape.empty())
    return "scalar";
  std::string s;
  for (int64_t d : tensor.shape)
    s += (s.empty() ? "" : "x") + (d < 0 ? std::string("?") : std::to_string(d));
  return s;
}

namespace {

// --- TFLite -------------------------------------------------------------------

namespace schema = ::kiln::tflite;

/// Collects the top-level fields of a table as name/value text, each value
/// as flatbuffers' ToStringVisitor writes it (enum names, "[ 1, 2 ]").
struct AttributeVisitor : flatbuffers::ToStringVisitor {
  AttributeVisitor() : ToStringVisitor(" ", false, "", false) {}
  std::vector<SourceAttribute> fields;
  int depth = 0;
  size_t start = 0;

  void finish() {
    if (!fields.empty() && start <= s.size())
      fields.back().value = s.substr(start);
  }
  void StartSequence() override {
    ++depth;
    ToStringVisitor::StartSequence();
  }
  void EndSequence() override {
    if (depth == 1)
      finish();
    --depth;
    ToStringVisitor::EndSequence();
  }
  void Field(size_t fieldIndex, size_t setIndex, flatbuffers::ElementaryType type, bool isVector,
             const flatbuffers::TypeTable *table, const char *name, const uint8_t *val) override {
    if (depth == 1 && val)
      finish();
    ToStringVisitor::Field(fieldIndex, setIndex, type, isVector, table, name, val);
    if (depth == 1 && val) {
      fields.push_back({name ? name : "field " + std::to_string(fieldIndex), ""});
      start = s.size();
    }
  }
};

/// The fields of one builtin options union value (`Union` is
/// BuiltinOptionsUnion or BuiltinOptions2Union, `unionTable` its type
/// table), defaults included: unpacked with the object API, packed again
/// with ForceDefaults, then walked with minireflect.
template <typename Union, typename Type>
void appendOptions(const void *options, Type type, const flatbuffers::TypeTable *unionTable,
                   std::vector<SourceAttribute> &out) {
  if (!options || static_cast<int>(type) == 0)
    return;
  int64_t position = flatbuffers::LookupEnum(static_cast<int64_t>(type), unionTable->values,
                                             unionTable->num_elems);
  if (position < 0 || position >= static_cast<int64_t>(unionTable->num_elems))
    return;
  const flatbuffers::TypeCode code = unionTable->type_codes[position];
  if (code.base_type != flatbuffers::ET_SEQUENCE || code.sequence_ref < 0)
    return;
  const flatbuffers::TypeTable *table = unionTable->type_refs[code.sequence_ref]();
  Union value;
  value.type = type;
  value.value = Union::UnPack(options, type, nullptr);
  if (!value.value)
    return;
  flatbuffers::FlatBufferBuilder builder;
  builder.ForceDefaults(true);
  builder.Finish(value.Pack(builder));
  AttributeVisitor visitor;
  flatbuffers::IterateObject(flatbuffers::GetRoot<uint8_t>(builder.GetBufferPointer()), table,
                             &visitor);
  out.insert(out.end(), visitor.fields.begin(), visitor.fields.end());
}

/// The storage name of a quantized TFLite tensor's type ("i8", "u8",
/// "i16", "i32"), as TensorQuantization::storage writes it.
std::string storageOf(schema::TensorType type) {
  switch (type) {
  case schema::TensorType::INT8:
    return "i8";
  case schema::TensorType::UINT8:
    return "u8";
  case schema::TensorType::INT16:
    return "i16";
  case schema::TensorType::INT32:
    return "i32";
  default:
    return llvm::StringRef(schema::EnumNameTensorType(type)).lower();
  }
}

/// Tensor `index` of `importer`'s graph as the source graph lists it.
SourceTensor tfliteTensor(const tfl::ModelImporter &importer, int index) {
  const schema::Tensor *t = importer.tensor(index);
  SourceTensor out;
  out.name = tfl::tensorName(t, index);
  out.elementType = llvm::StringRef(schema::EnumNameTensorType(t->type())).lower();
  out.shape = importer.shapeOf(index);
  if (t->shape_signature() && t->shape_signature()->size() == out.shape.size())
    for (size_t d = 0; d < out.shape.size(); ++d)
      if (t->shape_signature()->Get(d) < 0)
        out.shape[d] = -1;
  llvm::ArrayRef<uint8_t> data = importer.constantData(index);
  out.isConstant = !data.empty();
  out.bytes = static_cast<int64_t>(data.size());
  const schema::QuantizationParameters *q = t->quantization();
  if (q && q->scale() && q->scale()->size() > 0) {
    TensorQuantization quant;
    quant.tensor = out.name;
    quant.scales.assign(q->scale()->begin(), q->scale()->end());
    for (size_t k = 0; k < quant.scales.size(); ++k)
      quant.zeroPoints.push_back(
          q->zero_point() && k < q->zero_point()->size() ? q->zero_point()->Get(k) : 0);
    quant.dimension = quant.scales.size() > 1 ? q->quantized_dimension() : -1;
    quant.storage = storageOf(t->type());
    out.quantization = std::move(quant);
  }
  return out;
}

/// Tensor indices of a TFLite operand list, -1 for absent or out-of-range
/// entries.
std::vector<int> tensorList(const flatbuffers::Vector<int32_t> *list, size_t tensorCount) {
  std::vector<int> out;
  if (list)
    for (int32_t i : *list)
      out.push_back(i >= 0 && static_cast<size_t>(i) < tensorCount ? i : -1);
  return out;
}

llvm::Expected<SourceGraph> tfliteGraph(llvm::ArrayRef<uint8_t> bytes, const std::string &name) {
  std::string why;
  const schema::Model *model = tfl::readTFLiteModel(bytes.data(), bytes.size(), why);
  if (!model)
    return makeError(name + ": " + why);
  // The importer's accessors (tensor, shapeOf, constantData) over the
  // verified model; nothing is imported.
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  std::vector<ShapeFix> fixes;
  tfl::ModelImporter importer(context, bytes, name, fixes);
  importer.model = model;
  importer.graph = model->subgraphs()->Get(0);
  const schema::SubGraph *graph = importer.graph;
  SourceGraph out;
  out.source = name;
  out.format = "tflite";
  if (model->subgraphs()->size() > 1)
    out.note = "subgraph 0 of " + std::to_string(model->subgraphs()->size()) +
               " (Kiln compiles single-subgraph models)";
  const size_t tensorCount = graph->tensors() ? graph->tensors()->size() : 0;
  for (size_t i = 0; i < tensorCount; ++i)
    out.tensors.push_back(tfliteTensor(importer, static_cast<int>(i)));
  out.inputs = tensorList(graph->inputs(), tensorCount);
  out.outputs = tensorList(graph->outputs(), tensorCount);
  const size_t codeCount = model->operator_codes() ? model->operator_codes()->size() : 0;
  if (graph->operators())
    for (size_t i = 0; i < graph->operators()->size(); ++i) {
      const schema::Operator *op = graph->operators()->Get(i);
      SourceOperator s;
      s.index = static_cast<int64_t>(i);
      if (op->opcode_index() < codeCount) {
        const schema::OperatorCode *code = model->operator_codes()->Get(op->opcode_index());
        schema::BuiltinOperator builtin = tfl::ModelImporter::effectiveCode(code);
        const char *text = schema::EnumNameBuiltinOperator(builtin);
        s.planName = text && *text ? text : "BUILTIN_" + std::to_string(static_cast<int>(builtin));
        s.type = builtin == schema::BuiltinOperator::CUSTOM && code->custom_code()
                     ? code->custom_code()->str()
                     : s.planName;
      } else {
        s.type = s.planName = "UNKNOWN";
      }
      s.inputs = tensorList(op->inputs(), tensorCount);
      s.outputs = tensorList(op->outputs(), tensorCount);
      if (!s.outputs.empty() && s.outputs.front() >= 0)
        s.name = out.tensors[s.outputs.front()].name;
      for (int t : s.outputs)
        if (t >= 0)
          out.tensors[t].producer = static_cast<int>(out.operators.size());
      appendOptions<schema::BuiltinOptionsUnion>(op->builtin_options(), op->builtin_options_type(),
                                                 schema::BuiltinOptionsTypeTable(), s.attributes);
      appendOptions<schema::BuiltinOptions2Union>(op->builtin_options_2(),
                                                  op->builtin_options_2_type(),
                                                  schema::BuiltinOptions2TypeTable(), s.attributes);
      out.operators.push_back(std::move(s));
    }
  return out;
}

// --- ONNX ---------------------------------------------------------------------

/// Bytes per element of an ONNX TensorProto.DataType (0 for STRING and
/// codes Kiln does not know).
int64_t onnxElementBytes(int32_t type) {
  switch (type) {
  case onnx::kUInt8:
  case onnx::kInt8:
  case onnx::kBool:
    return 1;
  case onnx::kUInt16:
  case onnx::kInt16:
  case onnx::kFloat16:
  case onnx::kBFloat16:
    return 2;
  case onnx::kFloat:
  case onnx::kInt32:
  case onnx::kUInt32:
    return 4;
  case onnx::kInt64:
  case onnx::kUInt64:
  case onnx::kDouble:
    return 8;
  default:
    return 0;
  }
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", v);
  return text;
}

template <typename T, typename F> std::string listText(const std::vector<T> &values, F &&one) {
  std::string s = "[";
  for (size_t k = 0; k < values.size(); ++k)
    s += (k ? ", " : "") + one(values[k]);
  return s + "]";
}

/// An AttributeProto's value as SourceAttribute::value writes it.
std::string attributeText(const onnx::Attribute &a) {
  using Kind = onnx::Attribute::Kind;
  switch (a.kind) {
  case Kind::Float:
    return number(a.f);
  case Kind::Int:
    return std::to_string(a.i);
  case Kind::String:
    return a.s;
  case Kind::Floats:
    return listText(a.floats, [](float v) { return number(v); });
  case Kind::Ints:
    return listText(a.ints, [](int64_t v) { return std::to_string(v); });
  case Kind::Strings:
    return listText(a.strings, [](const std::string &v) { return v; });
  case Kind::Graph:
    return "graph, " + std::to_string(a.g ? a.g->nodes.size() : 0) + " nodes";
  case Kind::TensorValue: {
    if (!a.t)
      return "tensor";
    std::string s = "tensor " + onnx::dataTypeName(a.t->dataType) + " " +
                    listText(a.t->dims, [](int64_t v) { return std::to_string(v); });
    const int64_t n = a.t->numElements();
    if (n > 0 && n <= 8) {
      std::vector<double> values;
      for (int64_t k = 0; k < n; ++k)
        values.push_back(a.t->at(k));
      s += " = " + listText(values, [](double v) { return number(v); });
    }
    return s;
  }
  default:
    return "(an attribute type Kiln does not show)";
  }
}

/// The tensors of an ONNX graph, created as names are met.
struct OnnxTensors {
  const onnx::Model &model;
  SourceGraph &out;
  std::map<std::string, int> byName;

  int of(const std::string &name) {
    if (name.empty())
      return -1;
    auto [it, added] = byName.try_emplace(name, static_cast<int>(out.tensors.size()));
    if (!added)
      return it->second;
    SourceTensor t;
    t.name = name;
    if (auto init = model.initializers.find(name); init != model.initializers.end()) {
      t.elementType = onnx::dataTypeName(init->second.dataType);
      t.shape = init->second.dims;
      t.isConstant = true;
      t.bytes = init->second.numElements() * onnxElementBytes(init->second.dataType);
    } else if (auto v = model.values.find(name); v != model.values.end()) {
      t.elementType = onnx::dataTypeName(v->second.elementType);
      t.hasShape = v->second.hasShape;
      t.shape = v->second.dims;
    } else {
      t.elementType = onnx::dataTypeName(onnx::kUndefined);
      t.hasShape = false;
    }
    out.tensors.push_back(std::move(t));
    return it->second;
  }
};

llvm::Expected<SourceGraph> onnxGraph(llvm::ArrayRef<uint8_t> bytes, const std::string &name,
                                      const std::string &directory) {
  std::string error;
  auto model = onnx::readONNXModel(bytes.data(), bytes.size(), directory, {}, error);
  if (!model)
    return makeError(name + ": " + error);
  SourceGraph out;
  out.source = name;
  out.format = "onnx";
  OnnxTensors tensors{*model, out, {}};
  for (const onnx::ValueInfo &in : model->inputs)
    out.inputs.push_back(tensors.of(in.name));
  for (const onnx::Node &node : model->nodes) {
    SourceOperator s;
    s.index = node.index;
    s.type = node.opType;
    s.name = node.name;
    s.planName = onnx::nodeTitle(node);
    for (const std::string &in : node.inputs)
      s.inputs.push_back(tensors.of(in));
    for (const std::string &o : node.outputs) {
      int t = tensors.of(o);
      s.outputs.push_back(t);
      if (t >= 0)
        out.tensors[t].producer = static_cast<int>(out.operators.size());
    }
    for (const onnx::Attribute &a : node.attributes)
      s.attributes.push_back({a.name, attributeText(a)});
    out.operators.push_back(std::move(s));
  }
  for (const onnx::ValueInfo &o : model->outputs)
    out.outputs.push_back(tensors.of(o.name));
  return out;
}

} // namespace

llvm::Expected<SourceGraph> readSourceGraph(const std::string &path) {
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return makeError(path + ": cannot read: " + ec.message());
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return makeError(path + ": not a regular file (expected a .tflite, .onnx or .mlir model)");
  auto buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError(path + ": cannot read: " + buffer.getError().message());
  const std::string name = llvm::sys::path::filename(path).str();
  llvm::StringRef data = (*buffer)->getBuffer();
  llvm::ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t *>(data.data()), data.size());
  const bool tfliteId = data.size() >= 8 && data.substr(4, 4) == "TFL3";
  llvm::StringRef p(path);
  if (!tfliteId && isArtifact(path, bytes))
    return makeError(name + ": a compiled .kiln artifact, not a model: it keeps no source graph "
                            "(open the model it was built from)");
  if (p.ends_with_insensitive(".onnx") && !tfliteId)
    return onnxGraph(bytes, name, llvm::sys::path::parent_path(path).str());
  if (tfliteId || p.ends_with(".tflite"))
    return tfliteGraph(bytes, name);
  if (p.ends_with(".mlir") || p.ends_with(".mlirbc")) {
    SourceGraph out;
    out.source = name;
    out.format = "mlir";
    out.note = "a TOSA .mlir file is the compiler's own input, with no source model: the "
               "dispatch graph is its graph";
    return out;
  }
  return makeError(name + ": unrecognized model format (supported: TFLite flatbuffers '.tflite', "
                          "ONNX '.onnx', TOSA MLIR '.mlir')");
}

const std::vector<int64_t> &SourceDispatchMap::dispatchesOf(int64_t sourceIndex) const {
  static const std::vector<int64_t> none;
  auto it = dispatchesOfOperator.find(sourceIndex);
  return it == dispatchesOfOperator.end() ? none : it->second;
}

const std::vector<int64_t> &SourceDispatchMap::operatorsOf(int64_t dispatch) const {
  static const std::vector<int64_t> none;
  auto it = operatorsOfDispatch.find(dispatch);
  return it == operatorsOfDispatch.end() ? none : it->second;
}

SourceDispatchMap sourceDispatchMap(const CompilationPlan &plan) {
  SourceDispatchMap map;
  for (const Dispatch &d : plan.dispatches)
    for (const SourceOp &op : d.ops) {
      if (op.sourceIndex < 0)
        continue;
      std::vector<int64_t> &dispatches = map.dispatchesOfOperator[op.sourceIndex];
      if (dispatches.empty() || dispatches.back() != d.id)
        dispatches.push_back(d.id);
      std::vector<int64_t> &ops = map.operatorsOfDispatch[d.id];
      if (std::find(ops.begin(), ops.end(), op.sourceIndex) == ops.end())
        ops.push_back(op.sourceIndex);
    }
  return map;
}

} // namespace kiln
