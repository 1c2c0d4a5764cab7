//===- ArtifactDescription.cpp - What a .kiln file is, without reflection -===//
//
// Reads the parts of an artifact that every build profile keeps (io,
// commands, memory plan, executables, device and the section table) after
// the runtime's gate verified it, so `kiln inspect` describes stripped
// artifacts too, as iree-dump-module describes any .vmfb.
//
//===----------------------------------------------------------------------===//
#include "kiln/Artifact.h"
#include "kiln/ModelInputs.h"
#include "kiln/Plan.h"
#include "kiln/Recipe.h"

#include "Codegen/BoundsChecks.h"
#include "kiln_artifact_generated.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <set>

namespace kiln {
namespace fb = kiln::artifact;

namespace {

std::vector<IOInfo>
signatureOf(const flatbuffers::Vector<flatbuffers::Offset<fb::TensorDesc>> *list) {
  std::vector<IOInfo> out;
  if (!list)
    return out;
  for (const fb::TensorDesc *t : *list) {
    IOInfo s;
    s.name = t->name() ? t->name()->str() : "";
    auto type = static_cast<kiln_element_type_t>(t->element_type());
    s.dtype = dtypeOfElementType(kiln_element_type_name(type));
    uint64_t bytes = kiln_element_type_size(type);
    if (t->shape())
      for (int64_t d : *t->shape()) {
        s.shape.push_back(d);
        bytes *= static_cast<uint64_t>(d); // the gate checked the product
      }
    s.byteSize = bytes;
    if (const fb::Quantization *q = t->quantization()) { // the gate checked it
      s.quantization.scales.assign(q->scales()->begin(), q->scales()->end());
      s.quantization.zeroPoints.assign(q->zero_points()->begin(), q->zero_points()->end());
      s.quantization.dimension = q->quantized_dimension();
    }
    out.push_back(std::move(s));
  }
  return out;
}

/// What the ELF object `code` says of its build: whether it has a symbol
/// table (.symtab: the default profile keeps it, the stripped one removes
/// it) and whether it exports the --check-bounds report record
/// (kBoundsReportSymbol, a dynamic symbol every profile keeps). Code that is
/// no readable object (the gate does not parse it; loading does) has
/// neither.
struct CodeTraits {
  bool symbolTable = false;
  bool boundsChecked = false;
};
CodeTraits traitsOf(const flatbuffers::Vector<uint8_t> *code) {
  CodeTraits traits;
  if (!code || code->size() == 0)
    return traits;
  llvm::MemoryBufferRef ref(
      llvm::StringRef(reinterpret_cast<const char *>(code->data()), code->size()), "code");
  auto object = llvm::object::ObjectFile::createObjectFile(ref);
  if (!object) {
    llvm::consumeError(object.takeError());
    return traits;
  }
  for (const llvm::object::SectionRef &section : (*object)->sections()) {
    auto name = section.getName();
    if (name && *name == ".symtab")
      traits.symbolTable = true;
    if (!name)
      llvm::consumeError(name.takeError());
  }
  if (auto *elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(object->get()))
    for (const llvm::object::ELFSymbolRef &symbol : elf->getDynamicSymbolIterators()) {
      auto name = symbol.getName();
      if (name && *name == kBoundsReportSymbol)
        traits.boundsChecked = true;
      if (!name)
        llvm::consumeError(name.takeError());
    }
  return traits;
}

/// Executables: target, features, code bytes, entry points, symbols.
void describeExecutables(const fb::Artifact &a, ArtifactDescription &d) {
  std::set<std::string> features;
  bool anySymbols = false;
  if (a.executables())
    for (const fb::Executable *e : *a.executables()) {
      if (d.triple.empty() && e->target_triple())
        d.triple = e->target_triple()->str();
      if (d.cpu.empty() && e->target_cpu())
        d.cpu = e->target_cpu()->str();
      if (e->required_cpu_features())
        for (const flatbuffers::String *f : *e->required_cpu_features())
          features.insert(f->str());
      d.entryPoints += e->entry_points() ? e->entry_points()->size() : 0;
      d.codeBytes += e->code() ? e->code()->size() : 0;
      CodeTraits traits = traitsOf(e->code());
      anySymbols = anySymbols || traits.symbolTable;
      d.boundsChecked = d.boundsChecked || traits.boundsChecked;
      ++d.executables;
    }
  d.requiredFeatures.assign(features.begin(), features.end());
  d.debugSymbols = anySymbols;
}

/// Dispatch commands with their entry point names and grids.
void describeCommands(const fb::Artifact &a, ArtifactDescription &d) {
  if (!a.commands())
    return;
  int64_t index = 0;
  for (const fb::Command *c : *a.commands()) {
    if (c->kind() == fb::CommandKind::dispatch) {
      DispatchRecord r;
      r.command = index;
      const fb::Executable *e = a.executables()->Get(c->executable());
      r.entryPoint = e->entry_points() ? e->entry_points()->Get(c->entry_point())->str() : "";
      if (c->workgroup_count())
        r.workgroups.assign(c->workgroup_count()->begin(), c->workgroup_count()->end());
      r.bindings = c->bindings() ? c->bindings()->size() : 0;
      r.wave = c->wave();
      d.dispatches.push_back(std::move(r));
    }
    ++index;
  }
}

std::string gridText(const std::vector<uint32_t> &grid) {
  std::string s;
  for (size_t i = 0; i < grid.size(); ++i)
    s += (i ? "x" : "") + std::to_string(grid[i]);
  return s;
}

} // namespace

llvm::Expected<ArtifactDescription> artifactDescriptionOf(const kiln_artifact_info_t &info,
                                                     llvm::ArrayRef<uint8_t> bytes,
                                                     const std::string &what) {
  ArtifactDescription d;
  const fb::Artifact &a = *fb::GetArtifact(bytes.data());
  d.formatMajor = info.format_major;
  d.formatMinor = info.format_minor;
  d.producer = info.producer;
  d.source = info.source;
  if (a.io()) {
    d.inputs = signatureOf(a.io()->inputs());
    d.outputs = signatureOf(a.io()->outputs());
    if (a.io()->fixed_inputs())
      for (const fb::FixedInput *f : *a.io()->fixed_inputs()) {
        FixedInput in;
        in.name = f->name() ? f->name()->str() : "";
        in.elementType = f->element_type() ? f->element_type()->str() : "";
        if (f->shape())
          in.shape.assign(f->shape()->begin(), f->shape()->end());
        // A value that does not parse (a damaged or foreign file) is shown
        // without elements rather than refused: nothing runs from it.
        auto values = parseFixValue(f->value() ? f->value()->string_view() : "");
        if (values)
          in.values = std::move(*values);
        else
          llvm::consumeError(values.takeError());
        d.fixedInputs.push_back(std::move(in));
      }
  }
  describeExecutables(a, d);
  d.hal = a.device() && a.device()->hal() ? a.device()->hal()->str() : "";
  d.reflection = info.reflection_json != nullptr;
  d.profile = d.reflection && d.debugSymbols     ? "default"
              : !d.reflection && !d.debugSymbols ? "stripped"
                                                 : "custom";
  if (info.section_count > 0) {
    auto sizes = sectionSizesOf(info, what);
    if (!sizes)
      return sizes.takeError();
    d.sizes = std::move(*sizes);
  }
  d.sizes.fileBytes = static_cast<int64_t>(info.file_bytes);
  d.constants = static_cast<int64_t>(info.constant_count);
  if (a.constants())
    for (const fb::Constant *c : *a.constants())
      d.constantBytes += c->data() ? c->data()->size() : 0;
  d.arenaBytes = info.arena_bytes;
  d.lowerBoundBytes = info.lower_bound_bytes;
  if (const fb::MemoryPlan *plan = a.memory_plan(); plan && plan->state()) {
    d.persistentBytes = plan->persistent_bytes();
    for (const fb::StateVariable *v : *plan->state())
      d.state.push_back({v->name() ? v->name()->str() : "", -1,
                         static_cast<int64_t>(v->arena_offset()), static_cast<int64_t>(v->bytes()),
                         v->type() ? v->type()->str() : ""});
  }
  d.commands = static_cast<int64_t>(info.command_count);
  d.waves = static_cast<int64_t>(info.wave_count);
  d.largestWave = static_cast<int64_t>(info.largest_wave);
  describeCommands(a, d);
  return d;
}

std::string formatSignature(const std::vector<IOInfo> &inputs, const std::vector<IOInfo> &outputs,
                            const std::vector<FixedInput> &fixed) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto rows = [&](const char *kind, const std::vector<IOInfo> &list) {
    for (size_t i = 0; i < list.size(); ++i) {
      const IOInfo &t = list[i];
      os << llvm::left_justify(std::string(kind) + " " + std::to_string(i), 10) << "'"
         << t.name << "' " << tensorTypeText(t.shape, t.dtype) << ", " << t.byteSize
         << " bytes, " << npyDtypeSize(t.dtype) << "-byte aligned\n";
    }
  };
  rows("input", inputs);
  rows("output", outputs);
  os << formatFixedInputs(fixed);
  return os.str();
}

std::string formatArtifactDescription(const ArtifactDescription &d, bool withDispatches) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::left_justify("format", 10) << "Kiln artifact " << d.formatMajor << "."
     << d.formatMinor << ", written by "
     << (d.producer.empty() ? std::string("(not recorded)") : d.producer) << " from "
     << (d.source.empty() ? std::string("(not recorded)") : d.source) << "\n";
  os << llvm::left_justify("target", 10) << (d.triple.empty() ? "(no executables)" : d.triple);
  if (!d.cpu.empty())
    os << ", cpu " << d.cpu;
  // The writer records required features for x86-64 code only.
  bool x86 = llvm::StringRef(d.triple).starts_with("x86_64");
  os << ", features "
     << (!d.requiredFeatures.empty() ? llvm::join(d.requiredFeatures, ",")
         : x86                       ? std::string("(none beyond x86-64)")
                                     : std::string("(not recorded for this target)"))
     << (d.hal.empty() ? std::string() : ", hal " + d.hal) << "\n";
  os << llvm::left_justify("profile", 10) << d.profile << ": reflection "
     << (d.reflection ? "kept" : "stripped") << ", debug symbols "
     << (d.debugSymbols ? "kept" : "stripped")
     << (d.boundsChecked ? "; kernels bounds-checked (--check-bounds)" : "") << "\n";
  os << llvm::left_justify("sections", 10);
  if (d.sizes.sections.empty())
    os << "(no size table: format 1.0)";
  for (size_t i = 0; i < d.sizes.sections.size(); ++i)
    os << (i ? ", " : "") << d.sizes.sections[i].first << " " << d.sizes.sections[i].second;
  os << (d.sizes.sections.empty() ? "; file " : " (bytes; file ") << d.sizes.fileBytes
     << (d.sizes.sections.empty() ? " bytes\n" : ")\n");
  os << formatSignature(d.inputs, d.outputs, d.fixedInputs);
  os << llvm::left_justify("arena", 10) << d.arenaBytes << " bytes (lower bound "
     << d.lowerBoundBytes << "), weights " << d.constantBytes << " bytes in " << d.constants
     << " constants, executables " << d.codeBytes << " bytes (" << d.executables << " ELF file"
     << (d.executables == 1 ? " with its" : "s with their") << " tables, " << d.entryPoints
     << " entry point" << (d.entryPoints == 1 ? "" : "s") << ")\n"
     << formatStateRows(d.state, static_cast<int64_t>(d.persistentBytes));
  auto count = [](int64_t n, const char *noun) {
    return std::to_string(n) + " " + noun + (n == 1 ? "" : noun[std::strlen(noun) - 1] == 'h' ? "es" : "s");
  };
  os << llvm::left_justify("commands", 10) << d.commands << " ("
     << count(static_cast<int64_t>(d.dispatches.size()), "dispatch") << ") in "
     << count(d.waves, "wave") << ", at most " << count(d.largestWave, "dispatch")
     << " in a wave\n";
  if (withDispatches)
    for (const DispatchRecord &r : d.dispatches)
      os << llvm::format("  command %-4lld %-22s wg %-10s wave %lld, %lld bindings\n",
                         (long long)r.command, r.entryPoint.c_str(),
                         gridText(r.workgroups).c_str(), (long long)r.wave,
                         (long long)r.bindings);
  return os.str();
}

llvm::json::Array signatureToJson(const std::vector<IOInfo> &tensors) {
  llvm::json::Array out;
  for (const IOInfo &t : tensors) {
    llvm::json::Object o{{"name", t.name},
                         {"element_type", elementTypeName(t.dtype)},
                         {"shape", llvm::json::Array(t.shape)},
                         {"bytes", static_cast<int64_t>(t.byteSize)},
                         {"alignment", static_cast<int64_t>(npyDtypeSize(t.dtype))}};
    if (t.quantization.quantized()) {
      llvm::json::Array scales;
      for (float v : t.quantization.scales)
        scales.push_back(static_cast<double>(v));
      o["quantization"] =
          llvm::json::Object{{"scales", std::move(scales)},
                             {"zero_points", llvm::json::Array(t.quantization.zeroPoints)},
                             {"quantized_dimension", t.quantization.dimension}};
    }
    out.push_back(std::move(o));
  }
  return out;
}

llvm::json::Value artifactDescriptionToJson(const ArtifactDescription &d) {
  auto tensors = signatureToJson;
  llvm::json::Object sections;
  for (const auto &[name, bytes] : d.sizes.sections)
    sections[name] = bytes;
  llvm::json::Array dispatches;
  for (const DispatchRecord &r : d.dispatches)
    dispatches.push_back(llvm::json::Object{{"command", r.command},
                                            {"entry_point", r.entryPoint},
                                            {"workgroup_count", llvm::json::Array(r.workgroups)},
                                            {"bindings", r.bindings},
                                            {"wave", r.wave}});
  llvm::json::Object out{
      {"format_version", std::to_string(d.formatMajor) + "." + std::to_string(d.formatMinor)},
      {"producer", d.producer},
      {"source", d.source},
      {"inputs", tensors(d.inputs)},
      {"outputs", tensors(d.outputs)},
      {"target_triple", d.triple},
      {"target_cpu", d.cpu},
      {"required_cpu_features", llvm::json::Array(d.requiredFeatures)},
      // The writer records them for x86-64 code only.
      {"required_cpu_features_recorded", llvm::StringRef(d.triple).starts_with("x86_64")},
      {"hal", d.hal},
      {"profile", d.profile},
      {"reflection", d.reflection},
      {"debug_symbols", d.debugSymbols},
      {"bounds_checked", d.boundsChecked},
      {"file_bytes", d.sizes.fileBytes},
      {"sections", std::move(sections)},
      {"executables", d.executables},
      {"entry_points", d.entryPoints},
      {"code_bytes", static_cast<int64_t>(d.codeBytes)},
      {"constants", d.constants},
      {"constant_bytes", static_cast<int64_t>(d.constantBytes)},
      {"arena_bytes", static_cast<int64_t>(d.arenaBytes)},
      {"lower_bound_bytes", static_cast<int64_t>(d.lowerBoundBytes)},
      {"command_count", d.commands},
      {"wave_count", d.waves},
      {"largest_wave", d.largestWave},
      {"dispatches", std::move(dispatches)}};
  if (!d.fixedInputs.empty())
    out["fixed_values"] = fixedInputsJson(d.fixedInputs);
  if (!d.state.empty()) {
    llvm::json::Array state;
    for (const StateVariable &v : d.state)
      state.push_back(llvm::json::Object{
          {"name", v.name}, {"type", v.type}, {"offset", v.offset}, {"bytes", v.bytes}});
    out["state"] = std::move(state);
    out["persistent_bytes"] = static_cast<int64_t>(d.persistentBytes);
  }
  return llvm::json::Value(std::move(out));
}

llvm::StringRef planMissingReason() {
  return "source operators, FLOPs, tile sizes, kernel strategies and the buffers need the "
         "reflection section (built with --profile=stripped or --reflection=false); inspect "
         "the model, or compile with --reflection to keep them";
}

namespace {

/// The plan's keys as one JSON object, to which `kiln inspect --json` adds
/// its members.
llvm::Expected<llvm::json::Value> planObject(const CompilationPlan &plan,
                                             const std::string &what) {
  auto parsed = llvm::json::parse(planToJson(plan, false));
  if (!parsed)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   what + ": the plan does not parse: " +
                                       llvm::toString(parsed.takeError()));
  return std::move(*parsed);
}

} // namespace

llvm::Expected<llvm::json::Value> inspectArtifactJson(const ArtifactDescription &d,
                                                      const CompilationPlan *plan,
                                                      const std::string &what) {
  if (!plan)
    return llvm::json::Object{{"artifact", artifactDescriptionToJson(d)},
                              {"plan", nullptr},
                              {"plan_missing", planMissingReason()}};
  auto out = planObject(*plan, what);
  if (out)
    (*out->getAsObject())["artifact"] = artifactDescriptionToJson(d);
  return out;
}

llvm::Expected<llvm::json::Value>
inspectModelJson(const CompilationPlan &plan, const std::vector<IOInfo> &inputs,
                 const std::vector<IOInfo> &outputs, const std::string &what,
                 const std::vector<FixedInput> &fixed,
                 const std::vector<ControlFlowDecision> &controlFlow) {
  auto out = planObject(plan, what);
  if (!out)
    return out;
  if (!controlFlow.empty())
    (*out->getAsObject())["control_flow"] = controlFlowJson(controlFlow);
  llvm::json::Object signature{{"inputs", signatureToJson(inputs)},
                               {"outputs", signatureToJson(outputs)}};
  if (!fixed.empty())
    signature["fixed_values"] = fixedInputsJson(fixed);
  (*out->getAsObject())["signature"] = std::move(signature);
  return out;
}

} // namespace kiln
