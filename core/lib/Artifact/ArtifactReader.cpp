//===- ArtifactReader.cpp - .kiln files through the runtime's gate -------===//
#include "kiln/Artifact.h"
#include "kiln/Error.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace kiln {

void appendChecksumTrailer(std::vector<uint8_t> &flatbuffer) {
  flatbuffer.resize(flatbuffer.size() + KILN_ARTIFACT_TRAILER_BYTES);
  kiln_artifact_seal(flatbuffer.data(), flatbuffer.size());
}

bool isArtifact(llvm::StringRef path, llvm::ArrayRef<uint8_t> bytes) {
  return kiln_artifact_recognize(bytes.data(), bytes.size()) ||
         path.ends_with_insensitive(".kiln");
}

bool isArtifactFile(llvm::StringRef path) {
  uint8_t head[8] = {};
  size_t got = 0;
  if (auto file = llvm::sys::fs::openNativeFileForRead(path)) {
    auto n = llvm::sys::fs::readNativeFile(*file, llvm::MutableArrayRef<char>(
                                                      reinterpret_cast<char *>(head), 8));
    got = n ? *n : 0;
    if (!n)
      llvm::consumeError(n.takeError());
    llvm::sys::fs::closeFile(*file);
  } else {
    llvm::consumeError(file.takeError());
  }
  return isArtifact(path, llvm::ArrayRef<uint8_t>(head, got));
}

llvm::Expected<kiln_artifact_info_t> verifyArtifact(llvm::ArrayRef<uint8_t> bytes,
                                                    llvm::StringRef what) {
  kiln_artifact_info_t info;
  kiln_status_t status = kiln_artifact_verify(bytes.data(), bytes.size(), &info);
  if (status.code != KILN_OK)
    return makeError(what + ": " + status.message);
  return info;
}

llvm::Expected<SectionSizes> sectionSizesOf(const kiln_artifact_info_t &info,
                                            const std::string &what) {
  if (info.section_count == 0)
    return makeError(what + ": the artifact records no section sizes (format " +
                     llvm::Twine(info.format_major) + "." + llvm::Twine(info.format_minor) +
                     "; sizes came with 1.1)");
  // The gate checked that the sections add up to no more than the file.
  SectionSizes out;
  out.fileBytes = static_cast<int64_t>(info.file_bytes);
  int64_t sum = 0, end = out.fileBytes - KILN_ARTIFACT_TRAILER_BYTES;
  for (size_t i = 0; i < info.section_count; ++i) {
    int64_t bytes = static_cast<int64_t>(info.sections[i].bytes);
    out.sections.push_back({info.sections[i].name, bytes});
    sum += bytes;
    end -= bytes;
    out.offsets.push_back(end);
  }
  out.overhead = out.fileBytes - sum;
  return out;
}

llvm::Expected<SectionSizes> readSectionSizes(const std::vector<uint8_t> &bytes,
                                              const std::string &what) {
  auto info = verifyArtifact(bytes, what);
  if (!info)
    return info.takeError();
  return sectionSizesOf(*info, what);
}

std::string formatSectionSizes(const SectionSizes &sizes, bool json) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (json) {
    llvm::json::Object sections;
    for (const auto &[name, bytes] : sizes.sections)
      sections[name] = bytes;
    os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                     {"file_bytes", sizes.fileBytes},
                                     {"overhead_bytes", sizes.overhead},
                                     {"sections", std::move(sections)}}))
       << "\n";
    return os.str();
  }
  auto row = [&](llvm::StringRef name, int64_t bytes) {
    double percent = sizes.fileBytes ? 100.0 * double(bytes) / double(sizes.fileBytes) : 0;
    os << llvm::format("%-14s %12lld %6.1f%%\n", name.str().c_str(), (long long)bytes, percent);
  };
  os << "section               bytes   share\n";
  for (const auto &[name, bytes] : sizes.sections)
    row(name, bytes);
  row("(overhead)", sizes.overhead);
  row("total", sizes.fileBytes);
  return os.str();
}

std::string formatSectionDiff(const SectionSizes &a, const SectionSizes &b, bool json) {
  std::vector<std::string> names;
  std::map<std::string, std::pair<int64_t, int64_t>> rows;
  for (const auto &[name, bytes] : a.sections) {
    if (!rows.count(name))
      names.push_back(name);
    rows[name].first = bytes;
  }
  for (const auto &[name, bytes] : b.sections) {
    if (!rows.count(name))
      names.push_back(name);
    rows[name].second = bytes;
  }
  names.push_back("(overhead)");
  rows["(overhead)"] = {a.overhead, b.overhead};
  names.push_back("total");
  rows["total"] = {a.fileBytes, b.fileBytes};
  std::string text;
  llvm::raw_string_ostream os(text);
  if (json) {
    llvm::json::Object out;
    for (const std::string &name : names)
      out[name] = llvm::json::Object{{"a", rows[name].first},
                                     {"b", rows[name].second},
                                     {"delta", rows[name].second - rows[name].first}};
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
    return os.str();
  }
  os << "section             A bytes      B bytes        B - A\n";
  for (const std::string &name : names)
    os << llvm::format("%-14s %12lld %12lld %+12lld\n", name.c_str(),
                       (long long)rows[name].first, (long long)rows[name].second,
                       (long long)(rows[name].second - rows[name].first));
  return os.str();
}

llvm::Expected<BuildSummary> summaryOf(const kiln_artifact_info_t &info,
                                       const std::string &what) {
  auto sizes = sectionSizesOf(info, what);
  if (!sizes)
    return sizes.takeError();
  BuildSummary s;
  s.name = what;
  s.sizes = std::move(*sizes);
  s.arenaBytes = static_cast<int64_t>(info.arena_bytes);
  s.lowerBoundBytes = static_cast<int64_t>(info.lower_bound_bytes);
  s.commands = static_cast<int64_t>(info.command_count);
  s.dispatches = static_cast<int64_t>(info.dispatch_count);
  s.waves = static_cast<int64_t>(info.wave_count);
  s.triple = info.target_triple;
  s.cpu = info.target_cpu;
  return s;
}

llvm::Expected<BuildSummary> summarizeArtifact(const std::vector<uint8_t> &bytes,
                                               const std::string &what) {
  auto info = verifyArtifact(bytes, what);
  if (!info)
    return info.takeError();
  return summaryOf(*info, what);
}

std::string formatBuildDiff(const BuildSummary &a, const BuildSummary &b, bool json) {
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> plan = {
      {"arena_bytes", {a.arenaBytes, b.arenaBytes}},
      {"lower_bound_bytes", {a.lowerBoundBytes, b.lowerBoundBytes}},
      {"dispatch_count", {a.dispatches, b.dispatches}},
      {"command_count", {a.commands, b.commands}},
      {"wave_count", {a.waves, b.waves}}};
  const bool timed = a.latency.medianMs >= 0 && b.latency.medianMs >= 0;
  const std::pair<const char *, double LatencyStats::*> times[] = {
      {"median_ms", &LatencyStats::medianMs},
      {"min_ms", &LatencyStats::minMs},
      {"max_ms", &LatencyStats::maxMs}};
  std::string sections = formatSectionDiff(a.sizes, b.sizes, json);
  std::string text;
  llvm::raw_string_ostream os(text);
  if (json) {
    auto parsed = llvm::json::parse(sections);
    llvm::json::Object out = parsed && parsed->getAsObject() ? *parsed->getAsObject()
                                                              : llvm::json::Object();
    if (!parsed)
      llvm::consumeError(parsed.takeError());
    for (const auto &[name, ab] : plan)
      out[name] = llvm::json::Object{{"a", ab.first}, {"b", ab.second},
                                     {"delta", ab.second - ab.first}};
    out["a_file"] = a.name;
    out["b_file"] = b.name;
    if (timed) {
      for (const auto &[name, field] : times)
        out[name] = llvm::json::Object{{"a", a.latency.*field},
                                       {"b", b.latency.*field},
                                       {"delta", b.latency.*field - a.latency.*field}};
      out["timing"] = llvm::json::Object{{"runs", a.latency.runs},
                                         {"device", a.latency.device},
                                         {"threads", a.latency.threads}};
    }
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
    return os.str();
  }
  os << "A = " << a.name << "\nB = " << b.name << "\n\n"
     << sections << "\n"
     << "plan                         A            B        B - A\n";
  for (const auto &[name, ab] : plan)
    os << llvm::format("%-17s %12lld %12lld %+12lld\n", name.c_str(), (long long)ab.first,
                       (long long)ab.second, (long long)(ab.second - ab.first));
  if (timed) {
    for (const auto &[name, field] : times)
      os << llvm::format("%-17s %12.4f %12.4f %+12.4f\n", name, a.latency.*field,
                         b.latency.*field, b.latency.*field - a.latency.*field);
    os << "(" << a.latency.runs << " timed runs each after a warm-up, " << a.latency.device
       << ", " << a.latency.threads << " thread" << (a.latency.threads == 1 ? "" : "s")
       << "; A and B alternate)\n";
  }
  return os.str();
}

} // namespace kiln
