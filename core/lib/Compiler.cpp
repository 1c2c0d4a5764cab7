//===- Compiler.cpp - Kiln's compiler driver ------------------------------===//
//
// import -> TOSA -> linalg -> LLVM dialect -> LLVM IR -> object -> .so ->
// artifact. Every phase's passes come from Pipeline.cpp.
//
//===----------------------------------------------------------------------===//
#include "kiln/Compiler.h"

#include "Artifact/ArtifactWriter.h"
#include "Codegen/HostCodegen.h"
#include "Import/Import.h"
#include "Pipeline.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

using namespace mlir;

namespace kiln {

#ifndef KILN_VERSION_STRING
#define KILN_VERSION_STRING "0.0.0"
#endif

const char *version() { return KILN_VERSION_STRING; }
const char *llvmVersion() { return LLVM_VERSION_STRING; }

bool parseEmitStage(const std::string &text, EmitStage &out) {
  if (text == "tosa")
    out = EmitStage::Tosa;
  else if (text == "linalg")
    out = EmitStage::Linalg;
  else if (text == "llvm-ir")
    out = EmitStage::LLVMIR;
  else if (text == "asm")
    out = EmitStage::Asm;
  else
    return false;
  return true;
}

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 message.str());
}

llvm::Expected<ShapeFix> parseShapeFix(const std::string &text) {
  llvm::StringRef ref(text);
  size_t eq = ref.rfind('=');
  if (eq == llvm::StringRef::npos || eq == 0)
    return makeError("--fix-shape='" + text +
                     "': expected INPUT=DIMS, e.g. input_1=1x76x32x1 "
                     "(INPUT is a name or an index)");
  ShapeFix fix;
  fix.input = ref.take_front(eq).str();
  llvm::SmallVector<llvm::StringRef> dims;
  ref.drop_front(eq + 1).split(dims, 'x');
  for (llvm::StringRef d : dims) {
    int64_t v;
    if (d.getAsInteger(10, v) || v <= 0)
      return makeError("--fix-shape='" + text + "': '" + d +
                       "' is not a positive dimension (dims are written "
                       "1x76x32x1)");
    fix.shape.push_back(v);
  }
  return fix;
}

namespace {

/// One compilation: owns the MLIR context and the module as it is lowered.
class Compilation {
public:
  Compilation() {
    DialectRegistry registry;
    registerKilnDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  llvm::Error import(const std::string &path,
                     const std::vector<ShapeFix> &fixes) {
    source = llvm::sys::path::filename(path).str();
    auto imported = importModelFile(context, path, fixes);
    if (!imported)
      return imported.takeError();
    module = std::move(*imported);
    return llvm::Error::success();
  }

  /// Runs the passes `build` adds; a failure becomes one message naming the
  /// phase and the first diagnostic (never an IR dump).
  llvm::Error run(llvm::StringRef phase,
                  void (*build)(PassManager &)) {
    std::string firstError;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error &&
          firstError.empty()) {
        llvm::raw_string_ostream os(firstError);
        os << diag.str();
        if (auto loc = diag.getLocation().dyn_cast<NameLoc>())
          os << " (at '" << loc.getName().getValue() << "')";
      }
      return success();
    });
    PassManager pm(&context);
    build(pm);
    if (failed(pm.run(*module)))
      return makeError(source + ": " + phase + " failed: " +
                       (firstError.empty() ? "unknown error" : firstError));
    return llvm::Error::success();
  }

  std::string print() {
    std::string text;
    llvm::raw_string_ostream os(text);
    OpPrintingFlags flags;
    flags.elideLargeElementsAttrs(16);
    module->print(os, flags);
    return os.str();
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string source;
};

ElementKind elementKindOf(Type type) {
  if (type.isF32())
    return ElementKind::F32;
  if (type.isF16())
    return ElementKind::F16;
  if (type.isInteger(32))
    return ElementKind::I32;
  if (type.isInteger(64))
    return ElementKind::I64;
  if (type.isInteger(8))
    return ElementKind::I8;
  if (type.isInteger(1))
    return ElementKind::I1;
  return ElementKind::U8;
}

TensorSpec tensorSpecOf(Type type, DictionaryAttr attrs, std::string fallback) {
  TensorSpec spec;
  auto tensor = type.cast<RankedTensorType>();
  spec.type = elementKindOf(tensor.getElementType());
  spec.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  spec.name = std::move(fallback);
  if (attrs)
    if (auto name = attrs.getAs<StringAttr>(kNameAttr))
      spec.name = name.str();
  return spec;
}

/// The I/O signature of @main in Kiln's input form.
void collectSignature(ModuleOp module, ArtifactSpec &spec) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  FunctionType type = main.getFunctionType();
  for (unsigned i = 0; i < type.getNumInputs(); ++i)
    spec.inputs.push_back(tensorSpecOf(type.getInput(i), main.getArgAttrDict(i),
                                       "input" + std::to_string(i)));
  for (unsigned i = 0; i < type.getNumResults(); ++i)
    spec.outputs.push_back(tensorSpecOf(type.getResult(i),
                                        main.getResultAttrDict(i),
                                        "output" + std::to_string(i)));
}

/// Copies the constants kiln-outline-constants recorded into `spec`.
void collectConstants(ModuleOp module, ArtifactSpec &spec) {
  auto entries = module->getAttrOfType<ArrayAttr>(kConstantsAttrName);
  if (!entries)
    return;
  for (Attribute entry : entries) {
    auto dict = entry.cast<DictionaryAttr>();
    auto value = dict.getAs<DenseElementsAttr>("value");
    ConstantSpec c;
    c.name = dict.getAs<StringAttr>("name").str();
    auto type = value.getType().cast<RankedTensorType>();
    c.type = elementKindOf(type.getElementType());
    c.shape.assign(type.getShape().begin(), type.getShape().end());
    size_t bytes = elementSize(c.type) * type.getNumElements();
    c.data.resize(bytes);
    llvm::ArrayRef<char> raw = value.getRawData();
    if (c.type == ElementKind::I1) {
      // i1 is stored bit-packed by MLIR; the kernels read one byte each.
      auto bits = value.getValues<bool>();
      size_t i = 0;
      for (bool bit : bits)
        c.data[i++] = bit ? 1 : 0;
    } else {
      std::memcpy(c.data.data(), raw.data(), std::min(bytes, raw.size()));
    }
    spec.constants.push_back(std::move(c));
  }
}

} // namespace

static std::string producerString() {
  return std::string("kiln ") + version() + " (LLVM/MLIR " + llvmVersion() +
         ")";
}

/// The dispatch entry point name of the single-dispatch lowering.
static constexpr const char *kEntryName = "main_dispatch_0";

llvm::Expected<std::string> emitStage(const std::string &path,
                                      EmitStage stage,
                                      const CompileOptions &options) {
  Compilation c;
  if (llvm::Error err = c.import(path, options.fixedShapes))
    return std::move(err);
  if (stage == EmitStage::Tosa)
    return c.print();
  if (llvm::Error err = c.run("TOSA to linalg", buildTosaToLinalgPipeline))
    return std::move(err);
  if (stage == EmitStage::Linalg)
    return c.print();
  ArtifactSpec spec;
  collectSignature(*c.module, spec);
  if (llvm::Error err = c.run("linalg to LLVM", buildLinalgToLLVMPipeline))
    return std::move(err);
  collectConstants(*c.module, spec);
  unsigned numBindings =
      spec.inputs.size() + spec.constants.size() + spec.outputs.size();
  auto tm = createTargetMachine(options.target, options.optLevel);
  if (!tm)
    return tm.takeError();
  llvm::LLVMContext llvmContext;
  auto llvmModule = translateToLLVMIR(*c.module, llvmContext, "main",
                                      kEntryName, numBindings);
  if (!llvmModule)
    return llvmModule.takeError();
  optimizeModule(**llvmModule, **tm, options.optLevel);
  if (stage == EmitStage::LLVMIR) {
    std::string text;
    llvm::raw_string_ostream os(text);
    (*llvmModule)->print(os, nullptr);
    return os.str();
  }
  return emitMachineCode(**llvmModule, **tm, /*asText=*/true);
}

llvm::Expected<std::vector<uint8_t>>
compileArtifact(const std::string &path, const CompileOptions &options) {
  Compilation c;
  if (llvm::Error err = c.import(path, options.fixedShapes))
    return std::move(err);
  ArtifactSpec spec;
  spec.producer = producerString();
  spec.source = c.source;
  collectSignature(*c.module, spec);
  if (llvm::Error err = c.run("TOSA to linalg", buildTosaToLinalgPipeline))
    return std::move(err);
  if (llvm::Error err = c.run("linalg to LLVM", buildLinalgToLLVMPipeline))
    return std::move(err);
  collectConstants(*c.module, spec);

  // Kernel ABI after buildLinalgToLLVMPipeline: inputs, then outlined
  // constants, then outputs (out-parameters are appended last).
  DispatchSpec dispatch;
  auto bind = [&](BindingSource source, uint32_t index, uint64_t bytes) {
    dispatch.bindings.push_back({source, index, 0, bytes});
  };
  auto bytesOf = [](const std::vector<int64_t> &shape, ElementKind type) {
    uint64_t n = elementSize(type);
    for (int64_t d : shape)
      n *= static_cast<uint64_t>(d);
    return n;
  };
  for (uint32_t i = 0; i < spec.inputs.size(); ++i)
    bind(BindingSource::Input, i, bytesOf(spec.inputs[i].shape, spec.inputs[i].type));
  for (uint32_t i = 0; i < spec.constants.size(); ++i)
    bind(BindingSource::Constant, i, spec.constants[i].data.size());
  for (uint32_t i = 0; i < spec.outputs.size(); ++i)
    bind(BindingSource::Output, i, bytesOf(spec.outputs[i].shape, spec.outputs[i].type));

  auto tm = createTargetMachine(options.target, options.optLevel);
  if (!tm)
    return tm.takeError();
  llvm::LLVMContext llvmContext;
  auto llvmModule = translateToLLVMIR(*c.module, llvmContext, "main",
                                      kEntryName, dispatch.bindings.size());
  if (!llvmModule)
    return llvmModule.takeError();
  optimizeModule(**llvmModule, **tm, options.optLevel);
  auto object = emitMachineCode(**llvmModule, **tm, /*asText=*/false);
  if (!object)
    return object.takeError();
  auto sharedObject = linkSharedObject(
      llvm::ArrayRef<char>(object->data(), object->size()));
  if (!sharedObject)
    return sharedObject.takeError();

  ExecutableSpec exe;
  exe.triple = (*tm)->getTargetTriple().str();
  exe.cpu = (*tm)->getTargetCPU().str();
  exe.entryPoints = {kEntryName};
  exe.code = std::move(*sharedObject);
  spec.executables.push_back(std::move(exe));
  spec.commands.push_back(std::move(dispatch));
  return writeArtifact(spec);
}

} // namespace kiln
