//===- RuntimeOverheadBench.cpp - Cost of replaying one command -----------===//
//
// Builds artifacts whose command lists hold N dispatches of an empty entry
// point (one workgroup, one binding), with a barrier between every two
// (worst case) or none (one wave), and times kiln_module_invoke on each
// device. Per-command overhead = time per invoke / N.
//
//   build/tests/bench/kiln_runtime_overhead_bench --benchmark_repetitions=5
//
//===----------------------------------------------------------------------===//
#include "kiln/Artifact.h"
#include "kiln/runtime.h"
#include "kiln_artifact_generated.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace fb = kiln::artifact;

namespace {

std::vector<uint8_t> readFile(const char *path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

/// N empty dispatches; with barriers, each is its own wave.
std::vector<uint8_t> buildArtifact(int n, bool barriers) {
  std::vector<uint8_t> code = readFile(KILN_EMPTY_KERNEL_PATH);
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<int64_t> shape = {4};
  std::vector<flatbuffers::Offset<fb::TensorDesc>> ins = {
      fb::CreateTensorDescDirect(fbb, "x", fb::ElementType::f32, &shape)};
  std::vector<flatbuffers::Offset<fb::TensorDesc>> outs = {
      fb::CreateTensorDescDirect(fbb, "y", fb::ElementType::f32, &shape)};
  auto io = fb::CreateIOTableDirect(fbb, &ins, &outs);
  std::vector<flatbuffers::Offset<fb::Command>> commands;
  std::vector<uint32_t> wg = {1, 1, 1};
  for (int i = 0; i < n; ++i) {
    if (barriers && i > 0)
      commands.push_back(fb::CreateCommand(fbb, fb::CommandKind::barrier));
    std::vector<flatbuffers::Offset<fb::Binding>> bindings = {
        fb::CreateBinding(fbb, fb::BindingKind::output, 0, 0, 16)};
    commands.push_back(
        fb::CreateCommandDirect(fbb, fb::CommandKind::dispatch, 0, 0, &wg, &bindings));
  }
  std::vector<std::string> entries = {"empty_dispatch"};
  auto entryOffsets = fbb.CreateVectorOfStrings(entries);
  std::vector<flatbuffers::Offset<fb::Executable>> exes = {fb::CreateExecutable(
      fbb, fb::ExecutableFormat::elf_shared_object, fbb.CreateString("x86_64-pc-linux-gnu"),
      fbb.CreateString("generic"), entryOffsets, fbb.CreateVector(code))};
  auto root = fb::CreateArtifactDirect(fbb, 1, 0, "bench", "bench", io, &commands, 0, &exes);
  fb::FinishArtifactBuffer(fbb, root);
  std::vector<uint8_t> bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  kiln::appendChecksumTrailer(bytes);
  return bytes;
}

void BM_EmptyDispatch(benchmark::State &state) {
  const int n = 1000;
  bool barriers = state.range(0) != 0;
  size_t threads = static_cast<size_t>(state.range(1));
  std::vector<uint8_t> bytes = buildArtifact(n, barriers);
  void *aligned = std::aligned_alloc(64, (bytes.size() + 63) / 64 * 64);
  std::memcpy(aligned, bytes.data(), bytes.size());
  kiln_module_t *module = nullptr;
  kiln_status_t s = kiln_module_load(aligned, bytes.size(), &module);
  if (s.code != KILN_OK) {
    state.SkipWithError(s.message);
    std::free(aligned);
    return;
  }
  kiln_device_t device;
  if (threads == 0)
    kiln_device_create_local_sync(&device);
  else
    kiln_device_create_local_task(threads, &device);
  float x[4] = {}, y[4] = {};
  const void *inPtrs[1] = {x};
  void *outPtrs[1] = {y};
  size_t sizes[1] = {16};
  kiln_invocation_t inv{};
  inv.inputs = inPtrs;
  inv.input_sizes = sizes;
  inv.input_count = 1;
  inv.outputs = outPtrs;
  inv.output_sizes = sizes;
  inv.output_count = 1;
  inv.device = &device;
  for (auto _ : state)
    benchmark::DoNotOptimize(kiln_module_invoke(module, &inv));
  // Reported as items_per_second; ns per command = 1e9 / items_per_second.
  state.SetItemsProcessed(state.iterations() * n);
  kiln_device_release(&device);
  kiln_module_release(module);
  std::free(aligned);
}

} // namespace

// Args: {barriers?, threads (0 = local-sync)}.
BENCHMARK(BM_EmptyDispatch)
    ->ArgNames({"barriers", "threads"})
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Args({1, 2})
    ->Args({0, 2});

BENCHMARK_MAIN();
