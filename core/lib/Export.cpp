//===- Export.cpp - Deployment bundles for devices ------------------------===//
#include "kiln/Error.h"
#include "kiln/Export.h"

#include "kiln/AtomicWrite.h"

#include "kiln/Artifact.h"
#include "kiln/Kit.h"
#include "kiln/Plan.h"

#include "Artifact/CModuleWriter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cstring>
#include <cstdio>
#include <optional>

namespace kiln {

static std::string sha256Hex(llvm::ArrayRef<uint8_t> data) {
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(data);
  return llvm::toHex(digest, /*LowerCase=*/true);
}

static std::string joinSizes(const std::vector<int64_t> &v, const char *sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

/// `text` quoted for a POSIX shell when it holds anything but
/// [A-Za-z0-9_.,+=/:-].
static std::string shellWord(const std::string &text) {
  bool plain = !text.empty();
  for (char c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr("_.,+=/:-", c))
      plain = false;
  if (plain)
    return text;
  std::string quoted = "'";
  for (char c : text)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

/// The `kiln export` command line that repeats `request`.
static std::string commandOf(const ExportRequest &r) {
  std::string cmd = "kiln export " + shellWord(r.model);
  for (const std::string &flag : recipeCommandLine(r.recipe))
    cmd += " " + shellWord(flag);
  if (r.maxBufferBytes > 0)
    cmd += " --max-buffer-bytes=" + std::to_string(r.maxBufferBytes);
  if (r.budget.ramBytes > 0)
    cmd += " --ram-budget=" + std::to_string(r.budget.ramBytes);
  if (r.budget.flashBytes > 0)
    cmd += " --flash-budget=" + std::to_string(r.budget.flashBytes);
  if (r.kit.enabled)
    cmd += " --kit";
  for (const KitInput &input : r.kit.inputs)
    cmd += " " + shellWord("--kit-input=" + input.file);
  return cmd;
}

static std::string kib(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  return text;
}

/// `bytes` for people: "812 bytes", "256 KiB", "1.5 MiB", "2.0 KiB" for
/// 2000 (one decimal, none when the count is a whole number of units;
/// 1 KiB = 1024 bytes).
static std::string humanBytes(int64_t bytes) {
  const int64_t unitBytes = bytes >= (1 << 20) ? (1 << 20) : 1024;
  if (bytes < 1024)
    return std::to_string(bytes) + " bytes";
  const char *unit = unitBytes == 1024 ? " KiB" : " MiB";
  if (bytes % unitBytes == 0)
    return std::to_string(bytes / unitBytes) + unit;
  char text[48];
  std::snprintf(text, sizeof text, "%.1f", static_cast<double>(bytes) / double(unitBytes));
  return text + std::string(unit);
}

llvm::Expected<int64_t> parseBudgetBytes(llvm::StringRef flag, llvm::StringRef text) {
  auto bad = [&](const char *why) {
    return makeError(flag + "='" + text + "' " + why +
                     " (bytes, or a whole number with K, KiB, M or MiB; 1K = 1024 "
                     "bytes: 262144, 256K, 2MiB)");
  };
  llvm::StringRef digits = text.take_while([](char c) { return c >= '0' && c <= '9'; });
  llvm::StringRef suffix = text.drop_front(digits.size());
  int64_t scale = 0;
  if (suffix.empty())
    scale = 1;
  else if (suffix == "K" || suffix == "KiB")
    scale = 1024;
  else if (suffix == "M" || suffix == "MiB")
    scale = 1024 * 1024;
  uint64_t value = 0;
  if (digits.empty() || scale == 0)
    return bad("is not a byte count");
  if (digits.getAsInteger(10, value) || value > static_cast<uint64_t>(INT64_MAX / scale))
    return bad("is above 2^63 - 1 bytes");
  if (value == 0)
    return bad("is 0; a budget is at least 1 byte");
  return static_cast<int64_t>(value) * scale;
}

std::vector<DispatchMemory>
dispatchMemoryOf(const CompilationPlan &plan,
                 const std::map<std::string, int64_t> &stackFrameBytes) {
  std::map<int64_t, const Command *> commandOf;
  for (const Command &c : plan.schedule.commands)
    if (c.kind == CommandKind::Dispatch)
      commandOf[c.dispatch] = &c;
  std::vector<DispatchMemory> rows;
  for (const Dispatch &d : plan.dispatches) {
    DispatchMemory row;
    row.id = d.id;
    row.name = d.name;
    row.entryPoint = entryPointOf(d);
    if (auto frame = stackFrameBytes.find(row.entryPoint); frame != stackFrameBytes.end()) {
      row.stackBytes = frame->second;
      row.dynamicStack = frame->second < 0;
    }
    // Byte ranges, merged so an input and an output placed in place (or
    // two views of one buffer) count once: arena offsets for transient
    // buffers, (constant, offset) for weights.
    std::vector<std::pair<int64_t, int64_t>> arena;
    std::map<int64_t, std::vector<std::pair<int64_t, int64_t>>> weights;
    if (auto c = commandOf.find(d.id); c != commandOf.end())
      for (const BindingRef &b : c->second->bindings) {
        const Buffer &buffer = plan.memory.buffers.at(b.buffer);
        if (buffer.kind == BufferKind::Transient || buffer.kind == BufferKind::State)
          arena.push_back({buffer.offset + b.offset, buffer.offset + b.offset + b.length});
        else if (buffer.kind == BufferKind::Constant)
          weights[buffer.index].push_back({b.offset, b.offset + b.length});
      }
    auto unionBytes = [](std::vector<std::pair<int64_t, int64_t>> ranges) {
      std::sort(ranges.begin(), ranges.end());
      int64_t bytes = 0, end = INT64_MIN;
      for (const auto &[lo, hi] : ranges) {
        bytes += std::max<int64_t>(0, hi - std::max(lo, end));
        end = std::max(end, hi);
      }
      return bytes;
    };
    row.arenaBytes = unionBytes(std::move(arena));
    for (auto &[constant, ranges] : weights)
      row.weightBytes += unionBytes(std::move(ranges));
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<BudgetCheck> checkBudget(const ExportFootprint &footprint,
                                     const MemoryBudget &budget) {
  std::vector<BudgetCheck> checks;
  auto check = [&](const char *memory, int64_t bytes, int64_t budgetBytes) {
    if (budgetBytes <= 0)
      return;
    BudgetCheck c{memory, bytes, budgetBytes, bytes > budgetBytes, ""};
    c.message = std::string(memory) + " " + humanBytes(bytes) +
                (c.exceeded ? " exceeds the budget " + humanBytes(budgetBytes) + " by " +
                                  humanBytes(bytes - budgetBytes)
                            : " is within the budget " + humanBytes(budgetBytes) + " (" +
                                  humanBytes(budgetBytes - bytes) + " left)");
    checks.push_back(std::move(c));
  };
  check("RAM", footprint.ramBytes, budget.ramBytes);
  check("flash", footprint.flashBytes, budget.flashBytes);
  return checks;
}

/// The footprint of `compiled` as `format` (`sections`: a .kiln's section
/// sizes).
static ExportFootprint footprintOf(const CompileResult &compiled,
                                   const std::optional<SectionSizes> &sections) {
  ExportFootprint fp;
  fp.codeBytes = compiled.codeBytes;
  fp.constantBytes = compiled.constantBytes;
  // The whole file sits in flash: everything but code and weights is
  // metadata (the executables section also holds the ELF headers and
  // symbol tables around the loadable code).
  if (sections)
    fp.metadataBytes = sections->fileBytes - fp.codeBytes - fp.constantBytes;
  fp.flashBytes = fp.codeBytes + fp.constantBytes + fp.metadataBytes;
  fp.arenaBytes = compiled.arenaBytes;
  fp.ioBytes = compiled.inputBytes + compiled.outputBytes;
  fp.stackBytes = compiled.stackBytes;
  fp.ramBytes = fp.arenaBytes + fp.ioBytes + std::max<int64_t>(fp.stackBytes, 0);
  fp.dispatches = dispatchMemoryOf(*compiled.plan, compiled.stackFrameBytes);
  return fp;
}

ExportFootprint planFootprint(const CompileResult &compiled) {
  return footprintOf(compiled, std::nullopt);
}

llvm::Expected<DeviceBuild> buildForDevice(const std::string &path, CompileOptions options) {
  if (isBareMetalTriple(options.target.triple))
    options.format = OutputFormat::CModule;
  auto compiled = compile(path, options);
  if (!compiled)
    return compiled.takeError();
  DeviceBuild build;
  build.format = options.format;
  std::optional<SectionSizes> sections;
  if (options.format == OutputFormat::Artifact) {
    auto sizes = readSectionSizes(compiled->artifact, llvm::sys::path::stem(path).str() + ".kiln");
    if (!sizes)
      return sizes.takeError();
    sections = *sizes;
  }
  build.footprint = footprintOf(*compiled, sections);
  build.compiled = std::move(*compiled);
  return build;
}

/// What the manifest and the report describe.
struct BundleParts {
  const ExportRequest &request;
  /// The options compiled with (target and profile applied).
  const CompileOptions &options;
  const CompileResult &compiled;
  /// Files, command, footprint and budget checks filled in.
  const ExportBundle &bundle;
  /// A .kiln's section sizes (none for a C module).
  const std::optional<SectionSizes> &sections;
  /// The model file's bytes.
  llvm::ArrayRef<uint8_t> model;
  /// The model's file stem, and the C module's symbol prefix.
  std::string name;
  std::string moduleName;
};

/// manifest.json of a bundle.
static std::string manifestOf(const BundleParts &parts) {
  const ExportRequest &request = parts.request;
  const CompileOptions &options = parts.options;
  const CompileResult *compiled = &parts.compiled;
  const CompilationPlan &plan = *parts.compiled.plan;
  const ExportBundle &bundle = parts.bundle;
  const ExportFootprint &fp = bundle.footprint;
  const std::optional<SectionSizes> &sections = parts.sections;
  llvm::json::Object manifest;
  manifest["format"] = "kiln-export-1";
  manifest["kiln_version"] = version();
  manifest["llvm_version"] = llvmVersion();
  manifest["command"] = bundle.command;
  {
    llvm::ArrayRef<uint8_t> raw = parts.model;
    manifest["model"] = llvm::json::Object{
        {"file", llvm::sys::path::filename(request.model).str()},
        {"bytes", static_cast<int64_t>(raw.size())},
        {"sha256", sha256Hex(raw)}};
  }
  manifest["target"] = llvm::json::Object{{"name", request.recipe.target},
                                          {"triple", compiled->triple},
                                          {"cpu", compiled->cpu},
                                          {"features", compiled->features},
                                          {"abi", options.target.abi}};
  manifest["profile"] = request.recipe.profile;
  manifest["output_format"] = toString(request.recipe.format);
  // The settings as given (the one JSON form: a tuning file or a project
  // reads it back), then what they resolved to.
  manifest["recipe"] = recipeToJson(request.recipe);
  manifest["options"] = llvm::json::Object{
      {"debug_symbols", options.debugSymbols},
      {"reflection", options.reflection},
      {"opt_level", static_cast<int64_t>(options.optLevel)},
      {"max_buffer_bytes", options.maxBufferBytes}};
  {
    llvm::json::Array files;
    for (const GeneratedFile &f : bundle.files)
      files.push_back(llvm::json::Object{{"name", f.name},
                                         {"bytes", static_cast<int64_t>(f.bytes.size())},
                                         {"sha256", sha256Hex(f.bytes)}});
    manifest["files"] = std::move(files);
  }
  if (sections) {
    llvm::json::Object s;
    for (const auto &[section, bytes] : sections->sections)
      s[section] = bytes;
    manifest["sections"] = llvm::json::Object{{"file_bytes", sections->fileBytes},
                                              {"overhead_bytes", sections->overhead},
                                              {"sections", std::move(s)}};
  }
  manifest["memory"] = llvm::json::Object{
      {"flash_bytes", fp.flashBytes},     {"code_bytes", fp.codeBytes},
      {"constants_bytes", fp.constantBytes}, {"metadata_bytes", fp.metadataBytes},
      {"ram_bytes", fp.ramBytes},         {"arena_bytes", fp.arenaBytes},
      {"io_bytes", fp.ioBytes},           {"lower_bound_bytes", plan.memory.lowerBoundBytes},
      {"stack_bytes", fp.stackBytes >= 0 ? llvm::json::Value(fp.stackBytes)
                                         : llvm::json::Value(nullptr)}};
  {
    // Each budget given: the total, the budget and the verdict.
    llvm::json::Array budgets;
    for (const BudgetCheck &c : bundle.budgetChecks)
      budgets.push_back(llvm::json::Object{{"memory", c.memory == "RAM" ? "ram" : "flash"},
                                           {"bytes", c.bytes},
                                           {"budget_bytes", c.budgetBytes},
                                           {"exceeded", c.exceeded}});
    manifest["budgets"] = std::move(budgets);
  }
  if (request.kit.enabled) {
    // The kit's own files (in "files" too) and what its program runs on.
    llvm::json::Array files, inputs;
    for (const std::string &f : kitFileNames(request, parts.moduleName))
      files.push_back(f);
    for (const KitInput &in : bundle.kitInputs)
      inputs.push_back(llvm::json::Object{{"source", in.file.empty() ? "pattern" : in.file},
                                          {"bytes", static_cast<int64_t>(in.bytes.size())},
                                          {"sha256", sha256Hex(in.bytes)}});
    const CortexMBoard *board = cortexMBoardOf(request.recipe.target);
    // "model": the path as given (as in "command"), for `kiln validate
    // BUNDLE --on-target`'s host build.
    manifest["kit"] = llvm::json::Object{
        {"model", request.model},
        {"board", board ? llvm::json::Value(board->machine) : llvm::json::Value(nullptr)},
        {"files", std::move(files)},
        {"inputs", std::move(inputs)}};
  }
  int64_t dispatchCommands = 0;
  for (const Command &c : plan.schedule.commands)
    dispatchCommands += c.kind == CommandKind::Dispatch;
  manifest["schedule"] = llvm::json::Object{
      {"commands", static_cast<int64_t>(plan.schedule.commands.size())},
      {"dispatch_commands", dispatchCommands},
      {"waves", plan.schedule.waves}};
  {
    llvm::json::Array dispatches;
    for (size_t i = 0; i < plan.dispatches.size(); ++i) {
      const Dispatch &d = plan.dispatches[i];
      const DispatchMemory &m = fp.dispatches[i];
      llvm::json::Array ops, wg, tiles;
      for (const SourceOp &op : d.ops)
        ops.push_back(op.name + " #" + std::to_string(op.sourceIndex));
      for (int64_t v : d.workgroupCount)
        wg.push_back(v);
      for (int64_t v : d.tileSizes)
        tiles.push_back(v);
      dispatches.push_back(llvm::json::Object{{"id", d.id},
                                              {"name", d.name},
                                              {"entry_point", m.entryPoint},
                                              {"ops", std::move(ops)},
                                              {"workgroups", std::move(wg)},
                                              {"tile_sizes", std::move(tiles)},
                                              {"flops", d.flops},
                                              {"bytes_read", d.bytesRead},
                                              {"bytes_written", d.bytesWritten},
                                              {"stack_bytes", m.stackBytes >= 0
                                                                  ? llvm::json::Value(m.stackBytes)
                                                                  : llvm::json::Value(nullptr)},
                                              {"dynamic_stack", m.dynamicStack},
                                              {"arena_bytes", m.arenaBytes},
                                              {"weight_bytes", m.weightBytes}});
    }
    manifest["dispatches"] = std::move(dispatches);
  }
  std::string manifestText;
  {
    llvm::raw_string_ostream os(manifestText);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  }
  return manifestText;
}

/// report.md of a bundle.
static std::string reportOf(const BundleParts &parts) {
  const ExportRequest &request = parts.request;
  const CompileResult *compiled = &parts.compiled;
  const CompilationPlan &plan = *parts.compiled.plan;
  const ExportBundle &bundle = parts.bundle;
  const ExportFootprint &fp = bundle.footprint;
  const std::optional<SectionSizes> &sections = parts.sections;
  const std::string &name = parts.name;
  const std::string &moduleName = parts.moduleName;
  std::string report;
  {
    llvm::raw_string_ostream os(report);
    os << "# " << name << " for " << request.recipe.target << " (" << compiled->triple << ", "
       << compiled->cpu << ")\n\n"
       << "Built by kiln " << version() << " (LLVM/MLIR " << llvmVersion() << "), profile `"
       << request.recipe.profile << "`, output `" << toString(request.recipe.format) << "`.\n\n"
       << "Repeat this build (add `-o DIR` to choose the folder):\n\n    " << bundle.command
       << "\n\n"
       << "## Memory\n\n| | bytes | |\n|---|---:|---|\n"
       << "| **flash** | " << fp.flashBytes << " | " << kib(fp.flashBytes) << " |\n"
       << "| code (kernels) | " << fp.codeBytes << " | " << kib(fp.codeBytes) << " |\n"
       << "| weights | " << fp.constantBytes << " | " << kib(fp.constantBytes) << " |\n"
       << "| metadata | " << fp.metadataBytes << " | "
       << (request.recipe.format == OutputFormat::Artifact
               ? "the .kiln's other sections and overhead"
               : "0: the C glue (" + name + ".c) is compiled by your compiler")
       << " |\n"
       << "| **RAM** | " << fp.ramBytes << " | " << kib(fp.ramBytes) << " |\n"
       << "| activations (arena) | " << fp.arenaBytes << " | lower bound "
       << plan.memory.lowerBoundBytes << " |\n"
       << "| inputs + outputs | " << fp.ioBytes << " | |\n";
    if (fp.stackBytes >= 0)
      os << "| stack (largest kernel frame) | " << fp.stackBytes
         << " | from the kernels' .stack_sizes |\n";
    os << "\n"
       << (request.recipe.format == OutputFormat::Artifact
               ? "Not counted: Kiln's runtime (about 11 KB of .text for local-sync on "
                 "x86-64 at -Os) and its state, the kernels' stack frames.\n\n"
               : "Not counted: " + name + ".c once compiled, libm and memcpy/memset "
                 "from your C library and their stack frames.\n\n");
    if (!bundle.budgetChecks.empty()) {
      os << "## Budgets\n\n| memory | bytes | budget | verdict |\n|---|---:|---:|---|\n";
      for (const BudgetCheck &c : bundle.budgetChecks)
        os << "| " << c.memory << " | " << c.bytes << " | " << c.budgetBytes << " | "
           << (c.exceeded ? "**exceeded**: " : "within: ") << c.message << " |\n";
      os << "\n";
    }
    if (request.kit.enabled) {
      const CortexMBoard *board = cortexMBoardOf(request.recipe.target);
      os << "## Firmware kit\n\n"
         << (board ? "`make` builds " + moduleName + ".elf with arm-none-eabi-gcc (" +
                         board->cpuFlags + "); `make run` runs it on QEMU's " + board->machine +
                         " (" + board->core + " code) and prints every output over semihosting.\n\n"
                   : "`make` builds " + name + " with Kiln's runtime built for " +
                         request.recipe.target + " (libkiln_runtime.a); `make run` runs it on " +
                         name + ".kiln and prints every output.\n\n")
         << "Inputs (kit_buffers.c): "
         << (request.kit.inputs.empty() ? std::string("the deterministic pattern of kit.h")
                                        : "the --kit-input files")
         << ". Outputs: one `kiln-output K BYTES HEX` line each; `kiln validate "
            "--on-target` compares them with the host's.\n\n";
    }
    if (sections) {
      os << "## Sections of " << name << ".kiln\n\n| section | bytes |\n|---|---:|\n";
      for (const auto &[section, bytes] : sections->sections)
        os << "| " << section << " | " << bytes << " |\n";
      os << "| format overhead | " << sections->overhead << " |\n"
         << "| **file** | " << sections->fileBytes << " |\n\n";
    }
    os << "## Files\n\n| file | bytes | sha256 |\n|---|---:|---|\n";
    for (const GeneratedFile &f : bundle.files)
      os << "| " << f.name << " | " << f.bytes.size() << " | `"
         << sha256Hex(f.bytes).substr(0, 16) << "` |\n";
    os << "\n## Dispatches (" << plan.dispatches.size() << ", "
       << plan.schedule.commands.size() << " commands in " << plan.schedule.waves
       << " waves)\n\nStack: the frame of the dispatch's kernel (from .stack_sizes; "
          "shared by dispatches that run the same entry point; \"dynamic\": the kernel "
          "allocates stack of a size known only at run time, which LLVM does not record "
          "and the RAM total does not count). Arena: the bytes of the "
          "arena its bindings occupy. Weights: the constants it reads.\n\n"
          "| id | entry point | operators | workgroups | tile sizes | MFLOP "
          "| KiB read | KiB written | stack bytes | arena bytes | weight bytes |\n"
          "|---:|---|---|---|---|---:|---:|---:|---:|---:|---:|\n";
    for (size_t i = 0; i < plan.dispatches.size(); ++i) {
      const Dispatch &d = plan.dispatches[i];
      const DispatchMemory &m = fp.dispatches[i];
      std::string ops;
      for (const SourceOp &op : d.ops)
        ops += (ops.empty() ? "" : ", ") + op.name + " #" + std::to_string(op.sourceIndex);
      char numbers[96];
      std::snprintf(numbers, sizeof numbers, "%.3f | %.1f | %.1f",
                    static_cast<double>(d.flops) / 1e6,
                    static_cast<double>(d.bytesRead) / 1024.0,
                    static_cast<double>(d.bytesWritten) / 1024.0);
      std::string entry = request.recipe.format == OutputFormat::CModule
                              ? moduleName + "_" + entryPointOf(d)
                              : entryPointOf(d);
      os << "| " << d.id << " | " << entry << " | " << ops << " | "
         << joinSizes({d.workgroupCount.begin(), d.workgroupCount.end()}, "x") << " | "
         << joinSizes(d.tileSizes, ",") << " | " << numbers << " | "
         << (m.stackBytes >= 0 ? std::to_string(m.stackBytes)
                               : std::string(m.dynamicStack ? "dynamic" : "-"))
         << " | "
         << m.arenaBytes << " | " << m.weightBytes << " |\n";
    }
  }
  return report;
}

llvm::Error checkExportRequest(const ExportRequest &request) {
  auto options = recipeCompileOptions(request.recipe);
  if (!options)
    return options.takeError();
  options->maxBufferBytes = request.maxBufferBytes;
  options->onPhase = request.onPhase;
  // planOnly runs the target checks compile() runs before code generation.
  auto planned = planOnly(request.model, *options);
  return planned ? llvm::Error::success() : planned.takeError();
}

llvm::Expected<ExportBundle> buildExportBundle(const ExportRequest &request) {
  auto recipeOptions = recipeCompileOptions(request.recipe);
  if (!recipeOptions)
    return recipeOptions.takeError();
  CompileOptions options = std::move(*recipeOptions);
  options.maxBufferBytes = request.maxBufferBytes;
  options.onPhase = request.onPhase;

  auto modelBytes = llvm::MemoryBuffer::getFile(request.model, /*IsText=*/false,
                                                /*RequiresNullTerminator=*/false);
  if (!modelBytes)
    return makeError(request.model + ": cannot read: " + modelBytes.getError().message());
  auto compiled = compile(request.model, options);
  if (!compiled)
    return compiled.takeError();
  ExportBundle bundle;
  bundle.command = commandOf(request);
  bundle.warnings = compiled->warnings;
  const std::string name = llvm::sys::path::stem(request.model).str();
  // The C module's symbol prefix, as the compiler derived it from the files.
  std::string moduleName = options.moduleName;
  if (moduleName.empty() && !compiled->files.empty())
    moduleName = llvm::StringRef(compiled->files.front().name).drop_back(2).str();
  std::optional<SectionSizes> sections;
  if (request.recipe.format == OutputFormat::Artifact) {
    auto sizes = readSectionSizes(compiled->artifact, name + ".kiln");
    if (!sizes)
      return sizes.takeError();
    sections = *sizes;
    bundle.files.push_back({name + ".kiln", compiled->artifact});
  } else {
    bundle.files = compiled->files;
  }

  bundle.footprint = footprintOf(*compiled, sections);
  bundle.budgetChecks = checkBudget(bundle.footprint, request.budget);
  if (request.kit.enabled) {
    auto kit = buildKitFiles({request, *compiled, bundle.footprint, name, moduleName});
    if (!kit)
      return kit.takeError();
    bundle.files.insert(bundle.files.end(), kit->files.begin(), kit->files.end());
    bundle.kitInputs = std::move(kit->inputs);
  }

  const BundleParts parts{request,
                          options,
                          *compiled,
                          bundle,
                          sections,
                          {reinterpret_cast<const uint8_t *>((*modelBytes)->getBufferStart()),
                           (*modelBytes)->getBufferSize()},
                          name,
                          moduleName};
  const std::string manifestText = manifestOf(parts);
  const std::string report = reportOf(parts);
  bundle.files.push_back({"manifest.json", {manifestText.begin(), manifestText.end()}});
  bundle.files.push_back({"report.md", {report.begin(), report.end()}});
  return bundle;
}

llvm::Expected<BundleManifest> parseBundleManifest(llvm::StringRef text, const std::string &path) {
  auto parsed = llvm::json::parse(text);
  if (!parsed)
    return makeError(path + ": " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *manifest = parsed->getAsObject();
  if (!manifest || manifest->getString("format") != "kiln-export-1")
    return makeError(path + ": not a Kiln export manifest (format kiln-export-1)");
  const llvm::json::Object *model = manifest->getObject("model");
  const llvm::json::Object *recipe = manifest->getObject("recipe");
  if (!model || !model->getString("file") || !recipe)
    return makeError(path + ": the manifest has no \"model\" file or no \"recipe\"");
  BundleManifest m;
  m.path = path;
  m.modelFile = model->getString("file")->str();
  m.modelSha256 = model->getString("sha256").value_or("").str();
  if (const llvm::json::Array *files = manifest->getArray("files"))
    for (const llvm::json::Value &v : *files)
      if (const llvm::json::Object *f = v.getAsObject())
        if (auto name = f->getString("name"), sha = f->getString("sha256"); name && sha)
          m.fileSha256[name->str()] = sha->str();
  m.recipeJson = *recipe;
  if (const llvm::json::Object *kit = manifest->getObject("kit")) {
    if (!kit->getString("model") || !kit->getArray("inputs"))
      return makeError(path + ": the manifest's \"kit\" has no \"model\" or \"inputs\"");
    m.hasKit = true;
    m.kitModel = kit->getString("model")->str();
    for (const llvm::json::Value &v : *kit->getArray("inputs")) {
      const llvm::json::Object *in = v.getAsObject();
      m.kitInputSources.push_back(in ? in->getString("source").value_or("").str() : "");
    }
  }
  return m;
}

llvm::Expected<BundleManifest> readBundleManifest(const std::string &dir) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "manifest.json");
  auto text = llvm::MemoryBuffer::getFile(path);
  if (!text)
    return makeError(path.str() + ": cannot read (" + text.getError().message() + ")");
  return parseBundleManifest((*text)->getBuffer(), path.str().str());
}

/// The manifest of the bundle `dir` holds already, if it holds one.
static std::optional<BundleManifest> bundleIn(const std::string &dir) {
  auto m = readBundleManifest(dir);
  if (!m) {
    llvm::consumeError(m.takeError()); // no bundle there (or not one of ours)
    return std::nullopt;
  }
  return std::move(*m);
}

llvm::Error writeExportBundle(const ExportBundle &bundle, const std::string &dir,
                              const std::vector<OutputFile> &extra,
                              const std::vector<std::string> &reads) {
  // A file (or anything else that is not a folder) named as the folder is
  // the user's: refused, never removed.
  const bool existed = llvm::sys::fs::exists(dir);
  if (existed && !llvm::sys::fs::is_directory(dir))
    return makeError(dir + ": exists and is not a folder; give -o a folder (the export writes " +
                     std::to_string(bundle.files.size()) + " files into it)");
  // Another model's bundle is never replaced (two models with one name,
  // blazeface.onnx and blazeface.tflite, have one default folder).
  std::optional<BundleManifest> before = existed ? bundleIn(dir) : std::nullopt, now;
  for (const GeneratedFile &f : bundle.files)
    if (f.name == "manifest.json") {
      auto written = parseBundleManifest(
          llvm::StringRef(reinterpret_cast<const char *>(f.bytes.data()), f.bytes.size()),
          "manifest.json");
      if (!written)
        return written.takeError(); // the writer and the reader disagree: a bug
      now = std::move(*written);
    }
  if (before && now && before->modelFile != now->modelFile)
    return makeError(dir + ": holds the export of " + before->modelFile +
                     " (its manifest.json); this export of " + now->modelFile +
                     " would replace it: give another folder");
  // rwx for all, less the umask (as mkdir -p): LLVM's default leaves
  // others out (0750 under umask 022).
  if (std::error_code ec = llvm::sys::fs::create_directories(dir, true, llvm::sys::fs::all_all))
    return makeError(dir + ": cannot create the folder: " + ec.message());
  // A folder made here and left empty by a failed write is removed again
  // (remove() deletes only an empty folder).
  auto cleanUp = [&](llvm::Error err) {
    if (!existed && llvm::sys::fs::is_directory(dir))
      (void)llvm::sys::fs::remove(dir);
    return err;
  };
  // A name taken by a folder or special file would fail (or bypass) the
  // renames half way: refuse before writing anything.
  std::vector<OutputFile> files;
  for (const GeneratedFile &f : bundle.files) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, f.name);
    llvm::sys::fs::file_status status;
    if (!llvm::sys::fs::status(path, status) &&
        status.type() != llvm::sys::fs::file_type::regular_file)
      return cleanUp(
          makeError(std::string(path) + ": cannot write: it exists and is not a regular file"));
    files.push_back({std::string(path), [&f](llvm::raw_ostream &os) {
                       os.write(reinterpret_cast<const char *>(f.bytes.data()), f.bytes.size());
                     }});
  }
  files.insert(files.end(), extra.begin(), extra.end());
  if (llvm::Error err = writeFilesAtomically(files, reads))
    return cleanUp(std::move(err));
  // The earlier bundle's files this one does not have (a kit exported
  // before, a C module's sources) go, when they are as that export wrote
  // them; a file the user changed stays.
  if (before && now)
    for (const auto &[name, sha] : before->fileSha256) {
      if (now->fileSha256.count(name) || name.find('/') != std::string::npos ||
          name.find('\\') != std::string::npos)
        continue;
      llvm::SmallString<256> path(dir);
      llvm::sys::path::append(path, name);
      auto old =
          llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
      if (old && sha256Hex(llvm::ArrayRef<uint8_t>(
                     reinterpret_cast<const uint8_t *>((*old)->getBufferStart()),
                     (*old)->getBufferSize())) == sha)
        (void)llvm::sys::fs::remove(path);
    }
  return llvm::Error::success();
}

std::vector<std::string> exportFileNames(const ExportRequest &request) {
  std::vector<std::string> names;
  std::string module = request.recipe.moduleName.empty() ? moduleNameFromPath(request.model)
                                                         : request.recipe.moduleName;
  if (request.recipe.format == OutputFormat::Artifact) {
    names.push_back(llvm::sys::path::stem(request.model).str() + ".kiln");
  } else {
    for (const char *suffix : {".h", ".c", "_constants.c", "_kernels.o"})
      names.push_back(module + suffix);
  }
  if (request.kit.enabled)
    for (const std::string &f : kitFileNames(request, module))
      names.push_back(f);
  names.push_back("manifest.json");
  names.push_back("report.md");
  return names;
}

std::string defaultExportDir(const ExportRequest &request) {
  // The extension too, as the model's project (MODEL.EXT.kilnproj):
  // m.onnx and m.tflite beside each other get folders of their own.
  std::string ext = llvm::sys::path::extension(request.model).str();
  std::string name = llvm::sys::path::stem(request.model).str() +
                     (ext.size() > 1 ? "-" + llvm::StringRef(ext).drop_front().lower() : "") + "-" +
                     request.recipe.target + "-" + request.recipe.profile;
  if (request.recipe.format == OutputFormat::CModule)
    name += "-c";
  // Beside the model, as `kiln compile` writes MODEL.kiln.
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(request.model));
  llvm::sys::path::append(dir, name);
  return dir.str().str();
}

} // namespace kiln
