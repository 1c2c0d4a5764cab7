//===- Import.cpp - Pick an importer for a model file ---------------------===//
#include "Import.h"
#include "TosaContract.h"

#include "kiln/Artifact.h"
#include "kiln/Error.h"
#include "kiln/ModelInputs.h"
#include "kiln/Options.h"
#include "kiln/Recipe.h"
#include "kiln/TensorTypes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace kiln {

void addWarnings(ModuleOp module, const std::vector<std::string> &warnings) {
  llvm::SmallVector<llvm::StringRef> all;
  if (auto existing = module->getAttrOfType<ArrayAttr>("kiln.warnings"))
    for (Attribute a : existing)
      if (auto s = a.dyn_cast<StringAttr>())
        all.push_back(s.getValue());
  for (const std::string &w : warnings)
    if (!llvm::is_contained(all, w))
      all.push_back(w);
  module->setAttr("kiln.warnings", Builder(module.getContext()).getStrArrayAttr(all));
}

/// Records `fixed` in the module's kFixedInputsAttr.
static void addFixedInputs(ModuleOp module, const std::vector<FixedInput> &fixed) {
  Builder b(module.getContext());
  llvm::SmallVector<Attribute> entries;
  for (const FixedInput &f : fixed)
    entries.push_back(b.getDictionaryAttr({
        b.getNamedAttr("name", b.getStringAttr(f.name)),
        b.getNamedAttr("element_type", b.getStringAttr(f.elementType)),
        b.getNamedAttr("shape", b.getI64ArrayAttr(f.shape)),
        b.getNamedAttr("value", b.getStringAttr(fixValueText(f.values))),
    }));
  module->setAttr(kFixedInputsAttr, b.getArrayAttr(entries));
}

std::vector<FixedInput> fixedInputsOf(ModuleOp module) {
  std::vector<FixedInput> fixed;
  auto list = module->getAttrOfType<ArrayAttr>(kFixedInputsAttr);
  if (!list)
    return fixed;
  for (Attribute a : list) {
    auto d = a.cast<DictionaryAttr>();
    FixedInput f;
    f.name = d.getAs<StringAttr>("name").str();
    f.elementType = d.getAs<StringAttr>("element_type").str();
    for (Attribute dim : d.getAs<ArrayAttr>("shape"))
      f.shape.push_back(dim.cast<IntegerAttr>().getInt());
    // Written by addFixedInputs from parsed values: it parses back.
    f.values = llvm::cantFail(parseFixValue(d.getAs<StringAttr>("value").getValue()));
    fixed.push_back(std::move(f));
  }
  return fixed;
}

void setControlFlow(ModuleOp module, const std::vector<ControlFlowDecision> &decisions) {
  if (decisions.empty())
    return;
  Builder b(module.getContext());
  llvm::SmallVector<Attribute> entries;
  for (const ControlFlowDecision &d : decisions)
    entries.push_back(b.getDictionaryAttr({
        b.getNamedAttr("node", b.getStringAttr(d.node)),
        b.getNamedAttr("op_type", b.getStringAttr(d.opType)),
        b.getNamedAttr("decision", b.getStringAttr(d.decision)),
        b.getNamedAttr("reason", b.getStringAttr(d.reason)),
    }));
  module->setAttr(kControlFlowAttr, b.getArrayAttr(entries));
}

std::vector<ControlFlowDecision> controlFlowOf(ModuleOp module) {
  std::vector<ControlFlowDecision> decisions;
  auto list = module->getAttrOfType<ArrayAttr>(kControlFlowAttr);
  if (!list)
    return decisions;
  for (Attribute a : list) {
    auto d = a.cast<DictionaryAttr>();
    decisions.push_back({d.getAs<StringAttr>("node").str(), d.getAs<StringAttr>("op_type").str(),
                         d.getAs<StringAttr>("decision").str(),
                         d.getAs<StringAttr>("reason").str()});
  }
  return decisions;
}

llvm::Expected<OwningOpRef<ModuleOp>> importModelFile(MLIRContext &context, llvm::StringRef path,
                                                      const std::vector<ShapeFix> &fixes,
                                                      const std::vector<ValueFix> &values,
                                                      const std::string &signature) {
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status))
    return makeError(path + ": cannot read: " + ec.message());
  if (status.type() != llvm::sys::fs::file_type::regular_file)
    return makeError(path + ": not a regular file (expected a .tflite, "
                            ".onnx or .mlir model)");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError(path + ": cannot read: " + buffer.getError().message());
  llvm::StringRef name = llvm::sys::path::filename(path);
  llvm::StringRef data = (*buffer)->getBuffer();
  llvm::ArrayRef<uint8_t> bytes(
      reinterpret_cast<const uint8_t *>(data.data()), data.size());
  bool tfliteId = data.size() >= 8 && data.substr(4, 4) == "TFL3";
  if (!tfliteId && isArtifact(path, bytes))
    return makeError(name + ": a compiled .kiln artifact, not a model; run it "
                            "with `kiln run` or read its plan with `kiln inspect`");
  bool isONNX = path.ends_with_insensitive(".onnx");
  if (isONNX && tfliteId)
    return makeError(name + ": a TFLite flatbuffer (file identifier 'TFL3'), not an ONNX "
                            "model; rename it to .tflite");
  // --fix-value becomes an initializer of the ONNX graph; TFLite and TOSA
  // models have no such step.
  auto onnxOnly = [&](const char *format) {
    return makeError(name + ": --fix-value=" + values.front().input +
                     "=... is supported for ONNX models only; this is a " + format +
                     " model (give the input's value with --input when running it)");
  };
  if (isONNX || tfliteId || path.ends_with(".tflite")) {
    if (!isONNX && !values.empty())
      return onnxOnly("TFLite");
    if (isONNX && !signature.empty())
      return makeError(signatureFormatError(name, /*isONNX=*/true));
    // --fix-shape and --fix-value are checked once, the same way for every
    // format.
    std::vector<std::string> warnings;
    std::vector<FixedInput> fixed;
    llvm::StringRef directory = llvm::sys::path::parent_path(path);
    if (tfliteId || isONNX)
      if (llvm::Error err = checkModelShapeFixes(bytes, name, directory, isONNX, fixes, values,
                                                 warnings, fixed, signature))
        return std::move(err);
    auto module = isONNX ? importONNX(context, bytes, name, directory, fixes, fixed)
                         : importTFLite(context, bytes, name, fixes, signature);
    if (!module)
      return module.takeError();
    if (llvm::Error err = checkTosaContract(**module, name, /*imported=*/true))
      return std::move(err);
    if (!warnings.empty())
      addWarnings(**module, warnings);
    if (!fixed.empty())
      addFixedInputs(**module, fixed);
    return module;
  }
  if ((path.ends_with(".mlir") || path.ends_with(".mlirbc")) && !values.empty())
    return onnxOnly("TOSA .mlir");
  if ((path.ends_with(".mlir") || path.ends_with(".mlirbc")) && !signature.empty())
    return makeError(signatureFormatError(name, /*isONNX=*/false));
  if (path.ends_with(".mlir") || path.ends_with(".mlirbc")) {
    auto module = importTosaMLIR(context, data, name);
    if (!module)
      return module.takeError();
    if (llvm::Error err = checkTosaContract(**module, name, /*imported=*/false))
      return std::move(err);
    if (!fixes.empty())
      (**module)->setAttr(
          "kiln.warnings",
          Builder(&context).getStrArrayAttr({"--fix-shape changes nothing: a TOSA .mlir "
                                             "model's function has static shapes"}));
    return module;
  }
  return makeError(name + ": unrecognized model format (supported: TFLite "
                          "flatbuffers '.tflite', ONNX '.onnx', TOSA MLIR '.mlir')");
}

llvm::Expected<OwningOpRef<ModuleOp>>
importTosaMLIR(MLIRContext &context, llvm::StringRef text,
               llvm::StringRef filename) {
  std::string firstError;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (firstError.empty()) {
      llvm::raw_string_ostream os(firstError);
      if (auto loc = diag.getLocation().dyn_cast<FileLineColLoc>())
        os << "line " << loc.getLine() << ": ";
      os << diag.str();
    }
    return success();
  });
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, filename), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return makeError(filename + ": " + firstError);
  auto main = module->lookupSymbol<func::FuncOp>("main");
  if (!main)
    return makeError(filename + ": no func.func @main (Kiln compiles the "
                                "function named 'main')");
  for (Type t : main.getFunctionType().getInputs())
    if (!t.isa<RankedTensorType>() || !t.cast<RankedTensorType>().hasStaticShape())
      return makeError(filename + ": @main takes a non-static tensor type; "
                                  "Kiln compiles static shapes only");
  for (Type t : main.getFunctionType().getResults())
    if (!t.isa<RankedTensorType>() || !t.cast<RankedTensorType>().hasStaticShape())
      return makeError(filename + ": @main returns a non-static tensor type; "
                                  "Kiln compiles static shapes only");
  // Element types the runtime and the artifact describe: f32 (and i32
  // indices/shapes, i1 masks), i8 and ui8 (integer models). Constants
  // must be inline dense values.
  std::string badType, resource;
  main.walk([&](Operation *op) {
    for (Type t : op->getResultTypes()) {
      auto shaped = t.dyn_cast<ShapedType>();
      Type element = shaped ? shaped.getElementType() : t;
      if (!(element.isF32() || element.isInteger(32) || element.isInteger(64) ||
            element.isInteger(8) || element.isInteger(1) || element.isIndex()) &&
          badType.empty()) {
        llvm::raw_string_ostream os(badType);
        os << "'" << op->getName() << "' produces element type " << element;
      }
    }
    for (NamedAttribute attr : op->getAttrs())
      if (attr.getValue().isa<DenseResourceElementsAttr>() && resource.empty())
        resource = op->getName().getStringRef().str();
  });
  for (Type t : main.getFunctionType().getInputs())
    if (!t.cast<ShapedType>().getElementType().isF32() &&
        !t.cast<ShapedType>().getElementType().isInteger(32) &&
        !t.cast<ShapedType>().getElementType().isInteger(8) && badType.empty()) {
      llvm::raw_string_ostream os(badType);
      os << "@main takes element type " << t.cast<ShapedType>().getElementType();
    }
  if (!badType.empty())
    return makeError(filename + ": " + badType +
                     "; Kiln compiles f32 models (i32/i64/i1 for indices, "
                     "shapes and masks) and int8/uint8 ones (i8/ui8, i32)");
  if (!resource.empty())
    return makeError(filename + ": '" + resource +
                     "' holds a dense_resource constant; Kiln reads inline "
                     "dense<...> constants (write the module with "
                     "`kiln compile --emit=tosa -o FILE.mlir`, which keeps "
                     "every constant)");
  // A pad value computed at run time has no lowering in Kiln's dispatch
  // formation (the scalar would cross the dispatch boundary).
  std::string runtimePad;
  main.walk([&](tosa::PadOp pad) {
    if (pad.getPadConst() && !pad.getPadConst().getDefiningOp<tosa::ConstOp>() &&
        runtimePad.empty()) {
      llvm::raw_string_ostream os(runtimePad);
      if (auto loc = pad.getLoc().dyn_cast<FileLineColLoc>())
        os << "line " << loc.getLine() << ": ";
      os << "'tosa.pad' takes its pad value from a computed tensor; Kiln compiles pads whose "
            "pad value is a tosa.const";
    }
  });
  if (!runtimePad.empty())
    return makeError(filename + ": " + runtimePad);
  std::string unsupported;
  main.walk([&](Operation *op) {
    if (unsupported.empty() && !isa<func::FuncOp, func::ReturnOp>(op) &&
        op->getDialect() &&
        op->getDialect()->getNamespace() != tosa::TosaDialect::getDialectNamespace())
      unsupported = op->getName().getStringRef().str();
  });
  if (!unsupported.empty())
    return makeError(filename + ": operation '" + unsupported +
                     "' is not in the TOSA dialect (Kiln's .mlir input is "
                     "TOSA plus func.return)");
  (*module)->setAttr("kiln.source", StringAttr::get(&context, filename));
  return std::move(module);
}

} // namespace kiln
