//===- Inspect.cpp - kiln inspect -----------------------------------------===//
//
// kiln inspect MODEL|ARTIFACT [--json] [--sizes] [--dump-dispatch-graph=F.dot]
//              [--dump-schedule=F.csv] [--target=T --ram-budget=B --flash-budget=B]
//
//===----------------------------------------------------------------------===//
#include "Kiln.h"

#include "kiln/Artifact.h"
#include "kiln/AtomicWrite.h"
#include "kiln/Compiler.h"
#include "kiln/Export.h"
#include "kiln/ModelInputs.h"
#include "kiln/Options.h"
#include "kiln/Plan.h"
#include "kiln/ReadFile.h"
#include "kiln/Recipe.h"
#include "kiln/Targets.h"
#include "kiln/TensorTypes.h"
#include "kiln/runtime.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cli {

/// Scale and zero point of each quantized input and output ("input 0
/// 'input' quantization: scale 0.00784314 zero point -1"): the signature's
/// own (artifact format 1.2, a compiled model), else the plan's record
/// (older artifacts with reflection; `plan` may be null).
static void printQuantizationRows(const std::vector<kiln::IOInfo> &inputs,
                                  const std::vector<kiln::IOInfo> &outputs,
                                  const kiln::CompilationPlan *plan) {
  auto rows = [&](const char *kind, const std::vector<kiln::IOInfo> &list) {
    for (size_t i = 0; i < list.size(); ++i) {
      std::string text;
      if (list[i].quantization.quantized())
        text = kiln::quantizationText(list[i].quantization);
      else if (const kiln::TensorQuantization *q =
                   plan ? kiln::findQuantization(*plan, list[i].name) : nullptr)
        text = kiln::describeQuantization(*q);
      if (!text.empty())
        llvm::outs() << llvm::left_justify(std::string(kind) + " " + std::to_string(i), 10) << "'"
                     << list[i].name << "' quantization: " << text << "\n";
    }
  };
  rows("input", inputs);
  rows("output", outputs);
}

/// `kiln inspect` of an artifact without reflection: what the artifact
/// holds, and which rows need the plan.
static int inspectStripped(const std::string &path, const kiln::ArtifactDescription &d, bool asJson,
                           const std::string &dot, const std::string &csv) {
  if (!dot.empty() || !csv.empty())
    return fail(path + ": --dump-dispatch-graph and --dump-schedule need the plan, which "
                       "this artifact does not carry (built with --profile=stripped or "
                       "--reflection=false); inspect the model instead");
  if (asJson) {
    auto out = kiln::inspectArtifactJson(d, nullptr, path);
    if (!out)
      return fail(out.takeError());
    llvm::outs() << llvm::formatv("{0:2}", *out) << "\n";
    return 0;
  }
  llvm::outs() << llvm::sys::path::filename(path) << "\n"
               << kiln::formatArtifactDescription(d, true);
  printQuantizationRows(d.inputs, d.outputs, nullptr);
  llvm::outs() << llvm::left_justify("plan", 10) << kiln::planMissingReason() << "\n";
  return 0;
}

/// The memory part of `kiln inspect MODEL`: target, flash, RAM and memory
/// per dispatch, for `target` as the user named it. `device` is the build
/// for the target when code was generated (a bare-metal target is built as
/// the C module it exports, and any target when a budget is given: code
/// bytes and stack frames exist only after code generation); otherwise
/// `planned` gives RAM and each
/// dispatch's arena share and weights, and the output says what needs code
/// generation.
static int inspectDeviceMemory(const std::string &target, const kiln::CompileOptions &options,
                               const kiln::CompileResult &planned,
                               const std::optional<kiln::DeviceBuild> &device,
                               const kiln::MemoryBudget &budget) {
  if (!device) {
    kiln::ExportFootprint fp = kiln::planFootprint(planned);
    std::string triple =
        options.target.triple.empty() ? llvm::sys::getDefaultTargetTriple() : options.target.triple;
    llvm::outs() << "target " << (target.empty() ? "host" : target) << ": " << triple
                 << ", planned as a .kiln without code generation\n"
                 << "RAM " << fp.ramBytes << " bytes (arena " << fp.arenaBytes << ", I/O "
                 << fp.ioBytes << "); flash and kernel stack frames need code generation "
                 << "(a bare-metal --target, --ram-budget/--flash-budget, or kiln export)\n";
    printDispatchMemory(fp.dispatches);
    return 0;
  }
  const kiln::CompileResult &c = device->compiled;
  llvm::outs() << "target " << (target.empty() ? "host" : target) << ": " << c.triple << ", cpu "
               << c.cpu << ", features "
               << (c.features.empty() ? std::string("(the CPU's)") : c.features) << ", as "
               << kiln::toString(device->format) << "\n"
               << footprintText(device->footprint) << "\n";
  printDispatchMemory(device->footprint.dispatches);
  reportBudgets(kiln::checkBudget(device->footprint, budget));
  return 0;
}

/// `kiln inspect --sizes`: the section table of the artifact, or of the
/// artifact the model compiles to.
static int inspectSectionSizes(const std::string &path, const kiln::CompileOptions &options,
                               std::optional<kiln_artifact_info_t> artifact, bool asJson) {
  std::vector<uint8_t> compiledBytes;
  if (!artifact) {
    auto compiled = kiln::compile(path, options);
    if (!compiled)
      return fail(compiled.takeError());
    printWarnings(compiled->warnings);
    compiledBytes = std::move(compiled->artifact);
    auto info = kiln::verifyArtifact(compiledBytes, path);
    if (!info)
      return fail(info.takeError());
    artifact = *info;
  }
  auto sizes = kiln::sectionSizesOf(*artifact, path);
  if (!sizes)
    return fail(sizes.takeError());
  llvm::outs() << kiln::formatSectionSizes(*sizes, asJson);
  return 0;
}

/// One row per dispatch of `p`: grid, tiles, source operators, kernel,
/// quantization of its output and weights.
static void printDispatchRows(const kiln::CompilationPlan &p) {
  for (const kiln::Dispatch &d : p.dispatches) {
    std::string ops;
    for (const kiln::SourceOp &op : d.ops)
      ops += (ops.empty() ? "" : ", ") + kiln::sourceOpText(op);
    std::string tileText;
    for (size_t i = 0; i < d.tileSizes.size(); ++i)
      tileText += (i ? "," : "") + std::to_string(d.tileSizes[i]);
    llvm::outs() << llvm::format("  %-20s wg %4lldx%lldx%lld  tiles [%s]  %s\n", d.name.c_str(),
                                 (long long)d.workgroupCount[0], (long long)d.workgroupCount[1],
                                 (long long)d.workgroupCount[2], tileText.c_str(), ops.c_str());
    llvm::outs() << "  " << std::string(20, ' ') << " kernel " << kiln::describeKernel(d.kernel);
    if (kiln::entryPointOf(d) != d.name)
      llvm::outs() << " (the code of " << kiln::entryPointOf(d) << ")";
    llvm::outs() << "\n";
    if (const kiln::TensorQuantization *q = kiln::findQuantization(p, d.outputTensor))
      llvm::outs() << "  " << std::string(20, ' ') << " output '" << d.outputTensor << "' "
                   << kiln::describeQuantization(*q) << "\n";
    for (const kiln::TensorQuantization *w : kiln::weightsOf(p, d))
      llvm::outs() << "  " << std::string(20, ' ') << " weights '" << w->tensor << "' "
                   << kiln::describeQuantization(*w) << "\n";
  }
}

/// The text of `kiln inspect`: what the artifact is (`description`), the
/// plan's header, the signature and quantization of a planned model,
/// whether its kernels are bounds-checked, its dynamic inputs, the
/// dispatches and the outputs.
static void printPlan(const std::string &path, const kiln::CompilationPlan &p,
                      const kiln::CompileResult *planned,
                      const std::optional<kiln::ArtifactDescription> &description,
                      const std::optional<std::vector<kiln::ModelInput>> &modelInputs,
                      const std::vector<kiln::ModelSignature> &signatures, bool boundsChecked) {
  if (description)
    llvm::outs() << llvm::sys::path::filename(path) << "\n"
                 << kiln::formatArtifactDescription(*description, false) << "plan\n";
  int64_t flops = 0;
  for (const kiln::Dispatch &d : p.dispatches)
    flops += d.flops;
  llvm::StringRef shown = llvm::sys::path::filename(path);
  llvm::outs() << shown;
  if (shown != p.source)
    llvm::outs() << " (compiled from " << p.source << ")";
  llvm::outs() << ": " << counted(p.dispatches.size(), "dispatch", "dispatches") << ", "
               << counted(p.schedule.commands.size(), "command", "commands") << " in "
               << counted(p.schedule.waves, "wave", "waves") << ", " << flops << " FLOPs\n"
               << "arena " << p.memory.arenaBytes << " bytes (lower bound "
               << p.memory.lowerBoundBytes << ", " << p.memory.planner << ")\n";
  // An artifact's description above has listed its state already.
  if (!description)
    llvm::outs() << kiln::formatStateRows(p);
  if (planned)
    llvm::outs() << kiln::formatSignature(planned->inputs, planned->outputs, planned->fixedInputs)
                 << kiln::formatControlFlow(planned->controlFlow);
  // A TFLite model's SignatureDefs, the compiled one marked (--signature).
  llvm::outs() << kiln::formatModelSignatures(signatures);
  if (planned || description)
    printQuantizationRows(planned ? planned->inputs : description->inputs,
                          planned ? planned->outputs : description->outputs, &p);
  // The model's own dynamic dimensions (what --fix-shape sized above).
  if (modelInputs &&
      llvm::any_of(*modelInputs, [](const kiln::ModelInput &in) { return in.isDynamic(); }))
    llvm::outs() << kiln::formatModelInputs(*modelInputs);
  if (planned && boundsChecked)
    llvm::outs() << "kernels   bounds-checked (--check-bounds)\n";
  printDispatchRows(p);
  for (const kiln::OutputBinding &o : p.outputs)
    llvm::outs() << "  output " << o.slot << " '" << o.name << "' (" << o.bytes << " bytes) <- "
                 << kiln::describeOutputWriters(p, o) << "\n";
}

int runInspect() {
  const std::string path = inspectPath;
  if (path.empty())
    return usage("kiln inspect takes a model or artifact file");
  const bool asJson = inspectJson;
  const std::string dot = dumpGraph, csv = dumpSchedule;
  // Copied first: compiling resets llvm::cl options (see runRun).
  const std::string target = targetName.empty() ? std::string(targetTriple) : targetName;
  const bool compileFlagsGiven = recipeFlagsGiven();
  const std::vector<std::string> reads = filesRead(path);
  auto recipe = recipeOfFlags();
  if (!recipe)
    return fail(recipe.takeError());
  // A bare-metal target is planned as the C module it exports.
  if (kiln::recipeIsBareMetal(*recipe))
    recipe->format = kiln::OutputFormat::CModule;
  auto options = compileOptionsOf(*recipe);
  if (!options)
    return fail(options.takeError());
  auto buffer = kiln::readRegularFile(std::string(path), "a .kiln, .tflite, .onnx or .mlir file");
  if (!buffer)
    return fail(buffer.takeError());
  llvm::ArrayRef<uint8_t> data(reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
                               (*buffer)->getBufferSize());
  // An artifact passes the gate once; its sizes and plan come from there.
  std::optional<kiln_artifact_info_t> artifact;
  if (kiln::isArtifact(path, data)) {
    if (compileFlagsGiven)
      return alreadyCompiled(path, "inspecting");
    auto info = kiln::verifyArtifact(data, path);
    if (!info)
      return fail(info.takeError());
    artifact = *info;
  }
  // A model's inputs as it declares them, symbolic dimensions included
  // (a file that does not read fails below, with the importer's message).
  std::optional<std::vector<kiln::ModelInput>> modelInputs;
  std::vector<kiln::ModelSignature> signatures;
  if (!artifact) {
    auto read = kiln::readModelInputs(path, options->signature);
    if (read)
      modelInputs = std::move(*read);
    else
      llvm::consumeError(read.takeError());
    // An unknown --signature fails below, with the importer's message.
    auto listed = kiln::readModelSignatures(path, options->signature);
    if (listed)
      signatures = std::move(*listed);
    else
      llvm::consumeError(listed.takeError());
  }
  // An import stopped by unfixed dynamic inputs lists the inputs first.
  auto failModel = [&](llvm::Error err) {
    if (modelInputs && !asJson && err.isA<kiln::UnfixedInputError>())
      llvm::outs() << kiln::formatModelInputs(*modelInputs);
    return fail(std::move(err));
  };
  // What the artifact is comes first; the plan follows when it has
  // reflection.
  std::optional<kiln::ArtifactDescription> description;
  if (artifact && !inspectSizes) {
    auto d = kiln::artifactDescriptionOf(*artifact, data, path);
    if (!d)
      return fail(d.takeError());
    if (!d->reflection)
      return inspectStripped(path, *d, asJson, dot, csv);
    description = std::move(*d);
  }
  if (inspectSizes)
    return inspectSectionSizes(path, *options, artifact, asJson);
  auto budget = memoryBudget();
  if (!budget)
    return fail(budget.takeError());
  const bool budgets = budget->ramBytes > 0 || budget->flashBytes > 0;
  if (artifact && budgets)
    return usage("--ram-budget and --flash-budget apply when inspecting a model (or to "
                 "kiln export)");
  // A model is planned without code generation, or built once for its
  // device when stack frames and flash are asked for (a bare-metal target,
  // a budget); its signature comes along either way.
  std::optional<kiln::CompileResult> planOnly;
  std::optional<kiln::DeviceBuild> device;
  if (!artifact && (kiln::isBareMetalTriple(options->target.triple) || budgets)) {
    auto build = kiln::buildForDevice(path, *options);
    if (!build)
      return failModel(build.takeError());
    device = std::move(*build);
  } else if (!artifact) {
    auto result = kiln::planOnly(path, *options);
    if (!result)
      return failModel(result.takeError());
    planOnly = std::move(*result);
  }
  const kiln::CompileResult *planned = device ? &device->compiled : planOnly ? &*planOnly : nullptr;
  if (planned)
    printWarnings(planned->warnings);
  auto plan = artifact
                  ? kiln::planOfArtifact(*artifact, path)
                  : llvm::Expected<std::shared_ptr<const kiln::CompilationPlan>>(planned->plan);
  if (!plan)
    return fail(plan.takeError());
  std::vector<std::string> dumpTexts;
  if (llvm::Error err = kiln::writeFilesAtomically(dumpFiles(**plan, dot, csv, dumpTexts), reads))
    return fail(std::move(err));
  const kiln::CompilationPlan &p = **plan;
  if (asJson) {
    auto out = description ? kiln::inspectArtifactJson(*description, &p, path)
                           : kiln::inspectModelJson(p, planned->inputs, planned->outputs, path,
                                                    planned->fixedInputs, planned->controlFlow);
    if (!out)
      return fail(out.takeError());
    if (!description && modelInputs && out->getAsObject())
      out->getAsObject()->insert({"model_inputs", kiln::modelInputsJson(*modelInputs)});
    if (!description && out->getAsObject())
      out->getAsObject()->insert({"signatures", kiln::modelSignaturesJson(signatures)});
    llvm::outs() << llvm::formatv("{0:2}", *out) << "\n";
    return 0;
  }
  printPlan(path, p, planned, description, modelInputs, signatures, options->checkBounds);
  if (artifact)
    return 0;
  return inspectDeviceMemory(target, *options, *planned, device, *budget);
}

} // namespace kiln::cli
