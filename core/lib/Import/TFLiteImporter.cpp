//===- TFLiteImporter.cpp - TFLite flatbuffer -> TOSA ---------------------===//
//
// Reads a TFLite model (schema: core/schema/tflite.fbs, Kiln's subset of the
// TensorFlow Lite schema v3) after flatbuffers verification and emits one
// func.func @main in the TOSA dialect (see Import.h for the form). The
// checks run before conversion live in TFLiteChecks.cpp, what converters
// see in TFLiteOpContext.cpp (TFLiteModelImporter.h lists the files).
//
//===----------------------------------------------------------------------===//
#include "TFLiteModel.h"
#include "TFLiteModelImporter.h"

#include "llvm/ADT/ScopeExit.h"

#include "kiln/Options.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>

using namespace mlir;

namespace kiln {
namespace tfl {

size_t tensorTypeSize(schema::TensorType type) {
  switch (type) {
  case schema::TensorType::FLOAT32:
  case schema::TensorType::INT32:
  case schema::TensorType::UINT32:
    return 4;
  case schema::TensorType::FLOAT16:
  case schema::TensorType::INT16:
  case schema::TensorType::UINT16:
    return 2;
  case schema::TensorType::INT64:
  case schema::TensorType::UINT64:
  case schema::TensorType::FLOAT64:
    return 8;
  case schema::TensorType::INT8:
  case schema::TensorType::UINT8:
  case schema::TensorType::BOOL:
    return 1;
  default:
    return 0;
  }
}

std::string operatorList(const ConverterTable &table) {
  std::vector<std::string> names;
  for (const auto &entry : table)
    names.push_back(schema::EnumNameBuiltinOperator(entry.first));
  std::sort(names.begin(), names.end());
  std::string list;
  for (const std::string &n : names)
    list += (list.empty() ? "" : ", ") + n;
  return list;
}

/// "operator #3 (LOG_SOFTMAX) on int8 tensors is not supported; int8
/// operators: ADD, ..."
static std::string unsupportedQuantized(const OpContext &ctx,
                                        const ConverterTable &integer) {
  std::string list = operatorList(integer);
  return "operator #" + std::to_string(ctx.index()) + " (" + ctx.name() +
         ") on int8/uint8 tensors is not supported; int8 operators: " + list;
}

const ConverterTable &quantizedConverters() {
  static const ConverterTable table = [] {
    ConverterTable t;
    registerQuantizedOps(t);
    registerControlFlowOps(t); // the branches' operators pick their own table
    registerStateOps(t);
    registerSparsityOps(t);
    return t;
  }();
  return table;
}

const ConverterTable &converters() {
  static const ConverterTable table = [] {
    ConverterTable t;
    registerConvOps(t);
    registerElementwiseOps(t);
    registerLogicalOps(t);
    registerShapeOps(t);
    registerReductionOps(t);
    registerMovementOps(t);
    registerRecurrentOps(t);
    registerSvdfOps(t);
    registerControlFlowOps(t);
    registerStateOps(t);
    registerSparsityOps(t);
    return t;
  }();
  return table;
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else { // subnormal: renormalize
      exponent = 127 - 15 + 1;
      while (!(mantissa & 0x400u)) {
        mantissa <<= 1;
        --exponent;
      }
      mantissa &= 0x3ffu;
      bits = sign | (exponent << 23) | (mantissa << 13);
    }
  } else if (exponent == 31) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

std::string tensorName(const schema::Tensor *t, int index) {
  if (t && t->name() && t->name()->size())
    return t->name()->str();
  return "tensor" + std::to_string(index);
}

Value ModelImporter::materializeConstant(int index, Location loc) {
  const schema::Tensor *t = tensor(index);
  llvm::ArrayRef<uint8_t> data = constantData(index);
  std::vector<int64_t> shape = shapeOf(index);
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d; // checkShapes() bounded the product
  // The buffer must hold every element (a damaged file may be shorter).
  size_t elementBytes = tensorTypeSize(t->type());
  if (count < 0 || elementBytes == 0 ||
      data.size() / elementBytes < static_cast<uint64_t>(count))
    return {};
  DenseElementsAttr attr;
  switch (t->type()) {
  case schema::TensorType::FLOAT32:
  case schema::TensorType::FLOAT16: {
    std::vector<float> v(count);
    for (int64_t i = 0; i < count; ++i) {
      if (t->type() == schema::TensorType::FLOAT32) {
        std::memcpy(&v[i], data.data() + 4 * i, 4);
      } else {
        uint16_t h;
        std::memcpy(&h, data.data() + 2 * i, 2);
        v[i] = halfToFloat(h);
      }
    }
    auto type = RankedTensorType::get(shape, builder.getF32Type());
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<float>(v));
    break;
  }
  case schema::TensorType::INT32: {
    std::vector<int32_t> v(count);
    std::memcpy(v.data(), data.data(), 4 * count);
    auto type = RankedTensorType::get(shape, builder.getI32Type());
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<int32_t>(v));
    break;
  }
  case schema::TensorType::INT8:
  case schema::TensorType::UINT8: {
    // uint8 data is stored as int8 (q - 128), as its zero point is.
    std::vector<int8_t> v(count);
    int flip = t->type() == schema::TensorType::UINT8 ? 0x80 : 0;
    for (int64_t i = 0; i < count; ++i)
      v[i] = static_cast<int8_t>(data[i] ^ flip);
    auto type = RankedTensorType::get(shape, builder.getIntegerType(8));
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<int8_t>(v));
    break;
  }
  case schema::TensorType::INT16: {
    // SVDF's int16 weights_time (the only operator that admits INT16
    // tensors, checkOperatorTypes).
    std::vector<int16_t> v(count);
    std::memcpy(v.data(), data.data(), 2 * count);
    auto type = RankedTensorType::get(shape, builder.getIntegerType(16));
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<int16_t>(v));
    break;
  }
  case schema::TensorType::BOOL: {
    // One byte per element, non-zero is true.
    llvm::SmallVector<bool> v(count);
    for (int64_t i = 0; i < count; ++i)
      v[i] = data[i] != 0;
    auto type = RankedTensorType::get(shape, builder.getI1Type());
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<bool>(v));
    break;
  }
  case schema::TensorType::INT64: {
    // TOSA computes in i32; shape-like int64 constants fit.
    std::vector<int32_t> v(count);
    for (int64_t i = 0; i < count; ++i) {
      int64_t x;
      std::memcpy(&x, data.data() + 8 * i, 8);
      v[i] = static_cast<int32_t>(x);
    }
    auto type = RankedTensorType::get(shape, builder.getI32Type());
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<int32_t>(v));
    break;
  }
  default:
    return {};
  }
  return builder.create<tosa::ConstOp>(loc, attr.getType(), attr).getResult();
}

/// The static shape of model input `position` (tensor `index`, named `name`
/// as the signature names it): the recorded
/// one, or the --fix-shape for it (already checked by checkShapeFixes),
/// which gives every dynamic dimension its own size. An input with dynamic
/// dimensions and no fix is recorded in `unfixed` (importTFLite then
/// suggests sizes that compile).
llvm::Expected<std::vector<int64_t>> ModelImporter::inputShape(int position, int index,
                                                               const std::string &name) {
  const schema::Tensor *t = tensor(index);
  std::vector<int64_t> shape = shapeOf(index);
  std::vector<int64_t> signature = shape;
  if (t->shape_signature() && t->shape_signature()->size() == shape.size())
    signature.assign(t->shape_signature()->begin(),
                     t->shape_signature()->end());
  const ShapeFix *fix = nullptr;
  for (const ShapeFix &f : fixes)
    if (f.input == name || f.input == std::to_string(position))
      fix = &f;
  bool dynamic = false;
  for (size_t d = 0; d < signature.size(); ++d)
    dynamic |= signature[d] == -1 || shape[d] == -1;
  if (!fix) {
    if (dynamic)
      unfixed.push_back({position, name, shape, signature});
    for (int64_t &d : shape)
      d = std::max<int64_t>(d, 1);
    return shape;
  }
  // checkShapeFixes (importModelFile) has checked the fix: same rank, each
  // dimension positive, static dimensions unchanged, not given twice.
  // Each dynamic dimension takes its own size; the graph's other dynamic
  // dimensions follow by shape inference.
  for (size_t d = 0; d < signature.size(); ++d)
    if (signature[d] < 0)
      propagating = true;
  return fix->shape;
}

llvm::Expected<OwningOpRef<ModuleOp>> ModelImporter::run() {
  if (llvm::Error err = readModel())
    return std::move(err);
  if (llvm::Error err = checkModel())
    return std::move(err);
  Signature signature;
  if (llvm::Error err = declareSignature(signature))
    return std::move(err);
  Location fileLoc = FileLineColLoc::get(&context, filename, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  (*module)->setAttr("kiln.source", builder.getStringAttr(filename));
  builder.setInsertionPointToEnd(module->getBody());
  func::FuncOp func = createMain(signature, fileLoc);
  if (llvm::Error err = convertOperators())
    return std::move(err);
  if (llvm::Error err = returnOutputs(func, signature, fileLoc))
    return std::move(err);
  // Every shape the model records must be the one TOSA computes from the
  // operands; a corrupted or inconsistent file is caught here, naming the
  // operator, instead of crashing a later phase.
  if (llvm::Error err = checkRecordedShapes(func))
    return std::move(err);
  if (llvm::Error err = verifyModule(*module))
    return std::move(err);
  recordQuantization(*module);
  setControlFlow(*module, controlFlow);
  if (!densifyNotes.empty())
    addWarnings(*module, densifyNotes);
  if (!stateNotes.empty())
    addWarnings(*module, stateNotes);
  return std::move(module);
}

std::optional<std::vector<int64_t>> ModelImporter::knownInts(int index) const {
  if (auto folded = foldedInts.find(index); folded != foldedInts.end())
    return folded->second;
  const schema::Tensor *t = tensor(index);
  llvm::ArrayRef<uint8_t> data = constantData(index);
  if (!t || data.empty())
    return std::nullopt;
  std::vector<int64_t> out;
  switch (t->type()) {
  case schema::TensorType::INT32:
    for (size_t k = 0; k + 4 <= data.size(); k += 4) {
      int32_t x;
      std::memcpy(&x, data.data() + k, 4);
      out.push_back(x);
    }
    return out;
  case schema::TensorType::INT64:
    for (size_t k = 0; k + 8 <= data.size(); k += 8) {
      int64_t x;
      std::memcpy(&x, data.data() + k, 8);
      out.push_back(x);
    }
    return out;
  case schema::TensorType::BOOL:
    for (uint8_t b : data)
      out.push_back(b != 0);
    return out;
  default:
    return std::nullopt;
  }
}

std::string ModelImporter::subgraphName(int index) const {
  std::string name = "subgraph " + std::to_string(index);
  if (model && model->subgraphs() && index >= 0 &&
      index < static_cast<int>(model->subgraphs()->size()))
    if (const schema::SubGraph *g = model->subgraphs()->Get(index);
        g && g->name() && g->name()->size())
      name += " '" + g->name()->str() + "'";
  return name;
}

llvm::Expected<std::vector<Value>>
ModelImporter::inlineSubgraph(int index, llvm::ArrayRef<Value> args,
                              const std::vector<std::optional<std::vector<int64_t>>> &known,
                              std::vector<std::optional<std::vector<int64_t>>> &knownOut,
                              const CallSite &site) {
  int count = model->subgraphs()->size();
  if (index == entry.subgraph)
    return makeError(subgraphName(index) +
                     ", the model itself: a call cannot run the model it is part of");
  if (index < 0 || index >= count)
    return makeError("subgraph " + llvm::Twine(index) +
                     ", which does not exist: the model has subgraphs 0 to " +
                     llvm::Twine(count - 1) + " and subgraph " + llvm::Twine(entry.subgraph) +
                     " is the model itself");
  if (site.depth > kMaxCallDepth)
    return makeError(subgraphName(index) + " is called through " + llvm::Twine(kMaxCallDepth) +
                     " nested calls (a subgraph that calls itself without end?); Kiln converts "
                     "calls nested at most " +
                     llvm::Twine(kMaxCallDepth) + " deep");
  // The caller's frame, restored on every path out.
  const schema::SubGraph *callerGraph = graph;
  std::vector<Value> callerValues = std::move(values);
  std::map<int, std::vector<int64_t>> callerFolded = std::move(foldedInts);
  std::vector<std::optional<TensorQuant>> callerQuant = std::move(quant);
  CallSite callerCall = call;
  int callerIndex = subgraphIndex;
  bool callerPropagating = propagating;
  auto restore = llvm::make_scope_exit([&] {
    graph = callerGraph;
    values = std::move(callerValues);
    foldedInts = std::move(callerFolded);
    quant = std::move(callerQuant);
    call = callerCall;
    subgraphIndex = callerIndex;
    propagating = callerPropagating;
  });
  // Errors come back without the file name: the caller's operator adds its
  // own context and the file.
  std::string prefix = filename + ": ";
  auto plain = [&](llvm::Error err) {
    std::string message = llvm::toString(std::move(err));
    error.clear();
    if (llvm::StringRef(message).startswith(prefix))
      message = message.substr(prefix.size());
    return makeError(message);
  };
  graph = model->subgraphs()->Get(index);
  subgraphIndex = index;
  call = site;
  foldedInts.clear();
  if (!graph || !graph->inputs() || !graph->outputs() || !graph->tensors())
    return makeError("the subgraph has no inputs, outputs or tensors");
  if (llvm::Error err = checkModel())
    return plain(std::move(err));
  if (graph->inputs()->size() != args.size())
    return makeError("the subgraph takes " + llvm::Twine(graph->inputs()->size()) +
                     " inputs; the operator gives " + llvm::Twine(args.size()));
  for (size_t k = 0; k < args.size(); ++k) {
    int t = graph->inputs()->Get(k);
    const schema::Tensor *in = tensor(t);
    if (!in)
      return makeError("input " + llvm::Twine(k) + " refers to a missing tensor");
    auto type = args[k].getType().cast<RankedTensorType>();
    Type element = ioElementType(in->type());
    std::vector<int64_t> recorded = shapeOf(t);
    if (!element || element != type.getElementType())
      return makeError("input " + llvm::Twine(k) + " '" + tensorName(in, t) + "' is " +
                       schema::EnumNameTensorType(in->type()) +
                       " but the operator passes another element type");
    bool sameRank = recorded.size() == static_cast<size_t>(type.getRank());
    for (size_t d = 0; sameRank && d < recorded.size(); ++d) {
      if (recorded[d] == type.getDimSize(d))
        continue;
      bool open = in->shape_signature() && in->shape_signature()->size() == recorded.size() &&
                  in->shape_signature()->Get(d) < 0;
      if (!open)
        return makeError("input " + llvm::Twine(k) + " '" + tensorName(in, t) + "' records shape " +
                         shapeString(recorded) + " but the operator passes " +
                         shapeString(type.getShape()));
      propagating = true; // a dynamic dimension sized by the call
    }
    if (!sameRank)
      return makeError("input " + llvm::Twine(k) + " '" + tensorName(in, t) + "' records shape " +
                       shapeString(recorded) + " but the operator passes " +
                       shapeString(type.getShape()));
    values[t] = args[k];
    if (k < known.size() && known[k])
      foldedInts[t] = *known[k];
  }
  if (llvm::Error err = convertOperators())
    return plain(std::move(err));
  std::vector<Value> results;
  knownOut.clear();
  Location loc = builder.getUnknownLoc();
  for (unsigned k = 0; k < graph->outputs()->size(); ++k) {
    int t = graph->outputs()->Get(k);
    Value v = t >= 0 && t < static_cast<int>(values.size()) ? values[t] : Value();
    if (!v && !constantData(t).empty())
      v = materializeConstant(t, loc);
    if (!v)
      return makeError("output " + llvm::Twine(k) + " '" + tensorName(tensor(t), t) +
                       "' is never computed by any operator");
    results.push_back(v);
    knownOut.push_back(knownInts(t)); // folded, or a constant output
  }
  return results;
}

llvm::Error ModelImporter::readModel() {
  std::string why;
  model = readTFLiteModel(bytes.data(), bytes.size(), why);
  if (!model)
    return fail(why);
  // The signature's subgraph (subgraph 0 without SignatureDefs) is the
  // model, as TFLite's SignatureRunner runs it; the others are converted
  // where an IF, WHILE or CALL_ONCE calls them (TFLiteControlFlowOps.cpp).
  if (model->subgraphs()->size() == 0)
    return fail("the model has no subgraphs");
  std::optional<TFLiteEntry> chosen = tfliteEntry(model, signatureName, why);
  if (!chosen)
    return fail(why);
  entry = std::move(*chosen);
  graph = model->subgraphs()->Get(entry.subgraph);
  subgraphIndex = entry.subgraph;
  if (!graph->inputs() || !graph->outputs() || !graph->tensors())
    return fail("the subgraph has no inputs, outputs or tensors");
  return llvm::Error::success();
}

llvm::Error ModelImporter::checkModel() {
  if (llvm::Error err = checkTensors())
    return err;
  if (llvm::Error err = checkOperators())
    return err;
  if (llvm::Error err = densifySparseTensors())
    return err;
  if (llvm::Error err = checkOperatorTypes())
    return err;
  if (llvm::Error err = checkShapes())
    return err;
  values.assign(graph->tensors()->size(), Value());
  return llvm::Error::success();
}

llvm::Error ModelImporter::declareSignature(Signature &signature) {
  for (int position = 0; position < static_cast<int>(entry.inputs.size()); ++position) {
    const auto &[name, index] = entry.inputs[position];
    const schema::Tensor *t = tensor(index);
    if (!t)
      return fail("model input " + llvm::Twine(position) +
                  " refers to a missing tensor");
    Type element = ioElementType(t->type());
    if (!element)
      return fail("input '" + name + "' has element type " + schema::EnumNameTensorType(t->type()) +
                  "; supported input types: FLOAT32, INT32, INT8, UINT8, BOOL");
    auto shape = inputShape(position, index, name);
    if (!shape)
      return shape.takeError();
    signature.inputs.push_back(RankedTensorType::get(*shape, element));
  }
  // importTFLite turns this into the message with sizes that compile.
  if (!unfixed.empty()) {
    stoppedAtUnfixed = true;
    return fail("input '" + unfixed.front().name + "' has dynamic dimensions");
  }
  for (int position = 0; position < static_cast<int>(entry.outputs.size()); ++position) {
    const auto &[name, index] = entry.outputs[position];
    const schema::Tensor *t = tensor(index);
    if (!t)
      return fail("model output " + llvm::Twine(position) +
                  " refers to a missing tensor");
    Type element = ioElementType(t->type());
    if (!element)
      return fail("output '" + name + "' has element type " +
                  schema::EnumNameTensorType(t->type()) +
                  "; supported output types: FLOAT32, INT32, INT8, UINT8, BOOL");
    signature.outputs.push_back(RankedTensorType::get(shapeOf(index), element));
  }
  return llvm::Error::success();
}

func::FuncOp ModelImporter::createMain(const Signature &signature, Location loc) {
  auto func = builder.create<func::FuncOp>(
      loc, "main", builder.getFunctionType(signature.inputs, signature.outputs));
  for (int position = 0; position < static_cast<int>(signature.inputs.size()); ++position) {
    const auto &[name, index] = entry.inputs[position];
    func.setArgAttr(position, kNameAttr, builder.getStringAttr(name));
    if (tensor(index)->type() == schema::TensorType::UINT8)
      func.setArgAttr(position, kElementTypeAttr, builder.getStringAttr("u8"));
  }
  for (int position = 0; position < static_cast<int>(signature.outputs.size()); ++position) {
    const auto &[name, index] = entry.outputs[position];
    func.setResultAttr(position, kNameAttr, builder.getStringAttr(name));
    if (tensor(index)->type() == schema::TensorType::UINT8)
      func.setResultAttr(position, kElementTypeAttr, builder.getStringAttr("u8"));
  }
  mainFunc = func;
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  for (int position = 0; position < static_cast<int>(signature.inputs.size()); ++position) {
    int index = entry.inputs[position].second;
    Value arg = body->getArgument(position);
    // A uint8 input is computed as int8: q - 128 is q with bit 7 flipped.
    values[index] =
        tensor(index)->type() == schema::TensorType::UINT8 ? flipSignBit(arg, loc) : arg;
  }
  return func;
}

llvm::Error ModelImporter::convertOperators() {
  if (!graph->operators())
    return llvm::Error::success();
  const auto &table = converters();
  int index = 0;
  for (const schema::Operator *op : *graph->operators()) {
    BuiltinOperator code = effectiveCode(model->operator_codes()->Get(op->opcode_index()));
    OpContext ctx(*this, op, index, code);
    // Integer and bool arithmetic on values known at import (loop
    // counters, conditions) is computed here.
    FailureOr<bool> folded = foldKnownOperator(ctx);
    if (failed(folded))
      return fail(error);
    if (*folded) {
      ++index;
      continue;
    }
    auto floatIt = table.find(code);
    ConverterFn convert = floatIt == table.end() ? nullptr : floatIt->second;
    if ((ctx.isQuantized() && !convertsIntegerForms(code)) || !convert) {
      const ConverterTable &integer = quantizedConverters();
      auto it = integer.find(code);
      if (it == integer.end())
        return fail(unsupportedQuantized(ctx, integer));
      convert = it->second;
    }
    if (failed(convert(ctx)))
      return fail(error.empty() ? "operator #" + std::to_string(index) + " could not be converted"
                                : error);
    ++index;
  }
  return llvm::Error::success();
}

llvm::Error ModelImporter::returnOutputs(func::FuncOp func, const Signature &signature,
                                         Location loc) {
  llvm::SmallVector<Value> results;
  for (int position = 0; position < static_cast<int>(signature.outputs.size()); ++position) {
    const auto &[name, index] = entry.outputs[position];
    Value v = values[index];
    if (!v && !constantData(index).empty())
      v = materializeConstant(index, loc);
    if (!v)
      return fail("output '" + name + "' is never computed by any operator");
    if (tensor(index)->type() == schema::TensorType::UINT8)
      v = flipSignBit(v, loc);
    results.push_back(v);
  }
  finishState(func, results);
  builder.create<func::ReturnOp>(loc, results);
  // The results' types are the computed ones (inferred once --fix-shape
  // sized a dynamic dimension); state arguments follow the model's inputs.
  // The attribute lists are rebuilt at the new lengths.
  llvm::SmallVector<DictionaryAttr> argAttrs, resultAttrs;
  Block &body = func.getBody().front();
  for (unsigned i = 0; i < body.getNumArguments(); ++i)
    argAttrs.push_back(i < signature.inputs.size() ? func.getArgAttrDict(i) : DictionaryAttr());
  for (unsigned i = 0; i < results.size(); ++i)
    resultAttrs.push_back(i < signature.outputs.size() ? func.getResultAttrDict(i)
                                                       : DictionaryAttr());
  func.setType(builder.getFunctionType(body.getArgumentTypes(), ValueRange(results).getTypes()));
  func.setAllArgAttrs(argAttrs);
  func.setAllResultAttrs(resultAttrs);
  markState(func, signature.outputs.size());
  return llvm::Error::success();
}

llvm::Error ModelImporter::verifyModule(ModuleOp module) {
  // The converters build well-formed TOSA; a verifier failure here is a Kiln
  // bug, reported with the first diagnostic rather than an IR dump.
  std::string firstError;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (firstError.empty()) {
      llvm::raw_string_ostream os(firstError);
      os << diag.str();
      if (auto name = diag.getLocation().dyn_cast<NameLoc>())
        os << " (producing '" << name.getName().getValue() << "')";
    }
    return success();
  });
  if (failed(verify(module)))
    return fail("internal error: the imported TOSA does not verify: " + firstError);
  return llvm::Error::success();
}

void ModelImporter::recordQuantization(ModuleOp module) {
  // Each quantized tensor's scales and zero points, for the plan; 8-bit
  // constants (weights) with the indices of the operators that read them.
  // The model's inputs and outputs go by the signature's names, as @main's
  // (the compiler attaches their quantization to the I/O by name).
  auto nameOf = [&](int i) {
    for (const auto *list : {&entry.inputs, &entry.outputs})
      for (const auto &[name, index] : *list)
        if (index == i)
          return name;
    return tensorName(tensor(i), i);
  };
  setQuantizationAttribute(
      module, quant, nameOf, [&](int i) { return !constantData(i).empty(); },
      [&](int i) {
        std::vector<int64_t> readers;
        schema::TensorType type = tensor(i)->type();
        if (constantData(i).empty() || !graph->operators() ||
            (type != schema::TensorType::INT8 && type != schema::TensorType::UINT8))
          return readers;
        for (unsigned index = 0; index < graph->operators()->size(); ++index)
          if (const schema::Operator *op = graph->operators()->Get(index);
              op->inputs() && llvm::is_contained(*op->inputs(), i))
            readers.push_back(index);
        return readers;
      });
}

} // namespace tfl

llvm::Expected<OwningOpRef<ModuleOp>>
importTFLite(MLIRContext &context, llvm::ArrayRef<uint8_t> bytes, llvm::StringRef filename,
             const std::vector<ShapeFix> &fixes, const std::string &signature) {
  tfl::ModelImporter importer(context, bytes, filename, fixes, signature);
  auto module = importer.run();
  if (module || !importer.stoppedAtUnfixed)
    return module;
  llvm::consumeError(module.takeError());
  // Dynamic inputs that record a size compile at it, as TFLite runs them.
  if (auto recorded = tfl::recordedShapeFixes(importer)) {
    std::vector<ShapeFix> all = fixes;
    all.insert(all.end(), recorded->begin(), recorded->end());
    tfl::ModelImporter atRecorded(context, bytes, filename, all, signature);
    auto sized = atRecorded.run();
    if (sized) {
      addWarnings(**sized, {tfl::recordedShapeWarning(importer)});
      return sized;
    }
    llvm::consumeError(sized.takeError());
  }
  return tfl::unfixedInputError(context, bytes, filename, fixes, importer);
}

} // namespace kiln
