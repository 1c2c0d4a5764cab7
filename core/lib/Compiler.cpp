//===- Compiler.cpp - Kiln's compiler driver ------------------------------===//
//
// import -> TOSA -> linalg -> LLVM dialect -> LLVM IR -> object -> .so ->
// artifact. Every phase's passes come from Pipeline.cpp.
//
//===----------------------------------------------------------------------===//
#include "kiln/Compiler.h"
#include "kiln/Artifact.h"
#include "kiln/Error.h"

#include "Artifact/ArtifactWriter.h"
#include "Artifact/CModuleWriter.h"
#include "Codegen/IntegerTargets.h"
#include "Codegen/MachineCode.h"
#include "Import/Import.h"
#include "Pipeline.h"
#include "Support/Message.h"
#include "Schedule/BuildPlan.h"
#include "kiln_artifact_generated.h"
#include "kiln/Plan.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include <map>

#include "llvm/Config/llvm-config.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

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
  else if (text == "dispatches")
    out = EmitStage::Dispatches;
  else if (text == "buffers")
    out = EmitStage::Buffers;
  else if (text == "llvm-ir")
    out = EmitStage::LLVMIR;
  else if (text == "asm")
    out = EmitStage::Asm;
  else
    return false;
  return true;
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

  llvm::Error import(const std::string &path, const std::vector<ShapeFix> &fixes,
                     const std::vector<ValueFix> &values, const std::string &signature) {
    source = llvm::sys::path::filename(path).str();
    auto imported = importModelFile(context, path, fixes, values, signature);
    if (!imported)
      return imported.takeError();
    module = std::move(*imported);
    return llvm::Error::success();
  }

  /// Runs the passes `build` adds; a failure becomes one message naming the
  /// phase and the first diagnostic (never an IR dump).
  llvm::Error run(llvm::StringRef phase,
                  llvm::function_ref<void(PassManager &)> build) {
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

  std::string print(bool elide = true) {
    std::string text;
    llvm::raw_string_ostream os(text);
    OpPrintingFlags flags;
    if (elide)
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
  if (type.isUnsignedInteger(8)) // isInteger(8) holds for ui8 too
    return ElementKind::U8;
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
  if (attrs)
    if (auto wire = attrs.getAs<StringAttr>(kElementTypeAttr))
      if (wire.getValue() == "u8" && spec.type == ElementKind::I8)
        spec.type = ElementKind::U8;
  return spec;
}

/// The I/O signature of @main in Kiln's input form. Arguments and results
/// marked kStateAttr (after the model's own) are state, not I/O.
void collectSignature(ModuleOp module, ArtifactSpec &spec) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  FunctionType type = main.getFunctionType();
  for (unsigned i = 0; i < type.getNumInputs(); ++i)
    if (!main.getArgAttr(i, kStateAttr))
      spec.inputs.push_back(
          tensorSpecOf(type.getInput(i), main.getArgAttrDict(i), "input" + std::to_string(i)));
  for (unsigned i = 0; i < type.getNumResults(); ++i)
    if (!main.getResultAttr(i, kStateAttr))
      spec.outputs.push_back(
          tensorSpecOf(type.getResult(i), main.getResultAttrDict(i), "output" + std::to_string(i)));
}

/// The state variables of kStateVariablesAttr (their names, types and
/// initial values; the plan places them later): a splat of 1-, 2- or
/// 4-byte elements as a fill pattern, anything else as its bytes.
void collectState(ModuleOp module, ArtifactSpec &spec) {
  auto entries = module->getAttrOfType<ArrayAttr>(kStateVariablesAttr);
  if (!entries)
    return;
  for (Attribute entry : entries) {
    auto dict = entry.cast<DictionaryAttr>();
    auto initial = dict.getAs<DenseElementsAttr>("initial");
    auto type = initial.getType().cast<RankedTensorType>();
    StateSpec v;
    v.name = dict.getAs<StringAttr>("name").str();
    std::string text;
    llvm::raw_string_ostream os(text);
    for (int64_t d : type.getShape())
      os << d << "x";
    os << type.getElementType();
    v.type = os.str();
    unsigned bits = type.getElementTypeBitWidth();
    v.bytes = static_cast<uint64_t>(type.getNumElements()) * (bits / 8);
    llvm::ArrayRef<char> raw = initial.getRawData();
    if (initial.isSplat() && (bits == 8 || bits == 16 || bits == 32)) {
      uint32_t element = 0;
      std::memcpy(&element, raw.data(), bits / 8);
      for (unsigned b = 0; b < 32; b += bits)
        v.fillPattern |= element << b;
    } else {
      v.initial.assign(raw.begin(), raw.end());
    }
    spec.state.push_back(std::move(v));
  }
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

const char *toString(CompilePhase phase) {
  switch (phase) {
  case CompilePhase::Import: return "import";
  case CompilePhase::TosaToLinalg: return "tosa-to-linalg";
  case CompilePhase::Dispatches: return "dispatches";
  case CompilePhase::Bufferization: return "bufferization";
  case CompilePhase::Schedule: return "schedule";
  case CompilePhase::LowerToLLVM: return "lower-to-llvm";
  case CompilePhase::Optimize: return "optimize";
  case CompilePhase::Codegen: return "codegen";
  case CompilePhase::Artifact: return "artifact";
  }
  return "unknown";
}

bool parseOutputFormat(const std::string &text, OutputFormat &out) {
  if (text == "kiln" || text == "artifact")
    out = OutputFormat::Artifact;
  else if (text == "c-module")
    out = OutputFormat::CModule;
  else
    return false;
  return true;
}

const char *toString(OutputFormat format) {
  return format == OutputFormat::CModule ? "c-module" : "kiln";
}

static DispatchOptions dispatchOptionsOf(const CompileOptions &options) {
  DispatchOptions d;
  d.fusion = options.fusion;
  d.noFusion.insert(options.noFusion.begin(), options.noFusion.end());
  for (const auto &[id, sizes] : options.tileSizes)
    d.tileSizes[id] = sizes;
  return d;
}

/// The largest buffer (one tensor, the arena) a build may ask for, and
/// where that number comes from (for messages).
struct BufferLimit {
  int64_t bytes;
  std::string source;
};

static llvm::Expected<BufferLimit> bufferLimitOf(const CompileOptions &options) {
  std::string triple = options.target.triple.empty()
                           ? llvm::sys::getDefaultTargetTriple()
                           : llvm::Triple::normalize(options.target.triple);
  llvm::Triple t(triple);
  unsigned bits = t.isArch16Bit() ? 16 : t.isArch32Bit() ? 32 : 64;
  // No object can be larger than the pointer width addresses (PTRDIFF_MAX).
  const int64_t largestObject =
      bits >= 64 ? INT64_MAX : (int64_t(1) << (bits - 1)) - 1;
  if (options.maxBufferBytes > largestObject)
    return makeError("--max-buffer-bytes=" + std::to_string(options.maxBufferBytes) +
                     " is above what " + t.getArchName().str() + "'s " +
                     std::to_string(bits) + "-bit pointers address (at most " +
                     std::to_string(largestObject) + " bytes in one object)");
  if (options.maxBufferBytes > 0)
    return BufferLimit{options.maxBufferBytes, "--max-buffer-bytes"};
  return BufferLimit{defaultMaxBufferBytes(bits),
          t.getArchName().str() + " default, " + std::to_string(bits) +
              "-bit pointers; --max-buffer-bytes=N sets it"};
}

namespace {

/// One run of the pipeline (compileImpl): what it was asked for, and what
/// each phase hands the next.
struct PipelineRun {
  PipelineRun(const std::string &path, const CompileOptions &options, EmitStage stop,
              std::string *emitted, CompileResult *result, bool planOnly)
      : path(path), options(options), stop(stop), emitted(emitted), result(result),
        planOnly(planOnly), cModule(options.format == OutputFormat::CModule) {}

  /// Reports phase `p` (CompileOptions::onPhase) and honours cancellation
  /// between phases.
  llvm::Error phase(CompilePhase p) const {
    if (options.onPhase && !options.onPhase(p))
      return makeError("compilation cancelled");
    return llvm::Error::success();
  }

  /// True when `--emit=` stops after `stage`; the module's text is then in
  /// *emitted.
  bool emitsAfter(EmitStage stage) {
    if (!emitted || stop != stage)
      return false;
    *emitted = c.print(options.elideConstants);
    return true;
  }

  const std::string &path;
  const CompileOptions &options;
  const EmitStage stop;
  /// With --emit: the text after `stop`; else null.
  std::string *const emitted;
  /// The build (and its signature, plan, sizes); null with --emit.
  CompileResult *const result;
  /// planOnly(): stop after the plan, no code.
  const bool planOnly;
  const bool cModule;

  Compilation c;
  BufferLimit limit;
  ArtifactSpec spec;
  std::unique_ptr<llvm::TargetMachine> tm;
  KernelTarget kernelTarget;
  std::string moduleName;
  CompilationPlan plan;
  /// The kernels to compile (one per distinct dispatch), their index by
  /// entry point name, and their exported names (C modules prefix them).
  std::vector<KernelABI> kernels;
  std::map<std::string, uint32_t> entryOf;
  std::vector<std::string> entryPoints;
};

} // namespace

/// The model as TOSA, its warnings and I/O signature; every shape
/// multiplied out once, with overflow checks, against the largest buffer
/// the target can be asked for (later phases rely on it).
static llvm::Error importModel(PipelineRun &run) {
  if (llvm::Error err = run.phase(CompilePhase::Import))
    return err;
  Compilation &c = run.c;
  if (llvm::Error err = c.import(run.path, run.options.fixedShapes, run.options.fixedValues,
                                 run.options.signature))
    return err;
  // Inputs fixed to values: recorded in the io section, not the signature.
  run.spec.fixedInputs = fixedInputsOf(*c.module);
  (*c.module)->removeAttr(kFixedInputsAttr);
  if (run.result) {
    run.result->fixedInputs = run.spec.fixedInputs;
    run.result->controlFlow = controlFlowOf(*c.module);
  }
  (*c.module)->removeAttr(kControlFlowAttr);
  if (auto warnings = (*c.module)->getAttrOfType<ArrayAttr>("kiln.warnings")) {
    if (run.result)
      for (Attribute w : warnings)
        run.result->warnings.push_back(w.cast<StringAttr>().str());
    (*c.module)->removeAttr("kiln.warnings");
  }
  auto limitOrError = bufferLimitOf(run.options);
  if (!limitOrError)
    return limitOrError.takeError();
  run.limit = *limitOrError;
  if (llvm::Error err = checkTensorSizes(*c.module, run.limit.bytes, c.source, run.limit.source))
    return err;
  run.spec.producer = producerString();
  run.spec.source = c.source;
  collectSignature(*c.module, run.spec);
  collectState(*c.module, run.spec);
  if (CompileResult *result = run.result) {
    auto info = [](const TensorSpec &t) {
      IOInfo io;
      io.name = t.name;
      io.dtype =
          dtypeOfElementType(kiln_element_type_name(static_cast<kiln_element_type_t>(t.type)));
      io.shape = t.shape;
      io.byteSize = npyDtypeSize(io.dtype);
      for (int64_t d : t.shape)
        io.byteSize *= static_cast<uint64_t>(d); // checkTensorSizes bounded it
      return io;
    };
    for (const TensorSpec &t : run.spec.inputs) {
      result->inputs.push_back(info(t));
      result->inputBytes += static_cast<int64_t>(result->inputs.back().byteSize);
    }
    for (const TensorSpec &t : run.spec.outputs) {
      result->outputs.push_back(info(t));
      result->outputBytes += static_cast<int64_t>(result->outputs.back().byteSize);
    }
  }
  return llvm::Error::success();
}

/// TOSA -> linalg on tensors, elementwise fusion.
static llvm::Error lowerToLinalg(PipelineRun &run) {
  if (llvm::Error err = run.phase(CompilePhase::TosaToLinalg))
    return err;
  return run.c.run("TOSA to linalg", [&](PassManager &pm) { buildTosaToLinalgPipeline(pm); });
}

/// The target machine, and what the target refuses before any work: a
/// `.kiln` for bare metal, a bad C module name, --check-bounds where the
/// runtime cannot report, a float model on a target without an FPU.
static llvm::Error chooseTarget(PipelineRun &run) {
  const CompileOptions &options = run.options;
  // C modules record each kernel's frame size: firmware must budget stack.
  auto tm = createTargetMachine(options.target, options.optLevel,
                                /*stackSizes=*/run.cModule && run.result && !run.planOnly);
  if (!tm)
    return tm.takeError();
  run.tm = std::move(*tm);
  run.kernelTarget = kernelTargetOf(*run.tm);
  run.moduleName = options.moduleName.empty() ? moduleNameFromPath(run.path) : options.moduleName;
  const std::string &source = run.c.source;
  if (run.result && !run.planOnly) {
    if (!run.cModule && isBareMetalTriple(options.target.triple))
      return makeError(source + ": target '" + options.target.triple +
                       "' is bare metal: nothing there loads a .kiln artifact's "
                       "shared object; use --output-format=c-module");
    if (std::string why = run.cModule ? moduleNameProblem(run.moduleName) : ""; !why.empty())
      return makeError("--module-name='" + quoteInput(run.moduleName) + "' " + why);
    // The report record holds a pointer; the runtime reads it after each wave.
    if (options.checkBounds && (run.cModule || !run.tm->getTargetTriple().isArch64Bit()))
      return makeError("--check-bounds builds a .kiln artifact for a 64-bit hosted target "
                       "(the runtime reports a refused access); not " +
                       std::string(run.cModule ? "a C module" : "this 32-bit target"));
  }
  // A target without an FPU (thumbv6m) takes integer models only.
  return checkIntegerOnlyTarget(*run.c.module, *run.tm, source);
}

/// Dispatch regions, outlining and workgroup tiling for the target.
static llvm::Error formDispatches(PipelineRun &run) {
  DispatchOptions dispatchOptions = dispatchOptionsOf(run.options);
  dispatchOptions.vectorBytes = vectorBytesOf(*run.tm);
  dispatchOptions.workgroupBytes = run.kernelTarget.workgroupBytes;
  dispatchOptions.dividingTiles = run.kernelTarget.dividingTiles;
  if (llvm::Error err = run.phase(CompilePhase::Dispatches))
    return err;
  return run.c.run("dispatch formation",
                   [&](PassManager &pm) { buildDispatchPipeline(pm, dispatchOptions); });
}

/// One-shot bufferization, then the constant weights packed into the panel
/// layout the kernels read (before the constants are collected and the
/// plan sizes their bindings).
static llvm::Error bufferize(PipelineRun &run) {
  if (llvm::Error err = run.phase(CompilePhase::Bufferization))
    return err;
  if (llvm::Error err = run.c.run("bufferization", buildBufferizationPipeline))
    return err;
  const KernelTarget kernelTarget = run.kernelTarget;
  const unsigned numInputs = run.spec.inputs.size() + run.spec.state.size();
  if (llvm::Error err = run.c.run("weight packing", [&](PassManager &pm) {
        pm.addPass(createPackWeightsPass(kernelTarget, numInputs));
      }))
    return err;
  collectConstants(*run.c.module, run.spec);
  coalesceOutputCopies(*run.c.module);
  return llvm::Error::success();
}

/// The quantization of each integer input and output the plan records
/// (CompilationPlan::quantization, by tensor name) into the artifact's
/// signature and the result's: what TFLite's get_input_details() reports.
/// ONNX models record none (their importer keeps no I/O quantization).
static void attachIOQuantization(PipelineRun &run) {
  auto attach = [&](std::vector<TensorSpec> &specs, std::vector<IOInfo> *infos) {
    for (size_t i = 0; i < specs.size(); ++i) {
      TensorSpec &t = specs[i];
      if (t.type != ElementKind::I8 && t.type != ElementKind::U8 && t.type != ElementKind::I32)
        continue;
      const TensorQuantization *q = findQuantization(run.plan, t.name);
      // A summarized record (weights only) cannot describe a tensor.
      if (!q || q->channels > 0 || q->scales.empty())
        continue;
      t.quantization.scales = q->scales;
      t.quantization.zeroPoints.assign(q->zeroPoints.begin(), q->zeroPoints.end());
      // One pair is per tensor whatever the file's quantized_dimension.
      t.quantization.dimension = q->scales.size() == 1 ? -1 : static_cast<int32_t>(q->dimension);
      if (infos && i < infos->size())
        (*infos)[i].quantization = t.quantization;
    }
  };
  attach(run.spec.inputs, run.result ? &run.result->inputs : nullptr);
  attach(run.spec.outputs, run.result ? &run.result->outputs : nullptr);
}

/// Waves, barriers and the memory plan of the bufferized @main, each
/// dispatch's kernel strategy, identical kernels merged; the plan checked
/// (a violated invariant is a Kiln bug, and a loud one beats a wrong
/// answer) against the runtime's 32-bit workgroup counts and the buffer
/// limit before anything is burned into an artifact.
static llvm::Error schedule(PipelineRun &run) {
  if (llvm::Error err = run.phase(CompilePhase::Schedule))
    return err;
  Compilation &c = run.c;
  std::vector<std::string> outputNames;
  for (const TensorSpec &t : run.spec.outputs)
    outputNames.push_back(t.name);
  std::vector<std::string> stateNames;
  for (const StateSpec &v : run.spec.state)
    stateNames.push_back(v.name);
  auto built = buildPlan(*c.module, run.spec.inputs.size() + run.spec.state.size(),
                         run.spec.constants.size(), outputNames, stateNames);
  if (!built)
    return built.takeError();
  CompilationPlan &plan = run.plan = std::move(*built);
  plan.source = c.source;
  attachIOQuantization(run);
  // Each dispatch's kernel strategy, as kiln-register-tile-contractions
  // will lower it for this target.
  for (auto fn : c.module->getOps<func::FuncOp>())
    if (auto id = fn->getAttrOfType<IntegerAttr>("kiln.dispatch_id"))
      for (Dispatch &d : plan.dispatches)
        if (d.id == id.getInt())
          d.kernel = kernelStrategyOf(fn, run.kernelTarget);
  // Identical kernels (repeated blocks) are compiled once.
  deduplicateDispatches(*c.module, plan);
  if (std::vector<std::string> violations = checkPlan(plan); !violations.empty())
    return makeError("internal error: the plan of " + c.source + " is invalid (" +
                     std::to_string(violations.size()) +
                     " violations; first: " + violations.front() + ")");
  // The runtime counts a dispatch's workgroups in 32 bits (artifact format).
  for (const Dispatch &d : plan.dispatches) {
    std::optional<int64_t> count =
        tensorBytes({d.workgroupCount[0], d.workgroupCount[1], d.workgroupCount[2]}, 1);
    if (!count || *count > static_cast<int64_t>(UINT32_MAX))
      return makeError(
          c.source + ": " + d.name + " would launch " + std::to_string(d.workgroupCount[0]) + "x" +
          std::to_string(d.workgroupCount[1]) + "x" + std::to_string(d.workgroupCount[2]) +
          " workgroups; at most 2^32 - 1 per dispatch (larger tile "
          "sizes: --tile=" +
          std::to_string(d.id) + "=...)");
  }
  if (plan.memory.arenaBytes > run.limit.bytes)
    return makeError(c.source + ": the arena needs " + std::to_string(plan.memory.arenaBytes) +
                     " bytes, above the " + std::to_string(run.limit.bytes) +
                     "-byte limit on one buffer (" + run.limit.source + ")");
  return llvm::Error::success();
}

/// @main is now the plan; only the dispatch functions become code, one per
/// distinct kernel: their ABI (bindings, aliasing, --check-bounds extents,
/// labels), then the lowering to the LLVM dialect.
static llvm::Error lowerKernels(PipelineRun &run) {
  Compilation &c = run.c;
  c.module->lookupSymbol<func::FuncOp>("main").erase();
  eraseDeduplicatedDispatches(*c.module, run.plan);
  for (auto fn : c.module->getOps<func::FuncOp>()) {
    if (!fn->hasAttr("kiln.dispatch_id"))
      continue;
    unsigned bindings = 0;
    std::vector<uint64_t> bytes;
    for (Type t : fn.getArgumentTypes())
      if (auto memref = t.dyn_cast<MemRefType>()) {
        ++bindings;
        unsigned bits = memref.getElementTypeBitWidth();
        bytes.push_back(uint64_t(memref.getNumElements()) * ((bits + 7) / 8));
      }
    run.entryOf[fn.getSymName().str()] = run.kernels.size();
    run.kernels.push_back({fn.getSymName().str(), bindings});
    if (run.options.checkBounds)
      run.kernels.back().bindingBytes = std::move(bytes);
  }
  for (const Dispatch &d : run.plan.dispatches)
    if (entryPointOf(d) == d.name && run.entryOf.count(d.name)) {
      KernelABI &k = run.kernels[run.entryOf[d.name]];
      k.aliasedBindings = d.aliasedBindings;
      std::string ops;
      for (const SourceOp &op : d.ops)
        ops += (ops.empty() ? "" : ", ") + sourceOpText(op);
      k.label = d.name + (ops.empty() ? "" : " (" + ops + ")");
    }
  if (llvm::Error err = run.phase(CompilePhase::LowerToLLVM))
    return err;
  const KernelTarget kernelTarget = run.kernelTarget;
  return c.run("lowering to LLVM",
               [&](PassManager &pm) { buildDispatchLoweringPipeline(pm, kernelTarget); });
}

/// --emit=llvm-ir or asm: the kernels after LLVM's -O pipeline, as text.
static llvm::Error emitKernels(PipelineRun &run, llvm::Module &module) {
  optimizeModule(module, *run.tm, run.options.optLevel);
  if (run.stop == EmitStage::LLVMIR) {
    llvm::raw_string_ostream os(*run.emitted);
    module.print(os, nullptr);
    return llvm::Error::success();
  }
  auto text = emitMachineCode(module, *run.tm, /*asText=*/true);
  if (!text)
    return text.takeError();
  *run.emitted = std::move(*text);
  return llvm::Error::success();
}

/// The kernels as machine code: optimized and compiled in parts, linked
/// into a shared object (.kiln) or one relocatable object (C module, with
/// each kernel's stack frame); their sizes into the result.
static llvm::Expected<std::vector<uint8_t>> generateCode(PipelineRun &run,
                                                         std::unique_ptr<llvm::Module> module) {
  // C module entry points share the firmware's one namespace: prefixed.
  for (const KernelABI &k : run.kernels) {
    run.entryPoints.push_back(run.cModule ? run.moduleName + "_" + k.name : k.name);
    if (llvm::Function *fn = module->getFunction(k.name))
      fn->setName(run.entryPoints.back());
  }
  auto objects = compileKernelObjects(std::move(module), run.entryPoints, *run.tm,
                                      run.options.optLevel, kCodegenParts);
  if (!objects)
    return objects.takeError();
  if (llvm::Error err = run.phase(CompilePhase::Codegen))
    return std::move(err);
  auto code = run.cModule ? linkRelocatable(*objects)
                          : linkSharedObject(*objects, run.tm->getTargetTriple(),
                                             !run.options.debugSymbols);
  if (!code)
    return code.takeError();
  CompileResult *result = run.result;
  result->codeBytes = loadableBytes(*code);
  if (run.cModule) {
    result->stackBytes = largestStackFrame(*code);
    std::map<std::string, int64_t> frames = stackFrameSizes(*code);
    // LLVM records no frame for a function with stack objects of run-time
    // size (a padded input window whose extent depends on the
    // workgroup): -1.
    for (size_t k = 0; k < run.kernels.size(); ++k) {
      auto frame = frames.find(run.entryPoints[k]);
      result->stackFrameBytes[run.kernels[k].name] = frame != frames.end() ? frame->second : -1;
    }
  }
  return code;
}

/// The command list of the artifact: the plan's commands, with buffers
/// resolved to artifact bindings.
static void addCommands(PipelineRun &run) {
  const CompilationPlan &plan = run.plan;
  std::map<int64_t, const Dispatch *> dispatchById;
  for (const Dispatch &d : plan.dispatches)
    dispatchById[d.id] = &d;
  for (const Command &cmd : plan.schedule.commands) {
    CommandSpec out;
    out.kind = static_cast<CommandSpecKind>(cmd.kind);
    out.wave = cmd.wave;
    out.fillPattern = cmd.fillPattern;
    if (cmd.kind == CommandKind::Dispatch) {
      const Dispatch *d = dispatchById.at(cmd.dispatch);
      out.entryPoint = run.entryOf.at(entryPointOf(*d));
      out.workgroupCount = {static_cast<uint32_t>(d->workgroupCount[0]),
                            static_cast<uint32_t>(d->workgroupCount[1]),
                            static_cast<uint32_t>(d->workgroupCount[2])};
    }
    for (const BindingRef &b : cmd.bindings) {
      const Buffer &buf = plan.memory.buffers[b.buffer];
      BindingSpec bs;
      bs.length = b.length;
      switch (buf.kind) {
      case BufferKind::Input:
        bs.source = BindingSource::Input;
        bs.index = buf.index;
        bs.offset = b.offset;
        break;
      case BufferKind::Output:
        bs.source = BindingSource::Output;
        bs.index = buf.index;
        bs.offset = b.offset;
        break;
      case BufferKind::Constant:
        bs.source = BindingSource::Constant;
        bs.index = buf.index;
        bs.offset = b.offset;
        break;
      case BufferKind::Transient:
      case BufferKind::State:
        bs.source = BindingSource::Arena;
        bs.offset = buf.offset + b.offset;
        break;
      }
      out.bindings.push_back(bs);
    }
    run.spec.commands.push_back(std::move(out));
  }
}

/// The memory plan section: one allocation per placed transient buffer,
/// aliases pointing at their target's allocation.
static void addAllocations(PipelineRun &run) {
  ArtifactSpec &spec = run.spec;
  std::map<int64_t, int64_t> allocationOf;
  for (const Buffer &b : run.plan.memory.buffers)
    if (b.kind == BufferKind::Transient && b.firstCommand >= 0) {
      allocationOf[b.id] = spec.allocations.size();
      spec.allocations.push_back(
          {static_cast<uint64_t>(b.offset), static_cast<uint64_t>(b.bytes), -1});
    }
  for (const Buffer &b : run.plan.memory.buffers)
    if (b.aliasOf >= 0 && allocationOf.count(b.id) && allocationOf.count(b.aliasOf))
      spec.allocations[allocationOf[b.id]].aliasOf = allocationOf[b.aliasOf];
}

/// The executable, command list, memory plan and reflection into the
/// spec, then the `.kiln` flatbuffer or the C module's files.
static void writeOutput(PipelineRun &run, std::vector<uint8_t> code) {
  ArtifactSpec &spec = run.spec;
  ExecutableSpec exe;
  exe.triple = run.tm->getTargetTriple().str();
  exe.cpu = run.tm->getTargetCPU().str();
  exe.requiredCpuFeatures = requiredCpuFeatures(*run.tm);
  for (const KernelABI &k : run.kernels)
    exe.entryPoints.push_back(k.name);
  exe.code = std::move(code);
  spec.executables.push_back(std::move(exe));
  addCommands(run);
  spec.arenaBytes = run.plan.memory.arenaBytes;
  spec.lowerBoundBytes = run.plan.memory.lowerBoundBytes;
  spec.persistentBytes = run.plan.memory.persistentBytes;
  for (size_t k = 0; k < spec.state.size() && k < run.plan.state.size(); ++k)
    spec.state[k].arenaOffset = static_cast<uint64_t>(run.plan.state[k].offset);
  spec.waves = run.plan.schedule.waves;
  addAllocations(run);
  if (run.options.reflection)
    spec.reflectionJson = planToJson(run.plan, /*pretty=*/false);
  CompileResult *result = run.result;
  result->triple = spec.executables.front().triple;
  result->cpu = spec.executables.front().cpu;
  result->features = run.tm->getTargetFeatureString().str();
  result->arenaBytes = static_cast<int64_t>(spec.arenaBytes);
  for (const ConstantSpec &cst : spec.constants)
    result->constantBytes += static_cast<int64_t>(cst.data.size());
  if (run.cModule)
    result->constantBytes = static_cast<int64_t>(cModuleConstantBytes(spec));
  if (run.cModule)
    result->files = writeCModule(spec, &run.plan, run.moduleName, spec.executables.front().code);
  else
    result->artifact = writeArtifact(spec);
  result->plan = std::make_shared<const CompilationPlan>(std::move(run.plan));
}

/// Runs the pipeline up to `stop`. With `emitted`, prints the module (or
/// LLVM IR / assembly) after `stop`; with `result`, finishes the artifact
/// (or, with `planOnly`, stops after the plan).
static llvm::Error compileImpl(const std::string &path, const CompileOptions &options,
                               EmitStage stop, std::string *emitted, CompileResult *result,
                               bool planOnly = false) {
  PipelineRun run(path, options, stop, emitted, result, planOnly);
  if (llvm::Error err = importModel(run))
    return err;
  if (run.emitsAfter(EmitStage::Tosa))
    return llvm::Error::success();
  if (llvm::Error err = lowerToLinalg(run))
    return err;
  if (run.emitsAfter(EmitStage::Linalg))
    return llvm::Error::success();
  if (llvm::Error err = chooseTarget(run))
    return err;
  if (llvm::Error err = formDispatches(run))
    return err;
  if (run.emitsAfter(EmitStage::Dispatches))
    return llvm::Error::success();
  if (llvm::Error err = bufferize(run))
    return err;
  if (run.emitsAfter(EmitStage::Buffers))
    return llvm::Error::success();
  if (llvm::Error err = schedule(run))
    return err;
  if (planOnly) {
    result->arenaBytes = run.plan.memory.arenaBytes;
    result->plan = std::make_shared<const CompilationPlan>(std::move(run.plan));
    return llvm::Error::success();
  }
  if (llvm::Error err = lowerKernels(run))
    return err;
  llvm::LLVMContext llvmContext;
  auto llvmModule = translateToLLVMIR(*run.c.module, llvmContext, run.kernels);
  if (!llvmModule)
    return llvmModule.takeError();
  if (llvm::Error err = run.phase(CompilePhase::Optimize))
    return err;
  if (emitted)
    return emitKernels(run, **llvmModule);
  auto code = generateCode(run, std::move(*llvmModule));
  if (!code)
    return code.takeError();
  if (llvm::Error err = run.phase(CompilePhase::Artifact))
    return err;
  writeOutput(run, std::move(*code));
  return llvm::Error::success();
}

llvm::Expected<std::string> emitStage(const std::string &path, EmitStage stage,
                                      const CompileOptions &options) {
  std::string text;
  if (llvm::Error err = compileImpl(path, options, stage, &text, nullptr))
    return std::move(err);
  return text;
}

llvm::Expected<CompileResult> compile(const std::string &path,
                                      const CompileOptions &options) {
  CompileResult result;
  if (llvm::Error err =
          compileImpl(path, options, EmitStage::Asm, nullptr, &result))
    return std::move(err);
  return result;
}

llvm::Expected<CompileResult> planOnly(const std::string &path,
                                       const CompileOptions &options) {
  CompileResult result;
  if (llvm::Error err = compileImpl(path, options, EmitStage::Asm, nullptr,
                                    &result, /*planOnly=*/true))
    return std::move(err);
  return result;
}

llvm::Expected<std::shared_ptr<const CompilationPlan>>
planModel(const std::string &path, const CompileOptions &options) {
  auto result = planOnly(path, options);
  if (!result)
    return result.takeError();
  return result->plan;
}

llvm::Expected<std::shared_ptr<const CompilationPlan>>
planOfArtifact(const kiln_artifact_info_t &info, const std::string &what) {
  if (!info.reflection_json)
    return makeError(what + ": the artifact carries no reflection data "
                            "(built with --reflection=false); inspect the "
                            "model instead");
  auto plan = std::make_shared<CompilationPlan>();
  std::string error;
  if (!planFromJson(std::string(info.reflection_json, info.reflection_json_bytes),
                    *plan, error))
    return makeError(what + ": unreadable reflection data: " + error);
  return std::shared_ptr<const CompilationPlan>(plan);
}

llvm::Expected<std::shared_ptr<const CompilationPlan>>
inspectFile(const std::string &path, const CompileOptions &options) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError(path + ": cannot read: " + buffer.getError().message());
  llvm::ArrayRef<uint8_t> bytes(
      reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
      (*buffer)->getBufferSize());
  if (isArtifact(path, bytes)) {
    auto info = verifyArtifact(bytes, path);
    if (!info)
      return info.takeError();
    return planOfArtifact(*info, path);
  }
  // A model: plan it without code generation (the plan compile() would
  // produce), so targets that cannot hold a .kiln (bare metal) inspect too.
  return planModel(path, options);
}

llvm::Expected<std::vector<uint8_t>>
compileArtifact(const std::string &path, const CompileOptions &options) {
  auto result = compile(path, options);
  if (!result)
    return result.takeError();
  return std::move(result->artifact);
}

} // namespace kiln
