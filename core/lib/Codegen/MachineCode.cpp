//===- MachineCode.cpp - LLVM IR, object code and linking -----------------===//
#include "MachineCode.h"
#include "BoundsChecks.h"

#include "Transforms/Passes.h"
#include "kiln/Error.h"
#include "kiln/Targets.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "lld/Common/CommonLinkerContext.h"
#include "lld/Common/Driver.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/CodeGen/TargetLowering.h"
#include "llvm/CodeGen/TargetSubtargetInfo.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Operator.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Object/RelocationResolver.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/InstCombine/InstCombine.h"
#include "llvm/Transforms/Scalar/IndVarSimplify.h"
#include "llvm/Transforms/Scalar/LoopPassManager.h"
#include "llvm/Transforms/Scalar/SimplifyCFG.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Vectorize/LoopVectorize.h"

#include <atomic>
#include <fcntl.h>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace kiln {

static void initializeTargetsOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
}

/// True if `feature` (no +/-) names a feature of `triple`. LLVM 16 has no
/// public feature list and only warns on stderr about unknown names, so the
/// probe silences stderr and checks whether +feature or -feature changes the
/// feature bits of the target's generic subtarget.
static bool featureIsKnown(const llvm::Target &target, const std::string &triple,
                           llvm::StringRef feature) {
  llvm::errs().flush();
  int saved = dup(2);
  int devnull = open("/dev/null", O_WRONLY);
  if (saved >= 0 && devnull >= 0)
    dup2(devnull, 2);
  // All three with the target's generic CPU named: given no CPU, AArch64
  // adds default features only when the feature string is empty too, so
  // "+anything" looked like a change against "" and every name passed.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(
      target.createMCSubtargetInfo(triple, "", ""));
  std::string cpu = generic ? generic->getCPU().str() : "generic";
  std::unique_ptr<llvm::MCSubtargetInfo> base(target.createMCSubtargetInfo(triple, cpu, ""));
  std::unique_ptr<llvm::MCSubtargetInfo> plus(
      target.createMCSubtargetInfo(triple, cpu, ("+" + feature).str()));
  std::unique_ptr<llvm::MCSubtargetInfo> minus(
      target.createMCSubtargetInfo(triple, cpu, ("-" + feature).str()));
  llvm::errs().flush();
  if (saved >= 0) {
    dup2(saved, 2);
    close(saved);
  }
  if (devnull >= 0)
    close(devnull);
  if (!base || !plus || !minus)
    return false;
  return plus->getFeatureBits() != base->getFeatureBits() ||
         minus->getFeatureBits() != base->getFeatureBits();
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetOptions &options, unsigned optLevel, bool stackSizes) {
  initializeTargetsOnce();
  std::string triple = options.triple.empty()
                           ? llvm::sys::getDefaultTargetTriple()
                           : llvm::Triple::normalize(options.triple);
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeError("unknown target '" + triple + "': " + error);
  llvm::Triple parsed(triple);
  // --target-cpu=host / --target-cpu-features=host: this machine's CPU, as
  // LLVM detects it (CPUID), resolved here so everything downstream (the
  // artifact's target_cpu, its required features) sees real names.
  std::string cpuName = options.cpu.empty() ? "generic" : options.cpu;
  std::string featureString = options.features;
  const bool hostCpu = cpuName == "host", hostFeatures = featureString == "host";
  if (hostCpu || hostFeatures) {
    if (parsed.getArch() != llvm::Triple(llvm::sys::getProcessTriple()).getArch())
      return makeError("--target-cpu=host and --target-cpu-features=host describe this "
                       "machine's CPU; they need the host target, not '" + triple + "'");
    if (hostCpu)
      cpuName = llvm::sys::getHostCPUName().str();
    // All detected features, so a CPU LLVM does not know by name (LLVM 16
    // calls Zen 5 "generic") or one a hypervisor trims still gets exactly
    // what it has; with --target-cpu=host, given features edit that list
    // (--target-cpu-features=-avx512f drops one).
    llvm::StringMap<bool> detected;
    std::string host;
    if (llvm::sys::getHostCPUFeatures(detected))
      for (const auto &f : detected)
        host += (host.empty() ? "" : ",") + std::string(f.second ? "+" : "-") + f.first().str();
    if (hostFeatures)
      featureString = host;
    else if (hostCpu)
      featureString = featureString.empty() ? host : host + "," + featureString;
  }
  if (!parsed.isOSBinFormatELF()) {
    std::string supported;
    for (const DeviceTarget &t : kDeviceTargets)
      if (*t.triple)
        supported += (supported.empty() ? "" : ", ") + std::string(t.name);
    return makeError("target '" + triple +
                     "' does not use ELF objects; Kiln's executables are ELF "
                     "(supported: " +
                     supported + ")");
  }
  // Reject unknown CPUs and features here: LLVM itself only warns (several
  // times) and may abort later.
  {
    std::unique_ptr<llvm::MCSubtargetInfo> probe(
        target->createMCSubtargetInfo(triple, "", ""));
    if (probe && cpuName != "generic" && !probe->isCPUStringValid(cpuName)) {
      const char *examples =
          parsed.isX86()       ? "generic, x86-64, x86-64-v2, x86-64-v3, skylake, znver3"
          : parsed.isAArch64() ? "generic, cortex-a53, cortex-a72, neoverse-n1"
          : parsed.isRISCV()   ? "generic-rv64, sifive-u74"
          : parsed.isARM() || parsed.isThumb() ? "cortex-m0plus, cortex-m4, cortex-m7, cortex-m33"
                                               : "generic";
      return makeError("unknown CPU '" + cpuName + "' for target '" + triple + "' (e.g. " +
                       examples + ")");
    }
    // A hard-float ABI needs a CPU with a floating-point unit.
    if ((parsed.isARM() || parsed.isThumb()) &&
        (parsed.getEnvironment() == llvm::Triple::EABIHF ||
         parsed.getEnvironment() == llvm::Triple::GNUEABIHF)) {
      std::unique_ptr<llvm::MCSubtargetInfo> sti(
          target->createMCSubtargetInfo(triple, cpuName, featureString));
      if (sti && !sti->checkFeatures("+vfp2sp"))
        return makeError("CPU '" + cpuName + "' has no floating-point unit, which the "
                         "hard-float ABI of '" + triple +
                         "' needs (e.g. cortex-m4, cortex-m7, cortex-m33)");
    }
    if (probe && !options.features.empty() && !hostFeatures) {
      llvm::SmallVector<llvm::StringRef> features;
      llvm::StringRef(options.features).split(features, ',', -1, false);
      for (llvm::StringRef f : features) {
        llvm::StringRef name = f.trim();
        if (!name.consume_front("+") && !name.consume_front("-"))
          return makeError("CPU feature '" + f.str() +
                           "' must start with + or - (e.g. +avx2,+fma)");
        if (!featureIsKnown(*target, triple, name))
          return makeError("unknown CPU feature '" + name.str() +
                           "' for target '" + triple + "'");
      }
    }
  }
  llvm::TargetOptions targetOptions;
  targetOptions.MCOptions.ABIName = options.abi;
  targetOptions.EmitStackSizeSection = stackSizes;
  // Bare-metal code is linked statically into the user's firmware; hosted
  // targets need PIC for the shared object (and for PIE programs linking a
  // C module).
  llvm::Reloc::Model reloc =
      parsed.getOS() == llvm::Triple::UnknownOS ? llvm::Reloc::Static
                                                : llvm::Reloc::PIC_;
  llvm::CodeGenOpt::Level level =
      optLevel == 0   ? llvm::CodeGenOpt::None
      : optLevel == 1 ? llvm::CodeGenOpt::Less
      : optLevel == 2 ? llvm::CodeGenOpt::Default
                      : llvm::CodeGenOpt::Aggressive;
  const std::string &cpu = cpuName;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu, featureString, targetOptions, reloc,
      std::nullopt, level));
  if (!tm)
    return makeError("cannot create a target machine for '" + triple +
                     "' cpu '" + cpu + "'");
  return tm;
}

int64_t vectorBytesOf(const llvm::TargetMachine &tm) {
  const llvm::MCSubtargetInfo *sti = tm.getMCSubtargetInfo();
  if (sti && tm.getTargetTriple().isX86()) {
    if (sti->checkFeatures("+avx512f"))
      return 64;
    if (sti->checkFeatures("+avx"))
      return 32;
  }
  return 16;
}

const std::vector<std::string> &checkableCpuFeatures() {
  // Keep in step with the runtime's table (cpuHasFeature, runtime/src/module.cc).
  static const std::vector<std::string> features = {
      "sse3",     "ssse3",    "sse4.1",   "sse4.2",   "popcnt",   "avx",      "avx2",
      "fma",      "bmi",      "bmi2",     "avx512f",  "avx512bw", "avx512cd", "avx512dq",
      "avx512vl", "avx512vnni", "avx512bf16", "avx512fp16"};
  return features;
}

std::vector<std::string> requiredCpuFeatures(const llvm::TargetMachine &tm) {
  std::vector<std::string> out;
  const llvm::MCSubtargetInfo *sti = tm.getMCSubtargetInfo();
  if (!sti || tm.getTargetTriple().getArch() != llvm::Triple::x86_64)
    return out;
  for (const std::string &f : checkableCpuFeatures())
    if (sti->checkFeatures("+" + f))
      out.push_back(f);
  return out;
}

KernelTarget kernelTargetOf(const llvm::TargetMachine &tm) {
  const llvm::Triple &triple = tm.getTargetTriple();
  KernelTarget target;
  if (triple.isX86()) {
    int64_t bytes = vectorBytesOf(tm);
    target.vectorLanes = bytes / 4;
    target.vectorRegisters = bytes == 64 ? 32 : 16;
    const llvm::MCSubtargetInfo *sti = tm.getMCSubtargetInfo();
    target.fma = sti && sti->checkFeatures("+fma");
  } else if (triple.isAArch64()) {
    target.vectorLanes = 4;
    target.vectorRegisters = 32;
  } else {
    target.vectorLanes = 1;
    target.vectorRegisters = 32;
    target.fmaPerCycle = 1;
    target.loadsPerCycle = 1;
  }
  const DeviceTarget *row = deviceTargetOfTriple(triple.str());
  const int64_t budget = row                    ? row->workgroupBytes
                         : triple.isArmMClass() ? kMicrocontrollerWorkgroupBytes
                                                : 0;
  if (budget > 0) {
    target.workgroupBytes = budget;
    target.dividingTiles = true;
  }
  return target;
}

llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &context,
                  llvm::ArrayRef<KernelABI> kernels) {
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context, "kiln");
  if (!llvmModule)
    return makeError("internal error: translation to LLVM IR failed");
  // MLIR 16's memref.alloca lowering passes the buffer's size in bytes as
  // the element count of an `alloca <element type>`, so every stack buffer
  // is sizeof(element) times too large (a 512x32xf32 tile became
  // `alloca [65536 x float]`, 256 KiB for 64 KiB). Every alloca in the
  // translated module comes from that lowering: make each one allocate its
  // byte count as bytes.
  for (llvm::Function &fn : *llvmModule) {
    llvm::SmallVector<llvm::AllocaInst *> allocas;
    for (llvm::Instruction &inst : llvm::instructions(fn))
      if (auto *alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst))
        if (alloca->isArrayAllocation() && !alloca->getAllocatedType()->isIntegerTy(8))
          allocas.push_back(alloca);
    for (llvm::AllocaInst *alloca : allocas) {
      auto *bytes = new llvm::AllocaInst(llvm::Type::getInt8Ty(context),
                                         alloca->getAddressSpace(), alloca->getArraySize(),
                                         alloca->getAlign(), alloca->getName(), alloca);
      alloca->replaceAllUsesWith(bytes);
      alloca->eraseFromParent();
    }
  }
  llvm::Type *ptrTy = llvm::PointerType::getUnqual(context);
  llvm::Type *i32Ty = llvm::Type::getInt32Ty(context);
  llvm::Type *i64Ty = llvm::Type::getInt64Ty(context);
  auto *entryTy = llvm::FunctionType::get(llvm::Type::getVoidTy(context),
                                          {ptrTy, ptrTy}, /*isVarArg=*/false);
  for (const KernelABI &abi : kernels) {
    llvm::Function *kernelFn = llvmModule->getFunction(abi.name);
    if (!kernelFn)
      return makeError("internal error: kernel '" + abi.name + "' not found");
    if (kernelFn->arg_size() != abi.numBindings + 3)
      return makeError("internal error: kernel '" + abi.name + "' takes " +
                       llvm::Twine(kernelFn->arg_size()) + " arguments, " +
                       llvm::Twine(abi.numBindings) +
                       " bindings + 3 workgroup ids planned");
    if (!abi.bindingBytes.empty()) {
      auto checked = instrumentBoundsChecks(*llvmModule, *kernelFn, abi.bindingBytes, abi.label);
      if (!checked)
        return checked.takeError();
    }
    kernelFn->setName(abi.name + ".impl");
    kernelFn->setLinkage(llvm::GlobalValue::InternalLinkage);
    kernelFn->addFnAttr(llvm::Attribute::AlwaysInline);
    // Buffers bound to one dispatch never overlap (the planner guarantees
    // it), except the in-place pairs it chose.
    for (unsigned i = 0; i < abi.numBindings; ++i)
      if (!llvm::is_contained(abi.aliasedBindings, static_cast<int64_t>(i)))
        kernelFn->addParamAttr(i, llvm::Attribute::NoAlias);

    // void name(void **bindings, const uint32_t *workgroup_id)
    llvm::Function *entryFn = llvm::Function::Create(
        entryTy, llvm::GlobalValue::ExternalLinkage, abi.name, *llvmModule);
    entryFn->getArg(0)->setName("bindings");
    entryFn->getArg(1)->setName("workgroup_id");
    entryFn->addParamAttr(0, llvm::Attribute::NoAlias);
    entryFn->addParamAttr(1, llvm::Attribute::NoAlias);
    llvm::IRBuilder<> builder(
        llvm::BasicBlock::Create(context, "entry", entryFn));
    llvm::SmallVector<llvm::Value *> args;
    for (unsigned i = 0; i < abi.numBindings; ++i) {
      llvm::Value *slot = builder.CreateConstInBoundsGEP1_64(
          ptrTy, entryFn->getArg(0), i);
      args.push_back(builder.CreateLoad(ptrTy, slot));
    }
    for (unsigned d = 0; d < 3; ++d) {
      llvm::Value *slot =
          builder.CreateConstInBoundsGEP1_64(i32Ty, entryFn->getArg(1), d);
      args.push_back(builder.CreateZExt(builder.CreateLoad(i32Ty, slot), i64Ty));
    }
    builder.CreateCall(kernelFn, args);
    builder.CreateRetVoid();
  }

  std::string message;
  llvm::raw_string_ostream os(message);
  if (llvm::verifyModule(*llvmModule, &os))
    return makeError("internal error: invalid LLVM IR: " + os.str());
  return llvmModule;
}

namespace {

/// Vectorizes the scalar remainder loops the loop vectorizer leaves behind.
/// The innermost loops of pooling, elementwise, resize, pad and softmax
/// kernels run over channels; when the channel count is no multiple of the
/// vector width, the vectorizer runs the main vector loop (on AVX-512 then
/// a half-width epilogue) and leaves the rest to a scalar loop: BlazeFace's
/// 28-channel MAX_POOL_2D ran 16 + 8 lanes and 4 scalar iterations on
/// AVX-512, 3 x 8 lanes and 4 scalar iterations on AVX2. With static
/// shapes that loop has a constant trip count below the vector width, so
/// forcing the vectorizer on it once more makes it one narrower vector
/// (4 -> 4 lanes, 2 -> 2 lanes, 6 -> 4 lanes and a remainder of 2, hence
/// two rounds): at most one scalar element is left, for odd counts.
/// Candidates are innermost loops already through the vectorizer
/// (llvm.loop.isvectorized) with no vector value in them and a constant
/// trip count of at least 2; their isvectorized mark becomes
/// llvm.loop.vectorize.enable and a LoopVectorizePass that vectorizes
/// only forced loops takes them. Folding tails into masked iterations
/// instead (llvm.loop.vectorize.predicate.enable, on every loop or on the
/// remainders) was slower: a pooling window's masked store of an output
/// vector, then the next tap's masked load of it, does not store-forward
/// (MAX_POOL_2D 1.5-4x slower), and every iteration computed its mask.
struct VectorizeScalarRemainders
    : llvm::PassInfoMixin<VectorizeScalarRemainders> {
  static constexpr int kRounds = 2;

  llvm::PreservedAnalyses run(llvm::Function &fn,
                              llvm::FunctionAnalysisManager &analyses) {
    llvm::PreservedAnalyses preserved = llvm::PreservedAnalyses::all();
    for (int round = 0; round < kRounds && markRemainders(fn, analyses); ++round) {
      llvm::FunctionPassManager passes;
      passes.addPass(llvm::LoopVectorizePass(llvm::LoopVectorizeOptions(
          /*InterleaveOnlyWhenForced=*/true, /*VectorizeOnlyWhenForced=*/true)));
      // The cleanup the pipeline runs after its vectorizer, and induction
      // variables rewritten once more: without IndVarSimplify the
      // remainder's addresses cost BlazeFace's AVX-512 kernels 320 bytes.
      passes.addPass(llvm::InstCombinePass());
      passes.addPass(llvm::SimplifyCFGPass());
      passes.addPass(llvm::createFunctionToLoopPassAdaptor(llvm::IndVarSimplifyPass()));
      passes.addPass(llvm::InstCombinePass());
      preserved.intersect(passes.run(fn, analyses));
    }
    return preserved;
  }

  /// Marks the candidates (only their loop metadata changes); true if any.
  static bool markRemainders(llvm::Function &fn,
                             llvm::FunctionAnalysisManager &analyses) {
    llvm::LoopInfo &loops = analyses.getResult<llvm::LoopAnalysis>(fn);
    llvm::ScalarEvolution &scev =
        analyses.getResult<llvm::ScalarEvolutionAnalysis>(fn);
    llvm::LLVMContext &context = fn.getContext();
    auto isVector = [](const llvm::Value *value) {
      return value->getType()->isVectorTy();
    };
    bool marked = false;
    for (llvm::Loop *loop : loops.getLoopsInPreorder()) {
      if (!loop->isInnermost() ||
          !llvm::getBooleanLoopAttribute(loop, "llvm.loop.isvectorized") ||
          scev.getSmallConstantTripCount(loop) < 2)
        continue;
      bool scalar = llvm::none_of(loop->blocks(), [&](llvm::BasicBlock *block) {
        return llvm::any_of(*block, [&](llvm::Instruction &inst) {
          return isVector(&inst) || llvm::any_of(inst.operands(), isVector);
        });
      });
      if (!scalar)
        continue;
      llvm::SmallVector<llvm::Metadata *> operands = {nullptr};
      for (const llvm::MDOperand &operand :
           llvm::drop_begin(loop->getLoopID()->operands())) {
        auto *option = llvm::dyn_cast<llvm::MDNode>(operand);
        auto *name = option && option->getNumOperands()
                         ? llvm::dyn_cast<llvm::MDString>(option->getOperand(0))
                         : nullptr;
        if (name && (name->getString() == "llvm.loop.isvectorized" ||
                     name->getString().startswith("llvm.loop.vectorize.") ||
                     name->getString().startswith("llvm.loop.interleave.")))
          continue;
        operands.push_back(operand);
      }
      operands.push_back(llvm::MDNode::get(
          context, {llvm::MDString::get(context, "llvm.loop.vectorize.enable"),
                    llvm::ConstantAsMetadata::get(llvm::ConstantInt::getTrue(context))}));
      llvm::MDNode *id = llvm::MDNode::getDistinct(context, operands);
      id->replaceOperandWith(0, id);
      loop->setLoopID(id);
      marked = true;
    }
    return marked;
  }
};

/// Rewrites every f32 llvm.floor of `fn` (scalar or vector) as arithmetic
/// when the target has no floor instruction, so it vectorizes instead of
/// calling floorf per lane: x86-64 before SSE4.1 (the `generic` CPU), whose
/// only rounding is the conversion to integer. Kiln's exp (kiln-approximate-
/// math) takes the floor of x * log2(e); resize kernels floor coordinates.
/// Exact for every float: |x| < 2^23 truncates through i32 and steps down
/// where that rounded up; larger values, infinities and NaN are integers or
/// pass through as they are; the sign is x's (floor(-0) = -0).
bool expandFloorWithoutInstruction(llvm::Function &fn, const llvm::TargetMachine &tm) {
  const llvm::TargetLowering *lowering = tm.getSubtargetImpl(fn)->getTargetLowering();
  if (!lowering || lowering->isOperationLegalOrCustom(llvm::ISD::FFLOOR, llvm::MVT::f32))
    return false;
  llvm::SmallVector<llvm::IntrinsicInst *> floors;
  for (llvm::Instruction &inst : llvm::instructions(fn))
    if (auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst))
      if (call->getIntrinsicID() == llvm::Intrinsic::floor &&
          call->getType()->getScalarType()->isFloatTy())
        floors.push_back(call);
  for (llvm::IntrinsicInst *call : floors) {
    llvm::IRBuilder<> b(call);
    llvm::Value *x = call->getArgOperand(0);
    llvm::Type *type = x->getType();
    llvm::Type *intType = type->getWithNewType(b.getInt32Ty());
    llvm::Value *small = b.CreateFCmpOLT(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x),
                                         llvm::ConstantFP::get(type, 8388608.0));
    llvm::Value *safe = b.CreateSelect(small, x, llvm::ConstantFP::get(type, 0.0));
    llvm::Value *truncated = b.CreateSIToFP(b.CreateFPToSI(safe, intType), type);
    llvm::Value *step = b.CreateSelect(b.CreateFCmpOGT(truncated, x),
                                       llvm::ConstantFP::get(type, 1.0),
                                       llvm::ConstantFP::get(type, 0.0));
    llvm::Value *floor = b.CreateSelect(small, b.CreateFSub(truncated, step), x);
    llvm::Value *result = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, floor, x);
    call->replaceAllUsesWith(result);
    call->eraseFromParent();
  }
  return !floors.empty();
}

} // namespace

void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm,
                    unsigned optLevel) {
  module.setDataLayout(tm.createDataLayout());
  module.setTargetTriple(tm.getTargetTriple().str());
  for (llvm::Function &fn : module) {
    if (fn.isDeclaration())
      continue;
    // Allow reassociation and FMA contraction of float math so LLVM can
    // vectorize the reductions of convolutions and matmuls; results move by
    // rounding only (checked against TFLite in the tests). Arithmetic
    // only (fadd, fsub, fmul, fdiv, fneg, fma): on compares, selects and
    // maxnum/minnum (kiln-propagate-nan's max/min) the flags let LLVM drop
    // a NaN (a max reduction's NaN element became -inf).
    auto arithmetic = [](llvm::Instruction &inst) {
      if (llvm::isa<llvm::BinaryOperator, llvm::UnaryOperator>(inst))
        return true;
      auto *call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
      return call && (call->getIntrinsicID() == llvm::Intrinsic::fma ||
                      call->getIntrinsicID() == llvm::Intrinsic::fmuladd);
    };
    for (llvm::Instruction &inst : llvm::instructions(fn))
      if (llvm::isa<llvm::FPMathOperator>(inst) && arithmetic(inst)) {
        inst.setHasAllowReassoc(true);
        inst.setHasAllowContract(true);
      }
    fn.addFnAttr("target-cpu", tm.getTargetCPU());
    if (!tm.getTargetFeatureString().empty())
      fn.addFnAttr("target-features", tm.getTargetFeatureString());
    expandFloorWithoutInstruction(fn, tm);
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // No loop unrolling: the register-tiled kernels are already unrolled
  // where it pays (the MR x NR tile, the depthwise taps); LLVM fully
  // unrolling their short static reduction loops on top multiplied code
  // size (BlazeFace executables +20%) for no measured speed.
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  llvm::PassBuilder pb(&tm, tuning);
  // After the loop vectorizer: its scalar remainders of channel loops.
  pb.registerOptimizerLastEPCallback(
      [](llvm::ModulePassManager &mpm, llvm::OptimizationLevel level) {
        if (level.getSpeedupLevel() >= 2)
          mpm.addPass(llvm::createModuleToFunctionPassAdaptor(
              VectorizeScalarRemainders()));
      });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = optLevel == 0   ? llvm::OptimizationLevel::O0
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm = level == llvm::OptimizationLevel::O0
                                    ? pb.buildO0DefaultPipeline(level)
                                    : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
}

llvm::Expected<std::string> emitMachineCode(llvm::Module &module,
                                            llvm::TargetMachine &tm,
                                            bool asText) {
  module.setDataLayout(tm.createDataLayout());
  module.setTargetTriple(tm.getTargetTriple().str());
  std::string out;
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream bos(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, bos, nullptr,
                             asText ? llvm::CGFT_AssemblyFile
                                    : llvm::CGFT_ObjectFile))
    return makeError("target '" + tm.getTargetTriple().str() +
                     "' cannot emit " + (asText ? "assembly" : "objects"));
  // A backend's error diagnostics (BPF: "A call to built-in function
  // 'memset' is not supported") become this call's error, one line,
  // instead of text on stderr.
  llvm::LLVMContext &context = module.getContext();
  auto previous = context.getDiagnosticHandlerCallBack();
  void *previousContext = context.getDiagnosticContext();
  std::string error;
  context.setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo &info, void *out) {
        std::string &first = *static_cast<std::string *>(out);
        if (info.getSeverity() != llvm::DS_Error || !first.empty())
          return;
        llvm::raw_string_ostream os(first);
        llvm::DiagnosticPrinterRawOStream printer(os);
        info.print(printer);
      },
      &error);
  pm.run(module);
  context.setDiagnosticHandlerCallBack(previous, previousContext);
  if (!error.empty()) {
    llvm::StringRef text = llvm::StringRef(error).trim();
    text.consume_front("<unknown>:0:0: ");
    return makeError("the " + tm.getTargetTriple().getArchName() + " backend refused a kernel: " +
                     text);
  }
  return std::string(buffer.begin(), buffer.end());
}

/// Runs ld.lld in-process on `objects` (written to temporary files) with
/// `flags` and returns the output file. LLD keeps global state, so calls
/// are serialized.
static llvm::Expected<std::vector<uint8_t>>
runLinker(llvm::ArrayRef<std::string> objects, llvm::ArrayRef<const char *> flags) {
  static std::mutex lldMutex;
  std::lock_guard<std::mutex> lock(lldMutex);

  std::vector<llvm::SmallString<128>> objPaths(objects.size());
  std::vector<llvm::FileRemover> removers;
  removers.reserve(objects.size() + 1);
  for (size_t i = 0; i < objects.size(); ++i) {
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("kiln-kernels", "o", objPaths[i]))
      return makeError("cannot create a temporary file: " + ec.message());
    removers.emplace_back(objPaths[i]);
    std::error_code ec;
    llvm::raw_fd_ostream os(objPaths[i], ec);
    if (ec)
      return makeError("cannot write " + objPaths[i] + ": " + ec.message());
    os.write(objects[i].data(), objects[i].size());
    os.close();
    if (os.has_error()) { // a full temporary folder: reported, never fatal
      std::error_code writeError = os.error();
      os.clear_error();
      return makeError("cannot write " + objPaths[i] + ": " + writeError.message());
    }
  }
  llvm::SmallString<128> outPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("kiln-kernels", "out", outPath))
    return makeError("cannot create a temporary file: " + ec.message());
  removers.emplace_back(outPath);
  std::string linkerOut, linkerErr;
  llvm::raw_string_ostream outOs(linkerOut), errOs(linkerErr);
  llvm::SmallVector<const char *> args = {"ld.lld"};
  args.append(flags.begin(), flags.end());
  args.push_back("-o");
  args.push_back(outPath.c_str());
  for (auto &path : objPaths)
    args.push_back(path.c_str());
  bool ok = lld::elf::link(args, outOs, errOs, /*exitEarly=*/false,
                           /*disableOutput=*/false);
  lld::CommonLinkerContext::destroy();
  if (!ok)
    return makeError("linking kernels failed: " + llvm::StringRef(errOs.str()).rtrim());
  auto buffer = llvm::MemoryBuffer::getFile(outPath);
  if (!buffer)
    return makeError("cannot read linked kernels: " +
                     buffer.getError().message());
  const auto *begin =
      reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart());
  return std::vector<uint8_t>(begin, begin + (*buffer)->getBufferSize());
}

llvm::Expected<std::vector<uint8_t>>
linkSharedObject(llvm::ArrayRef<std::string> objects, const llvm::Triple &triple,
                 bool stripSymbols) {
  llvm::SmallVector<const char *> flags = {
      "-shared", "--build-id=none", "-z", "noexecstack",
      triple.isMIPS() ? "--hash-style=sysv" : "--hash-style=gnu", "--gc-sections"};
  if (stripSymbols)
    flags.push_back("--strip-all");
  return runLinker(objects, flags);
}

llvm::Expected<std::vector<uint8_t>>
linkRelocatable(llvm::ArrayRef<std::string> objects) {
  if (objects.size() == 1)
    return std::vector<uint8_t>(objects[0].begin(), objects[0].end());
  return runLinker(objects, {"-r"});
}

/// The functions `entry` calls, directly or through other functions defined
/// in the module, and `entry` itself.
static void collectCallees(llvm::Function &entry,
                           llvm::SmallPtrSetImpl<const llvm::GlobalValue *> &out) {
  llvm::SmallVector<llvm::Function *> work = {&entry};
  while (!work.empty()) {
    llvm::Function *fn = work.pop_back_val();
    if (!out.insert(fn).second || fn->isDeclaration())
      continue;
    for (llvm::Instruction &inst : llvm::instructions(*fn))
      for (llvm::Value *operand : inst.operands())
        if (auto *callee = llvm::dyn_cast<llvm::Function>(operand->stripPointerCasts()))
          work.push_back(callee);
  }
}

llvm::Expected<std::vector<std::string>>
compileKernelObjects(std::unique_ptr<llvm::Module> module,
                     llvm::ArrayRef<std::string> entryPoints,
                     llvm::TargetMachine &tm, unsigned optLevel,
                     unsigned parts) {
  auto cloneTargetMachine = [&]() {
    return std::unique_ptr<llvm::TargetMachine>(tm.getTarget().createTargetMachine(
        tm.getTargetTriple().str(), tm.getTargetCPU(), tm.getTargetFeatureString(),
        tm.Options, tm.getRelocationModel(), tm.getCodeModel(), tm.getOptLevel()));
  };
  // Entry points by instruction count, largest first, each to the part
  // with the fewest instructions so far (LPT scheduling, Graham 1969).
  std::vector<std::pair<size_t, llvm::Function *>> bySize;
  for (const std::string &name : entryPoints)
    if (llvm::Function *fn = module->getFunction(name)) {
      llvm::SmallPtrSet<const llvm::GlobalValue *, 8> reach;
      collectCallees(*fn, reach);
      size_t count = 0;
      for (const llvm::GlobalValue *gv : reach)
        if (auto *f = llvm::dyn_cast<llvm::Function>(gv))
          count += f->getInstructionCount();
      bySize.push_back({count, fn});
    }
  parts = static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(parts, bySize.size())));
  std::vector<std::string> objects(parts);
  if (parts == 1) {
    optimizeModule(*module, tm, optLevel);
    auto object = emitMachineCode(*module, tm, false);
    if (!object)
      return object.takeError();
    objects[0] = std::move(*object);
    return objects;
  }
  std::stable_sort(bySize.begin(), bySize.end(),
                   [](const auto &a, const auto &b) { return a.first > b.first; });
  std::vector<size_t> load(parts, 0);
  std::vector<llvm::SmallPtrSet<const llvm::GlobalValue *, 32>> members(parts);
  for (const auto &[count, fn] : bySize) {
    size_t part = std::min_element(load.begin(), load.end()) - load.begin();
    load[part] += count;
    collectCallees(*fn, members[part]);
  }
  // Each part as bitcode: a part's LLVMContext must belong to its thread.
  std::vector<llvm::SmallVector<char, 0>> bitcode(parts);
  for (size_t p = 0; p < parts; ++p) {
    llvm::ValueToValueMapTy map;
    std::unique_ptr<llvm::Module> part =
        llvm::CloneModule(*module, map, [&](const llvm::GlobalValue *gv) {
          if (llvm::isa<llvm::Function>(gv))
            return members[p].count(gv) > 0;
          // Local data is copied into every part that may use it; data
          // with a linkage name stays in the first part only.
          return gv->hasLocalLinkage() || p == 0;
        });
    llvm::raw_svector_ostream os(bitcode[p]);
    llvm::WriteBitcodeToFile(*part, os);
  }
  module.reset();
  std::vector<std::string> errors(parts);
  auto compilePart = [&](size_t p) {
    llvm::LLVMContext context;
    auto part = llvm::parseBitcodeFile(
        llvm::MemoryBufferRef(llvm::StringRef(bitcode[p].data(), bitcode[p].size()), "part"),
        context);
    if (!part) {
      errors[p] = llvm::toString(part.takeError());
      return;
    }
    std::unique_ptr<llvm::TargetMachine> partTm = cloneTargetMachine();
    if (!partTm) {
      errors[p] = "cannot create a target machine";
      return;
    }
    optimizeModule(**part, *partTm, optLevel);
    auto object = emitMachineCode(**part, *partTm, false);
    if (!object) {
      errors[p] = llvm::toString(object.takeError());
      return;
    }
    objects[p] = std::move(*object);
  };
  // Threads take the next part until none is left.
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t p = next++; p < parts; p = next++)
      compilePart(p);
  };
  const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, parts);
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t)
    workers.emplace_back(worker);
  worker();
  for (std::thread &t : workers)
    t.join();
  for (const std::string &error : errors)
    if (!error.empty())
      return makeError("compiling kernels failed: " + error);
  return objects;
}

int64_t largestStackFrame(llvm::ArrayRef<uint8_t> elf) {
  auto object = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(
      llvm::StringRef(reinterpret_cast<const char *>(elf.data()), elf.size()), "kernels"));
  if (!object) {
    llvm::consumeError(object.takeError());
    return -1;
  }
  const unsigned addressBytes = (*object)->getBytesInAddress();
  int64_t largest = -1;
  for (const llvm::object::SectionRef &section : (*object)->sections()) {
    auto name = section.getName();
    if (!name || *name != ".stack_sizes") {
      if (!name)
        llvm::consumeError(name.takeError());
      continue;
    }
    auto contents = section.getContents();
    if (!contents) {
      llvm::consumeError(contents.takeError());
      continue;
    }
    const uint8_t *p = reinterpret_cast<const uint8_t *>(contents->data());
    const uint8_t *end = p + contents->size();
    while (end - p > static_cast<ptrdiff_t>(addressBytes)) {
      p += addressBytes; // function address (relocated at link time)
      uint64_t size = 0;
      unsigned shift = 0;
      while (p < end) {
        uint8_t byte = *p++;
        size |= uint64_t(byte & 0x7f) << shift;
        shift += 7;
        if (!(byte & 0x80))
          break;
      }
      largest = std::max<int64_t>(largest, static_cast<int64_t>(size));
    }
  }
  return largest;
}

std::map<std::string, int64_t> stackFrameSizes(llvm::ArrayRef<uint8_t> elf) {
  std::map<std::string, int64_t> frames;
  auto object = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(
      llvm::StringRef(reinterpret_cast<const char *>(elf.data()), elf.size()), "kernels"));
  if (!object) {
    llvm::consumeError(object.takeError());
    return frames;
  }
  const llvm::object::ObjectFile &obj = **object;
  const unsigned addressBytes = obj.getBytesInAddress();
  // Function symbols by (section, start address); Thumb functions carry
  // the Thumb bit in their symbol value, .stack_sizes names the address.
  std::map<std::pair<uint64_t, uint64_t>, std::string> functions;
  for (const llvm::object::SymbolRef &symbol : obj.symbols()) {
    auto type = symbol.getType();
    auto name = symbol.getName();
    auto address = symbol.getAddress();
    auto section = symbol.getSection();
    if (!type || !name || !address || !section || *type != llvm::object::SymbolRef::ST_Function ||
        *section == obj.section_end()) {
      llvm::consumeError(type.takeError());
      llvm::consumeError(name.takeError());
      llvm::consumeError(address.takeError());
      llvm::consumeError(section.takeError());
      continue;
    }
    functions[{(*section)->getIndex(), *address & ~uint64_t(1)}] = name->str();
  }
  auto [supports, resolver] = llvm::object::getRelocationResolver(obj);
  // Each entry of .stack_sizes: the function's address (a relocation
  // against its section, in an object) then its frame size as ULEB128.
  for (const llvm::object::SectionRef &relocations : obj.sections()) {
    auto target = relocations.getRelocatedSection();
    if (!target) {
      llvm::consumeError(target.takeError());
      continue;
    }
    if (*target == obj.section_end())
      continue;
    auto targetName = (*target)->getName();
    auto contents = (*target)->getContents();
    if (!targetName || *targetName != ".stack_sizes" || !contents) {
      llvm::consumeError(targetName.takeError());
      llvm::consumeError(contents.takeError());
      continue;
    }
    const uint8_t *data = reinterpret_cast<const uint8_t *>(contents->data());
    const uint64_t size = contents->size();
    for (const llvm::object::RelocationRef &r : relocations.relocations()) {
      const uint64_t offset = r.getOffset();
      llvm::object::symbol_iterator symbol = r.getSymbol();
      if (symbol == obj.symbol_end() || offset + addressBytes >= size ||
          !supports(r.getType()))
        continue;
      auto symbolAddress = symbol->getAddress();
      auto symbolSection = symbol->getSection();
      if (!symbolAddress || !symbolSection || *symbolSection == obj.section_end()) {
        llvm::consumeError(symbolAddress.takeError());
        llvm::consumeError(symbolSection.takeError());
        continue;
      }
      uint64_t implicitAddend = 0; // REL targets (ARM) keep the addend in place
      for (unsigned i = 0; i < addressBytes; ++i)
        implicitAddend |= uint64_t(data[offset + i]) << (8 * i);
      uint64_t address =
          llvm::object::resolveRelocation(resolver, r, *symbolAddress, implicitAddend);
      uint64_t frame = 0;
      unsigned shift = 0;
      for (uint64_t p = offset + addressBytes; p < size && shift < 64; ++p, shift += 7) {
        frame |= uint64_t(data[p] & 0x7f) << shift;
        if (!(data[p] & 0x80))
          break;
      }
      auto function = functions.find({(*symbolSection)->getIndex(), address & ~uint64_t(1)});
      if (function != functions.end())
        frames[function->second] = static_cast<int64_t>(frame);
    }
  }
  return frames;
}

int64_t loadableBytes(llvm::ArrayRef<uint8_t> elf) {
  auto object = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(
      llvm::StringRef(reinterpret_cast<const char *>(elf.data()), elf.size()),
      "kernels"));
  if (!object) {
    llvm::consumeError(object.takeError());
    return 0;
  }
  int64_t bytes = 0;
  for (const llvm::object::SectionRef &section : (*object)->sections()) {
    auto *elfObject = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(object->get());
    if (!elfObject)
      break;
    llvm::object::ELFSectionRef ref(section);
    if ((ref.getFlags() & llvm::ELF::SHF_ALLOC) && ref.getType() != llvm::ELF::SHT_NOBITS)
      bytes += static_cast<int64_t>(section.getSize());
  }
  return bytes;
}

} // namespace kiln
