//===- ModelInputs.cpp - A model's inputs as data (kiln/ModelInputs.h) ----===//
//
// Reads the inputs a model file declares (TFLite flatbuffer, ONNX
// ModelProto, TOSA .mlir) without importing it, and checks --fix-shape
// against them. importModelFile (Import.cpp) runs checkShapeFixes before
// any importer, so the CLI, the workbench and the Python package get the
// same errors for the same fixes.
//
//===----------------------------------------------------------------------===//
#include "kiln/ModelInputs.h"
#include "kiln/Error.h"

#include "Import.h"
#include "ONNXModel.h"
#include "TFLiteModel.h"

#include "kiln/Artifact.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <variant>

namespace kiln {

char UnfixedInputError::ID = 0;

void UnfixedInputError::log(llvm::raw_ostream &os) const { os << text; }

std::error_code UnfixedInputError::convertToErrorCode() const { return llvm::inconvertibleErrorCode(); }

std::vector<UnfixedInput> unfixedInputsOf(llvm::Error &error) {
  std::vector<UnfixedInput> found;
  error = llvm::handleErrors(std::move(error), [&](std::unique_ptr<UnfixedInputError> e) -> llvm::Error {
    found = e->inputs;
    return llvm::Error(std::move(e));
  });
  return found;
}

bool ModelInput::isDynamic() const {
  return !hasShape || llvm::any_of(shape, [](int64_t d) { return d < 0; });
}

std::string ModelInput::shapeText() const {
  if (!hasShape)
    return "unknown";
  std::string s = "[";
  for (size_t k = 0; k < shape.size(); ++k) {
    if (k)
      s += ",";
    if (shape[k] >= 0)
      s += std::to_string(shape[k]);
    else
      s += k < dimNames.size() && !dimNames[k].empty() ? dimNames[k] : "?";
  }
  return s + "]";
}

std::string fixShapeText(const std::vector<int64_t> &shape) {
  std::string s;
  for (int64_t d : shape)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

const ModelInput *findModelInput(const std::vector<ModelInput> &inputs, const std::string &nameOrIndex) {
  for (const ModelInput &in : inputs)
    if (in.name == nameOrIndex)
      return &in;
  for (const ModelInput &in : inputs)
    if (std::to_string(in.index) == nameOrIndex)
      return &in;
  return nullptr;
}

// --- Readers ------------------------------------------------------------------

/// TFLite: the inputs of the entry point `signature` names (tfliteEntry:
/// the SignatureDef's inputs, named and ordered as it lists them, or
/// subgraph 0's); a dimension is dynamic where shape_signature (or, in old
/// converters' files, shape) holds -1.
static llvm::Expected<std::vector<ModelInput>> tfliteInputs(llvm::ArrayRef<uint8_t> bytes,
                                                            llvm::StringRef name,
                                                            const std::string &signature = "") {
  namespace schema = ::kiln::tflite;
  std::string why;
  const schema::Model *model = tfl::readTFLiteModel(bytes.data(), bytes.size(), why);
  if (!model)
    return makeError(name + ": " + why);
  std::optional<tfl::TFLiteEntry> entry = tfl::tfliteEntry(model, signature, why);
  if (!entry)
    return makeError(name + ": " + why);
  const schema::SubGraph *graph = model->subgraphs()->Get(entry->subgraph);
  std::vector<ModelInput> out;
  if (!graph->inputs() || !graph->tensors())
    return out;
  for (unsigned position = 0; position < entry->inputs.size(); ++position) {
    int index = entry->inputs[position].second;
    if (index < 0 || unsigned(index) >= graph->tensors()->size())
      return makeError(name + ": model input " + llvm::Twine(position) + " refers to a missing tensor");
    const schema::Tensor *t = graph->tensors()->Get(index);
    ModelInput in;
    in.index = int(position);
    in.name = entry->inputs[position].first;
    in.elementType = llvm::StringRef(schema::EnumNameTensorType(t->type())).lower();
    if (t->shape())
      in.shape.assign(t->shape()->begin(), t->shape()->end());
    if (t->shape_signature() && t->shape_signature()->size() == in.shape.size())
      for (size_t d = 0; d < in.shape.size(); ++d)
        if (t->shape_signature()->Get(d) < 0)
          in.shape[d] = -1;
    for (int64_t &d : in.shape)
      d = std::max<int64_t>(d, -1);
    in.dimNames.assign(in.shape.size(), "");
    out.push_back(std::move(in));
  }
  return out;
}

/// ONNX: the graph inputs that are not initializers, as libonnx reads them.
static llvm::Expected<std::vector<ModelInput>> onnxInputs(llvm::ArrayRef<uint8_t> bytes, llvm::StringRef name,
                                                          llvm::StringRef directory) {
  std::string error;
  auto model = onnx::readONNXModel(bytes.data(), bytes.size(), directory.str(), {}, error);
  if (!model)
    return makeError(name + ": " + error);
  std::vector<ModelInput> out;
  for (size_t i = 0; i < model->inputs.size(); ++i) {
    const onnx::ValueInfo &v = model->inputs[i];
    ModelInput in;
    in.index = int(i);
    in.name = v.name;
    in.elementType = onnx::dataTypeName(v.elementType);
    in.hasShape = v.hasShape;
    in.shape = v.dims;
    in.dimNames = v.dimParams;
    in.dimNames.resize(in.shape.size());
    out.push_back(std::move(in));
  }
  return out;
}

static std::string mlirTypeName(mlir::Type t) {
  if (t.isF32())
    return "float32";
  if (t.isF16())
    return "float16";
  if (t.isInteger(1))
    return "bool";
  if (auto i = t.dyn_cast<mlir::IntegerType>())
    return (i.isUnsigned() ? "uint" : "int") + std::to_string(i.getWidth());
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return os.str();
}

/// TOSA .mlir: @main's arguments (static shapes, as importTosaMLIR checks),
/// named by their kiln.name attribute or "inputK" as the signature names them.
static llvm::Expected<std::vector<ModelInput>> mlirInputs(llvm::StringRef text, llvm::StringRef name) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::func::FuncDialect, mlir::tosa::TosaDialect>();
  auto module = importTosaMLIR(context, text, name);
  if (!module)
    return module.takeError();
  auto main = (*module)->lookupSymbol<mlir::func::FuncOp>("main");
  std::vector<ModelInput> out;
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    auto type = main.getArgument(i).getType().cast<mlir::RankedTensorType>();
    ModelInput in;
    in.index = int(i);
    auto attr = main.getArgAttrOfType<mlir::StringAttr>(i, kNameAttr);
    in.name = attr ? attr.getValue().str() : "input" + std::to_string(i);
    in.elementType = mlirTypeName(type.getElementType());
    in.shape.assign(type.getShape().begin(), type.getShape().end());
    in.dimNames.assign(in.shape.size(), "");
    out.push_back(std::move(in));
  }
  return out;
}

std::vector<std::string> modelDataFiles(const std::string &path) {
  std::vector<std::string> files;
  if (!llvm::StringRef(path).ends_with(".onnx") || !llvm::sys::fs::is_regular_file(path))
    return files;
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return files;
  llvm::StringRef data = (*buffer)->getBuffer();
  llvm::StringRef folder = llvm::sys::path::parent_path(path);
  for (const std::string &location : onnx::externalDataLocations(
           reinterpret_cast<const uint8_t *>(data.data()), data.size())) {
    llvm::SmallString<256> file(folder.empty() ? "." : folder);
    llvm::sys::path::append(file, location);
    files.push_back(std::string(file));
  }
  return files;
}

/// The model file at `path`, read whole, with what it is.
struct ModelFile {
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  std::string name;
  enum Kind { TFLite, ONNX, MLIR } kind = TFLite;
  llvm::ArrayRef<uint8_t> bytes() const {
    return {reinterpret_cast<const uint8_t *>(buffer->getBufferStart()), buffer->getBufferSize()};
  }
};

/// Reads `path` and tells its format as importModelFile does.
static llvm::Expected<ModelFile> readModelFile(const std::string &path) {
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return makeError(path + ": cannot read: " + ec.message());
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return makeError(path + ": not a regular file (expected a .tflite, .onnx or .mlir model)");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError(path + ": cannot read: " + buffer.getError().message());
  ModelFile file;
  file.buffer = std::move(*buffer);
  file.name = llvm::sys::path::filename(path).str();
  llvm::StringRef name = file.name;
  llvm::StringRef data = file.buffer->getBuffer();
  bool tfliteId = data.size() >= 8 && data.substr(4, 4) == "TFL3";
  llvm::StringRef p(path);
  if (!tfliteId && isArtifact(path, file.bytes()))
    return makeError(name + ": a compiled .kiln artifact, not a model; its signature is static "
                            "(`kiln inspect` lists it)");
  if (p.ends_with_insensitive(".onnx") && !tfliteId) {
    file.kind = ModelFile::ONNX;
    return std::move(file);
  }
  if (tfliteId || p.ends_with(".tflite")) {
    if (!tfliteId)
      return makeError(name + ": not a TFLite model: the flatbuffer file identifier 'TFL3' is missing");
    return std::move(file);
  }
  if (p.ends_with(".mlir") || p.ends_with(".mlirbc")) {
    file.kind = ModelFile::MLIR;
    return std::move(file);
  }
  return makeError(name + ": unrecognized model format (supported: TFLite flatbuffers '.tflite', "
                          "ONNX '.onnx', TOSA MLIR '.mlir')");
}

std::string signatureFormatError(llvm::StringRef filename, bool isONNX) {
  return filename.str() + ": --signature is for TFLite models (their SignatureDefs); this is " +
         (isONNX ? "an ONNX model, which has one graph"
                 : "a TOSA .mlir model, which has one @main");
}

llvm::Expected<std::vector<ModelInput>> readModelInputs(const std::string &path,
                                                        const std::string &signature) {
  auto file = readModelFile(path);
  if (!file)
    return file.takeError();
  if (file->kind != ModelFile::TFLite && !signature.empty())
    return makeError(signatureFormatError(file->name, file->kind == ModelFile::ONNX));
  if (file->kind == ModelFile::ONNX)
    return onnxInputs(file->bytes(), file->name, llvm::sys::path::parent_path(path));
  if (file->kind == ModelFile::MLIR)
    return mlirInputs(file->buffer->getBuffer(), file->name);
  return tfliteInputs(file->bytes(), file->name, signature);
}

llvm::Expected<std::vector<ModelSignature>> readModelSignatures(const std::string &path,
                                                                const std::string &signature) {
  auto file = readModelFile(path);
  if (!file)
    return file.takeError();
  std::vector<ModelSignature> out;
  if (file->kind != ModelFile::TFLite) {
    if (!signature.empty())
      return makeError(signatureFormatError(file->name, file->kind == ModelFile::ONNX));
    return out;
  }
  std::string why;
  const auto *model = tfl::readTFLiteModel(file->bytes().data(), file->bytes().size(), why);
  if (!model)
    return makeError(file->name + ": " + why);
  std::optional<tfl::TFLiteEntry> compiled = tfl::tfliteEntry(model, signature, why);
  if (!compiled)
    return makeError(file->name + ": " + why);
  for (const tfl::TFLiteEntry &e : tfl::tfliteSignatures(model)) {
    ModelSignature s;
    s.key = e.key;
    s.subgraph = e.subgraph;
    for (const auto &[name, index] : e.inputs)
      s.inputs.push_back(name);
    for (const auto &[name, index] : e.outputs)
      s.outputs.push_back(name);
    // Keys may repeat in a malformed file; the first one is compiled.
    s.compiled =
        !signature.empty() && e.key == compiled->key &&
        std::none_of(out.begin(), out.end(), [](const ModelSignature &o) { return o.compiled; });
    out.push_back(std::move(s));
  }
  return out;
}

std::string formatModelSignatures(const std::vector<ModelSignature> &signatures) {
  std::string text;
  auto list = [](const std::vector<std::string> &names) {
    std::string s;
    for (const std::string &n : names)
      s += (s.empty() ? "'" : ", '") + n + "'";
    return "(" + s + ")";
  };
  bool any = false;
  for (const ModelSignature &s : signatures) {
    text += "signature '" + s.key + "' (subgraph " + std::to_string(s.subgraph) + "): inputs " +
            list(s.inputs) + " -> outputs " + list(s.outputs) + (s.compiled ? " [compiled]" : "") +
            "\n";
    any |= s.compiled;
  }
  if (!signatures.empty() && !any)
    text += "signature none given: subgraph 0 compiled, with its tensors' names "
            "(--signature=KEY compiles a signature)\n";
  return text;
}

llvm::json::Array modelSignaturesJson(const std::vector<ModelSignature> &signatures) {
  llvm::json::Array out;
  for (const ModelSignature &s : signatures) {
    llvm::json::Array inputs, outputs;
    for (const std::string &n : s.inputs)
      inputs.push_back(n);
    for (const std::string &n : s.outputs)
      outputs.push_back(n);
    out.push_back(llvm::json::Object{{"key", s.key},
                                     {"subgraph", s.subgraph},
                                     {"inputs", std::move(inputs)},
                                     {"outputs", std::move(outputs)},
                                     {"compiled", s.compiled}});
  }
  return out;
}

// --- --fix-shape --------------------------------------------------------------

/// Every input as "'a' (0), 'b' (1)" for the unknown-input message.
static std::string inputList(const std::vector<ModelInput> &inputs) {
  std::string names;
  for (const ModelInput &in : inputs)
    names += (names.empty() ? "'" : ", '") + in.name + "' (" + std::to_string(in.index) + ")";
  return names.empty() ? "none" : names;
}

/// One fix against its input: rank, positive sizes, static sizes kept.
static std::optional<std::string> checkOneFix(const ModelInput &in, const ShapeFix &fix) {
  if (in.hasShape && fix.shape.size() != in.shape.size())
    return "--fix-shape for input '" + in.name + "' gives rank " + std::to_string(fix.shape.size()) +
           ", the input has rank " + std::to_string(in.shape.size()) + " (" + in.shapeText() + ")";
  for (size_t d = 0; d < fix.shape.size(); ++d) {
    if (fix.shape[d] <= 0)
      return "--fix-shape for input '" + in.name + "': dimension " + std::to_string(d) + " must be positive";
    if (in.hasShape && in.shape[d] >= 0 && fix.shape[d] != in.shape[d])
      return "--fix-shape for input '" + in.name + "': dimension " + std::to_string(d) + " is static (" +
             std::to_string(in.shape[d]) + ") and cannot become " + std::to_string(fix.shape[d]);
  }
  return std::nullopt;
}

llvm::Error checkShapeFixes(const std::vector<ModelInput> &inputs, const std::vector<ShapeFix> &fixes,
                            const std::string &filename, std::vector<std::string> *warnings) {
  for (const ShapeFix &fix : fixes)
    if (!findModelInput(inputs, fix.input))
      return makeError(filename + ": --fix-shape names input '" + fix.input +
                       "', which the model does not have; its inputs are " + inputList(inputs));
  for (const ModelInput &in : inputs) {
    const ShapeFix *first = nullptr;
    for (const ShapeFix &fix : fixes) {
      if (findModelInput(inputs, fix.input) != &in)
        continue;
      if (first && first->shape != fix.shape)
        return makeError(filename + ": --fix-shape fixes input '" + in.name + "' twice, as '" + first->input +
                         "' (" + shapeString(first->shape) + ") and as '" + fix.input + "' (" +
                         shapeString(fix.shape) + "); give one shape per input");
      if (!first)
        first = &fix;
    }
    if (!first)
      continue;
    if (auto why = checkOneFix(in, *first))
      return makeError(filename + ": " + *why);
    if (!in.isDynamic() && warnings)
      warnings->push_back("--fix-shape=" + first->input + "=... changes nothing: input '" + in.name +
                          "' is static (" + shapeString(in.shape) + ")");
  }
  return llvm::Error::success();
}

// --- --fix-value --------------------------------------------------------------

namespace {

/// The range of values an element type takes, for the fix-value check.
struct ValueRange {
  bool integer;
  double low, high; ///< Inclusive; for integers exact within int64.
  int64_t lowInt, highInt;
};

std::optional<ValueRange> rangeOf(const std::string &type) {
  auto ints = [](int64_t lo, int64_t hi) {
    return ValueRange{true, double(lo), double(hi), lo, hi};
  };
  if (type == "float32")
    return ValueRange{false, -3.4028234663852886e38, 3.4028234663852886e38, 0, 0};
  if (type == "bool")
    return ints(0, 1);
  if (type == "int8")
    return ints(-128, 127);
  if (type == "uint8")
    return ints(0, 255);
  if (type == "int16")
    return ints(-32768, 32767);
  if (type == "uint16")
    return ints(0, 65535);
  if (type == "int32")
    return ints(INT32_MIN, INT32_MAX);
  if (type == "uint32")
    return ints(0, UINT32_MAX);
  if (type == "int64")
    return ints(INT64_MIN, INT64_MAX);
  return std::nullopt;
}

std::string numberText(const FixedNumber &v) { return fixValueText({v}); }

} // namespace

llvm::Expected<std::vector<FixedInput>> checkValueFixes(const std::vector<ModelInput> &inputs,
                                                        const std::vector<ValueFix> &values,
                                                        const std::vector<ShapeFix> &shapes,
                                                        const std::string &filename) {
  auto bad = [&](const llvm::Twine &why) { return makeError(filename + ": " + why); };
  for (const ValueFix &fix : values)
    if (!findModelInput(inputs, fix.input))
      return bad("--fix-value names input '" + fix.input +
                 "', which the model does not have; its inputs are " + inputList(inputs));
  std::vector<FixedInput> fixed;
  for (const ModelInput &in : inputs) {
    const ValueFix *fix = nullptr;
    for (const ValueFix &f : values) {
      if (findModelInput(inputs, f.input) != &in)
        continue;
      if (fix)
        return bad("--fix-value fixes input '" + in.name + "' twice, as '" + fix->input +
                   "' and as '" + f.input + "'; give one value per input");
      fix = &f;
    }
    if (!fix)
      continue;
    const std::string who = "--fix-value for input '" + in.name + "'";
    std::optional<ValueRange> range = rangeOf(in.elementType);
    if (!range)
      return bad(
          who + ": element type " + in.elementType +
          " cannot be fixed (Kiln fixes float32, int8, uint8, int16, uint16, int32, uint32, int64 "
          "and bool inputs)");
    // The shape: the model's, or the one --fix-shape gives it.
    std::vector<int64_t> shape = in.shape;
    const ShapeFix *sized = nullptr;
    for (const ShapeFix &s : shapes)
      if (findModelInput(inputs, s.input) == &in)
        sized = &s;
    if (sized)
      shape = sized->shape;
    else if (in.isDynamic())
      return bad(who + ": its shape " + in.shapeText() +
                 " is not static; give it with --fix-shape=" + in.name + "=DIMS too");
    int64_t elements = 1;
    for (int64_t d : shape)
      elements *= d;
    if (int64_t(fix->values.size()) != elements)
      return bad(who + " gives " + std::to_string(fix->values.size()) +
                 (fix->values.size() == 1 ? " value" : " values") + "; the input " +
                 in.elementType + " " + shapeString(shape) + " has " + std::to_string(elements) +
                 (elements == 1 ? " element" : " elements"));
    for (const FixedNumber &v : fix->values) {
      const int64_t *i = std::get_if<int64_t>(&v);
      const double *d = std::get_if<double>(&v);
      auto outOfRange = [&] {
        std::string limits =
            range->integer ? std::to_string(range->lowInt) + " to " + std::to_string(range->highInt)
                           : "magnitude at most " + numberText(range->high);
        return bad(who + ": " + numberText(v) + " is out of range for " + in.elementType + " (" +
                   limits + ")");
      };
      if (range->integer) {
        if (d && std::trunc(*d) != *d)
          return bad(who + ": " + numberText(v) + " is not a whole number (the input is " +
                     in.elementType + ")");
        if (d || *i < range->lowInt || *i > range->highInt)
          return outOfRange();
      } else if (d ? (*d < range->low || *d > range->high)
                   : (double(*i) < range->low || double(*i) > range->high)) {
        return outOfRange();
      }
    }
    // A float32 input holds the float nearest each value: the record says
    // what the build computes with, whichever way the value was written.
    std::vector<FixedNumber> held = fix->values;
    if (in.elementType == "float32")
      for (FixedNumber &v : held)
        if (const double *d = std::get_if<double>(&v)) {
          double f = double(float(*d));
          v = std::trunc(f) == f && std::fabs(f) < 9.2e18 ? FixedNumber(int64_t(f))
                                                          : FixedNumber(f);
        }
    fixed.push_back({in.name, in.elementType, shape, std::move(held)});
  }
  return fixed;
}

std::string formatFixedInputs(const std::vector<FixedInput> &fixed) {
  std::string text;
  for (const FixedInput &f : fixed) {
    std::string value = fixValueText(f.values);
    if (f.values.size() > 1)
      value = "[" + value + "]";
    text += "fixed     '" + f.name + "' " + f.elementType + " " + shapeString(f.shape) + " = " +
            value + " (--fix-value; not an input of the artifact)\n";
  }
  return text;
}

std::string formatControlFlow(const std::vector<ControlFlowDecision> &decisions) {
  std::string text;
  for (const ControlFlowDecision &d : decisions)
    text += "control   " + d.node + ": " + d.decision + ": " + d.reason + "\n";
  return text;
}

llvm::json::Array controlFlowJson(const std::vector<ControlFlowDecision> &decisions) {
  llvm::json::Array out;
  for (const ControlFlowDecision &d : decisions)
    out.push_back(llvm::json::Object{
        {"node", d.node}, {"op_type", d.opType}, {"decision", d.decision}, {"reason", d.reason}});
  return out;
}

llvm::json::Array fixedInputsJson(const std::vector<FixedInput> &fixed) {
  llvm::json::Array out;
  for (const FixedInput &f : fixed) {
    llvm::json::Array values;
    for (const FixedNumber &v : f.values) {
      if (const int64_t *i = std::get_if<int64_t>(&v))
        values.push_back(*i);
      else
        values.push_back(std::get<double>(v));
    }
    out.push_back(llvm::json::Object{{"name", f.name},
                                     {"element_type", f.elementType},
                                     {"shape", llvm::json::Array(f.shape)},
                                     {"values", std::move(values)}});
  }
  return out;
}

llvm::Error checkModelShapeFixes(llvm::ArrayRef<uint8_t> bytes, llvm::StringRef name,
                                 llvm::StringRef directory, bool isONNX,
                                 const std::vector<ShapeFix> &fixes,
                                 const std::vector<ValueFix> &values,
                                 std::vector<std::string> &warnings, std::vector<FixedInput> &fixed,
                                 const std::string &signature) {
  if (fixes.empty() && values.empty())
    return llvm::Error::success();
  auto inputs = isONNX ? onnxInputs(bytes, name, directory) : tfliteInputs(bytes, name, signature);
  if (!inputs) {
    // A file that does not read is the importer's to explain.
    llvm::consumeError(inputs.takeError());
    return llvm::Error::success();
  }
  if (llvm::Error err = checkShapeFixes(*inputs, fixes, name.str(), &warnings))
    return err;
  if (values.empty())
    return llvm::Error::success();
  auto resolved = checkValueFixes(*inputs, values, fixes, name.str());
  if (!resolved)
    return resolved.takeError();
  fixed = std::move(*resolved);
  return llvm::Error::success();
}

std::string formatModelInputs(const std::vector<ModelInput> &inputs) {
  std::string text;
  for (const ModelInput &in : inputs) {
    text += "model input " + std::to_string(in.index) + " '" + in.name + "' " + in.elementType + " " +
            in.shapeText();
    std::vector<std::string> open;
    for (size_t d = 0; d < in.shape.size(); ++d)
      if (in.shape[d] < 0)
        open.push_back(std::to_string(d) +
                       (d < in.dimNames.size() && !in.dimNames[d].empty() ? " ('" + in.dimNames[d] + "')" : ""));
    if (!in.hasShape)
      text += ": no shape recorded (give it whole with --fix-shape)";
    else if (!open.empty())
      text += std::string(open.size() == 1 ? ": dimension " : ": dimensions ") + llvm::join(open, ", ") +
              (open.size() == 1 ? " is" : " are") + " dynamic (--fix-shape=" + in.name + "=...)";
    text += "\n";
  }
  return text;
}

llvm::json::Value modelInputsJson(const std::vector<ModelInput> &inputs) {
  llvm::json::Array out;
  for (const ModelInput &in : inputs) {
    llvm::json::Array shape, names;
    for (size_t d = 0; d < in.shape.size(); ++d) {
      shape.push_back(in.shape[d]);
      names.push_back(d < in.dimNames.size() ? in.dimNames[d] : std::string());
    }
    out.push_back(llvm::json::Object{{"name", in.name},
                                     {"index", in.index},
                                     {"element_type", in.elementType},
                                     {"shape", in.hasShape ? llvm::json::Value(std::move(shape)) : nullptr},
                                     {"dim_names", std::move(names)},
                                     {"dynamic", in.isDynamic()}});
  }
  return out;
}

} // namespace kiln
