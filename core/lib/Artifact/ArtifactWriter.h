//===- ArtifactWriter.h - Serialize a compiled model to .kiln --*- C++ -*-===//
//
// Plain description of what goes into a `.kiln` file and the writer that
// serializes it with the flatc-generated builder for
// runtime/schema/kiln_artifact.fbs. Internal to core.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_ARTIFACT_ARTIFACTWRITER_H
#define KILN_CORE_ARTIFACT_ARTIFACTWRITER_H

#include "kiln/TensorTypes.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// Element types as stored in the artifact (kiln.artifact.ElementType).
enum class ElementKind : uint8_t { F32 = 0, F16 = 1, I32 = 2, I64 = 3, I8 = 4, U8 = 5, I1 = 6 };

/// A model input or output: name, element type, static shape (elements),
/// and for a quantized integer tensor its quantization (from the plan's
/// CompilationPlan::quantization; empty otherwise).
struct TensorSpec {
  std::string name;
  ElementKind type = ElementKind::F32;
  std::vector<int64_t> shape;
  IOQuantization quantization;
};

/// A constant (weights) with its raw little-endian bytes.
struct ConstantSpec {
  std::string name;
  ElementKind type = ElementKind::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

/// Where a binding points (kiln.artifact.BindingKind).
enum class BindingSource : uint8_t { Input = 0, Output = 1, Constant = 2, Arena = 3 };

/// One binding of a dispatch: buffer and byte range.
struct BindingSpec {
  BindingSource source;
  uint32_t index = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
};

/// Command kinds (kiln.artifact.CommandKind).
enum class CommandSpecKind : uint8_t { Dispatch = 0, Barrier = 1, Copy = 2, Fill = 3 };

/// One command: for dispatches the executable and entry point ordinals and
/// the workgroup grid; bindings for dispatch/copy/fill.
struct CommandSpec {
  CommandSpecKind kind = CommandSpecKind::Dispatch;
  uint32_t executable = 0;
  uint32_t entryPoint = 0;
  std::vector<uint32_t> workgroupCount = {1, 1, 1};
  std::vector<BindingSpec> bindings;
  uint32_t fillPattern = 0;
  uint32_t wave = 0;
};

/// Native code for one target (an ELF shared object).
struct ExecutableSpec {
  std::string triple;
  std::string cpu;
  std::vector<std::string> entryPoints;
  std::vector<uint8_t> code;
  /// CPU features the code needs (requiredCpuFeatures()).
  std::vector<std::string> requiredCpuFeatures;
};

/// A state variable of the memory plan (kiln.artifact.StateVariable): its
/// place in the arena's persistent region and initial value, either
/// `initial` (`bytes` long) or, when that is empty, `fillPattern` repeated.
struct StateSpec {
  std::string name;
  /// "1x20xf32".
  std::string type;
  uint64_t arenaOffset = 0, bytes = 0;
  std::vector<uint8_t> initial;
  uint32_t fillPattern = 0;
};

/// Everything one artifact holds.
struct ArtifactSpec {
  std::string producer;
  std::string source;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  /// Model inputs fixed to values (--fix-value): constants of the build,
  /// recorded in the io section for tools (not part of the signature).
  std::vector<FixedInput> fixedInputs;
  std::vector<ConstantSpec> constants;
  std::vector<ExecutableSpec> executables;
  std::vector<CommandSpec> commands;
  uint64_t arenaBytes = 0;
  /// JSON plan for tools (empty = no reflection table).
  std::string reflectionJson;
  /// Memory layout table: transient allocations (offset, bytes, alias).
  struct Allocation {
    uint64_t offset = 0, bytes = 0;
    int64_t aliasOf = -1;
  };
  std::vector<Allocation> allocations;
  uint64_t lowerBoundBytes = 0;
  /// The persistent region and its state variables (empty: stateless; the
  /// artifact is then format 1.2, byte for byte as before state existed).
  uint64_t persistentBytes = 0;
  std::vector<StateSpec> state;
  /// Device table.
  uint32_t waves = 0;
};

/// Format version written by this compiler (kiln_artifact.fbs header).
inline constexpr uint32_t kArtifactFormatMajor = 1;
inline constexpr uint32_t kArtifactFormatMinor = 3;
/// The minor version written for artifacts without state.
inline constexpr uint32_t kArtifactStatelessFormatMinor = 2;

/// Size of the checksum trailer after the flatbuffer, bytes.
inline constexpr size_t kArtifactTrailerBytes = 8;

/// Serializes `spec`; constants and code are 64-byte aligned in the file,
/// which ends with the "KSUM" + CRC-32 trailer.
std::vector<uint8_t> writeArtifact(const ArtifactSpec &spec);

/// Bytes per element of `type`.
size_t elementSize(ElementKind type);

} // namespace kiln

#endif
