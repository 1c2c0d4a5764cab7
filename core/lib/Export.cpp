//===- Export.cpp - Deployment bundles for devices ------------------------===//
#include "kiln/Export.h"

#include "kiln/Artifact.h"
#include "kiln/Plan.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cinttypes>
#include <cstring>
#include <cstdio>
#include <optional>

namespace kiln {

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

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
  const CompileOptions &o = r.options;
  std::string cmd = "kiln export " + shellWord(llvm::sys::path::filename(r.model).str()) +
                    " --target=" + r.target + " --profile=" + r.profile +
                    " --output-format=" + toString(r.format);
  if (!o.target.cpu.empty() && o.target.cpu != "generic")
    cmd += " --target-cpu=" + o.target.cpu;
  if (!o.target.features.empty())
    cmd += " --target-cpu-features=" + shellWord(o.target.features);
  if (r.debugSymbols >= 0)
    cmd += std::string(" --debug-symbols=") + (r.debugSymbols ? "true" : "false");
  if (r.reflection >= 0)
    cmd += std::string(" --reflection=") + (r.reflection ? "true" : "false");
  for (const ShapeFix &f : o.fixedShapes)
    cmd += " --fix-shape=" + shellWord(f.input + "=" + joinSizes(f.shape, "x"));
  for (const auto &[id, sizes] : o.tileSizes)
    cmd += " --tile=" + std::to_string(id) + "=" + joinSizes(sizes, ",");
  if (!o.fusion)
    cmd += " --fusion=false";
  for (int64_t id : o.noFusion)
    cmd += " --no-fusion=" + std::to_string(id);
  if (!o.moduleName.empty())
    cmd += " --module-name=" + o.moduleName;
  return cmd;
}

static std::string kib(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  return text;
}

llvm::Expected<ExportBundle> buildExportBundle(const ExportRequest &request) {
  CompileOptions options = request.options;
  // Explicit CPU/features given with a named target win over its defaults
  // (applyTarget keeps both).
  if (llvm::Error err = applyTarget(request.target, options.target))
    return std::move(err);
  if (llvm::Error err = applyProfile(request.profile, options))
    return std::move(err);
  if (request.debugSymbols >= 0)
    options.debugSymbols = request.debugSymbols != 0;
  if (request.reflection >= 0)
    options.reflection = request.reflection != 0;
  options.format = request.format;

  auto modelBytes = llvm::MemoryBuffer::getFile(request.model, /*IsText=*/false,
                                                /*RequiresNullTerminator=*/false);
  if (!modelBytes)
    return makeError(request.model + ": cannot read: " + modelBytes.getError().message());
  auto compiled = compile(request.model, options);
  if (!compiled)
    return compiled.takeError();
  const CompilationPlan &plan = *compiled->plan;

  ExportBundle bundle;
  bundle.command = commandOf(request);
  const std::string name = llvm::sys::path::stem(request.model).str();
  // The C module's symbol prefix, as the compiler derived it from the files.
  std::string moduleName = options.moduleName;
  if (moduleName.empty() && !compiled->files.empty())
    moduleName = llvm::StringRef(compiled->files.front().name).drop_back(2).str();
  std::optional<SectionSizes> sections;
  if (request.format == OutputFormat::Artifact) {
    auto sizes = readSectionSizes(compiled->artifact, name + ".kiln");
    if (!sizes)
      return sizes.takeError();
    sections = *sizes;
    bundle.files.push_back({name + ".kiln", compiled->artifact});
  } else {
    bundle.files = compiled->files;
  }

  ExportFootprint &fp = bundle.footprint;
  fp.codeBytes = compiled->codeBytes;
  fp.constantBytes = compiled->constantBytes;
  // The whole file sits in flash: everything but code and weights is
  // metadata (the executables section also holds the ELF headers and
  // symbol tables around the loadable code).
  if (sections)
    fp.metadataBytes = sections->fileBytes - fp.codeBytes - fp.constantBytes;
  fp.flashBytes = fp.codeBytes + fp.constantBytes + fp.metadataBytes;
  fp.arenaBytes = compiled->arenaBytes;
  fp.ioBytes = compiled->inputBytes + compiled->outputBytes;
  fp.stackBytes = compiled->stackBytes;
  fp.ramBytes = fp.arenaBytes + fp.ioBytes + std::max<int64_t>(fp.stackBytes, 0);

  // ---- manifest.json
  llvm::json::Object manifest;
  manifest["format"] = "kiln-export-1";
  manifest["kiln_version"] = version();
  manifest["llvm_version"] = llvmVersion();
  manifest["command"] = bundle.command;
  {
    llvm::ArrayRef<uint8_t> raw(
        reinterpret_cast<const uint8_t *>((*modelBytes)->getBufferStart()),
        (*modelBytes)->getBufferSize());
    manifest["model"] = llvm::json::Object{
        {"file", llvm::sys::path::filename(request.model).str()},
        {"bytes", static_cast<int64_t>(raw.size())},
        {"sha256", sha256Hex(raw)}};
  }
  manifest["target"] = llvm::json::Object{{"name", request.target},
                                          {"triple", compiled->triple},
                                          {"cpu", compiled->cpu},
                                          {"features", compiled->features},
                                          {"abi", options.target.abi}};
  manifest["profile"] = request.profile;
  manifest["output_format"] = toString(request.format);
  {
    llvm::json::Array shapes, noFusion;
    for (const ShapeFix &f : options.fixedShapes)
      shapes.push_back(f.input + "=" + joinSizes(f.shape, "x"));
    for (int64_t id : options.noFusion)
      noFusion.push_back(id);
    llvm::json::Object tiles;
    for (const auto &[id, sizes] : options.tileSizes) {
      llvm::json::Array a;
      for (int64_t v : sizes)
        a.push_back(v);
      tiles[std::to_string(id)] = std::move(a);
    }
    manifest["options"] = llvm::json::Object{
        {"debug_symbols", options.debugSymbols},
        {"reflection", options.reflection},
        {"opt_level", static_cast<int64_t>(options.optLevel)},
        {"fusion", options.fusion},
        {"no_fusion", std::move(noFusion)},
        {"tiles", std::move(tiles)},
        {"fixed_shapes", std::move(shapes)}};
  }
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
  int64_t dispatchCommands = 0;
  for (const Command &c : plan.schedule.commands)
    dispatchCommands += c.kind == CommandKind::Dispatch;
  manifest["schedule"] = llvm::json::Object{
      {"commands", static_cast<int64_t>(plan.schedule.commands.size())},
      {"dispatch_commands", dispatchCommands},
      {"waves", plan.schedule.waves}};
  {
    llvm::json::Array dispatches;
    for (const Dispatch &d : plan.dispatches) {
      llvm::json::Array ops, wg, tiles;
      for (const SourceOp &op : d.ops)
        ops.push_back(op.name + " #" + std::to_string(op.sourceIndex));
      for (int64_t v : d.workgroupCount)
        wg.push_back(v);
      for (int64_t v : d.tileSizes)
        tiles.push_back(v);
      dispatches.push_back(llvm::json::Object{{"id", d.id},
                                              {"name", d.name},
                                              {"ops", std::move(ops)},
                                              {"workgroups", std::move(wg)},
                                              {"tile_sizes", std::move(tiles)},
                                              {"flops", d.flops},
                                              {"bytes_read", d.bytesRead},
                                              {"bytes_written", d.bytesWritten}});
    }
    manifest["dispatches"] = std::move(dispatches);
  }
  std::string manifestText;
  {
    llvm::raw_string_ostream os(manifestText);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  }

  // ---- report.md
  std::string report;
  {
    llvm::raw_string_ostream os(report);
    os << "# " << name << " for " << request.target << " (" << compiled->triple << ", "
       << compiled->cpu << ")\n\n"
       << "Built by kiln " << version() << " (LLVM/MLIR " << llvmVersion() << "), profile `"
       << request.profile << "`, output `" << toString(request.format) << "`.\n\n"
       << "Repeat this build (add `-o DIR` to choose the folder):\n\n    " << bundle.command
       << "\n\n"
       << "## Memory\n\n| | bytes | |\n|---|---:|---|\n"
       << "| **flash** | " << fp.flashBytes << " | " << kib(fp.flashBytes) << " |\n"
       << "| code (kernels) | " << fp.codeBytes << " | " << kib(fp.codeBytes) << " |\n"
       << "| weights | " << fp.constantBytes << " | " << kib(fp.constantBytes) << " |\n"
       << "| metadata | " << fp.metadataBytes << " | "
       << (request.format == OutputFormat::Artifact
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
       << (request.format == OutputFormat::Artifact
               ? "Not counted: Kiln's runtime (about 11 KB of .text for local-sync on "
                 "x86-64 at -Os) and its state, the kernels' stack frames.\n\n"
               : "Not counted: " + name + ".c once compiled, libm and memcpy/memset "
                 "from your C library and their stack frames.\n\n");
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
       << " waves)\n\n| id | entry point | operators | workgroups | tile sizes | MFLOP "
          "| KiB read | KiB written |\n|---:|---|---|---|---|---:|---:|---:|\n";
    for (const Dispatch &d : plan.dispatches) {
      std::string ops;
      for (const SourceOp &op : d.ops)
        ops += (ops.empty() ? "" : ", ") + op.name + " #" + std::to_string(op.sourceIndex);
      char numbers[96];
      std::snprintf(numbers, sizeof numbers, "%.3f | %.1f | %.1f",
                    static_cast<double>(d.flops) / 1e6,
                    static_cast<double>(d.bytesRead) / 1024.0,
                    static_cast<double>(d.bytesWritten) / 1024.0);
      std::string entry = request.format == OutputFormat::CModule
                              ? moduleName + "_" + d.name
                              : d.name;
      os << "| " << d.id << " | " << entry << " | " << ops << " | "
         << joinSizes({d.workgroupCount.begin(), d.workgroupCount.end()}, "x") << " | "
         << joinSizes(d.tileSizes, ",") << " | " << numbers << " |\n";
    }
  }
  bundle.files.push_back({"manifest.json", {manifestText.begin(), manifestText.end()}});
  bundle.files.push_back({"report.md", {report.begin(), report.end()}});
  return bundle;
}

llvm::Error writeExportBundle(const ExportBundle &bundle, const std::string &dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return makeError(dir + ": cannot create the folder: " + ec.message());
  // Every file goes to a temporary name first; only when all are written
  // are they renamed into place, so a failure leaves the folder as it was.
  // A name taken by a folder or special file would fail the renames half
  // way: refuse before writing anything.
  for (const GeneratedFile &f : bundle.files) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, f.name);
    llvm::sys::fs::file_status status;
    if (!llvm::sys::fs::status(path, status) &&
        status.type() != llvm::sys::fs::file_type::regular_file)
      return makeError(std::string(path) + ": cannot write: it exists and is not a regular file");
  }
  std::vector<std::pair<std::string, std::string>> written; // temp, final
  auto removeTemps = [&] {
    for (const auto &[temp, path] : written)
      llvm::sys::fs::remove(temp);
  };
  for (const GeneratedFile &f : bundle.files) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, f.name);
    std::string temp = (path + ".kiln-tmp").str();
    std::error_code ec;
    llvm::raw_fd_ostream os(temp, ec, llvm::sys::fs::OF_None);
    if (ec) {
      removeTemps();
      return makeError(std::string(path) + ": cannot write: " + ec.message());
    }
    written.push_back({temp, std::string(path)});
    os.write(reinterpret_cast<const char *>(f.bytes.data()), f.bytes.size());
    os.close();
    if (os.has_error()) {
      std::string message = os.error().message();
      os.clear_error();
      removeTemps();
      return makeError(std::string(path) + ": cannot write: " + message);
    }
  }
  for (const auto &[temp, path] : written)
    if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
      removeTemps();
      return makeError(path + ": cannot write: " + ec.message());
    }
  return llvm::Error::success();
}

std::string defaultExportDir(const ExportRequest &request) {
  std::string dir = llvm::sys::path::stem(request.model).str() + "-" + request.target + "-" +
                    request.profile;
  if (request.format == OutputFormat::CModule)
    dir += "-c";
  return dir;
}

} // namespace kiln
