//===- ONNXImporter.cpp - ONNX ModelProto -> TOSA -------------------------===//
//
// Reads an ONNX model (ONNXModel.h: parsed, checked and shape-inferred by
// libonnx) and emits one func.func @main in the TOSA dialect (see Import.h
// for the form). Each node is converted by the converter registered for its
// op_type (ONNXConverter.h); constants (initializers, Constant nodes, shape
// arithmetic) are carried as data and folded, and become tosa.const only
// where a computation reads them.
//
//===----------------------------------------------------------------------===//
#include "Import.h"
#include "ONNXConverter.h"
#include "ONNXNodeTitle.h"
#include "ONNXTensorFolding.h"

#include "kiln/Error.h"
#include "kiln/ModelInputs.h"
#include "kiln/Options.h"
#include "kiln/TensorTypes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>
#include <set>
#include <variant>

using namespace mlir;

namespace kiln {

namespace onnx {

const ConverterTable &converters() {
  static const ConverterTable table = [] {
    ConverterTable t;
    registerConvOps(t);
    registerElementwiseOps(t);
    registerShapeOps(t);
    registerReductionOps(t);
    registerResizeOps(t);
    registerLossOps(t);
    registerWindowOps(t);
    registerRecurrentOps(t);
    registerIndexOps(t);
    registerQuantOps(t);
    registerScatterOps(t);
    registerMatrixOps(t);
    registerEinsumOps(t);
    registerArithmeticOps(t);
    registerGridSampleOps(t);
    registerImageOps(t);
    registerSignalOps(t);
    registerTextOps(t);
    return t;
  }();
  return table;
}

namespace shapes {
std::vector<int64_t> shapeOf(Value v) {
  auto shape = v.getType().cast<RankedTensorType>().getShape();
  return std::vector<int64_t>(shape.begin(), shape.end());
}
Type elementOf(Value v) { return v.getType().cast<RankedTensorType>().getElementType(); }
RankedTensorType tensorOf(llvm::ArrayRef<int64_t> shape, Type element) {
  return RankedTensorType::get(shape, element);
}
} // namespace shapes

int64_t product(llvm::ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(n, d, &n))
      return std::numeric_limits<int64_t>::max();
  return n;
}

int64_t normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  return axis >= 0 && axis < std::max<int64_t>(rank, 1) ? axis : -1;
}

std::optional<std::vector<int64_t>> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                                    llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t k = 0; k < rank; ++k) {
    int64_t da = k < rank - a.size() ? 1 : a[k - (rank - a.size())];
    int64_t db = k < rank - b.size() ? 1 : b[k - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[k] = da == 1 ? db : da;
  }
  return out;
}

/// A value of the graph during import.
struct Entry {
  Value value;                            ///< Null until materialized.
  std::shared_ptr<const Tensor> constant; ///< Known contents, if any.
  /// kInt8 or kUInt8 for an i8 SSA value (a uint8 one holds q - 128, see
  /// ONNXQuantOps.cpp); kUndefined otherwise.
  int32_t dataType = kUndefined;
};

/// Converts one ONNX graph to func.func @main.
class GraphImporter {
public:
  GraphImporter(MLIRContext &context, const Model &model, llvm::StringRef filename)
      : context(context), model(model), filename(filename.str()), builder(&context) {}

  llvm::Expected<OwningOpRef<ModuleOp>> run();

  MLIRContext &context;
  const Model &model;
  std::string filename;
  OpBuilder builder;
  std::map<std::string, Entry> values;
  std::string firstError;
  /// Set once a node's output differs from libonnx's shape inference where
  /// that inference is known to be wrong (inferenceKnownWrong): the shapes
  /// it inferred after that node derive from the wrong one and are not
  /// compared any more.
  bool inferenceDiverged = false;

  Type elementType(int32_t onnxType) {
    if (isFloatType(onnxType))
      return builder.getF32Type();
    switch (onnxType) {
    case kInt32: return builder.getI32Type();
    case kInt64: return builder.getI64Type();
    case kBool: return builder.getI1Type();
    default: return nullptr;
    }
  }
  /// elementType, and i8 for int8 and uint8 (graph inputs and outputs).
  Type ioElementType(int32_t onnxType) {
    return onnxType == kInt8 || onnxType == kUInt8 ? builder.getIntegerType(8)
                                                   : elementType(onnxType);
  }
  /// `value` (i8) with bit 7 flipped: uint8 q <-> int8 q - 128.
  Value flipSignBit(Value value, Location loc) {
    auto type = value.getType().cast<RankedTensorType>();
    llvm::SmallVector<int64_t> ones(type.getRank(), 1);
    auto maskType = RankedTensorType::get(ones, type.getElementType());
    auto mask = builder.create<tosa::ConstOp>(
        loc, maskType, DenseElementsAttr::get(maskType, llvm::ArrayRef<int8_t>{int8_t(-128)}));
    return builder.create<tosa::BitwiseXorOp>(loc, type, value, mask).getResult();
  }
  FailureOr<Value> materialize(const std::string &name, Location loc);
  FailureOr<Value> materializeEntry(Entry &entry, Location loc);
  Location nodeLocation(const Node &node);
  /// Prefix of messages about nodes being imported: "" for the main graph,
  /// "node #2 If \"b\" then_branch " inside an inlined subgraph.
  std::string scope;
  /// The node that computed each value (main graph and inlined subgraphs),
  /// for naming the graph input a refused If/Loop depends on.
  std::map<std::string, const Node *> producers;

  /// What became of each If, Loop and Scan, in conversion order; written
  /// into the module's kControlFlowAttr.
  std::vector<ControlFlowDecision> controlFlow;
  /// The inputs fixed to values (--fix-value): initializers of `model` now.
  std::set<std::string> fixedInputs;

  /// The main graph's nodes with its QDQ groups fused (fuseQDQ); kept
  /// here because `producers` points into them.
  std::vector<Node> mainNodes;
  /// Converts `nodes` in order (the main graph's or an inlined subgraph's).
  llvm::Error importNodes(const std::vector<Node> &nodes);

private:
  llvm::Error fail(const llvm::Twine &message) {
    return makeError(filename + ": " + message);
  }
  llvm::Error checkInputs();
  llvm::Error checkOperators();
  llvm::Error unsupportedOperator(const Node &node);
  // --- Control flow folded at import (If, Loop) ---
  std::string label(const Node &node);
  /// " (it depends on input 'NAME')" and, for a small input, the
  /// --fix-value suggestion; empty where `value` derives from no graph input.
  std::string dependsOn(const std::string &value);
  llvm::Error notKnown(const Node &node, const std::string &value, const std::string &what);
  /// Every value `value` derives from, itself included: a walk up the
  /// producers of the graph being converted.
  std::set<std::string> upstreamOf(const std::string &value);
  /// The graph inputs `value` derives from (upstreamOf), in the model's
  /// input order.
  std::vector<const ValueInfo *> inputsUnder(const std::string &value);
  /// " (from the value of input 'sr' (--fix-value), the shape of input
  /// 'x')" naming what `value` derives from, or " (from constants)"; for a
  /// value computed at run time (`atRunTime`), the graph inputs' values.
  std::string fromInputs(const std::string &value, bool atRunTime = false);
  /// Records a ControlFlowDecision for `node`.
  void decide(const Node &node, const std::string &decision, const std::string &reason);
  llvm::Expected<std::vector<Entry>> inlineGraph(const Node &owner, const std::string &attr,
                                                 const std::vector<Entry> &formals);
  llvm::Error importIf(const Node &node);
  /// An If whose condition is computed at run time: both branches
  /// converted, each output a tosa.select between them (their shapes must
  /// agree).
  llvm::Error importRuntimeIf(const Node &node);
  llvm::Error importLoop(const Node &node);
  llvm::Error importScan(const Node &node);
  /// One Scan over `states` and `scans` (the scan inputs; `axes` and
  /// `reverse` per scan input): the final states, then one stacked value
  /// per scan output.
  llvm::Expected<std::vector<Entry>> runScan(const Node &node, std::vector<Entry> states,
                                             std::vector<Entry> scans, llvm::ArrayRef<int64_t> axes,
                                             llvm::ArrayRef<int64_t> reverse,
                                             llvm::ArrayRef<int64_t> outAxes,
                                             llvm::ArrayRef<int64_t> outReverse);
  /// The value of `entry` with dimension `axis` sliced at `index` and
  /// removed (a tosa.slice and reshape).
  llvm::Expected<Entry> sliceAxis(const Node &node, Entry entry, int64_t axis, int64_t index);
  /// `parts` (one shape) stacked along a new dimension `axis`.
  llvm::Expected<Entry> stack(const Node &node, std::vector<Entry> parts, int64_t axis);
  llvm::Error bindScanOutput(const Node &node, const std::string &name, std::vector<Entry> &parts);
};

/// Control-flow operators the importer folds itself (importNodes).
static bool isControlFlow(const std::string &opType) {
  return opType == "If" || opType == "Loop" || opType == "Scan";
}

FailureOr<Value> GraphImporter::materialize(const std::string &name, Location loc) {
  auto it = values.find(name);
  if (it == values.end())
    return failure();
  return materializeEntry(it->second, loc);
}

FailureOr<Value> GraphImporter::materializeEntry(Entry &entry, Location loc) {
  if (entry.value)
    return entry.value;
  if (!entry.constant)
    return failure();
  const Tensor &t = *entry.constant;
  Type element = elementType(t.dataType);
  if (!element)
    return failure();
  auto type = RankedTensorType::get(t.dims, element);
  DenseElementsAttr attr;
  if (element.isF32()) {
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<float>(t.floats));
  } else if (element.isInteger(1)) {
    llvm::SmallVector<bool> bits(t.ints.begin(), t.ints.end());
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<bool>(bits));
  } else if (element.isInteger(32)) {
    llvm::SmallVector<int32_t> v(t.ints.begin(), t.ints.end());
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<int32_t>(v));
  } else {
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<int64_t>(t.ints));
  }
  // Constants go at the top of the function so later uses dominate.
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(builder.getInsertionBlock());
  entry.value = builder.create<tosa::ConstOp>(loc, type, attr);
  return entry.value;
}

Location GraphImporter::nodeLocation(const Node &node) {
  // NameLoc("Conv \"conv1\"#12", NameLoc(<first output>, file:12:0)): the
  // node's op type, name and index, its output value, the file.
  std::string output = node.outputs.empty() ? "" : node.outputs.front();
  Location file = FileLineColLoc::get(&context, filename, node.index, 0);
  Location tensor = NameLoc::get(StringAttr::get(&context, output), file);
  return NameLoc::get(
      StringAttr::get(&context, nodeTitle(node) + "#" + std::to_string(node.index)), tensor);
}

llvm::Error GraphImporter::unsupportedOperator(const Node &node) {
  const ConverterTable &table = converters();
  std::string supported;
  for (const auto &[name, fn] : table)
    supported += (supported.empty() ? "" : ", ") + name;
  return fail(scope + "node #" + llvm::Twine(node.index) + " " + nodeTitle(node) + " (opset " +
              llvm::Twine(model.opset) + "): operator " + node.opType +
              " is not supported; Kiln imports " + supported + ", If, Loop and Scan");
}

llvm::Error GraphImporter::checkOperators() {
  const ConverterTable &table = converters();
  for (const Node &node : model.nodes)
    if (!table.count(node.opType) && !isControlFlow(node.opType))
      return unsupportedOperator(node);
  return llvm::Error::success();
}

/// Dimension list for messages: "[batch,3,?,?]".
static std::string symbolicShape(const ValueInfo &info) {
  std::string s = "[";
  for (size_t k = 0; k < info.dims.size(); ++k) {
    if (k)
      s += ",";
    if (info.dims[k] >= 0)
      s += std::to_string(info.dims[k]);
    else
      s += info.dimParams[k].empty() ? "?" : info.dimParams[k];
  }
  return s + "]";
}

llvm::Error GraphImporter::checkInputs() {
  for (size_t i = 0; i < model.inputs.size(); ++i) {
    const ValueInfo &in = model.inputs[i];
    if (in.elementType == kUndefined)
      return fail("input '" + in.name + "' is not a tensor (an optional, sequence or map "
                  "value); Kiln compiles models whose inputs are tensors");
    if (!ioElementType(in.elementType) || (isFloatType(in.elementType) && in.elementType != kFloat))
      return fail("input '" + in.name + "' has element type " + dataTypeName(in.elementType) +
                  "; Kiln compiles float32 models (int8 and uint8 inputs for quantized "
                  "models, int32, int64 and bool for indices and masks)");
    if (!in.hasShape)
      return fail("input '" + in.name + "' has no shape; give it one with --fix-shape=" +
                  in.name + "=DIMS (e.g. 1x3x224x224)");
    for (size_t k = 0; k < in.dims.size(); ++k)
      if (in.dims[k] < 0)
        return makeError(filename + ": input '" + in.name + "' (input " + std::to_string(i) +
                         ") has dynamic dimension " + std::to_string(k) +
                         (in.dimParams[k].empty() ? "" : " '" + in.dimParams[k] + "'") +
                         " (shape " + symbolicShape(in) + "); Kiln compiles static shapes "
                         "only: fix it with --fix-shape");
    for (size_t k = 0; k < in.dims.size(); ++k)
      if (in.dims[k] == 0)
        return fail("input '" + in.name + "' has shape " + symbolicShape(in) +
                    ", zero-size in dimension " + std::to_string(k) +
                    "; Kiln compiles tensors of at least one element");
  }
  // A float output of another width would be written as float32 values
  // under its declared type (a Cast to float16 gave float32 bytes).
  for (const ValueInfo &out : model.outputs)
    if (isFloatType(out.elementType) && out.elementType != kFloat)
      return fail("output '" + out.name + "' has element type " + dataTypeName(out.elementType) +
                  "; Kiln's float outputs are float32");
  return llvm::Error::success();
}

llvm::Expected<OwningOpRef<ModuleOp>> GraphImporter::run() {
  if (llvm::Error err = checkInputs())
    return std::move(err);
  if (llvm::Error err = checkOperators())
    return std::move(err);
  OwningOpRef<ModuleOp> module = ModuleOp::create(FileLineColLoc::get(&context, filename, 0, 0));
  (*module)->setAttr("kiln.source", StringAttr::get(&context, filename));
  builder.setInsertionPointToEnd(module->getBody());

  llvm::SmallVector<Type> argTypes;
  for (const ValueInfo &in : model.inputs)
    argTypes.push_back(RankedTensorType::get(in.dims, ioElementType(in.elementType)));
  auto func = builder.create<func::FuncOp>(FileLineColLoc::get(&context, filename, 0, 0),
                                           "main", builder.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  for (size_t i = 0; i < model.inputs.size(); ++i) {
    const ValueInfo &in = model.inputs[i];
    Entry &entry = values[in.name];
    entry.value = body->getArgument(i);
    func.setArgAttr(i, kNameAttr, builder.getStringAttr(in.name));
    if (in.elementType == kInt8 || in.elementType == kUInt8)
      entry.dataType = in.elementType;
    if (in.elementType == kUInt8) {
      // A uint8 input is computed as int8: q - 128 is q with bit 7 flipped.
      func.setArgAttr(i, kElementTypeAttr, builder.getStringAttr("u8"));
      entry.value = flipSignBit(entry.value, func.getLoc());
    }
  }
  for (const auto &[name, tensor] : model.initializers)
    if (!values.count(name)) // a graph input shadows its initializer's default
      values[name].constant = std::make_shared<const Tensor>(tensor);

  mainNodes = fuseQDQ(model.nodes, model);
  if (llvm::Error err = importNodes(mainNodes))
    return std::move(err);

  llvm::SmallVector<Value> results;
  for (const ValueInfo &out : model.outputs) {
    Location loc = NameLoc::get(builder.getStringAttr(out.name),
                                FileLineColLoc::get(&context, filename, 0, 0));
    auto known = values.find(out.name);
    if (known != values.end() && known->second.constant &&
        known->second.constant->numElements() == 0)
      return fail("graph output '" + out.name + "' is an empty tensor (shape " +
                  shapeString(known->second.constant->dims) +
                  "); Kiln compiles tensors of at least one element");
    if (known != values.end() && !known->second.value && known->second.constant &&
        (known->second.constant->dataType == kInt8 || known->second.constant->dataType == kUInt8))
      return fail("graph output '" + out.name + "' is a constant " +
                  dataTypeName(known->second.constant->dataType) +
                  " tensor; Kiln compiles int8 and uint8 outputs that the graph computes");
    FailureOr<Value> v = materialize(out.name, loc);
    if (failed(v))
      return fail("graph output '" + out.name + "' is not computed by any node");
    int32_t type = known != values.end() ? known->second.dataType : kUndefined;
    if ((type == kInt8 || type == kUInt8) && out.elementType != kUndefined &&
        out.elementType != type)
      return fail("graph output '" + out.name + "' is declared " + dataTypeName(out.elementType) +
                  " but computed as " + dataTypeName(type));
    if (type == kUInt8)
      *v = flipSignBit(*v, loc);
    results.push_back(*v);
  }
  builder.create<func::ReturnOp>(func.getLoc(), results);
  llvm::SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  func.setType(builder.getFunctionType(argTypes, resultTypes));
  setControlFlow(*module, controlFlow);
  for (size_t i = 0; i < model.outputs.size(); ++i) {
    func.setResultAttr(i, kNameAttr, builder.getStringAttr(model.outputs[i].name));
    auto known = values.find(model.outputs[i].name);
    if (known != values.end() && known->second.dataType == kUInt8)
      func.setResultAttr(i, kElementTypeAttr, builder.getStringAttr("u8"));
  }

  std::string verifyError;
  {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      if (verifyError.empty()) {
        std::string op, tensor;
        describeLocation(diag.getLocation(), op, tensor);
        verifyError = (op.empty() ? "" : op + ": ") + diag.str();
      }
      return success();
    });
    if (failed(verify(*module)))
      return fail("internal error: the imported TOSA does not verify (" + verifyError +
                  "); please report it with the model");
  }
  return std::move(module);
}

llvm::Error GraphImporter::importNodes(const std::vector<Node> &nodes) {
  const ConverterTable &table = converters();
  for (const Node &node : nodes) {
    for (const std::string &in : node.inputs)
      if (!in.empty() && !values.count(in))
        return fail(scope + "node #" + llvm::Twine(node.index) + " " + nodeTitle(node) +
                    " reads '" + in +
                    "', which no earlier node, input or initializer "
                    "defines (the graph is not in topological order)");
    for (const std::string &out : node.outputs)
      producers[out] = &node;
    if (isControlFlow(node.opType)) {
      if (llvm::Error err = node.opType == "If"     ? importIf(node)
                            : node.opType == "Loop" ? importLoop(node)
                                                    : importScan(node))
        return err;
      continue;
    }
    if (!table.count(node.opType))
      return unsupportedOperator(node);
    NodeContext ctx(*this, node, nodeLocation(node));
    if (failed(table.at(node.opType)(ctx)))
      return makeError(filename + ": " + firstError);
    for (size_t k = 0; k < node.outputs.size(); ++k)
      if (!node.outputs[k].empty() && !values.count(node.outputs[k]))
        return fail(scope + "node #" + llvm::Twine(node.index) + " " + nodeTitle(node) +
                    ": the importer did not produce output '" + node.outputs[k] + "'");
  }
  return llvm::Error::success();
}

// --- Control flow -------------------------------------------------------------
//
// Kiln's artifacts are straight-line command lists, so If and Loop are
// folded while importing: an If whose condition is known (a constant,
// an initializer, a --fix-value input, a shape folded by the shape
// converters) is replaced by its taken branch's nodes, converted in place
// with the branch's outputs bound to the If's (a condition computed at run
// time converts both branches and selects, where their outputs agree); a Loop whose trip count and
// condition are known is unrolled (each iteration's body converted with the
// iteration number, the condition and the carried values bound to the
// body's inputs; scan outputs stacked along a new axis 0), and a Scan is
// unrolled over its scan inputs' static length (each iteration's body
// converted with the states and one slice of every scan input; opset 8's
// batched form once per batch row). Outer-scope names
// resolve through the one value map, as ONNX's names are unique across
// scopes. Subgraph nodes are checked only when taken.

/// The most iterations a Loop is unrolled to.
constexpr int64_t kMaxUnroll = 1024;
/// The most operations an unrolled Loop or Scan may add to the graph: the
/// later phases (MLIR 16's one-shot module bufferization looks each call's
/// callee up by a linear scan of the module) grow with the square of the
/// dispatch count, so a 3-node body unrolled 128 times compiles in about
/// 12 s here and 256 times in over 200 s.
constexpr size_t kMaxUnrolledOps = 512;

/// Operations in the block being converted into.
static size_t opsInBlock(OpBuilder &builder) {
  Block *block = builder.getInsertionBlock();
  return block ? block->getOperations().size() : 0;
}

std::string GraphImporter::label(const Node &node) {
  return scope + "node #" + std::to_string(node.index) + " " + nodeTitle(node) + " (opset " +
         std::to_string(model.opset) + ")";
}

std::set<std::string> GraphImporter::upstreamOf(const std::string &value) {
  std::set<std::string> seen;
  std::vector<std::string> work{value};
  while (!work.empty()) {
    std::string name = work.back();
    work.pop_back();
    if (seen.insert(name).second)
      if (auto p = producers.find(name); p != producers.end())
        for (const std::string &in : p->second->inputs)
          if (!in.empty())
            work.push_back(in);
  }
  return seen;
}

std::vector<const ValueInfo *> GraphImporter::inputsUnder(const std::string &value) {
  std::set<std::string> seen = upstreamOf(value);
  std::vector<const ValueInfo *> inputs;
  for (const ValueInfo &in : model.inputs)
    if (seen.count(in.name))
      inputs.push_back(&in);
  return inputs;
}

std::string GraphImporter::fromInputs(const std::string &value, bool atRunTime) {
  // The fixed inputs are initializers now, so they show in the walk but
  // not among the graph inputs.
  std::set<std::string> seen = upstreamOf(value);
  std::vector<std::string> parts;
  for (const std::string &name : fixedInputs)
    if (seen.count(name))
      parts.push_back("the value of input '" + name + "' (--fix-value)");
  for (const ValueInfo &in : model.inputs)
    if (seen.count(in.name))
      parts.push_back((atRunTime ? "input '" : "the shape of input '") + in.name + "'");
  if (parts.empty())
    return " (from constants)";
  return " (from " + llvm::join(parts, ", ") + ")";
}

void GraphImporter::decide(const Node &node, const std::string &decision,
                           const std::string &reason) {
  controlFlow.push_back({label(node), node.opType, decision, reason});
}

std::string GraphImporter::dependsOn(const std::string &value) {
  std::vector<const ValueInfo *> under = inputsUnder(value);
  const ValueInfo *input = under.empty() ? nullptr : under.front();
  if (!input)
    return "";
  std::string text = " (it depends on input '" + input->name + "')";
  // A small input of a known shape can be fixed to a value.
  int64_t elements = product(input->dims);
  if (input->hasShape && elements >= 1 && elements <= 16)
    text += "; fix the input to a value with --fix-value=" + input->name + "=" +
            (input->elementType == kBool ? "true" : "VALUE") +
            " (a constant of the build) if it is the same on every run";
  return text;
}

llvm::Error GraphImporter::notKnown(const Node &node, const std::string &value,
                                    const std::string &what) {
  return fail(label(node) + ": its " + what + " '" + value +
              "' is not known when the model is compiled" + dependsOn(value) + "; Kiln folds " +
              node.opType + " only where it is known at compile time");
}

llvm::Expected<std::vector<Entry>> GraphImporter::inlineGraph(const Node &owner,
                                                              const std::string &attr,
                                                              const std::vector<Entry> &formals) {
  const Attribute *a = owner.attribute(attr);
  if (!a || !a->g)
    return fail(label(owner) + ": attribute '" + attr + "' is not a graph");
  const Graph &g = *a->g;
  if (g.inputs.size() != formals.size())
    return fail(label(owner) + ": " + attr + " has " + llvm::Twine(g.inputs.size()) +
                " inputs where " + llvm::Twine(formals.size()) + " are bound");
  for (size_t k = 0; k < formals.size(); ++k)
    values[g.inputs[k]] = formals[k];
  for (const auto &[name, tensor] : g.initializers)
    values[name] = Entry{Value(), std::make_shared<const Tensor>(tensor)};
  std::string outer = scope;
  scope = label(owner) + " " + attr + " ";
  llvm::Error err = importNodes(g.nodes);
  scope = outer;
  if (err)
    return std::move(err);
  std::vector<Entry> outs;
  for (const std::string &name : g.outputs) {
    auto it = values.find(name);
    if (it == values.end())
      return fail(label(owner) + ": " + attr + " output '" + name + "' is not computed");
    outs.push_back(it->second);
  }
  return outs;
}

llvm::Error GraphImporter::importIf(const Node &node) {
  auto cond = node.inputs.empty() ? values.end() : values.find(node.inputs[0]);
  if (cond == values.end())
    return fail(label(node) + ": the condition is missing");
  if (!cond->second.constant)
    return importRuntimeIf(node);
  if (cond->second.constant->numElements() != 1)
    return fail(label(node) + ": the condition '" + node.inputs[0] + "' has " +
                llvm::Twine(cond->second.constant->numElements()) + " elements; If takes one");
  bool taken = cond->second.constant->at(0) != 0;
  decide(node, taken ? "then_branch taken" : "else_branch taken",
         "the condition '" + node.inputs[0] + "' is " + (taken ? "true" : "false") +
             " when the model is compiled" + fromInputs(node.inputs[0]));
  auto outs = inlineGraph(node, taken ? "then_branch" : "else_branch", {});
  if (!outs)
    return outs.takeError();
  if (outs->size() != node.outputs.size())
    return fail(label(node) + ": the taken branch has " + llvm::Twine(outs->size()) +
                " outputs for the node's " + llvm::Twine(node.outputs.size()));
  for (size_t k = 0; k < outs->size(); ++k)
    if (!node.outputs[k].empty())
      values[node.outputs[k]] = (*outs)[k];
  return llvm::Error::success();
}

llvm::Error GraphImporter::importRuntimeIf(const Node &node) {
  // A branch that does not convert says why both are converted: the
  // condition is known only at run time (and what fixing it would do).
  auto inBranch = [&](llvm::Error e) -> llvm::Error {
    std::string message = llvm::toString(std::move(e));
    if (llvm::StringRef(message).ends_with("fix it with --fix-shape"))
      return makeError(message); // importONNX adds the shape suggestion
    return makeError(message + "; both branches of " + label(node) +
                     " are converted because its condition '" + node.inputs[0] +
                     "' is computed at run time" + dependsOn(node.inputs[0]));
  };
  auto thenOuts = inlineGraph(node, "then_branch", {});
  if (!thenOuts)
    return inBranch(thenOuts.takeError());
  auto elseOuts = inlineGraph(node, "else_branch", {});
  if (!elseOuts)
    return inBranch(elseOuts.takeError());
  if (thenOuts->size() != node.outputs.size() || elseOuts->size() != node.outputs.size())
    return fail(label(node) + ": the branches have " + llvm::Twine(thenOuts->size()) + " and " +
                llvm::Twine(elseOuts->size()) + " outputs for the node's " +
                llvm::Twine(node.outputs.size()));
  NodeContext ctx(*this, node, nodeLocation(node));
  FailureOr<Value> cond = materialize(node.inputs[0], ctx.loc());
  if (failed(cond))
    return notKnown(node, node.inputs[0], "condition");
  auto condType = cond->getType().cast<RankedTensorType>();
  if (!condType.getElementType().isInteger(1) || condType.getNumElements() != 1)
    return fail(label(node) + ": the condition '" + node.inputs[0] + "' must be one bool");
  decide(node, "both branches, selected at run time",
         "the condition '" + node.inputs[0] + "' is computed at run time" +
             fromInputs(node.inputs[0], /*atRunTime=*/true) +
             "; the branches' outputs agree in type and shape");
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    if (node.outputs[k].empty())
      continue;
    FailureOr<Value> a = materializeEntry((*thenOuts)[k], ctx.loc());
    FailureOr<Value> b = materializeEntry((*elseOuts)[k], ctx.loc());
    if (failed(a) || failed(b))
      return fail(label(node) + ": output '" + node.outputs[k] +
                  "' has an unsupported element type");
    if (a->getType() != b->getType())
      return fail(label(node) + ": its condition '" + node.inputs[0] +
                  "' is not known when the model is compiled and the branches give output '" +
                  node.outputs[k] +
                  "' different types or shapes; Kiln selects between the "
                  "branches at run time only where they agree" +
                  dependsOn(node.inputs[0]));
    auto type = a->getType().cast<RankedTensorType>();
    Value c = ctx.reshape(*cond, llvm::SmallVector<int64_t>(type.getRank(), 1));
    values[node.outputs[k]] = Entry{ctx.create<tosa::SelectOp>(type, c, *a, *b), nullptr};
  }
  return llvm::Error::success();
}

/// A scalar constant of `type` (the Loop's iteration number and condition).
static Entry scalarEntry(int32_t type, int64_t v) {
  Tensor t;
  t.dataType = type;
  t.ints = {v};
  return Entry{Value(), std::make_shared<const Tensor>(std::move(t))};
}

llvm::Error GraphImporter::importLoop(const Node &node) {
  auto known = [&](size_t i) -> const Tensor * {
    if (i >= node.inputs.size() || node.inputs[i].empty())
      return nullptr;
    return values.at(node.inputs[i]).constant.get();
  };
  bool hasTrip = node.inputs.size() > 0 && !node.inputs[0].empty();
  bool hasCond = node.inputs.size() > 1 && !node.inputs[1].empty();
  if (hasTrip && !known(0))
    return notKnown(node, node.inputs[0], "trip count");
  if (hasCond && !known(1))
    return notKnown(node, node.inputs[1], "condition");
  int64_t trip = hasTrip ? int64_t(known(0)->at(0)) : kMaxUnroll + 1;
  bool cond = hasCond ? known(1)->at(0) != 0 : true;
  if (hasTrip && trip > kMaxUnroll)
    return fail(label(node) + ": trip count " + llvm::Twine(trip) + " is above the " +
                llvm::Twine(kMaxUnroll) + " iterations Kiln unrolls a Loop to");
  std::vector<Entry> carried;
  for (size_t k = 2; k < node.inputs.size(); ++k)
    carried.push_back(values.at(node.inputs[k]));
  const Attribute *body = node.attribute("body");
  size_t numScans = body && body->g && body->g->outputs.size() > carried.size() + 1
                        ? body->g->outputs.size() - carried.size() - 1
                        : 0;
  std::vector<std::vector<Entry>> scans(numScans);
  size_t decisionAt = controlFlow.size(); // before the body's own
  int64_t ran = 0;
  const size_t opsBefore = opsInBlock(builder);
  for (int64_t i = 0; i < trip && cond; ++i, ++ran) {
    if (i == kMaxUnroll)
      return fail(label(node) + ": the loop runs past the " + llvm::Twine(kMaxUnroll) +
                  " iterations Kiln unrolls a Loop to");
    if (size_t added = opsInBlock(builder) - opsBefore; added > kMaxUnrolledOps)
      return fail(
          label(node) + ": unrolled, the loop passes " + llvm::Twine(kMaxUnrolledOps) +
          " operations after " + llvm::Twine(i) +
          " iterations; Kiln unrolls a Loop to at most that many (compile time grows with the "
          "square of the kernels)");
    std::vector<Entry> formals{scalarEntry(kInt64, i), scalarEntry(kBool, cond)};
    formals.insert(formals.end(), carried.begin(), carried.end());
    auto outs = inlineGraph(node, "body", formals);
    if (!outs)
      return outs.takeError();
    if (outs->size() != 1 + carried.size() + numScans)
      return fail(label(node) + ": the body has " + llvm::Twine(outs->size()) + " outputs");
    if (!(*outs)[0].constant)
      return notKnown(node, body->g->outputs[0], "body's condition output");
    cond = (*outs)[0].constant->at(0) != 0;
    for (size_t k = 0; k < carried.size(); ++k)
      carried[k] = (*outs)[1 + k];
    for (size_t j = 0; j < numScans; ++j)
      scans[j].push_back((*outs)[1 + carried.size() + j]);
  }
  if (node.outputs.size() > carried.size() + numScans)
    return fail(label(node) + ": the node has more outputs than the body computes");
  std::string why = hasTrip ? "the trip count '" + node.inputs[0] + "' is " + std::to_string(trip) +
                                  fromInputs(node.inputs[0])
                            : std::string("no trip count");
  if (hasCond)
    why += "; the condition '" + node.inputs[1] + "' and the body's are known";
  decide(node, "unrolled " + std::to_string(ran) + " iterations", why);
  std::rotate(controlFlow.begin() + decisionAt, controlFlow.end() - 1, controlFlow.end());
  for (size_t k = 0; k < node.outputs.size(); ++k) {
    if (node.outputs[k].empty())
      continue;
    if (k < carried.size())
      values[node.outputs[k]] = carried[k];
    else if (llvm::Error err = bindScanOutput(node, node.outputs[k], scans[k - carried.size()]))
      return err;
  }
  return llvm::Error::success();
}

llvm::Expected<Entry> GraphImporter::sliceAxis(const Node &node, Entry entry, int64_t axis,
                                               int64_t index) {
  NodeContext ctx(*this, node, nodeLocation(node));
  FailureOr<Value> v = materializeEntry(entry, ctx.loc());
  if (failed(v))
    return fail(label(node) + ": a scan input has an unsupported element type");
  llvm::SmallVector<int64_t> shape(v->getType().cast<RankedTensorType>().getShape());
  llvm::SmallVector<int64_t> start(shape.size(), 0), size = shape;
  start[axis] = index;
  size[axis] = 1;
  shape.erase(shape.begin() + axis);
  return Entry{ctx.reshape(ctx.slice(*v, start, size), shape), nullptr};
}

llvm::Expected<Entry> GraphImporter::stack(const Node &node, std::vector<Entry> parts,
                                           int64_t axis) {
  NodeContext ctx(*this, node, nodeLocation(node));
  llvm::SmallVector<Value> rows;
  for (Entry &e : parts) {
    FailureOr<Value> v = materializeEntry(e, ctx.loc());
    if (failed(v))
      return fail(label(node) + ": a scan output has an unsupported element type");
    llvm::SmallVector<int64_t> shape(v->getType().cast<RankedTensorType>().getShape());
    if (axis > int64_t(shape.size()))
      return fail(label(node) + ": scan output axis " + llvm::Twine(axis) + " is out of range");
    shape.insert(shape.begin() + axis, 1);
    rows.push_back(ctx.reshape(*v, shape));
  }
  auto type = rows.front().getType().cast<RankedTensorType>();
  for (Value r : rows)
    if (r.getType() != type)
      return fail(label(node) + ": the body's scan outputs change shape between iterations");
  llvm::SmallVector<int64_t> shape(type.getShape());
  shape[axis] = int64_t(rows.size());
  if (rows.size() == 1)
    return Entry{rows.front(), nullptr};
  return Entry{ctx.create<tosa::ConcatOp>(RankedTensorType::get(shape, type.getElementType()), rows,
                                          ctx.builder().getI64IntegerAttr(axis)),
               nullptr};
}

llvm::Expected<std::vector<Entry>>
GraphImporter::runScan(const Node &node, std::vector<Entry> states, std::vector<Entry> scans,
                       llvm::ArrayRef<int64_t> axes, llvm::ArrayRef<int64_t> reverse,
                       llvm::ArrayRef<int64_t> outAxes, llvm::ArrayRef<int64_t> outReverse) {
  auto dims = [&](const Entry &e) {
    return e.constant
               ? e.constant->dims
               : std::vector<int64_t>(e.value.getType().cast<RankedTensorType>().getShape().begin(),
                                      e.value.getType().cast<RankedTensorType>().getShape().end());
  };
  int64_t steps = -1;
  for (size_t j = 0; j < scans.size(); ++j) {
    std::vector<int64_t> d = dims(scans[j]);
    int64_t axis = axes[j] < 0 ? axes[j] + int64_t(d.size()) : axes[j];
    if (axis < 0 || axis >= int64_t(d.size()))
      return fail(label(node) + ": scan input axis " + llvm::Twine(axes[j]) +
                  " is out of range for rank " + llvm::Twine(d.size()));
    if (steps >= 0 && d[axis] != steps)
      return fail(label(node) + ": the scan inputs have lengths " + llvm::Twine(steps) + " and " +
                  llvm::Twine(d[axis]));
    steps = d[axis];
  }
  if (steps < 1)
    return fail(label(node) + ": Scan needs a scan input of at least one step");
  if (steps > kMaxUnroll)
    return fail(label(node) + ": " + llvm::Twine(steps) + " steps are above the " +
                llvm::Twine(kMaxUnroll) + " iterations Kiln unrolls a Scan to");
  decide(node, "unrolled " + std::to_string(steps) + " iterations",
         "the scan inputs' length " + std::to_string(steps) + " is static");
  std::vector<std::vector<Entry>> outs;
  const size_t opsBefore = opsInBlock(builder);
  for (int64_t t = 0; t < steps; ++t) {
    if (size_t added = opsInBlock(builder) - opsBefore; added > kMaxUnrolledOps)
      return fail(label(node) + ": unrolled, the scan passes " + llvm::Twine(kMaxUnrolledOps) +
                  " operations after " + llvm::Twine(t) +
                  " steps; Kiln unrolls a Scan to at most that many (compile time grows with the "
                  "square of the kernels)");
    std::vector<Entry> formals = states;
    for (size_t j = 0; j < scans.size(); ++j) {
      int64_t rank = int64_t(dims(scans[j]).size());
      int64_t axis = axes[j] < 0 ? axes[j] + rank : axes[j];
      auto slice = sliceAxis(node, scans[j], axis, reverse[j] ? steps - 1 - t : t);
      if (!slice)
        return slice.takeError();
      formals.push_back(*slice);
    }
    auto results = inlineGraph(node, "body", formals);
    if (!results)
      return results.takeError();
    if (results->size() < states.size())
      return fail(label(node) + ": the body has fewer outputs than states");
    for (size_t k = 0; k < states.size(); ++k)
      states[k] = (*results)[k];
    outs.resize(results->size() - states.size());
    for (size_t k = states.size(); k < results->size(); ++k)
      outs[k - states.size()].push_back((*results)[k]);
  }
  std::vector<Entry> result = states;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (k < outReverse.size() && outReverse[k])
      std::reverse(outs[k].begin(), outs[k].end());
    int64_t axis = k < outAxes.size() ? outAxes[k] : 0;
    if (axis < 0)
      axis += int64_t(dims(outs[k].front()).size()) + 1;
    auto stacked = stack(node, outs[k], axis);
    if (!stacked)
      return stacked.takeError();
    result.push_back(*stacked);
  }
  return result;
}

/// Scan (8, 9, 11, 16): the body runs once per step of the scan inputs
/// (scan_input_axes, scan_input_directions), carrying the states; scan
/// outputs are stacked along scan_output_axes (reversed for
/// scan_output_directions = 1). Opset 8's form has a batch dimension 0 on
/// every input and output, the scan axis 1 and `directions`, and an
/// optional sequence_lens that must be constant and the full length: it
/// is unrolled once per batch row and the rows stacked.
llvm::Error GraphImporter::importScan(const Node &node) {
  const Attribute *m = node.attribute("num_scan_inputs");
  if (!m || m->kind != Attribute::Int)
    return fail(label(node) + ": attribute num_scan_inputs is missing");
  int64_t numScans = m->i;
  auto ints = [&](const char *name, size_t count, int64_t def) {
    const Attribute *a = node.attribute(name);
    return a && a->kind == Attribute::Ints ? a->ints : std::vector<int64_t>(count, def);
  };
  bool batched = model.opset < 9;
  size_t first = batched ? 1 : 0;
  if (numScans < 1 || int64_t(node.inputs.size()) < int64_t(first) + numScans)
    return fail(label(node) + ": num_scan_inputs " + llvm::Twine(numScans) +
                " does not fit the node's " + llvm::Twine(node.inputs.size()) + " inputs");
  size_t numStates = node.inputs.size() - first - numScans;
  std::vector<Entry> states, scans;
  for (size_t k = first; k < node.inputs.size(); ++k)
    (k < first + numStates ? states : scans).push_back(values.at(node.inputs[k]));
  std::vector<Entry> results;
  if (!batched) {
    std::vector<int64_t> axes = ints("scan_input_axes", numScans, 0);
    std::vector<int64_t> dirs = ints("scan_input_directions", numScans, 0);
    size_t numOuts = node.outputs.size() - std::min(node.outputs.size(), numStates);
    std::vector<int64_t> outAxes = ints("scan_output_axes", numOuts, 0);
    std::vector<int64_t> outDirs = ints("scan_output_directions", numOuts, 0);
    if (axes.size() != size_t(numScans) || dirs.size() != size_t(numScans))
      return fail(label(node) + ": scan_input_axes and scan_input_directions need one value "
                                "per scan input");
    auto r = runScan(node, states, scans, axes, dirs, outAxes, outDirs);
    if (!r)
      return r.takeError();
    results = std::move(*r);
  } else {
    std::vector<int64_t> dirs = ints("directions", numScans, 0);
    if (dirs.size() != size_t(numScans))
      return fail(label(node) + ": directions needs one value per scan input");
    Entry any = scans.front();
    int64_t rows = any.constant ? any.constant->dims[0]
                                : any.value.getType().cast<RankedTensorType>().getDimSize(0);
    if (rows * (any.constant ? any.constant->dims.at(1)
                             : any.value.getType().cast<RankedTensorType>().getDimSize(1)) >
        kMaxUnroll)
      return fail(label(node) + ": batch x steps is above the " + llvm::Twine(kMaxUnroll) +
                  " iterations Kiln unrolls a Scan to");
    if (!node.inputs[0].empty()) {
      const Tensor *lens = values.at(node.inputs[0]).constant.get();
      int64_t steps = any.constant ? any.constant->dims.at(1)
                                   : any.value.getType().cast<RankedTensorType>().getDimSize(1);
      if (!lens)
        return notKnown(node, node.inputs[0], "sequence_lens");
      for (int64_t k = 0; k < lens->numElements(); ++k)
        if (int64_t(lens->at(k)) != steps)
          return fail(label(node) + ": sequence_lens holds " + llvm::Twine(int64_t(lens->at(k))) +
                      " where the scan inputs have " + llvm::Twine(steps) +
                      " steps; Kiln unrolls full-length sequences");
    }
    std::vector<std::vector<Entry>> perRow;
    for (int64_t b = 0; b < rows; ++b) {
      std::vector<Entry> rs, rx;
      for (Entry &e : states) {
        auto v = sliceAxis(node, e, 0, b);
        if (!v)
          return v.takeError();
        rs.push_back(*v);
      }
      for (Entry &e : scans) {
        auto v = sliceAxis(node, e, 0, b);
        if (!v)
          return v.takeError();
        rx.push_back(*v);
      }
      auto r = runScan(node, rs, rx, std::vector<int64_t>(numScans, 0), dirs, {}, {});
      if (!r)
        return r.takeError();
      perRow.push_back(std::move(*r));
    }
    for (size_t k = 0; k < perRow.front().size(); ++k) {
      std::vector<Entry> parts;
      for (auto &row : perRow)
        parts.push_back(row[k]);
      auto stacked = stack(node, parts, 0);
      if (!stacked)
        return stacked.takeError();
      results.push_back(*stacked);
    }
  }
  if (node.outputs.size() > results.size())
    return fail(label(node) + ": the node has more outputs than the body computes");
  for (size_t k = 0; k < node.outputs.size(); ++k)
    if (!node.outputs[k].empty())
      values[node.outputs[k]] = results[k];
  return llvm::Error::success();
}

/// Stacks a Loop's per-iteration scan values along a new axis 0 (folded
/// when every part is a constant, else one tosa.concat of reshapes).
llvm::Error GraphImporter::bindScanOutput(const Node &node, const std::string &name,
                                          std::vector<Entry> &parts) {
  if (parts.empty())
    return fail(label(node) + ": scan output '" + name +
                "' is empty (the loop runs no "
                "iteration); Kiln compiles tensors of at least one element");
  bool allConstant = llvm::all_of(parts, [](const Entry &e) { return bool(e.constant); });
  if (allConstant) {
    std::vector<Tensor> rows;
    std::vector<const Tensor *> ptrs;
    std::vector<int64_t> dims = parts.front().constant->dims;
    dims.insert(dims.begin(), 1);
    for (const Entry &e : parts)
      rows.push_back(fold::reshapedTensor(*e.constant, dims));
    for (const Tensor &t : rows)
      ptrs.push_back(&t);
    dims[0] = int64_t(parts.size());
    Tensor stacked = fold::concatTensors(ptrs, 0, dims);
    stacked.name = name;
    values[name] = Entry{Value(), std::make_shared<const Tensor>(std::move(stacked))};
    return llvm::Error::success();
  }
  NodeContext ctx(*this, node, nodeLocation(node));
  llvm::SmallVector<Value> rows;
  for (Entry &e : parts) {
    FailureOr<Value> v = materializeEntry(e, ctx.loc());
    if (failed(v))
      return fail(label(node) + ": scan output '" + name + "' has an unsupported element type");
    auto type = v->getType().cast<RankedTensorType>();
    llvm::SmallVector<int64_t> shape{1};
    shape.append(type.getShape().begin(), type.getShape().end());
    rows.push_back(ctx.reshape(*v, shape));
  }
  auto type = rows.front().getType().cast<RankedTensorType>();
  llvm::SmallVector<int64_t> shape(type.getShape());
  shape[0] = int64_t(rows.size());
  Value stacked =
      rows.size() == 1
          ? rows.front()
          : ctx.create<tosa::ConcatOp>(RankedTensorType::get(shape, type.getElementType()), rows,
                                       ctx.builder().getI64IntegerAttr(0));
  values[name] = Entry{stacked, nullptr};
  return llvm::Error::success();
}

// --- NodeContext --------------------------------------------------------------

NodeContext::NodeContext(GraphImporter &importer, const Node &node, Location loc)
    : TosaBuilder(importer.builder, loc), importer(importer), onnxNode(node) {}

int64_t NodeContext::opset() const { return importer.model.opset; }
MLIRContext *NodeContext::context() { return &importer.context; }

bool NodeContext::hasInput(int i) const {
  return i >= 0 && i < numInputs() && !onnxNode.inputs[i].empty();
}

FailureOr<Value> NodeContext::input(int i) {
  if (!hasInput(i))
    return fail("input " + llvm::Twine(i) + " is missing");
  const std::string &name = onnxNode.inputs[i];
  if (const Tensor *t = constant(i); t && t->numElements() == 0)
    return fail("input '" + name + "' is an empty tensor (shape " + shapeString(t->dims) +
                "); Kiln compiles tensors of at least one element");
  int32_t type = inputType(i);
  if ((type == kInt8 || type == kUInt8) && !movesQuantizedData(onnxNode.opType))
    return fail("input '" + name + "' has element type " + dataTypeName(type) + "; Kiln " +
                "computes int8 and uint8 tensors in QuantizeLinear, DequantizeLinear, "
                "DynamicQuantizeLinear, QLinearConv, QLinearMatMul, ConvInteger, "
                "MatMulInteger, QDQ groups and data movement (Reshape, Flatten, Squeeze, "
                "Unsqueeze, Transpose, Identity, Concat)");
  FailureOr<Value> v = importer.materialize(name, location);
  if (failed(v))
    return fail("input '" + name + "' has element type " +
                dataTypeName(inputType(i)) +
                "; Kiln computes float32, int32, int64 and bool tensors");
  return v;
}

FailureOr<Value> NodeContext::quantizedInput(int i) {
  if (!hasInput(i))
    return fail("input " + llvm::Twine(i) + " is missing");
  const std::string &name = onnxNode.inputs[i];
  int32_t type = inputType(i);
  if (type != kInt8 && type != kUInt8)
    return fail("input " + llvm::Twine(i) + " ('" + name + "') has element type " +
                dataTypeName(type) + "; it must be int8 or uint8");
  Entry &entry = importer.values.at(name);
  if (entry.value)
    return entry.value;
  const Tensor &t = *entry.constant;
  if (t.numElements() == 0)
    return fail("input '" + name + "' is an empty tensor (shape " + shapeString(t.dims) +
                "); Kiln compiles tensors of at least one element");
  int64_t shift = t.dataType == kUInt8 ? 128 : 0;
  llvm::SmallVector<int8_t> data;
  for (int64_t v : t.ints)
    data.push_back(static_cast<int8_t>(v - shift));
  auto tensorType = RankedTensorType::get(t.dims, builder().getIntegerType(8));
  OpBuilder::InsertionGuard guard(builder());
  builder().setInsertionPointToStart(builder().getInsertionBlock());
  entry.value = builder().create<tosa::ConstOp>(
      location, tensorType, DenseElementsAttr::get(tensorType, llvm::ArrayRef<int8_t>(data)));
  entry.dataType = t.dataType;
  return entry.value;
}

const Tensor *NodeContext::constant(int i) const {
  if (!hasInput(i))
    return nullptr;
  auto it = importer.values.find(onnxNode.inputs[i]);
  return it == importer.values.end() ? nullptr : it->second.constant.get();
}

std::vector<int64_t> NodeContext::inputShape(int i) const {
  if (!hasInput(i))
    return {};
  const Entry &entry = importer.values.at(onnxNode.inputs[i]);
  if (entry.constant)
    return entry.constant->dims;
  auto type = entry.value.getType().cast<RankedTensorType>();
  return std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
}

int32_t NodeContext::inputType(int i) const {
  if (!hasInput(i))
    return kUndefined;
  const Entry &entry = importer.values.at(onnxNode.inputs[i]);
  if (entry.constant)
    return entry.constant->dataType;
  if (entry.dataType != kUndefined)
    return entry.dataType;
  Type element = entry.value.getType().cast<ShapedType>().getElementType();
  if (element.isF32())
    return kFloat;
  if (element.isInteger(32))
    return kInt32;
  if (element.isInteger(1))
    return kBool;
  return kInt64;
}

FailureOr<std::vector<int64_t>> NodeContext::constantInts(int i) {
  const Tensor *t = constant(i);
  if (!t || t->isFloat())
    return fail("input " + llvm::Twine(i) + " ('" + (hasInput(i) ? onnxNode.inputs[i] : "") +
                "') must be a constant integer tensor: its value must be known when the "
                "model is compiled");
  return t->ints;
}

FailureOr<std::vector<float>> NodeContext::constantFloats(int i) {
  const Tensor *t = constant(i);
  if (!t)
    return fail("input " + llvm::Twine(i) + " ('" + (hasInput(i) ? onnxNode.inputs[i] : "") +
                "') must be a constant: its value must be known when the model is compiled");
  if (t->isFloat())
    return t->floats;
  return std::vector<float>(t->ints.begin(), t->ints.end());
}

bool NodeContext::hasAttr(const std::string &name) const {
  return onnxNode.attribute(name) != nullptr;
}
int64_t NodeContext::attrInt(const std::string &name, int64_t def) const {
  const Attribute *a = onnxNode.attribute(name);
  return a && a->kind == Attribute::Int ? a->i : def;
}
float NodeContext::attrFloat(const std::string &name, float def) const {
  const Attribute *a = onnxNode.attribute(name);
  return a && a->kind == Attribute::Float ? a->f : def;
}
std::string NodeContext::attrString(const std::string &name, const std::string &def) const {
  const Attribute *a = onnxNode.attribute(name);
  return a && a->kind == Attribute::String ? a->s : def;
}
std::vector<int64_t> NodeContext::attrInts(const std::string &name,
                                           std::vector<int64_t> def) const {
  const Attribute *a = onnxNode.attribute(name);
  return a && a->kind == Attribute::Ints ? a->ints : def;
}
std::vector<float> NodeContext::attrFloats(const std::string &name,
                                           std::vector<float> def) const {
  const Attribute *a = onnxNode.attribute(name);
  return a && a->kind == Attribute::Floats ? a->floats : def;
}
const Tensor *NodeContext::attrTensor(const std::string &name) const {
  const Attribute *a = onnxNode.attribute(name);
  return a && a->kind == Attribute::TensorValue ? a->t.get() : nullptr;
}

bool NodeContext::hasOutput(int i) const {
  return i >= 0 && i < numOutputs() && !onnxNode.outputs[i].empty();
}

bool NodeContext::inferenceKnownWrong(llvm::ArrayRef<int64_t> inferred,
                                      llvm::ArrayRef<int64_t> computed) const {
  // libonnx 1.12 sizes a ceil_mode pool as ceil((in + pads - extent) /
  // stride) + 1 without the rule that the last window starts inside the
  // input or its begin padding, which PyTorch, ONNX Runtime 1.30 and ONNX's
  // reference implementation apply (MaxPool k3 s3 pads 1 on 8: 3, not 4;
  // tests/onnx/window_cases.py): one less along such axes is right.
  // libonnx 1.12 infers STFT's bins with onesided defaulting to 0; the
  // operator's default (and ONNX Runtime's, and the test data's) is 1.
  if (onnxNode.opType == "STFT" && !hasAttr("onesided") && inferred.size() == 4 &&
      computed.size() == 4 && inferred[2] >= 0 && computed[2] == inferred[2] / 2 + 1)
    return true;
  if ((onnxNode.opType != "MaxPool" && onnxNode.opType != "AveragePool") ||
      attrInt("ceil_mode", 0) != 1 || inferred.size() != computed.size())
    return false;
  for (size_t k = 0; k < inferred.size(); ++k)
    if (inferred[k] >= 0 && inferred[k] != computed[k] && inferred[k] != computed[k] + 1)
      return false;
  return true;
}

LogicalResult NodeContext::setOutput(int i, Value value) {
  if (!hasOutput(i))
    return success(); // an unnamed optional output nobody reads
  auto type = value.getType().dyn_cast<RankedTensorType>();
  if (!type || !type.hasStaticShape())
    return fail("the shape of output '" + onnxNode.outputs[i] +
                "' cannot be determined when the model is compiled");
  for (int64_t k = 0; k < type.getRank(); ++k)
    if (type.getDimSize(k) == 0)
      return fail("output '" + onnxNode.outputs[i] + "' has shape " +
                  shapeString(type.getShape()) + ", zero-size in dimension " +
                  llvm::Twine(k) + "; Kiln compiles tensors of at least one element");
  // Where ONNX shape inference knows the shape, it must agree.
  auto known = importer.model.values.find(onnxNode.outputs[i]);
  if (!importer.inferenceDiverged && known != importer.model.values.end() &&
      known->second.hasShape) {
    const ValueInfo &info = known->second;
    bool same = info.dims.size() == size_t(type.getRank());
    for (size_t k = 0; same && k < info.dims.size(); ++k)
      same = info.dims[k] < 0 || info.dims[k] == type.getDimSize(k);
    if (!same && inferenceKnownWrong(info.dims, type.getShape()))
      importer.inferenceDiverged = true;
    else if (!same)
      return fail("computed output '" + onnxNode.outputs[i] + "' of shape " +
                  shapeString(type.getShape()) + " where ONNX shape inference gives " +
                  shapeString(info.dims) + " (an importer error: please report it)");
  }
  Entry entry{value, nullptr};
  if (type.getElementType().isInteger(8)) {
    // int8 or uint8: as ONNX's inference types it, else as the node's first
    // int8/uint8 input (data movement keeps the type).
    if (known != importer.model.values.end() &&
        (known->second.elementType == kInt8 || known->second.elementType == kUInt8))
      entry.dataType = known->second.elementType;
    for (int k = 0; entry.dataType == kUndefined && k < numInputs(); ++k)
      if (inputType(k) == kInt8 || inputType(k) == kUInt8)
        entry.dataType = inputType(k);
    if (entry.dataType == kUndefined)
      entry.dataType = kInt8;
  }
  importer.values[onnxNode.outputs[i]] = entry;
  return success();
}

LogicalResult NodeContext::setQuantizedOutput(int i, Value value, int32_t dataType) {
  if (failed(setOutput(i, value)))
    return failure();
  if (hasOutput(i))
    importer.values[onnxNode.outputs[i]].dataType = dataType;
  return success();
}

LogicalResult NodeContext::setConstant(int i, Tensor value) {
  if (!hasOutput(i))
    return success();
  value.name = onnxNode.outputs[i];
  importer.values[onnxNode.outputs[i]] = Entry{Value(), std::make_shared<const Tensor>(std::move(value))};
  return success();
}

LogicalResult NodeContext::fail(const llvm::Twine &message) {
  if (importer.firstError.empty())
    importer.firstError = importer.scope + "node #" + std::to_string(onnxNode.index) + " " +
                          nodeTitle(onnxNode) + " (opset " + std::to_string(opset()) +
                          "): " + message.str();
  return failure();
}

FailureOr<Value> NodeContext::constTensor(const Tensor &tensor) {
  Type element = importer.elementType(tensor.dataType);
  if (!element)
    return fail("constant '" + tensor.name + "' has element type " +
                dataTypeName(tensor.dataType) + "; Kiln computes float32, int32, int64 and bool");
  if (element.isF32())
    return constF32(tensor.dims, tensor.floats);
  if (element.isInteger(64))
    return constI64(tensor.dims, tensor.ints);
  auto type = RankedTensorType::get(tensor.dims, element);
  if (element.isInteger(1)) {
    llvm::SmallVector<bool> bits(tensor.ints.begin(), tensor.ints.end());
    return builder()
        .create<tosa::ConstOp>(location, type, DenseElementsAttr::get(type, llvm::ArrayRef<bool>(bits)))
        .getResult();
  }
  llvm::SmallVector<int32_t> v(tensor.ints.begin(), tensor.ints.end());
  return constI32(tensor.dims, v);
}

Value NodeContext::transposeToChannelsLast(Value value) {
  int64_t rank = value.getType().cast<RankedTensorType>().getRank();
  llvm::SmallVector<int32_t> perm = {0};
  for (int32_t k = 2; k < rank; ++k)
    perm.push_back(k);
  perm.push_back(1);
  return transpose(value, perm);
}

Value NodeContext::transposeToChannelsFirst(Value value) {
  int64_t rank = value.getType().cast<RankedTensorType>().getRank();
  llvm::SmallVector<int32_t> perm = {0, int32_t(rank - 1)};
  for (int32_t k = 1; k < rank - 1; ++k)
    perm.push_back(k);
  return transpose(value, perm);
}

// --- Entry points -----------------------------------------------------------

/// The fixed inputs as the initializers readONNXModel adds.
static std::vector<Tensor> inputValues(const std::vector<FixedInput> &fixed) {
  static const std::map<std::string, int32_t> types = {
      {"float32", kFloat}, {"int8", kInt8},     {"uint8", kUInt8},
      {"int16", kInt16},   {"uint16", kUInt16}, {"int32", kInt32},
      {"uint32", kUInt32}, {"int64", kInt64},   {"bool", kBool}};
  std::vector<Tensor> out;
  for (const FixedInput &f : fixed) {
    Tensor t;
    t.name = f.name;
    t.dataType = types.at(f.elementType); // checkValueFixes took only these
    t.dims = f.shape;
    for (const FixedNumber &v : f.values) {
      const int64_t *i = std::get_if<int64_t>(&v);
      if (t.dataType == kFloat)
        t.floats.push_back(i ? float(*i) : float(std::get<double>(v)));
      else
        t.ints.push_back(*i); // whole numbers in range (checkValueFixes)
    }
    out.push_back(std::move(t));
  }
  return out;
}

static std::vector<InputShape> inputShapes(const std::vector<ShapeFix> &fixes) {
  std::vector<InputShape> out;
  for (const ShapeFix &fix : fixes)
    out.push_back({fix.input, fix.shape});
  return out;
}

/// "1x3x224x224".
static std::string dimsText(llvm::ArrayRef<int64_t> dims) {
  std::string s;
  for (int64_t d : dims)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

/// The inputs `open` with the shapes that imported (`works`, in the same
/// order; empty if none did) as kiln/ModelInputs.h data.
static std::vector<UnfixedInput> unfixedInputs(const Model &model,
                                               const std::vector<const ValueInfo *> &open,
                                               const std::vector<ShapeFix> &works) {
  std::vector<UnfixedInput> out;
  for (size_t j = 0; j < open.size(); ++j) {
    UnfixedInput u;
    u.input.name = open[j]->name;
    u.input.index = int(open[j] - model.inputs.data());
    u.input.elementType = dataTypeName(open[j]->elementType);
    u.input.shape = open[j]->dims;
    u.input.dimNames = open[j]->dimParams;
    u.input.dimNames.resize(u.input.shape.size());
    if (j < works.size())
      u.suggestion = works[j].shape;
    out.push_back(std::move(u));
  }
  return out;
}

/// After a model with symbolic input dimensions fails to import: finds sizes
/// that import (batch 1, other open dimensions tried at common sizes) and
/// names them in the --fix-shape suggestion.
static llvm::Error unfixedInputError(MLIRContext &context, llvm::ArrayRef<uint8_t> bytes,
                                     llvm::StringRef filename, llvm::StringRef directory,
                                     const std::vector<ShapeFix> &fixes,
                                     const std::vector<FixedInput> &values, const Model &model,
                                     std::string message) {
  std::vector<const ValueInfo *> open;
  for (const ValueInfo &in : model.inputs)
    if (in.hasShape && llvm::any_of(in.dims, [](int64_t d) { return d < 0; }))
      open.push_back(&in);
  if (open.empty())
    return makeError(message);
  // One size per symbol: dimensions the model names alike ("batch",
  // "seq") get the same size in every input, or the suggestion would
  // contradict the model.
  auto suggest = [&](int64_t size) {
    std::vector<ShapeFix> all = fixes;
    std::map<std::string, int64_t> bySymbol;
    for (const ValueInfo *in : open) {
      ShapeFix fix{in->name, in->dims};
      for (size_t k = 0; k < fix.shape.size(); ++k) {
        if (fix.shape[k] >= 0)
          continue;
        const std::string symbol = k < in->dimParams.size() ? in->dimParams[k] : "";
        int64_t chosen = k == 0 && fix.shape.size() > 1 ? 1 : size;
        if (!symbol.empty())
          chosen = bySymbol.emplace(symbol, chosen).first->second;
        fix.shape[k] = chosen;
      }
      all.push_back(fix);
    }
    return all;
  };
  for (int64_t size : {224, 128, 64, 32, 1}) {
    std::vector<ShapeFix> all = suggest(size);
    std::string error;
    auto fixed = readONNXModel(bytes.data(), bytes.size(), directory.str(), inputShapes(all), error,
                               inputValues(values));
    if (!fixed)
      continue;
    GraphImporter attempt(context, *fixed, filename);
    auto module = attempt.run();
    if (!module) {
      llvm::consumeError(module.takeError());
      continue;
    }
    message += "=" + all[fixes.size()].input + "=" + dimsText(all[fixes.size()].shape);
    for (size_t i = fixes.size() + 1; i < all.size(); ++i)
      message += " and input '" + all[i].input + "' with --fix-shape=" + all[i].input + "=" +
                 dimsText(all[i].shape);
    return llvm::make_error<UnfixedInputError>(
        message, unfixedInputs(model, open, std::vector<ShapeFix>(all.begin() + fixes.size(), all.end())));
  }
  // No size tried imports: every open input is named, each with DIMS.
  message += "=" + open.front()->name + "=DIMS";
  for (size_t i = 1; i < open.size(); ++i)
    message += " and input '" + open[i]->name + "' with --fix-shape=" + open[i]->name + "=DIMS";
  std::vector<ShapeFix> ones = suggest(1);
  message += " (e.g. " + dimsText(ones[fixes.size()].shape) + ")";
  return llvm::make_error<UnfixedInputError>(message, unfixedInputs(model, open, {}));
}

} // namespace onnx

llvm::Expected<OwningOpRef<ModuleOp>>
importONNX(MLIRContext &context, llvm::ArrayRef<uint8_t> bytes, llvm::StringRef filename,
           llvm::StringRef directory, const std::vector<ShapeFix> &fixes,
           const std::vector<FixedInput> &values) {
  std::string error;
  auto model = onnx::readONNXModel(bytes.data(), bytes.size(), directory.str(),
                                   onnx::inputShapes(fixes), error, onnx::inputValues(values));
  if (!model)
    return makeError(filename + ": " + error);
  onnx::GraphImporter importer(context, *model, filename);
  for (const FixedInput &f : values)
    importer.fixedInputs.insert(f.name);
  auto module = importer.run();
  if (module)
    return module;
  std::string message = llvm::toString(module.takeError());
  if (llvm::StringRef(message).ends_with("fix it with --fix-shape"))
    return onnx::unfixedInputError(context, bytes, filename, directory, fixes, values, *model,
                                   message);
  return makeError(message);
}

} // namespace kiln
