//===- KitRun.cpp - Run a firmware kit and validate it -------------------===//
//
// See kiln/KitRun.h.
//
//===----------------------------------------------------------------------===//
#include "kiln/KitRun.h"

#include "kiln/Compiler.h"
#include "kiln/Error.h"
#include "kiln/Kit.h"
#include "kiln/Targets.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Triple.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Host.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"

#include <optional>

namespace kiln {

namespace {

/// The Linux target a kit of `target` is for ("host" resolved), or "".
std::string linuxTargetOf(const std::string &target) {
  if (target != "host")
    return target;
  llvm::Triple process(llvm::sys::getProcessTriple());
  for (const DeviceTarget &t : kDeviceTargets)
    if (!t.bareMetal && *t.triple && llvm::Triple(t.triple).getArch() == process.getArch())
      return t.name;
  return "";
}

bool thisMachineRuns(const std::string &target) {
  const DeviceTarget *row = findDeviceTarget(target);
  return row && *row->triple &&
         llvm::Triple(row->triple).getArch() ==
             llvm::Triple(llvm::sys::getProcessTriple()).getArch();
}

/// The last `lines` lines of `text`.
std::string tailOf(llvm::StringRef text, size_t lines) {
  text = text.rtrim();
  size_t at = text.size();
  for (size_t n = 0; n < lines && at != llvm::StringRef::npos && at > 0; ++n)
    at = text.rfind('\n', at - 1);
  return (at == llvm::StringRef::npos ? text : text.drop_front(at + 1)).str();
}

} // namespace

std::string missingKitTools(const std::string &target) {
  std::vector<std::pair<std::string, std::string>> tools = {{"make", "make"}};
  if (cortexMBoardOf(target)) {
    tools.push_back({"arm-none-eabi-gcc", "gcc-arm-none-eabi libnewlib-arm-none-eabi"});
    tools.push_back({"qemu-system-arm", "qemu-system-arm"});
  } else {
    const std::string linuxTarget = linuxTargetOf(target);
    if (thisMachineRuns(linuxTarget)) {
      tools.push_back({"gcc", "gcc"});
    } else {
      const std::string arch = linuxTarget.substr(0, linuxTarget.find('-'));
      tools.push_back({linuxTarget + "-gcc", "gcc-" + linuxTarget});
      tools.push_back({"qemu-" + arch, "qemu-user"});
    }
  }
  for (const auto &[tool, package] : tools)
    if (!llvm::sys::findProgramByName(tool))
      return tool + " is not installed (Debian package " + package + "): the kit of " + target +
             " needs it to build and run";
  return "";
}

llvm::Expected<std::vector<std::vector<uint8_t>>> runKit(const std::string &dir,
                                                         unsigned timeoutSeconds) {
  auto make = llvm::sys::findProgramByName("make");
  if (!make)
    return makeError("make is not installed (Debian package make): running a kit needs it");
  llvm::SmallString<128> log;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("kiln-kit", "log", log))
    return makeError("cannot create a temporary file for make's output: " + ec.message());
  const std::string logPath = log.str().str();
  llvm::StringRef args[] = {*make, "-s", "-C", dir, "run"};
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(logPath),
                                                llvm::StringRef(logPath)};
  std::string message;
  int status =
      llvm::sys::ExecuteAndWait(*make, args, std::nullopt, redirects, timeoutSeconds, 0, &message);
  auto text = llvm::MemoryBuffer::getFile(logPath);
  (void)llvm::sys::fs::remove(logPath);
  const std::string output = text ? (*text)->getBuffer().str() : "";
  if (status != 0)
    return makeError("make -C " + dir + " run " +
                     (status == -2
                          ? "did not finish within " + std::to_string(timeoutSeconds) + " s"
                          : "failed" + (message.empty() ? "" : " (" + message + ")")) +
                     ":\n" + tailOf(output, 12));
  return parseKitOutputs(output);
}

namespace {

/// The device a kit of `target` runs on, as reports name it.
std::string deviceOf(const std::string &target) {
  if (const CortexMBoard *board = cortexMBoardOf(target))
    return board->machine;
  const std::string linuxTarget = linuxTargetOf(target);
  return thisMachineRuns(linuxTarget) ? "this machine"
                                      : "qemu-" + linuxTarget.substr(0, linuxTarget.find('-'));
}

/// Runs the kit in `dir` and compares its outputs with the host build of
/// `request` (its recipe for this machine, as a .kiln) on `inputs` (empty:
/// the pattern of the host build's signature).
llvm::Expected<OnTargetReport> compareKitWithHost(const ExportRequest &request,
                                                  std::vector<KitInput> inputs,
                                                  const std::string &dir,
                                                  const Tolerance &tolerance) {
  if (std::string missing = missingKitTools(request.recipe.target); !missing.empty())
    return makeError(missing);
  auto device = runKit(dir);
  if (!device)
    return device.takeError();
  BuildRecipe host = request.recipe;
  host.target = "host";
  host.targetCpu.clear();
  host.targetFeatures.clear();
  host.format = OutputFormat::Artifact;
  host.moduleName.clear();
  auto options = recipeCompileOptions(host);
  if (!options)
    return options.takeError();
  auto compiled = compile(request.model, *options);
  if (!compiled)
    return compiled.takeError();
  if (inputs.empty()) {
    auto pattern = kitPatternInputs(compiled->inputs);
    if (!pattern)
      return pattern.takeError();
    inputs = std::move(*pattern);
  }
  std::vector<NpyArray> arrays;
  for (const KitInput &in : inputs)
    arrays.push_back({in.dtype, in.shape, in.bytes});
  auto ran = runArtifact(compiled->artifact, arrays);
  if (!ran)
    return makeError("the host build of " + request.model + ": " + llvm::toString(ran.takeError()));
  if (device->size() != ran->outputValues.size())
    return makeError("the kit printed " + std::to_string(device->size()) +
                     " outputs; the model has " + std::to_string(ran->outputValues.size()));
  std::vector<NpyArray> got = ran->outputValues;
  std::vector<std::string> names;
  for (size_t k = 0; k < got.size(); ++k) {
    if ((*device)[k].size() != got[k].data.size())
      return makeError("output " + std::to_string(k) + ": the kit printed " +
                       std::to_string((*device)[k].size()) + " bytes, the host's has " +
                       std::to_string(got[k].data.size()));
    got[k].data = (*device)[k];
    names.push_back(ran->outputs[k].name);
  }
  auto metrics = validateOutputs(got, ran->outputValues, names, tolerance);
  if (!metrics)
    return metrics.takeError();
  OnTargetReport out;
  out.dir = dir;
  out.device = deviceOf(request.recipe.target);
  ValidationReport &r = out.report;
  r.outputs = ran->outputs;
  r.sampleNames = {out.device};
  r.samples = {*metrics};
  r.overall = *metrics;
  r.outputValues = std::move(got);
  r.tolerance = tolerance;
  for (const ValidationMetrics &m : *metrics)
    r.pass = r.pass && m.outsideTolerance == 0;
  return out;
}

} // namespace

llvm::Expected<OnTargetReport> validateKitOnTarget(ExportRequest request, const std::string &dir,
                                                   const Tolerance &tolerance) {
  request.kit.enabled = true;
  if (std::string missing = missingKitTools(request.recipe.target); !missing.empty())
    return makeError(missing);
  auto bundle = buildExportBundle(request);
  if (!bundle)
    return bundle.takeError();
  if (llvm::Error err = writeExportBundle(*bundle, dir, {}, {request.model}))
    return std::move(err);
  return compareKitWithHost(request, bundle->kitInputs, dir, tolerance);
}

llvm::Expected<OnTargetReport> validateKitBundle(const std::string &dir,
                                                 const Tolerance &tolerance) {
  auto manifest = readBundleManifest(dir);
  if (!manifest)
    return makeError(llvm::toString(manifest.takeError()) +
                     "; give a folder `kiln export --kit` wrote");
  const std::string &where = manifest->path;
  if (!manifest->hasKit)
    return makeError(where + ": the bundle has no firmware kit (export it with --kit)");
  ExportRequest request;
  request.model = manifest->kitModel;
  auto recipe = recipeFromJson(manifest->recipeJson, where);
  if (!recipe)
    return recipe.takeError();
  request.recipe = std::move(*recipe);
  // The host build must be of the model the kit was built from.
  auto modelBytes = llvm::MemoryBuffer::getFile(request.model, /*IsText=*/false,
                                                /*RequiresNullTerminator=*/false);
  if (!modelBytes)
    return makeError(where + ": the kit's model " + request.model + " cannot be read (" +
                     modelBytes.getError().message() +
                     "; the path is as the export was given it, from the folder it ran in)");
  llvm::ArrayRef<uint8_t> bytes(reinterpret_cast<const uint8_t *>((*modelBytes)->getBufferStart()),
                                (*modelBytes)->getBufferSize());
  if (llvm::toHex(llvm::SHA256::hash(bytes), /*LowerCase=*/true) != manifest->modelSha256)
    return makeError(where + ": " + request.model +
                     " is not the model the kit was exported from (its SHA-256 differs); "
                     "export the kit again");
  std::vector<KitInput> inputs;
  for (const std::string &source : manifest->kitInputSources) {
    if (source == "pattern")
      continue;
    auto array = readNpyFile(source);
    if (!array)
      return makeError(where + ": the kit's input " + llvm::toString(array.takeError()));
    inputs.push_back({source, array->dtype, array->shape, std::move(array->data)});
  }
  return compareKitWithHost(request, std::move(inputs), dir, tolerance);
}

} // namespace kiln
