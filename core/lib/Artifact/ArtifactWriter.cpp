//===- ArtifactWriter.cpp - Serialize a compiled model to .kiln -----------===//
#include "ArtifactWriter.h"

#include "kiln/Artifact.h"
#include "kiln/Options.h"

#include "kiln_artifact_generated.h"

#include <algorithm>


namespace kiln {

namespace fb = kiln::artifact;

size_t elementSize(ElementKind type) {
  switch (type) {
  case ElementKind::F32:
  case ElementKind::I32:
    return 4;
  case ElementKind::F16:
    return 2;
  case ElementKind::I64:
    return 8;
  case ElementKind::I8:
  case ElementKind::U8:
  case ElementKind::I1:
    return 1;
  }
  return 1;
}

/// Alignment of constant data and code inside the file, bytes.
static constexpr size_t kDataAlignment = 64;

static flatbuffers::Offset<flatbuffers::Vector<uint8_t>>
createAlignedBytes(flatbuffers::FlatBufferBuilder &fbb,
                   const std::vector<uint8_t> &bytes) {
  fbb.ForceVectorAlignment(bytes.size(), sizeof(uint8_t), kDataAlignment);
  return fbb.CreateVector(bytes);
}

static flatbuffers::Offset<fb::TensorDesc>
createTensorDesc(flatbuffers::FlatBufferBuilder &fbb, const TensorSpec &t) {
  // Absent (not an empty table) for a float tensor: readers tell
  // "not quantized" by its absence.
  flatbuffers::Offset<fb::Quantization> quantization;
  if (t.quantization.quantized())
    quantization = fb::CreateQuantizationDirect(
        fbb, &t.quantization.scales, &t.quantization.zeroPoints, t.quantization.dimension);
  return fb::CreateTensorDescDirect(fbb, t.name.c_str(), static_cast<fb::ElementType>(t.type),
                                    &t.shape, quantization);
}

std::vector<uint8_t> writeArtifact(const ArtifactSpec &spec) {
  flatbuffers::FlatBufferBuilder fbb(1 << 16);
  // The builder works back to front; each section's objects are created in
  // one go and measured by the growth of the buffer, so every byte belongs
  // to exactly one section or to the format overhead.
  std::vector<std::pair<std::string, uint64_t>> sections;
  size_t mark = fbb.GetSize();
  auto closeSection = [&](const char *name) {
    sections.push_back({name, fbb.GetSize() - mark});
    mark = fbb.GetSize();
  };

  // Large blobs first: they end up at the end of the file.
  std::vector<flatbuffers::Offset<fb::Constant>> constants;
  for (const ConstantSpec &c : spec.constants) {
    auto data = createAlignedBytes(fbb, c.data);
    auto name = fbb.CreateString(c.name);
    auto shape = fbb.CreateVector(c.shape);
    constants.push_back(fb::CreateConstant(
        fbb, name, static_cast<fb::ElementType>(c.type), shape, data));
  }
  auto constantsVector = fbb.CreateVector(constants);
  closeSection("constants");

  std::vector<flatbuffers::Offset<fb::Executable>> executables;
  for (const ExecutableSpec &e : spec.executables) {
    auto code = createAlignedBytes(fbb, e.code);
    auto triple = fbb.CreateString(e.triple);
    auto cpu = fbb.CreateString(e.cpu);
    auto entries = fbb.CreateVectorOfStrings(e.entryPoints);
    auto features = e.requiredCpuFeatures.empty()
                        ? flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>>()
                        : fbb.CreateVectorOfStrings(e.requiredCpuFeatures);
    executables.push_back(fb::CreateExecutable(
        fbb, fb::ExecutableFormat::elf_shared_object, triple, cpu, entries,
        code, features));
  }
  auto executablesVector = fbb.CreateVector(executables);
  closeSection("executables");

  std::vector<flatbuffers::Offset<fb::Command>> commands;
  uint32_t maxWave = 0, wave = 0, maxWorkgroups = 1;
  for (const CommandSpec &d : spec.commands) {
    std::vector<flatbuffers::Offset<fb::Binding>> bindings;
    for (const BindingSpec &b : d.bindings)
      bindings.push_back(fb::CreateBinding(
          fbb, static_cast<fb::BindingKind>(b.source), b.index, b.offset,
          b.length));
    commands.push_back(fb::CreateCommandDirect(
        fbb, static_cast<fb::CommandKind>(d.kind), d.executable, d.entryPoint,
        &d.workgroupCount, &bindings, d.fillPattern, d.wave));
    if (d.kind == CommandSpecKind::Barrier) {
      wave = 0;
    } else if (d.kind == CommandSpecKind::Dispatch) {
      maxWave = std::max(maxWave, ++wave);
      uint32_t groups = 1;
      for (uint32_t c : d.workgroupCount)
        groups *= c;
      maxWorkgroups = std::max(maxWorkgroups, groups);
    }
  }
  auto commandsVector = fbb.CreateVector(commands);
  closeSection("commands");

  std::vector<fb::Allocation> allocations;
  for (const ArtifactSpec::Allocation &a : spec.allocations)
    allocations.emplace_back(a.offset, a.bytes, a.aliasOf);
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::StateVariable>>> state;
  if (!spec.state.empty()) {
    std::vector<flatbuffers::Offset<fb::StateVariable>> entries;
    for (const StateSpec &v : spec.state)
      entries.push_back(
          fb::CreateStateVariableDirect(fbb, v.name.c_str(), v.type.c_str(), v.arenaOffset, v.bytes,
                                        v.initial.empty() ? nullptr : &v.initial, v.fillPattern));
    state = fbb.CreateVector(entries);
  }
  auto memoryPlan =
      fb::CreateMemoryPlan(fbb, spec.arenaBytes, spec.lowerBoundBytes,
                           fbb.CreateVectorOfStructs(allocations), spec.persistentBytes, state);
  closeSection("memory_plan");

  auto device = fb::CreateDeviceTableDirect(fbb, "local", spec.waves, maxWave, maxWorkgroups);
  closeSection("device");

  flatbuffers::Offset<fb::Reflection> reflection;
  if (!spec.reflectionJson.empty())
    reflection = fb::CreateReflectionDirect(fbb, spec.reflectionJson.c_str());
  closeSection("reflection");

  std::vector<flatbuffers::Offset<fb::TensorDesc>> inputs, outputs;
  for (const TensorSpec &t : spec.inputs)
    inputs.push_back(createTensorDesc(fbb, t));
  for (const TensorSpec &t : spec.outputs)
    outputs.push_back(createTensorDesc(fbb, t));
  // In CreateIOTableDirect's order; the fixed inputs absent (not an empty
  // vector) without --fix-value, so those artifacts keep their bytes.
  auto inputVector = fbb.CreateVector(inputs);
  auto outputVector = fbb.CreateVector(outputs);
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::FixedInput>>> fixed;
  if (!spec.fixedInputs.empty()) {
    std::vector<flatbuffers::Offset<fb::FixedInput>> entries;
    for (const FixedInput &f : spec.fixedInputs)
      entries.push_back(fb::CreateFixedInputDirect(fbb, f.name.c_str(), f.elementType.c_str(),
                                                   &f.shape, fixValueText(f.values).c_str()));
    fixed = fbb.CreateVector(entries);
  }
  auto io = fb::CreateIOTable(fbb, inputVector, outputVector, fixed);
  closeSection("io");

  // Overhead from here on: the size table, producer/source strings, root.
  std::vector<flatbuffers::Offset<fb::SectionSize>> sizes;
  for (const auto &[name, bytes] : sections)
    sizes.push_back(fb::CreateSectionSizeDirect(fbb, name.c_str(), bytes));
  auto sizesVector = fbb.CreateVector(sizes);
  auto producer = fbb.CreateString(spec.producer);
  auto source = fbb.CreateString(spec.source);
  auto root =
      fb::CreateArtifact(fbb, kArtifactFormatMajor,
                         spec.state.empty() ? kArtifactStatelessFormatMinor : kArtifactFormatMinor,
                         producer, source, io, commandsVector, spec.arenaBytes, executablesVector,
                         constantsVector, reflection, memoryPlan, device, sizesVector);
  fb::FinishArtifactBuffer(fbb, root);
  std::vector<uint8_t> bytes(fbb.GetBufferPointer(),
                             fbb.GetBufferPointer() + fbb.GetSize());
  appendChecksumTrailer(bytes);
  return bytes;
}

} // namespace kiln
