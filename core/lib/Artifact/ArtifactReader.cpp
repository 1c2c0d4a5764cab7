//===- ArtifactReader.cpp - Section sizes of .kiln files ------------------===//
#include "kiln/Artifact.h"

#include "ArtifactWriter.h"
#include "kiln_artifact_generated.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace kiln {

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

void appendChecksumTrailer(std::vector<uint8_t> &flatbuffer) {
  uint32_t crc = llvm::crc32(llvm::ArrayRef<uint8_t>(flatbuffer));
  for (char c : {'K', 'S', 'U', 'M'})
    flatbuffer.push_back(static_cast<uint8_t>(c));
  for (int i = 0; i < 4; ++i)
    flatbuffer.push_back(static_cast<uint8_t>(crc >> (8 * i)));
}

llvm::Expected<SectionSizes> readSectionSizes(const std::vector<uint8_t> &bytes,
                                              const std::string &what) {
  size_t size = bytes.size();
  if (size < 16 || bytes[4] != 'K' || bytes[5] != 'I' || bytes[6] != 'L' || bytes[7] != 'N')
    return makeError(what + ": not a Kiln artifact");
  if (std::string(bytes.end() - 8, bytes.end() - 4) != "KSUM")
    return makeError(what + ": the artifact is truncated or corrupted (no checksum trailer)");
  uint32_t stored = 0;
  for (int i = 0; i < 4; ++i)
    stored |= uint32_t(bytes[size - 4 + i]) << (8 * i);
  uint32_t actual = llvm::crc32(llvm::ArrayRef<uint8_t>(bytes.data(), size - 8));
  if (stored != actual)
    return makeError(what + ": the artifact is corrupted (checksum " + llvm::utohexstr(actual) +
                     ", the trailer says " + llvm::utohexstr(stored) + ")");
  flatbuffers::Verifier verifier(bytes.data(), size - 8);
  if (!kiln::artifact::VerifyArtifactBuffer(verifier))
    return makeError(what + ": the artifact is truncated or corrupted");
  const auto *artifact = kiln::artifact::GetArtifact(bytes.data());
  if (!artifact->sections())
    return makeError(what + ": the artifact records no section sizes (format " +
                     llvm::Twine(artifact->format_major()) + "." +
                     llvm::Twine(artifact->format_minor()) + "; sizes came with 1.1)");
  SectionSizes out;
  out.fileBytes = static_cast<int64_t>(size);
  int64_t sum = 0;
  for (const auto *s : *artifact->sections()) {
    if (!s || !s->name())
      continue;
    out.sections.push_back({s->name()->str(), static_cast<int64_t>(s->bytes())});
    sum += static_cast<int64_t>(s->bytes());
  }
  if (sum > out.fileBytes)
    return makeError(what + ": section sizes exceed the file size");
  int64_t end = out.fileBytes - static_cast<int64_t>(kArtifactTrailerBytes);
  for (const auto &[name, bytes] : out.sections) {
    end -= bytes;
    out.offsets.push_back(end);
  }
  out.overhead = out.fileBytes - sum;
  return out;
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

llvm::Expected<BuildSummary> summarizeArtifact(const std::vector<uint8_t> &bytes,
                                               const std::string &what) {
  auto sizes = readSectionSizes(bytes, what);
  if (!sizes)
    return sizes.takeError();
  BuildSummary s;
  s.sizes = std::move(*sizes);
  const auto *artifact = kiln::artifact::GetArtifact(bytes.data());
  s.arenaBytes = static_cast<int64_t>(artifact->arena_bytes());
  if (const auto *plan = artifact->memory_plan()) {
    s.arenaBytes = static_cast<int64_t>(plan->arena_bytes());
    s.lowerBoundBytes = static_cast<int64_t>(plan->lower_bound_bytes());
  }
  if (const auto *commands = artifact->commands()) {
    s.commands = commands->size();
    for (const auto *c : *commands)
      s.dispatches += c && c->kind() == kiln::artifact::CommandKind::dispatch;
  }
  if (const auto *device = artifact->device())
    s.waves = device->waves();
  if (artifact->executables() && artifact->executables()->size() > 0) {
    const auto *exe = artifact->executables()->Get(0);
    if (exe->target_triple())
      s.triple = exe->target_triple()->str();
    if (exe->target_cpu())
      s.cpu = exe->target_cpu()->str();
  }
  return s;
}

std::string formatBuildDiff(const BuildSummary &a, const BuildSummary &b, bool json) {
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> plan = {
      {"arena_bytes", {a.arenaBytes, b.arenaBytes}},
      {"lower_bound_bytes", {a.lowerBoundBytes, b.lowerBoundBytes}},
      {"dispatch_count", {a.dispatches, b.dispatches}},
      {"command_count", {a.commands, b.commands}},
      {"wave_count", {a.waves, b.waves}}};
  const bool timed = a.medianMs >= 0 && b.medianMs >= 0;
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
    if (timed)
      out["median_ms"] = llvm::json::Object{{"a", a.medianMs}, {"b", b.medianMs},
                                            {"delta", b.medianMs - a.medianMs}};
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(out))) << "\n";
    return os.str();
  }
  os << sections << "\n"
     << "plan                         A            B        B - A\n";
  for (const auto &[name, ab] : plan)
    os << llvm::format("%-17s %12lld %12lld %+12lld\n", name.c_str(), (long long)ab.first,
                       (long long)ab.second, (long long)(ab.second - ab.first));
  if (timed)
    os << llvm::format("%-17s %12.4f %12.4f %+12.4f\n", std::string("median_ms").c_str(), a.medianMs, b.medianMs,
                       b.medianMs - a.medianMs);
  return os.str();
}

} // namespace kiln
