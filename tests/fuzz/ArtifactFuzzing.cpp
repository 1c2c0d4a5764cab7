//===- ArtifactFuzzing.cpp - One input through every .kiln reader ---------===//
#include "ArtifactFuzzing.h"

#include "FuzzSupport.h"

#include "kiln/Artifact.h"
#include "kiln/Compiler.h"
#include "kiln/runtime.h"
#include "kiln_artifact_generated.h"

#include <algorithm>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace kiln::fuzz {

namespace {

/// Exactly `bytes` zero bytes, 64-byte aligned (AddressSanitizer sees the
/// exact size, so a copy or fill past the end is reported).
struct ZeroBuffer {
  explicit ZeroBuffer(size_t bytes)
      : data(static_cast<uint8_t *>(::operator new(bytes ? bytes : 1, std::align_val_t(64)))) {
    std::fill(data, data + bytes, 0);
  }
  ~ZeroBuffer() { ::operator delete(data, std::align_val_t(64)); }
  ZeroBuffer(const ZeroBuffer &) = delete;
  ZeroBuffer &operator=(const ZeroBuffer &) = delete;
  uint8_t *data;
};

/// Workgroups of every dispatch of the verified artifact `data`.
uint64_t workgroupsOf(const uint8_t *data) {
  const auto *artifact = kiln::artifact::GetArtifact(data);
  uint64_t total = 0;
  for (const auto *command : *artifact->commands()) {
    if (command->kind() != kiln::artifact::CommandKind::dispatch)
      continue;
    uint64_t count = 1;
    for (uint32_t n : *command->workgroup_count())
      count *= n; // the gate bounds a dispatch's count to 32 bits
    total += count;
  }
  return total;
}

/// The compiler's readers of a verified artifact: section sizes (which must
/// add up to the file), the summary, the reflection plan.
void readVerified(const kiln_artifact_info_t &info, llvm::StringRef input) {
  if (auto sizes = kiln::sectionSizesOf(info, "fuzz.kiln")) {
    int64_t sum = sizes->overhead;
    for (const auto &[name, bytes] : sizes->sections) {
      fuzzCheck(bytes >= 0, "section '" + name + "' has a negative size");
      sum += bytes;
    }
    fuzzCheck(sizes->overhead >= 0 && sum == sizes->fileBytes &&
                  sizes->fileBytes == static_cast<int64_t>(info.file_bytes),
              "sections and overhead do not add up to the file size");
  } else {
    expectOneLineError(sizes.takeError(), "sectionSizesOf", input);
  }
  if (auto summary = kiln::summaryOf(info, "fuzz.kiln"); !summary)
    expectOneLineError(summary.takeError(), "summaryOf", input);
  if (auto plan = kiln::planOfArtifact(info, "fuzz.kiln"); !plan)
    expectOneLineError(plan.takeError(), "planOfArtifact", input);
}

} // namespace

bool invokeOnZeros(kiln_module_t *module, const uint8_t *artifact, kiln_status_t *status) {
  uint64_t total = kiln_module_arena_bytes(module);
  std::vector<size_t> inputSizes, outputSizes;
  for (size_t i = 0; i < kiln_module_input_count(module); ++i) {
    kiln_tensor_info_t t;
    fuzzCheck(kiln_module_input_info(module, i, &t).code == KILN_OK, "input info failed");
    inputSizes.push_back(t.byte_size);
    total += t.byte_size;
  }
  for (size_t i = 0; i < kiln_module_output_count(module); ++i) {
    kiln_tensor_info_t t;
    fuzzCheck(kiln_module_output_info(module, i, &t).code == KILN_OK, "output info failed");
    outputSizes.push_back(t.byte_size);
    total += t.byte_size;
  }
  if (total > kMaxInvokeBytes || workgroupsOf(artifact) > kMaxInvokeWorkgroups)
    return false;
  std::vector<std::unique_ptr<ZeroBuffer>> owned;
  std::vector<const void *> inputs;
  std::vector<void *> outputs;
  for (size_t bytes : inputSizes) {
    owned.push_back(std::make_unique<ZeroBuffer>(bytes));
    inputs.push_back(owned.back()->data);
  }
  for (size_t bytes : outputSizes) {
    owned.push_back(std::make_unique<ZeroBuffer>(bytes));
    outputs.push_back(owned.back()->data);
  }
  ZeroBuffer arena(kiln_module_arena_bytes(module));
  kiln_invocation_t invocation = {};
  invocation.inputs = inputs.data();
  invocation.input_sizes = inputSizes.data();
  invocation.input_count = inputs.size();
  invocation.outputs = outputs.data();
  invocation.output_sizes = outputSizes.data();
  invocation.output_count = outputs.size();
  invocation.arena = arena.data;
  invocation.arena_size = kiln_module_arena_bytes(module);
  *status = kiln_module_invoke(module, &invocation);
  return true;
}

void fuzzArtifact(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  kiln_artifact_info_t info;
  kiln_status_t verified = kiln_artifact_verify(data, size, &info);
  bool valid = verified.code == KILN_OK;
  fuzzCheck(valid || verified.message[0] != '\0', "the gate refused without a message");
  fuzzCheck(!valid || kiln_artifact_recognize(data, size),
            "the gate accepted bytes kiln_artifact_recognize does not recognize");

  kiln_module_t *module = nullptr;
  kiln_status_t loaded = kiln_module_load(data, size, &module);
  std::unique_ptr<kiln_module_t, void (*)(kiln_module_t *)> owner(module, kiln_module_release);
  if (!valid)
    fuzzCheck(loaded.code == verified.code && !module,
              std::string("kiln_module_load disagrees with the gate, which said: ") +
                  verified.message);
  else
    fuzzCheck(loaded.code != KILN_DATA_LOSS,
              std::string("kiln_module_load found damage the gate let through: ") +
                  loaded.message);

  auto core = kiln::verifyArtifact(llvm::ArrayRef<uint8_t>(data, size), "fuzz.kiln");
  fuzzCheck(static_cast<bool>(core) == valid, "kiln::verifyArtifact disagrees with the gate");
  if (core)
    readVerified(*core, input);
  else
    expectOneLineError(core.takeError(), "verifyArtifact", input);

  if (kiln_artifact_recognize(data, size)) {
    auto plan = kiln::inspectFile(writeScratchFile(data, size, ".kiln"), kiln::CompileOptions());
    fuzzCheck(valid || !plan, "inspectFile read a plan from an artifact the gate refuses");
    if (!plan)
      expectOneLineError(plan.takeError(), "inspectFile", input);
  }
  if (!module)
    return;
  fuzzCheck(kiln_module_input_count(module) == info.input_count &&
                kiln_module_output_count(module) == info.output_count,
            "kiln_module_load and the gate count different inputs or outputs");
  kiln_status_t ran;
  if (invokeOnZeros(module, data, &ran))
    fuzzCheck(ran.code == KILN_OK,
              std::string("a module that loaded fails on buffers of its own sizes: ") +
                  ran.message);
}

} // namespace kiln::fuzz
