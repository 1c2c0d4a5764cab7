//===- ArtifactFixtures.h - Hand-built and resealed .kiln artifacts -*- C++ -*-===//
//
// Artifacts for testing the runtime's artifact gate (kiln_artifact_verify),
// built with FlatBufferBuilder and no compiler, so every size field can be
// set to anything, and reseal() for a mutated artifact: it rewrites the
// checksum trailer so the mutation reaches the checks after the checksum
// (flatbuffer structure, command list, sizes). Header-only; used by the
// runtime tests (also under AddressSanitizer), the generator of
// tests/data/bad/*.kiln and the structure-aware fuzzers.
//
// Format: runtime/schema/kiln_artifact.fbs. Needs the generated
// kiln_artifact_generated.h (build/runtime/generated) and kiln/runtime.h.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TEST_ARTIFACT_FIXTURES_H
#define KILN_TEST_ARTIFACT_FIXTURES_H

#include "kiln/runtime.h"
#include "kiln_artifact_generated.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::test {

/// Rewrites the "KSUM" + CRC-32 trailer of `bytes` (kiln_artifact_seal)
/// after a mutation of the bytes before it. `bytes` must be at least 8 long.
inline void reseal(std::vector<uint8_t> &bytes) { kiln_artifact_seal(bytes.data(), bytes.size()); }

/// One binding of a hand-built command: buffer kind and ordinal, then the
/// byte range [offset, offset + length).
struct HandBinding {
  kiln::artifact::BindingKind kind;
  uint32_t index;
  uint64_t offset;
  uint64_t length;
};

/// One hand-built command; by default a 1x1x1 dispatch of entry point 0 of
/// executable 0 reading input 0 and writing output 0 (16 bytes each).
struct HandCommand {
  kiln::artifact::CommandKind kind = kiln::artifact::CommandKind::dispatch;
  uint32_t executable = 0;
  uint32_t entryPoint = 0;
  std::vector<uint32_t> workgroups = {1, 1, 1};
  std::vector<HandBinding> bindings = {{kiln::artifact::BindingKind::input, 0, 0, 16},
                                       {kiln::artifact::BindingKind::output, 0, 0, 16}};
};

/// A whole hand-built artifact. The default passes the gate: input "x" and
/// output "y" of f32[4] (16 bytes), one executable (64 zero bytes of
/// placeholder code, entry point "e": it never loads), one dispatch, no
/// arena, format 1.2 (what the writer gives an artifact without state;
/// this runtime reads it and 1.3).
struct HandArtifact {
  uint32_t formatMajor = KILN_FORMAT_MAJOR;
  uint32_t formatMinor = 2;
  std::vector<int64_t> inputShape = {4};
  std::vector<int64_t> outputShape = {4};
  std::vector<HandCommand> commands = {HandCommand()};
  /// Transient arena, bytes (root field and memory plan alike).
  uint64_t arenaBytes = 0;
  std::vector<kiln::artifact::Allocation> allocations;
  /// Data of constant 0 (64-byte aligned in the file); none when empty.
  std::vector<uint8_t> constant;
  /// The size table (name, bytes); none when empty.
  std::vector<std::pair<std::string, uint64_t>> sections;
  std::string triple = "x86_64-unknown-linux-gnu";
  /// Element type of input "x"; keep inputShape's bytes at 16 for the
  /// default bindings (i8 / u8: 16 elements).
  kiln::artifact::ElementType inputType = kiln::artifact::ElementType::f32;
  /// Input "x"'s quantization (TensorDesc.quantization) when `quantized`.
  bool quantized = false;
  std::vector<float> scales;
  std::vector<int32_t> zeroPoints;
  int32_t quantizedDimension = -1;
};

/// Serializes `a` and appends the checksum trailer.
inline std::vector<uint8_t> buildArtifact(const HandArtifact &a) {
  namespace fb = kiln::artifact;
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<fb::Constant>> constants;
  if (!a.constant.empty()) {
    fbb.ForceVectorAlignment(a.constant.size(), 1, 64);
    auto data = fbb.CreateVector(a.constant);
    constants.push_back(fb::CreateConstant(fbb, fbb.CreateString("k"), fb::ElementType::u8,
                                           fbb.CreateVector(std::vector<int64_t>{
                                               static_cast<int64_t>(a.constant.size())}),
                                           data));
  }
  std::vector<uint8_t> code(64, 0);
  fbb.ForceVectorAlignment(code.size(), 1, 64);
  auto codeVector = fbb.CreateVector(code);
  std::vector<flatbuffers::Offset<fb::Executable>> exes = {fb::CreateExecutable(
      fbb, fb::ExecutableFormat::elf_shared_object, fbb.CreateString(a.triple),
      fbb.CreateString("generic"), fbb.CreateVectorOfStrings({"e"}), codeVector)};
  std::vector<flatbuffers::Offset<fb::Command>> commands;
  for (const HandCommand &c : a.commands) {
    std::vector<flatbuffers::Offset<fb::Binding>> bindings;
    for (const HandBinding &b : c.bindings)
      bindings.push_back(fb::CreateBinding(fbb, b.kind, b.index, b.offset, b.length));
    commands.push_back(fb::CreateCommandDirect(fbb, c.kind, c.executable, c.entryPoint,
                                               &c.workgroups, &bindings));
  }
  auto plan = fb::CreateMemoryPlanDirect(fbb, a.arenaBytes, 0, &a.allocations);
  flatbuffers::Offset<fb::Quantization> quantization;
  if (a.quantized)
    quantization =
        fb::CreateQuantizationDirect(fbb, &a.scales, &a.zeroPoints, a.quantizedDimension);
  std::vector<flatbuffers::Offset<fb::TensorDesc>> ins = {
      fb::CreateTensorDescDirect(fbb, "x", a.inputType, &a.inputShape, quantization)};
  std::vector<flatbuffers::Offset<fb::TensorDesc>> outs = {
      fb::CreateTensorDescDirect(fbb, "y", fb::ElementType::f32, &a.outputShape)};
  auto io = fb::CreateIOTableDirect(fbb, &ins, &outs);
  std::vector<flatbuffers::Offset<fb::SectionSize>> sizes;
  for (const auto &[name, bytes] : a.sections)
    sizes.push_back(fb::CreateSectionSizeDirect(fbb, name.c_str(), bytes));
  auto root = fb::CreateArtifactDirect(
      fbb, a.formatMajor, a.formatMinor, "hand-built", "test", io, &commands, a.arenaBytes,
      &exes, constants.empty() ? nullptr : &constants, 0, plan, 0,
      sizes.empty() ? nullptr : &sizes);
  fb::FinishArtifactBuffer(fbb, root);
  std::vector<uint8_t> bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  bytes.resize(bytes.size() + KILN_ARTIFACT_TRAILER_BYTES);
  reseal(bytes);
  return bytes;
}

/// One check of the gate: an artifact that breaks exactly it, the status
/// code and a part of the message (with its numbers) the gate must give.
struct GateCase {
  std::string name;
  HandArtifact artifact;
  kiln_status_code_t code;
  std::string message;
};

/// Every size, index and count check of the gate after the checksum, each
/// broken alone on the default HandArtifact.
inline std::vector<GateCase> gateCases() {
  namespace fb = kiln::artifact;
  using BK = fb::BindingKind;
  std::vector<GateCase> cases;
  auto add = [&](std::string name, kiln_status_code_t code, std::string message, auto edit) {
    HandArtifact a;
    edit(a);
    cases.push_back({std::move(name), std::move(a), code, std::move(message)});
  };
  auto binding = [](HandArtifact &a, HandBinding b) { a.commands[0].bindings[0] = b; };
  add("wrong_major_version", KILN_INCOMPATIBLE, "artifact format 2.0",
      [](HandArtifact &a) {
        a.formatMajor = 2;
        a.formatMinor = 0;
      });
  add("element_count_overflows", KILN_DATA_LOSS,
      "input 0 'x' of shape 1099511627776x1099511627776: its byte size overflows 64 bits",
      [](HandArtifact &a) { a.inputShape = {int64_t(1) << 40, int64_t(1) << 40}; });
  add("tensor_above_address_space", KILN_DATA_LOSS,
      "input 0 'x' of shape 2305843009213693952 has 9223372036854775808 bytes, above the "
      "9223372036854775807",
      [](HandArtifact &a) { a.inputShape = {int64_t(1) << 61}; });
  add("negative_dimension", KILN_DATA_LOSS, "output 0 'y' has a negative dimension: 2x-3",
      [](HandArtifact &a) { a.outputShape = {2, -3}; });
  add("rank_above_8", KILN_DATA_LOSS, "input 0 'x' has rank 9, above 8",
      [](HandArtifact &a) { a.inputShape = std::vector<int64_t>(9, 1); });
  add("binding_past_buffer", KILN_DATA_LOSS, "binding [8, +16) lies outside its 16-byte buffer",
      [&](HandArtifact &a) { binding(a, {BK::input, 0, 8, 16}); });
  add("binding_offset_wraps", KILN_DATA_LOSS,
      "binding [18446744073709551608, +16) lies outside its 16-byte buffer",
      [&](HandArtifact &a) { binding(a, {BK::input, 0, UINT64_MAX - 7, 16}); });
  add("binding_length_huge", KILN_DATA_LOSS,
      "binding [4, +18446744073709551615) lies outside its 16-byte buffer",
      [&](HandArtifact &a) { binding(a, {BK::input, 0, 4, UINT64_MAX}); });
  add("binding_input_index", KILN_DATA_LOSS, "command 0 binds input 3 of 1",
      [&](HandArtifact &a) { binding(a, {BK::input, 3, 0, 16}); });
  add("binding_output_index", KILN_DATA_LOSS, "command 0 binds output 1 of 1",
      [&](HandArtifact &a) { a.commands[0].bindings[1] = {BK::output, 1, 0, 16}; });
  add("binding_missing_constant", KILN_DATA_LOSS, "command 0 binds constant 0 of 0",
      [&](HandArtifact &a) { binding(a, {BK::constant, 0, 0, 16}); });
  add("binding_past_constant", KILN_DATA_LOSS, "binding [16, +32) lies outside its 32-byte buffer",
      [&](HandArtifact &a) {
        a.constant.assign(32, 7);
        binding(a, {BK::constant, 0, 16, 32});
      });
  add("binding_past_arena", KILN_DATA_LOSS, "binding [32, +64) lies outside its 64-byte buffer",
      [&](HandArtifact &a) {
        a.arenaBytes = 64;
        binding(a, {BK::arena, 0, 32, 64});
      });
  add("binding_unknown_kind", KILN_DATA_LOSS, "binding of unknown kind 9",
      [&](HandArtifact &a) { binding(a, {static_cast<BK>(9), 0, 0, 16}); });
  add("arena_above_address_space", KILN_DATA_LOSS, "asks for a 9223372036854775808-byte arena",
      [](HandArtifact &a) { a.arenaBytes = uint64_t(1) << 63; });
  add("plan_allocation_past_arena", KILN_DATA_LOSS,
      "memory plan allocation 0 [32, +64) lies outside its 64-byte arena", [](HandArtifact &a) {
        a.arenaBytes = 64;
        a.allocations = {fb::Allocation(32, 64, -1)};
      });
  add("plan_allocation_offset_wraps", KILN_DATA_LOSS,
      "memory plan allocation 0 [18446744073709551615, +2)", [](HandArtifact &a) {
        a.arenaBytes = 64;
        a.allocations = {fb::Allocation(UINT64_MAX, 2, -1)};
      });
  add("plan_alias_index", KILN_DATA_LOSS, "allocation 0 aliases allocation 5 of 1",
      [](HandArtifact &a) {
        a.arenaBytes = 64;
        a.allocations = {fb::Allocation(0, 64, 5)};
      });
  add("workgroup_count_zero", KILN_DATA_LOSS, "dispatch command 0 has a workgroup count of 0",
      [](HandArtifact &a) { a.commands[0].workgroups = {4, 0, 1}; });
  add("workgroups_above_32_bits", KILN_DATA_LOSS,
      "dispatch command 0 has 65536 x 65536 x 2 workgroups, more than 4294967295",
      [](HandArtifact &a) { a.commands[0].workgroups = {65536, 65536, 2}; });
  add("workgroups_overflow_64_bits", KILN_DATA_LOSS,
      "has 4294967295 x 4294967295 x 4294967295 workgroups", [](HandArtifact &a) {
        a.commands[0].workgroups = {UINT32_MAX, UINT32_MAX, UINT32_MAX};
      });
  add("workgroup_count_not_3d", KILN_DATA_LOSS, "has no (x, y, z) workgroup count",
      [](HandArtifact &a) { a.commands[0].workgroups = {1, 1}; });
  add("wave_workgroups_above_32_bits", KILN_DATA_LOSS,
      "the wave of command 1 holds more than 4294967295 workgroups", [](HandArtifact &a) {
        a.commands[0].workgroups = {65536, 65535, 1};
        a.commands.push_back(a.commands[0]);
      });
  add("executable_index", KILN_DATA_LOSS, "command 0 uses executable 1 of 1",
      [](HandArtifact &a) { a.commands[0].executable = 1; });
  add("entry_point_index", KILN_DATA_LOSS, "command 0 uses entry point 2 of 1",
      [](HandArtifact &a) { a.commands[0].entryPoint = 2; });
  add("command_without_bindings", KILN_DATA_LOSS, "command 0 has no bindings",
      [](HandArtifact &a) { a.commands[0].bindings.clear(); });
  add("unknown_command_kind", KILN_UNIMPLEMENTED, "command 0 has kind 7",
      [](HandArtifact &a) { a.commands[0].kind = static_cast<fb::CommandKind>(7); });
  add("copy_into_input", KILN_DATA_LOSS, "copy command 0 writes into input 0", [](HandArtifact &a) {
    a.commands[0].kind = fb::CommandKind::copy;
    a.commands[0].bindings = {{BK::output, 0, 0, 16}, {BK::input, 0, 0, 16}};
  });
  add("copy_lengths_differ", KILN_DATA_LOSS, "copy command 0 needs two bindings of equal length",
      [](HandArtifact &a) {
        a.commands[0].kind = fb::CommandKind::copy;
        a.commands[0].bindings = {{BK::input, 0, 0, 16}, {BK::output, 0, 0, 8}};
      });
  add("fill_into_constant", KILN_DATA_LOSS, "fill command 0 writes into constant 0",
      [](HandArtifact &a) {
        a.constant.assign(16, 1);
        a.commands[0].kind = fb::CommandKind::fill;
        a.commands[0].bindings = {{BK::constant, 0, 0, 16}};
      });
  add("section_sizes_overflow", KILN_DATA_LOSS, "section sizes exceed its", [](HandArtifact &a) {
    a.sections = {{"io", UINT64_MAX}, {"commands", 2}};
  });
  add("section_past_file", KILN_DATA_LOSS, "section 'constants', 1048576 bytes",
      [](HandArtifact &a) { a.sections = {{"constants", 1 << 20}}; });
  add("too_many_sections", KILN_DATA_LOSS, "lists 17 sections, at most 16", [](HandArtifact &a) {
    a.sections.assign(17, {"io", 1});
  });
  // Quantization (format 1.2): on an i8[16] input unless the case says.
  auto quantized = [](HandArtifact &a, std::vector<float> scales, std::vector<int32_t> zeroPoints,
                      int32_t dimension = -1) {
    a.inputType = fb::ElementType::i8;
    a.inputShape = {16};
    a.quantized = true;
    a.scales = std::move(scales);
    a.zeroPoints = std::move(zeroPoints);
    a.quantizedDimension = dimension;
  };
  add("quantization_negative_scale", KILN_DATA_LOSS,
      "input 0 'x' has scale -0.5 at channel 0; scales are finite and positive",
      [&](HandArtifact &a) { quantized(a, {-0.5f}, {0}); });
  add("quantization_nan_scale", KILN_DATA_LOSS, "input 0 'x' has scale nan at channel 0",
      [&](HandArtifact &a) { quantized(a, {std::nanf("")}, {0}); });
  add("quantization_zero_point_out_of_range", KILN_DATA_LOSS,
      "input 0 'x' has zero point 128 at channel 0, outside i8's range -128..127",
      [&](HandArtifact &a) { quantized(a, {0.5f}, {128}); });
  add("quantization_u8_zero_point_negative", KILN_DATA_LOSS,
      "input 0 'x' has zero point -1 at channel 0, outside u8's range 0..255",
      [&](HandArtifact &a) {
        quantized(a, {0.5f}, {-1});
        a.inputType = fb::ElementType::u8;
      });
  add("quantization_wrong_count", KILN_DATA_LOSS,
      "input 0 'x' has 3 scales and 3 zero points; its quantization (dimension 1) needs 8 of "
      "each",
      [&](HandArtifact &a) {
        quantized(a, {0.5f, 0.5f, 0.5f}, {0, 0, 0}, 1);
        a.inputShape = {2, 8};
      });
  add("quantization_counts_differ", KILN_DATA_LOSS,
      "input 0 'x' has 1 scales and 2 zero points; its quantization (dimension -1) needs 1 of "
      "each",
      [&](HandArtifact &a) {
        quantized(a, {0.5f}, {0, 0});
      });
  add("quantization_dimension_past_rank", KILN_DATA_LOSS,
      "input 0 'x' is quantized along dimension 1 of a rank-1 tensor",
      [&](HandArtifact &a) { quantized(a, {0.5f}, {0}, 1); });
  add("quantization_of_a_float_tensor", KILN_DATA_LOSS,
      "input 0 'x' is f32 but has a quantization; only i8, u8 and i32 tensors are quantized",
      [&](HandArtifact &a) {
        quantized(a, {0.5f}, {0});
        a.inputType = fb::ElementType::f32;
        a.inputShape = {4};
      });
  return cases;
}

} // namespace kiln::test

#endif
