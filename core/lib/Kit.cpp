//===- Kit.cpp - Firmware kits: run an export on its device --------------===//
//
// See kiln/Kit.h. The kit's fixed files are resources/kits, compiled in as
// data (Support/EmbeddedFiles.h); this file fills in the templates and
// writes the per-export ones (kit_buffers.c, the linker script).
//
//===----------------------------------------------------------------------===//
#include "kiln/Kit.h"

#include "kiln/Error.h"
#include "kiln/Targets.h"
#include "kiln/TensorTypes.h"

#include "Support/EmbeddedFiles.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Triple.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Host.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>

namespace kiln {

namespace {

/// The embedded file `name` (a resources/kits path, or "runtime.h").
llvm::StringRef embedded(llvm::StringRef name) {
  for (size_t i = 0; i < detail::kNumEmbeddedFiles; ++i)
    if (name == detail::kEmbeddedFiles[i].name)
      return {detail::kEmbeddedFiles[i].bytes, detail::kEmbeddedFiles[i].size};
  // Every name asked for is in core/CMakeLists.txt's list.
  llvm::report_fatal_error(llvm::Twine("kiln: no embedded kit file ") + name);
}

/// `text` with each "@KEY@" of `values` replaced.
std::string fill(llvm::StringRef text, const std::map<std::string, std::string> &values) {
  std::string out = text.str();
  for (const auto &[key, value] : values) {
    const std::string marker = "@" + key + "@";
    for (size_t at = out.find(marker); at != std::string::npos;
         at = out.find(marker, at + value.size()))
      out.replace(at, marker.size(), value);
  }
  return out;
}

GeneratedFile fileOf(const std::string &name, llvm::StringRef text) {
  return {name, std::vector<uint8_t>(text.begin(), text.end())};
}

std::string hexAddress(uint64_t address) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%08" PRIx64, address);
  return text;
}

const CortexMBoard kBoards[] = {
    {"thumbv7em-none-eabihf", "Cortex-M4F", "mps2-an386",
     "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16", 0x00000000, 4 << 20, 0x20000000,
     4 << 20,
     "QEMU's mps2-an386: ARM MPS2 with the AN386 FPGA image, Cortex-M4F (ARM DAI 0386;\n"
     " * QEMU hw/arm/mps2.c): ZBT SSRAM1, 4 MiB at 0x00000000, and ZBT SSRAM2/3, 4 MiB\n"
     " * at 0x20000000."},
    {"thumbv6m-none-eabi", "Cortex-M0+", "mps2-an385",
     "-mcpu=cortex-m0plus -mthumb -mfloat-abi=soft", 0x00000000, 4 << 20, 0x20000000, 4 << 20,
     "QEMU's mps2-an385: ARM MPS2 with the AN385 FPGA image, Cortex-M3 (ARM DAI 0385;\n"
     " * QEMU hw/arm/mps2.c): ZBT SSRAM1, 4 MiB at 0x00000000, and ZBT SSRAM2/3, 4 MiB\n"
     " * at 0x20000000. QEMU 7.2 models no Cortex-M0+ board with room for a model;\n"
     " * the M3 runs every ARMv6-M instruction and startup.c makes it fault on\n"
     " * unaligned accesses as an M0+ does."},
};

/// A Linux target with a kit: its --target= name and how its program is
/// built and run from this machine.
struct HostedKit {
  std::string target;
  /// The cross compilers' prefix ("aarch64-linux-gnu-"); "" for this
  /// machine's own architecture.
  std::string cross;
  /// What runs the program ("qemu-aarch64 -L /usr/aarch64-linux-gnu"); "".
  std::string runner;
  /// The Debian packages of the tools.
  std::string packages;
};

/// The kDeviceTargets name of this machine's architecture on Linux.
std::string hostTargetName() {
  llvm::Triple process(llvm::sys::getProcessTriple());
  for (const DeviceTarget &t : kDeviceTargets)
    if (!t.bareMetal && *t.triple && llvm::Triple(t.triple).getArch() == process.getArch())
      return t.name;
  return "";
}

std::optional<HostedKit> hostedKitOf(const std::string &name) {
  const std::string target = name == "host" ? hostTargetName() : name;
  const DeviceTarget *row = findDeviceTarget(target);
  if (target.empty() || !row || row->bareMetal || !llvm::StringRef(row->triple).contains("linux"))
    return std::nullopt;
  HostedKit kit{target, "", "", "gcc make"};
  if (target != hostTargetName()) {
    const std::string arch = llvm::Triple(row->triple).getArchName().str();
    kit.cross = target + "-";
    kit.runner = "qemu-" + arch + " -L /usr/" + target;
    kit.packages = "gcc-" + target + " make (make), qemu-user (make run)";
  }
  return kit;
}

/// The kit's names of the target's files, as kitFileNames lists them.
std::vector<std::string> cortexMFileNames(const std::string &moduleName) {
  return {"main.c",        "startup.c",        "semihost.h", "kit.h",
          "kit_buffers.c", moduleName + ".ld", "Makefile"};
}
std::vector<std::string> hostedFileNames() {
  return {"main.c", "kit.h", "kit_buffers.c", "runtime.h", "libkiln_runtime.a", "Makefile"};
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s.empty() ? "scalar" : s;
}

/// Appends `bytes` as a C initializer, 16 per line.
void appendBytes(std::string &out, const std::vector<uint8_t> &bytes) {
  char hex[8];
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::snprintf(hex, sizeof hex, "0x%02x,", bytes[i]);
    out += (i % 16 == 0 ? "\n    " : " ") + std::string(hex);
  }
}

/// kit_buffers.c: the inputs and, for a Cortex-M (`withBuffers`), the
/// outputs and the arena.
std::string kitBuffersSource(const KitSource &source, const std::vector<KitInput> &inputs,
                             bool withBuffers) {
  const CompileResult &c = source.compiled;
  std::string out = "/* Buffers of the firmware kit of " + source.name +
                    ", written by `kiln export --kit` (see kit.h).\n";
  for (size_t i = 0; i < inputs.size(); ++i)
    out += " * input " + std::to_string(i) + " \"" + c.inputs[i].name + "\" (" +
           elementTypeName(inputs[i].dtype) + " " + shapeText(inputs[i].shape) + "): " +
           (inputs[i].file.empty() ? "the deterministic pattern of kit.h"
                                   : llvm::sys::path::filename(inputs[i].file).str()) +
           "\n";
  out += " */\n#include \"kit.h\"\n\n#define KILN_KIT_ALIGNED __attribute__((aligned(64)))\n\n";
  // Inputs live in RAM (.data), as the export's footprint counts them.
  for (size_t i = 0; i < inputs.size(); ++i) {
    out += "static uint8_t input" + std::to_string(i) + "[" +
           std::to_string(std::max<size_t>(inputs[i].bytes.size(), 1)) + "] KILN_KIT_ALIGNED = {";
    appendBytes(out, inputs[i].bytes);
    out += "\n};\n";
  }
  auto list = [](const char *prefix, size_t count) {
    std::string s;
    for (size_t i = 0; i < count; ++i)
      s += (i ? ", " : "") + std::string(prefix) + std::to_string(i);
    return count ? s : std::string("0");
  };
  out += "\nconst size_t kiln_kit_num_inputs = " + std::to_string(inputs.size()) + ";\n" +
         "const void *const kiln_kit_inputs[] = {" + list("input", inputs.size()) + "};\n" +
         "const size_t kiln_kit_input_bytes[] = {";
  for (size_t i = 0; i < inputs.size(); ++i)
    out += (i ? ", " : "") + std::to_string(inputs[i].bytes.size());
  out += std::string(inputs.empty() ? "0" : "") + "};\n";
  if (!withBuffers)
    return out;
  out += "\n";
  for (size_t k = 0; k < c.outputs.size(); ++k)
    out += "static uint8_t output" + std::to_string(k) + "[" +
           std::to_string(std::max<uint64_t>(c.outputs[k].byteSize, 1)) + "] KILN_KIT_ALIGNED;\n";
  out += "void *const kiln_kit_outputs[] = {" + list("output", c.outputs.size()) + "};\n" +
         "uint8_t kiln_kit_arena[" + std::to_string(std::max<int64_t>(c.arenaBytes, 1)) +
         "] KILN_KIT_ALIGNED;\n";
  return out;
}

/// The inputs of the kit: the request's, checked, or the pattern.
llvm::Expected<std::vector<KitInput>> kitInputsOf(const KitSource &source) {
  if (source.request.kit.inputs.empty())
    return kitPatternInputs(source.compiled.inputs);
  if (llvm::Error err = checkKitInputs(source.request.kit.inputs, source.compiled.inputs))
    return std::move(err);
  return source.request.kit.inputs;
}

llvm::Expected<KitFiles> cortexMKit(const KitSource &source, const CortexMBoard &board) {
  auto inputs = kitInputsOf(source);
  if (!inputs)
    return inputs.takeError();
  const ExportFootprint &fp = source.footprint;
  const MemoryBudget &budget = source.request.budget;
  const std::string &module = source.moduleName;
  FirmwareLayout layout;
  layout.flashBytes =
      budget.flashBytes > 0 ? std::min(budget.flashBytes, board.flashBytes) : board.flashBytes;
  layout.ramBytes =
      budget.ramBytes > 0 ? std::min(budget.ramBytes, board.ramBytes) : board.ramBytes;
  const int64_t frame = std::max<int64_t>(fp.stackBytes, 0);
  layout.stackBytes = (frame + kKitStackReserveBytes + 7) / 8 * 8;
  layout.title = source.name + " for " + source.request.recipe.target + " (" + board.core +
                 ") on " + board.machine +
                 (layout.ramBytes < board.ramBytes || layout.flashBytes < board.flashBytes
                      ? "; lengths from the export's --ram-budget/--flash-budget"
                      : "");
  layout.flashMessage =
      "kiln kit: " + source.name + " does not fit in flash (" + std::to_string(layout.flashBytes) +
      " bytes): the export counted code " + std::to_string(fp.codeBytes) + " + weights " +
      std::to_string(fp.constantBytes) + " bytes, plus the program's own code; see report.md";
  layout.ramMessage = "kiln kit: " + source.name + " does not fit in RAM (" +
                      std::to_string(layout.ramBytes) + " bytes): the export counted arena " +
                      std::to_string(fp.arenaBytes) + " + I/O " + std::to_string(fp.ioBytes) +
                      " bytes, and the stack is " + std::to_string(layout.stackBytes) +
                      " bytes (largest kernel frame " + std::to_string(frame) + " + " +
                      std::to_string(kKitStackReserveBytes) + " reserve); see report.md";
  KitFiles kit;
  kit.files.push_back(fileOf("main.c", embedded("cortexm/main.c")));
  kit.files.push_back(fileOf("startup.c", embedded("cortexm/startup.c")));
  kit.files.push_back(fileOf("semihost.h", embedded("cortexm/semihost.h")));
  kit.files.push_back(fileOf("kit.h", embedded("kit.h")));
  kit.files.push_back(fileOf("kit_buffers.c", kitBuffersSource(source, *inputs, true)));
  kit.files.push_back(fileOf(module + ".ld", firmwareLinkerScript(board, layout)));
  kit.files.push_back(
      fileOf("Makefile", fill(embedded("cortexm/Makefile.in"), {{"NAME", module},
                                                                {"TARGET", board.target},
                                                                {"CORE", board.core},
                                                                {"MACHINE", board.machine},
                                                                {"CPU_FLAGS", board.cpuFlags}})));
  kit.inputs = std::move(*inputs);
  return kit;
}

llvm::Expected<KitFiles> hostedKit(const KitSource &source, const HostedKit &target) {
  if (source.request.recipe.format != OutputFormat::Artifact)
    return makeError("--kit for " + source.request.recipe.target +
                     " runs the .kiln artifact with Kiln's runtime; export it with "
                     "--output-format=kiln (c-module kits are for Cortex-M targets)");
  const std::string archive = runtimeArchivePath(target.target);
  auto bytes = llvm::MemoryBuffer::getFile(archive, /*IsText=*/false,
                                           /*RequiresNullTerminator=*/false);
  if (!bytes)
    return makeError("--kit for " + target.target + " needs Kiln's runtime built for it, " +
                     archive + ", which " +
                     (bytes.getError() == std::errc::no_such_file_or_directory
                          ? std::string("does not exist")
                          : "cannot be read: " + bytes.getError().message()) +
                     ": install the Kiln .deb (it ships the archives of every target whose "
                     "cross compiler its build found), or install " +
                     (target.cross.empty() ? std::string("g++") : "g++-" + target.target) +
                     " and rebuild Kiln (cmake builds the archive when it finds " + target.cross +
                     "g++)");
  auto inputs = kitInputsOf(source);
  if (!inputs)
    return inputs.takeError();
  const DeviceTarget *row = findDeviceTarget(target.target);
  KitFiles kit;
  kit.files.push_back(fileOf("main.c", embedded("hosted/main.c")));
  kit.files.push_back(fileOf("kit.h", embedded("kit.h")));
  kit.files.push_back(fileOf("kit_buffers.c", kitBuffersSource(source, *inputs, false)));
  kit.files.push_back(fileOf("runtime.h", embedded("runtime.h")));
  kit.files.push_back({"libkiln_runtime.a",
                       std::vector<uint8_t>((*bytes)->getBufferStart(), (*bytes)->getBufferEnd())});
  kit.files.push_back(
      fileOf("Makefile", fill(embedded("hosted/Makefile.in"),
                              {{"NAME", source.name},
                               {"TARGET", target.target},
                               {"CORE", row->displayName},
                               {"CROSS", target.cross},
                               {"RUN", target.runner},
                               {"RUN_NOTE", target.runner.empty() ? "" : " under " + target.runner},
                               {"PACKAGES", target.packages}})));
  kit.inputs = std::move(*inputs);
  return kit;
}

} // namespace

const CortexMBoard *cortexMBoardOf(llvm::StringRef target) {
  for (const CortexMBoard &board : kBoards)
    if (board.target == target)
      return &board;
  return nullptr;
}

std::string firmwareLinkerScript(const CortexMBoard &board, const FirmwareLayout &layout) {
  return fill(embedded("cortexm/firmware.ld.in"),
              {{"TITLE", layout.title},
               {"BOARD", board.description},
               {"FLASH_ORIGIN", hexAddress(board.flashOrigin)},
               {"FLASH_BYTES", std::to_string(layout.flashBytes)},
               {"RAM_ORIGIN", hexAddress(board.ramOrigin)},
               {"RAM_BYTES", std::to_string(layout.ramBytes)},
               {"STACK_BYTES", std::to_string(layout.stackBytes)},
               {"FLASH_MESSAGE", layout.flashMessage},
               {"RAM_MESSAGE", layout.ramMessage}});
}

llvm::Expected<std::vector<KitInput>> kitPatternInputs(const std::vector<IOInfo> &inputs) {
  std::vector<KitInput> out;
  for (size_t n = 0; n < inputs.size(); ++n) {
    const IOInfo &io = inputs[n];
    const size_t size = npyDtypeSize(io.dtype);
    const bool isFloat = io.dtype == "<f4" || io.dtype == "<f8";
    if (size == 0 || (!isFloat && !isIntegerDtype(io.dtype)))
      return makeError("input " + std::to_string(n) + " \"" + io.name + "\" is " +
                       elementTypeName(io.dtype) +
                       ": the kit's pattern covers integer, bool, f32 and f64 inputs; give "
                       "its values with --kit-input=FILE.npy");
    KitInput in{"", io.dtype, io.shape, {}};
    in.bytes.resize(io.byteSize);
    for (size_t i = 0; i < io.byteSize / size; ++i) {
      const int64_t v = static_cast<int64_t>((37 * i + 11) % 256) - 128;
      uint8_t *at = in.bytes.data() + i * size;
      if (io.dtype == "<f4") {
        const float f = static_cast<float>(v) / 128.0f;
        std::memcpy(at, &f, 4);
      } else if (io.dtype == "<f8") {
        const double d = static_cast<double>(v) / 128.0;
        std::memcpy(at, &d, 8);
      } else {
        const int64_t e = io.dtype == "|b1"    ? static_cast<int64_t>(i % 2)
                          : io.dtype[1] == 'u' ? v + 128
                                               : v;
        for (size_t b = 0; b < size; ++b)
          at[b] = static_cast<uint8_t>(static_cast<uint64_t>(e) >> (8 * b));
      }
    }
    out.push_back(std::move(in));
  }
  return out;
}

llvm::Error checkKitInputs(const std::vector<KitInput> &given, const std::vector<IOInfo> &inputs) {
  if (given.size() != inputs.size())
    return makeError("--kit-input: " + std::to_string(given.size()) + " file" +
                     (given.size() == 1 ? "" : "s") + " given; the model has " +
                     std::to_string(inputs.size()) + " input" + (inputs.size() == 1 ? "" : "s") +
                     " (give one --kit-input=FILE.npy per input, in order, or none for the "
                     "pattern)");
  for (size_t i = 0; i < given.size(); ++i) {
    const KitInput &g = given[i];
    const IOInfo &io = inputs[i];
    if (g.dtype != io.dtype || g.shape != io.shape || g.bytes.size() != io.byteSize)
      return makeError("--kit-input=" + g.file + " is " + elementTypeName(g.dtype) + " " +
                       shapeText(g.shape) + ", the model's input " + std::to_string(i) + " \"" +
                       io.name + "\" is " + elementTypeName(io.dtype) + " " + shapeText(io.shape));
  }
  return llvm::Error::success();
}

std::string runtimeArchivePath(const std::string &target) {
  static int anchor = 0;
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  llvm::SmallString<256> path(llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
  llvm::sys::path::append(path, "lib", "kiln", target == "host" ? hostTargetName() : target,
                          "libkiln_runtime.a");
  return path.str().str();
}

std::vector<std::string> kitFileNames(const ExportRequest &request, const std::string &moduleName) {
  if (cortexMBoardOf(request.recipe.target))
    return cortexMFileNames(moduleName);
  if (hostedKitOf(request.recipe.target))
    return hostedFileNames();
  return {};
}

llvm::Expected<KitFiles> buildKitFiles(const KitSource &source) {
  const std::string &target = source.request.recipe.target;
  if (const CortexMBoard *board = cortexMBoardOf(target))
    return cortexMKit(source, *board);
  if (auto hosted = hostedKitOf(target))
    return hostedKit(source, *hosted);
  std::string with;
  for (const CortexMBoard &board : kBoards)
    with += board.target + ", ";
  for (const DeviceTarget &t : kDeviceTargets)
    if (hostedKitOf(t.name))
      with += std::string(t.name) + ", ";
  return makeError("--kit: the target " + target + " has no firmware kit (targets with one: " +
                   with.substr(0, with.size() - 2) + ")");
}

llvm::Expected<std::vector<std::vector<uint8_t>>> parseKitOutputs(llvm::StringRef text) {
  std::vector<std::vector<uint8_t>> outputs;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (line.startswith("kiln-error"))
      return makeError("the kit's program failed: '" + line.drop_front(10).trim() + "'");
    if (line == "kiln-done")
      return outputs;
    if (!line.consume_front("kiln-output "))
      continue;
    llvm::SmallVector<llvm::StringRef> fields;
    line.split(fields, ' ', -1, /*KeepEmpty=*/false);
    size_t index = 0, bytes = 0;
    std::string hex = fields.size() == 3 ? fields[2].str() : "";
    if (fields.size() == 2)
      fields.push_back("");
    if (fields.size() != 3 || fields[0].getAsInteger(10, index) ||
        fields[1].getAsInteger(10, bytes) || index != outputs.size() || hex.size() != 2 * bytes ||
        !llvm::all_of(hex, llvm::isHexDigit))
      return makeError("the kit's program printed a malformed output line (output " +
                       std::to_string(outputs.size()) + " expected): '" + line.take_front(80) +
                       "'");
    outputs.push_back(std::vector<uint8_t>(bytes));
    for (size_t i = 0; i < bytes; ++i)
      outputs.back()[i] = static_cast<uint8_t>(llvm::hexDigitValue(hex[2 * i]) * 16 +
                                               llvm::hexDigitValue(hex[2 * i + 1]));
  }
  return makeError("the kit's program stopped before printing \"kiln-done\" (" +
                   std::to_string(outputs.size()) + " output line(s) read)");
}

} // namespace kiln
