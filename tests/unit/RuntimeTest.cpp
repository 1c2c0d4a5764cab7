//===- RuntimeTest.cpp - Runtime C API: loading, checks, invoke -----------===//
#include "kiln/runtime.h"
#include "ArtifactFixtures.h"
#include "RealModels.h"
#include "kiln/Artifact.h"
#include "kiln/Compiler.h"
#include "kiln/Plan.h"
#include "kiln/Run.h"
#include "kiln_artifact_generated.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace fb = kiln::artifact;

namespace {

/// A 64-byte aligned copy of `bytes` (the runtime reads constants in place).
struct Aligned {
  explicit Aligned(const std::vector<uint8_t> &bytes) : size(bytes.size()) {
    data = static_cast<uint8_t *>(std::aligned_alloc(64, (size + 63) / 64 * 64 + 64));
    if (size) // memcpy from an empty vector's null data() is undefined
      std::memcpy(data, bytes.data(), size);
  }
  ~Aligned() { std::free(data); }
  uint8_t *data;
  size_t size;
};

/// An invocation of a model with two 2x3 f32 inputs and one 2x3 f32
/// output (add_scale.mlir's signature), pointing at `x`, `y` and `out`.
struct TwoByThree {
  TwoByThree(const float *x, const float *y, float *out) : ins{x, y}, outs{out} {
    inv.inputs = ins;
    inv.input_sizes = inSizes;
    inv.input_count = 2;
    inv.outputs = outs;
    inv.output_sizes = outSizes;
    inv.output_count = 1;
  }
  TwoByThree(const TwoByThree &) = delete;
  const void *ins[2];
  size_t inSizes[2] = {24, 24};
  void *outs[1];
  size_t outSizes[1] = {24};
  kiln_invocation_t inv{};
};

std::vector<uint8_t> compileAddScale() {
  auto artifact = kiln::compileArtifact(std::string(KILN_TEST_DATA_DIR) + "/mlir/add_scale.mlir",
                                        kiln::CompileOptions());
  EXPECT_TRUE(static_cast<bool>(artifact)) << llvm::toString(artifact.takeError());
  return artifact ? *artifact : std::vector<uint8_t>();
}

TEST(Runtime, RejectsNonArtifacts) {
  std::vector<uint8_t> junk(100, 0x5a);
  Aligned a(junk);
  kiln_module_t *m = nullptr;
  kiln_status_t s = kiln_module_load(a.data, a.size, &m);
  EXPECT_EQ(s.code, KILN_DATA_LOSS);
  EXPECT_NE(std::string(s.message).find("not a Kiln artifact"), std::string::npos) << s.message;
  EXPECT_EQ(m, nullptr);
}

TEST(Runtime, NamesBothVersionsOnMismatch) {
  kiln::test::HandArtifact hand;
  hand.formatMajor = 2;
  hand.formatMinor = 0;
  Aligned a(kiln::test::buildArtifact(hand));
  kiln_module_t *m = nullptr;
  kiln_status_t s = kiln_module_load(a.data, a.size, &m);
  EXPECT_EQ(s.code, KILN_INCOMPATIBLE);
  EXPECT_NE(std::string(s.message).find("artifact format 2.0"), std::string::npos) << s.message;
  EXPECT_NE(std::string(s.message).find("reads 1.x"), std::string::npos) << s.message;
}

TEST(Runtime, RejectsBindingOutsideItsBuffer) {
  // Input 0 is 4 x f32 = 16 bytes; [8, +16) runs 8 bytes past its end.
  kiln::test::HandArtifact hand;
  hand.commands[0].bindings[0].offset = 8;
  Aligned a(kiln::test::buildArtifact(hand));
  kiln_module_t *m = nullptr;
  kiln_status_t s = kiln_module_load(a.data, a.size, &m);
  EXPECT_EQ(s.code, KILN_DATA_LOSS);
  EXPECT_NE(std::string(s.message).find("outside its 16-byte buffer"), std::string::npos) << s.message;
}

TEST(Runtime, ChecksumCatchesAnyFlippedByte) {
  std::vector<uint8_t> bytes = compileAddScale();
  ASSERT_FALSE(bytes.empty());
  for (size_t at = 0; at < bytes.size(); at += std::max<size_t>(1, bytes.size() / 61)) {
    std::vector<uint8_t> damaged = bytes;
    damaged[at] ^= 0x5a;
    Aligned a(damaged);
    kiln_module_t *m = nullptr;
    kiln_status_t s = kiln_module_load(a.data, a.size, &m);
    EXPECT_EQ(s.code, KILN_DATA_LOSS) << "byte " << at;
    EXPECT_EQ(m, nullptr);
  }
}

TEST(Runtime, EveryTruncationFailsCleanly) {
  std::vector<uint8_t> bytes = compileAddScale();
  ASSERT_FALSE(bytes.empty());
  for (size_t cut = 0; cut < bytes.size(); cut += std::max<size_t>(1, bytes.size() / 97)) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + cut);
    Aligned a(prefix);
    kiln_module_t *m = nullptr;
    kiln_status_t s = kiln_module_load(a.data, a.size, &m);
    EXPECT_NE(s.code, KILN_OK) << "prefix of " << cut << " bytes loaded";
    EXPECT_EQ(m, nullptr);
    kiln_module_release(m);
  }
}

TEST(Runtime, InvokeChecksSizesAndComputes) {
  std::vector<uint8_t> bytes = compileAddScale();
  Aligned a(bytes);
  kiln_module_t *m = nullptr;
  kiln_status_t s = kiln_module_load(a.data, a.size, &m);
  ASSERT_EQ(s.code, KILN_OK) << s.message;
  std::unique_ptr<kiln_module_t, void (*)(kiln_module_t *)> guard(m, kiln_module_release);

  ASSERT_EQ(kiln_module_input_count(m), 2u);
  ASSERT_EQ(kiln_module_output_count(m), 1u);
  kiln_tensor_info_t info;
  ASSERT_EQ(kiln_module_input_info(m, 1, &info).code, KILN_OK);
  EXPECT_STREQ(info.name, "b");
  EXPECT_EQ(info.rank, 2u);
  EXPECT_EQ(info.shape[0], 2);
  EXPECT_EQ(info.shape[1], 3);
  EXPECT_EQ(info.byte_size, 24u);
  EXPECT_EQ(kiln_module_input_info(m, 2, &info).code, KILN_INVALID_ARGUMENT);

  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {10, 20, 30, 40, 50, 60}, out[6] = {};
  TwoByThree call(x, y, out);
  kiln_invocation_t &inv = call.inv;
  s = kiln_module_invoke(m, &inv);
  ASSERT_EQ(s.code, KILN_OK) << s.message;
  for (int i = 0; i < 6; ++i)
    EXPECT_FLOAT_EQ(out[i], (x[i] + y[i]) * 0.5f);

  size_t shortSizes[2] = {24, 20};
  inv.input_sizes = shortSizes;
  s = kiln_module_invoke(m, &inv);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(s.message, "input 1 'b' needs 24 bytes, 20 given");
  inv.input_sizes = call.inSizes;
  inv.input_count = 1;
  s = kiln_module_invoke(m, &inv);
  EXPECT_STREQ(s.message, "the model takes 2 inputs, 1 given");
}

// The one measurement: the timed runs are never traced (the trace is one
// more run after them), and RunResult::latency summarizes exactly them.
TEST(Runtime, TimedRunsAreSummarizedOnceAndTracedApart) {
  std::vector<uint8_t> bytes = compileAddScale();
  kiln::RunOptions options;
  options.device = "local-task";
  options.threads = 2;
  options.benchmarkRuns = 5;
  options.trace = true;
  options.randomInputs = true;
  auto run = kiln::runArtifact(bytes, {}, options);
  ASSERT_TRUE(static_cast<bool>(run)) << llvm::toString(run.takeError());
  ASSERT_EQ(run->timesMs.size(), 5u);
  EXPECT_EQ(run->latency.runs, 5u);
  EXPECT_EQ(run->latency.medianMs, kiln::medianOf(run->timesMs));
  EXPECT_EQ(run->latency.minMs, *std::min_element(run->timesMs.begin(), run->timesMs.end()));
  EXPECT_EQ(run->latency.device, "local-task");
  EXPECT_EQ(run->latency.threads, 2u);
  // One traced run: each dispatch command once.
  std::map<int64_t, int> commands;
  for (const kiln::TraceEvent &e : run->trace)
    if (e.workgroup < 0)
      ++commands[e.command];
  ASSERT_FALSE(commands.empty());
  for (const auto &[command, count] : commands)
    EXPECT_EQ(count, 1) << "command " << command;
  // Without benchmark runs: the first run traced, nothing timed.
  options.benchmarkRuns = 0;
  auto once = kiln::runArtifact(bytes, {}, options);
  ASSERT_TRUE(static_cast<bool>(once)) << llvm::toString(once.takeError());
  EXPECT_TRUE(once->timesMs.empty());
  EXPECT_LT(once->latency.medianMs, 0);
  EXPECT_EQ(once->trace.size(), run->trace.size());
  // benchmarkArtifact is that measurement, untraced.
  auto stats = kiln::benchmarkArtifact(bytes, 7, options);
  ASSERT_TRUE(static_cast<bool>(stats)) << llvm::toString(stats.takeError());
  EXPECT_EQ(stats->runs, 7u);
  EXPECT_EQ(stats->device, "local-task");
  EXPECT_EQ(stats->threads, 2u);
  EXPECT_GT(stats->medianMs, 0);
}

// A run can be stopped between waves (the workbench's Cancel, Esc and Quit
// during Run on Host; a large build's run once could not be stopped):
// kiln_invocation_t::cancelled is asked before each wave, the first nonzero
// answer stops the invocation there with KILN_CANCELLED, and runArtifact
// asks RunOptions::cancelled before each invocation and each wave.
TEST(Runtime, CancelledInvocationStopsBeforeTheNextWave) {
  std::string path = kiln::test::realModelPath("alexa");
  ASSERT_TRUE(std::filesystem::exists(path)) << kiln::test::missingModelHint(path);
  auto bytes = kiln::compileArtifact(path, kiln::test::realModelOptions("alexa"));
  ASSERT_TRUE(static_cast<bool>(bytes)) << llvm::toString(bytes.takeError());
  Aligned a(*bytes);
  kiln_module_t *m = nullptr;
  kiln_status_t s = kiln_module_load(a.data, a.size, &m);
  ASSERT_EQ(s.code, KILN_OK) << s.message;
  std::unique_ptr<kiln_module_t, void (*)(kiln_module_t *)> guard(m, kiln_module_release);
  kiln_artifact_info_t info;
  ASSERT_EQ(kiln_module_artifact_info(m, &info).code, KILN_OK);
  ASSERT_GT(info.wave_count, 2u) << "the test needs several waves";

  // Buffers of the model's own sizes; the output starts as a sentinel.
  std::vector<std::vector<uint8_t>> ins(info.input_count), outs(info.output_count);
  std::vector<const void *> inPtrs;
  std::vector<void *> outPtrs;
  std::vector<size_t> inSizes, outSizes;
  for (size_t i = 0; i < info.input_count; ++i) {
    kiln_tensor_info_t t;
    ASSERT_EQ(kiln_module_input_info(m, i, &t).code, KILN_OK);
    ins[i].assign(t.byte_size, 0);
    inPtrs.push_back(ins[i].data());
    inSizes.push_back(t.byte_size);
  }
  for (size_t i = 0; i < info.output_count; ++i) {
    kiln_tensor_info_t t;
    ASSERT_EQ(kiln_module_output_info(m, i, &t).code, KILN_OK);
    outs[i].assign(t.byte_size, 0xa5);
    outPtrs.push_back(outs[i].data());
    outSizes.push_back(t.byte_size);
  }
  std::vector<uint8_t> arena(kiln_module_arena_bytes(m) + 64);
  kiln_invocation_t inv{};
  inv.inputs = inPtrs.data();
  inv.input_sizes = inSizes.data();
  inv.input_count = inPtrs.size();
  inv.outputs = outPtrs.data();
  inv.output_sizes = outSizes.data();
  inv.output_count = outPtrs.size();
  inv.arena = arena.data();
  inv.arena_size = arena.size();

  // Asked before each wave: answering 1 at once runs nothing.
  struct Asker {
    int calls = 0, stopAt = 0;
  } asker;
  inv.cancelled = [](void *context) {
    auto *k = static_cast<Asker *>(context);
    return ++k->calls >= k->stopAt ? 1 : 0;
  };
  inv.cancel_context = &asker;
  asker.stopAt = 1;
  s = kiln_module_invoke(m, &inv);
  EXPECT_EQ(s.code, KILN_CANCELLED);
  EXPECT_EQ(std::string(s.message),
            "cancelled after 0 of " + std::to_string(info.dispatch_count) + " dispatches");
  EXPECT_EQ(asker.calls, 1);
  EXPECT_STREQ(kiln_status_code_name(KILN_CANCELLED), "KILN_CANCELLED");
  for (const std::vector<uint8_t> &o : outs)
    EXPECT_EQ(std::count(o.begin(), o.end(), 0xa5), std::ptrdiff_t(o.size())) << "nothing ran";

  // Answering 0 throughout: the invocation runs whole, asking once per
  // wave that holds a dispatch.
  asker = {0, 1 << 30};
  s = kiln_module_invoke(m, &inv);
  ASSERT_EQ(s.code, KILN_OK) << s.message;
  const int dispatchWaves = asker.calls;
  EXPECT_GT(dispatchWaves, 2);
  EXPECT_LE(size_t(dispatchWaves), info.wave_count);

  // Stopping at the third wave: some, not all, dispatches ran.
  asker = {0, 3};
  s = kiln_module_invoke(m, &inv);
  EXPECT_EQ(s.code, KILN_CANCELLED);
  EXPECT_EQ(asker.calls, 3);
  size_t ran = 0, total = 0;
  ASSERT_EQ(std::sscanf(s.message, "cancelled after %zu of %zu dispatches", &ran, &total), 2)
      << s.message;
  EXPECT_EQ(total, info.dispatch_count);
  EXPECT_GT(ran, 0u);
  EXPECT_LT(ran, total);

  // runArtifact: a cancel during the timed runs ends them with one error,
  // and the invocations stop (1000 timed runs were asked for).
  int hostCalls = 0;
  kiln::RunOptions options;
  options.randomInputs = true;
  options.benchmarkRuns = 1000;
  options.cancelled = [&] { return ++hostCalls > 10; };
  auto cancelled = kiln::runArtifact(*bytes, {}, options);
  ASSERT_FALSE(static_cast<bool>(cancelled));
  std::string error = llvm::toString(cancelled.takeError());
  EXPECT_EQ(error.rfind("run cancelled", 0), 0u) << error;
  EXPECT_EQ(hostCalls, 11);
}

// A run with more events than the first trace buffer holds (65536) is
// traced whole: the buffer grows to fit, so every workgroup of every
// dispatch is there (the workbench's timeline once stopped at 65536 events
// and drew the rest from the cost model as if measured).
TEST(Runtime, TraceHoldsEveryWorkgroupPastTheFirstBuffer) {
  std::string path = ::testing::TempDir() + "kiln_many_workgroups.mlir";
  {
    std::ofstream(path)
        << "func.func @main(%a: tensor<300x300xf32> {kiln.name = \"a\"}) -> "
           "(tensor<300x300xf32> {kiln.name = \"y\"}) {\n"
           "  %0 = \"tosa.add\"(%a, %a) : (tensor<300x300xf32>, tensor<300x300xf32>) -> "
           "tensor<300x300xf32>\n"
           "  return %0 : tensor<300x300xf32>\n}\n";
  }
  kiln::CompileOptions compile;
  compile.tileSizes.push_back({0, {1, 1}}); // one element per workgroup: 90000 of them
  auto bytes = kiln::compileArtifact(path, compile);
  ASSERT_TRUE(static_cast<bool>(bytes)) << llvm::toString(bytes.takeError());
  kiln::RunOptions options;
  options.trace = true;
  options.randomInputs = true;
  auto run = kiln::runArtifact(*bytes, {}, options);
  ASSERT_TRUE(static_cast<bool>(run)) << llvm::toString(run.takeError());
  ASSERT_TRUE(run->plan);
  int64_t want = 0; // one event per dispatch command and per workgroup
  for (const kiln::Dispatch &d : run->plan->dispatches)
    want += 1 + d.workgroupCount[0] * d.workgroupCount[1] * d.workgroupCount[2];
  EXPECT_GT(want, 65536);
  EXPECT_EQ(int64_t(run->trace.size()), want);
  EXPECT_EQ(run->traceDropped, 0u);
  std::set<std::pair<int64_t, int64_t>> workgroups; // (command, workgroup), each once
  for (const kiln::TraceEvent &e : run->trace)
    if (e.workgroup >= 0)
      workgroups.insert({e.command, e.workgroup});
  EXPECT_EQ(int64_t(workgroups.size()), want - int64_t(run->plan->dispatches.size()));
}

// Two different models loaded at once (the workbench comparing builds, a
// program with several models): each runs its own kernels. Both name their
// entry point main_dispatch_0; the host loader once handed the second
// module the first one's kernels, because the dynamic loader matched the
// reused /proc/self/fd path of the first load.
TEST(Runtime, TwoModulesLoadedAtOnceRunTheirOwnKernels) {
  std::vector<uint8_t> addBytes = compileAddScale();
  std::string subPath = ::testing::TempDir() + "kiln_sub_scale.mlir";
  {
    std::ofstream(subPath)
        << "func.func @main(%a: tensor<2x3xf32> {kiln.name = \"a\"}, %b: tensor<2x3xf32> "
           "{kiln.name = \"b\"}) -> (tensor<2x3xf32> {kiln.name = \"d\"}) {\n"
           "  %0 = \"tosa.sub\"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>\n"
           "  return %0 : tensor<2x3xf32>\n}\n";
  }
  auto subBytes = kiln::compileArtifact(subPath, kiln::CompileOptions());
  ASSERT_TRUE(static_cast<bool>(subBytes)) << llvm::toString(subBytes.takeError());
  Aligned add(addBytes), sub(*subBytes);
  kiln_module_t *addModule = nullptr, *subModule = nullptr;
  ASSERT_EQ(kiln_module_load(add.data, add.size, &addModule).code, KILN_OK);
  std::unique_ptr<kiln_module_t, void (*)(kiln_module_t *)> g1(addModule, kiln_module_release);
  ASSERT_EQ(kiln_module_load(sub.data, sub.size, &subModule).code, KILN_OK);
  std::unique_ptr<kiln_module_t, void (*)(kiln_module_t *)> g2(subModule, kiln_module_release);
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {10, 20, 30, 40, 50, 60};
  auto run = [&](kiln_module_t *m, float *out) {
    TwoByThree call(x, y, out);
    kiln_status_t s = kiln_module_invoke(m, &call.inv);
    EXPECT_EQ(s.code, KILN_OK) << s.message;
  };
  float sum[6] = {}, diff[6] = {};
  run(addModule, sum);
  run(subModule, diff);
  for (int i = 0; i < 6; ++i) {
    EXPECT_FLOAT_EQ(sum[i], (x[i] + y[i]) * 0.5f) << i;
    EXPECT_FLOAT_EQ(diff[i], x[i] - y[i]) << i;
  }
}

//===----------------------------------------------------------------------===//
// The artifact gate (kiln_artifact_verify)
//===----------------------------------------------------------------------===//

TEST(ArtifactGate, DefaultHandBuiltArtifactPassesWithItsFigures) {
  kiln::test::HandArtifact hand;
  hand.arenaBytes = 64;
  hand.commands.push_back({});
  hand.commands.back().kind = fb::CommandKind::barrier;
  hand.commands.back().bindings.clear();
  hand.commands.push_back({});
  hand.sections = {{"io", 10}, {"commands", 20}};
  std::vector<uint8_t> bytes = kiln::test::buildArtifact(hand);
  kiln_artifact_info_t info;
  kiln_status_t s = kiln_artifact_verify(bytes.data(), bytes.size(), &info);
  ASSERT_EQ(s.code, KILN_OK) << s.message;
  EXPECT_EQ(info.format_major, unsigned(KILN_FORMAT_MAJOR));
  EXPECT_EQ(info.file_bytes, bytes.size());
  EXPECT_EQ(info.input_count, 1u);
  EXPECT_EQ(info.output_count, 1u);
  EXPECT_EQ(info.executable_count, 1u);
  EXPECT_EQ(info.command_count, 3u); // dispatch, barrier, dispatch
  EXPECT_EQ(info.dispatch_count, 2u);
  EXPECT_EQ(info.binding_count, 4u);
  EXPECT_EQ(info.wave_count, 2u);
  EXPECT_EQ(info.largest_wave, 1u);
  EXPECT_EQ(info.arena_bytes, 64u);
  EXPECT_STREQ(info.target_triple, "x86_64-unknown-linux-gnu");
  EXPECT_STREQ(info.producer, "hand-built");
  EXPECT_EQ(info.reflection_json, nullptr);
  ASSERT_EQ(info.section_count, 2u);
  EXPECT_STREQ(info.sections[1].name, "commands");
  EXPECT_EQ(info.sections[1].bytes, 20u);
}

TEST(ArtifactGate, EveryCheckNamesItsNumbers) {
  // Each case breaks one check; the gate must refuse it with that check's
  // message, and so must kiln_module_load (the runtime's own path).
  for (const kiln::test::GateCase &c : kiln::test::gateCases()) {
    std::vector<uint8_t> bytes = kiln::test::buildArtifact(c.artifact);
    kiln_status_t s = kiln_artifact_verify(bytes.data(), bytes.size(), nullptr);
    EXPECT_EQ(s.code, c.code) << c.name << ": " << s.message;
    EXPECT_NE(std::string(s.message).find(c.message), std::string::npos)
        << c.name << ": '" << s.message << "' lacks '" << c.message << "'";
    Aligned a(bytes);
    kiln_module_t *m = nullptr;
    kiln_status_t l = kiln_module_load(a.data, a.size, &m);
    EXPECT_STREQ(l.message, s.message) << c.name;
    EXPECT_EQ(m, nullptr) << c.name;
  }
}

TEST(ArtifactGate, EnvelopeChecksComeFirst) {
  std::vector<uint8_t> good = kiln::test::buildArtifact({});
  auto verify = [](const std::vector<uint8_t> &b) {
    return kiln_artifact_verify(b.data(), b.size(), nullptr);
  };
  kiln_status_t s = verify(std::vector<uint8_t>(good.begin(), good.begin() + 12));
  EXPECT_EQ(s.code, KILN_DATA_LOSS);
  EXPECT_STREQ(s.message, "artifact is truncated: 12 bytes, at least 16 needed for the header and "
                          "checksum trailer");
  std::vector<uint8_t> noTrailer(good.begin(), good.end() - 8);
  EXPECT_NE(std::string(verify(noTrailer).message).find("no checksum trailer"), std::string::npos);
  std::vector<uint8_t> flipped = good;
  flipped[good.size() / 2] ^= 1;
  s = verify(flipped);
  EXPECT_EQ(s.code, KILN_DATA_LOSS);
  EXPECT_NE(std::string(s.message).find("artifact is corrupted: checksum 0x"), std::string::npos)
      << s.message;
  EXPECT_EQ(kiln_artifact_verify(nullptr, 4, nullptr).code, KILN_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_artifact_recognize(good.data(), 7), 0);
  EXPECT_EQ(kiln_artifact_recognize(good.data(), 8), 1);
}

TEST(ArtifactGate, SealIsTheWritersTrailer) {
  // The compiler's appendChecksumTrailer and the runtime's seal agree, and
  // the trailer is the CRC-32 of the bytes before it ("123456789" has the
  // standard check value 0xCBF43926).
  std::vector<uint8_t> bytes = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  std::vector<uint8_t> viaCore = bytes;
  kiln::appendChecksumTrailer(viaCore);
  ASSERT_EQ(viaCore.size(), 17u);
  std::vector<uint8_t> expected = {'K', 'S', 'U', 'M', 0x26, 0x39, 0xF4, 0xCB};
  EXPECT_EQ(std::vector<uint8_t>(viaCore.begin() + 9, viaCore.end()), expected);
  EXPECT_EQ(kiln_artifact_seal(bytes.data(), 7).code, KILN_INVALID_ARGUMENT);
}

TEST(ArtifactGate, ResealedMutationsOfARealArtifactReachTheBindingCheck) {
  // Every binding of a compiled artifact, lengthened one byte past its
  // buffer: left unsealed the checksum catches it; resealed, the binding
  // check does, naming the command and the buffer size.
  std::vector<uint8_t> bytes = compileAddScale();
  ASSERT_FALSE(bytes.empty());
  const fb::Artifact *original = fb::GetArtifact(bytes.data());
  int mutated = 0;
  for (flatbuffers::uoffset_t c = 0; c < original->commands()->size(); ++c) {
    const fb::Command *command = original->commands()->Get(c);
    if (!command->bindings())
      continue;
    for (flatbuffers::uoffset_t b = 0; b < command->bindings()->size(); ++b) {
      std::vector<uint8_t> copy = bytes;
      auto *binding = fb::GetMutableArtifact(copy.data())
                          ->mutable_commands()
                          ->GetMutableObject(c)
                          ->mutable_bindings()
                          ->GetMutableObject(b);
      uint64_t end = binding->offset() + binding->length();
      if (!binding->mutate_length(binding->length() + 1))
        continue; // length 0 is not stored
      kiln_status_t s = kiln_artifact_verify(copy.data(), copy.size(), nullptr);
      EXPECT_NE(std::string(s.message).find("checksum"), std::string::npos) << s.message;
      kiln::test::reseal(copy);
      s = kiln_artifact_verify(copy.data(), copy.size(), nullptr);
      EXPECT_EQ(s.code, KILN_DATA_LOSS);
      std::string expected = "command " + std::to_string(c) + " binding [";
      EXPECT_NE(std::string(s.message).find(expected), std::string::npos) << s.message;
      if (binding->kind() != fb::BindingKind::arena)
        EXPECT_NE(std::string(s.message).find("outside its " + std::to_string(end) + "-byte buffer"),
                  std::string::npos)
            << s.message;
      ++mutated;
    }
  }
  EXPECT_GE(mutated, 3); // add_scale: a, b and sum
}

/// A compiled model with an arena (chain_attention), its inputs, and the
/// artifact with one field changed by `edit` and resealed.
std::vector<uint8_t> mutatedAttention(const std::function<void(fb::Artifact *)> &edit) {
  auto artifact = kiln::compileArtifact(
      std::string(KILN_TEST_DATA_DIR) + "/ops/chain_attention/model.tflite", kiln::CompileOptions());
  EXPECT_TRUE(static_cast<bool>(artifact)) << llvm::toString(artifact.takeError());
  if (!artifact)
    return {};
  std::vector<uint8_t> bytes = std::move(*artifact);
  edit(fb::GetMutableArtifact(bytes.data()));
  kiln::test::reseal(bytes);
  return bytes;
}

TEST(ArtifactGate, HugeArenaIsAnErrorNamingTheBytes) {
  // 2^62 bytes passes the gate (below PTRDIFF_MAX) but no host has it:
  // kiln run's driver reports the failed allocation instead of aborting.
  std::vector<uint8_t> bytes = mutatedAttention([](fb::Artifact *a) {
    ASSERT_GT(a->arena_bytes(), 0u);
    ASSERT_TRUE(a->mutate_arena_bytes(uint64_t(1) << 62));
    ASSERT_TRUE(a->mutable_memory_plan()->mutate_arena_bytes(uint64_t(1) << 62));
  });
  ASSERT_FALSE(bytes.empty());
  auto described = kiln::describeArtifact(bytes);
  ASSERT_TRUE(static_cast<bool>(described)) << llvm::toString(described.takeError());
  EXPECT_EQ(described->arenaBytes, uint64_t(1) << 62);
  auto run = kiln::runArtifact(bytes, kiln::randomInputs(described->inputs));
  ASSERT_FALSE(static_cast<bool>(run));
  EXPECT_EQ(llvm::toString(run.takeError()),
            "cannot allocate 4611686018427387904 bytes for the arena");
}

/// The attention artifact with output 0's first dimension times 2^40;
/// with `rebind`, every binding of output 0 grows to the new size too.
std::vector<uint8_t> hugeOutputArtifact(bool rebind, uint64_t &bytes0, std::string &name) {
  return mutatedAttention([&](fb::Artifact *a) {
    auto *out = a->mutable_io()->mutable_outputs()->GetMutableObject(0);
    auto *shape = out->mutable_shape();
    uint64_t elements = 1;
    for (flatbuffers::uoffset_t i = 0; i < shape->size(); ++i)
      elements *= static_cast<uint64_t>(shape->Get(i));
    shape->Mutate(0, shape->Get(0) << 40);
    bytes0 = (elements << 40) * 4;
    name = out->name()->str();
    if (rebind)
      for (flatbuffers::uoffset_t c = 0; c < a->commands()->size(); ++c) {
        auto *bindings = a->mutable_commands()->GetMutableObject(c)->mutable_bindings();
        for (flatbuffers::uoffset_t b = 0; bindings && b < bindings->size(); ++b) {
          auto *binding = bindings->GetMutableObject(b);
          if (binding->kind() == fb::BindingKind::output && binding->index() == 0)
            binding->mutate_length(bytes0);
        }
      }
  });
}

TEST(ArtifactGate, OutputLargerThanItsWritesIsRefused) {
  // A damaged output size: the commands write 128 bytes of a 2^47-byte
  // output, the rest would come back uninitialized.
  uint64_t bytes0 = 0;
  std::string name;
  std::vector<uint8_t> bytes = hugeOutputArtifact(/*rebind=*/false, bytes0, name);
  ASSERT_FALSE(bytes.empty());
  kiln_artifact_info_t info;
  kiln_status_t s = kiln_artifact_verify(bytes.data(), bytes.size(), &info);
  EXPECT_EQ(s.code, KILN_DATA_LOSS);
  EXPECT_NE(std::string(s.message).find("output 0 is " + std::to_string(bytes0) +
                                        " bytes but the commands write at most"),
            std::string::npos)
      << s.message;
}

TEST(ArtifactGate, HugeOutputIsAnErrorNamingTheBytes) {
  // Output 0's first dimension times 2^40 and its bindings grown with it:
  // the gate lets it through; the driver's output buffer cannot be had.
  uint64_t bytes0 = 0;
  std::string name;
  std::vector<uint8_t> bytes = hugeOutputArtifact(/*rebind=*/true, bytes0, name);
  ASSERT_FALSE(bytes.empty());
  auto described = kiln::describeArtifact(bytes);
  ASSERT_TRUE(static_cast<bool>(described)) << llvm::toString(described.takeError());
  auto run = kiln::runArtifact(bytes, kiln::randomInputs(described->inputs));
  ASSERT_FALSE(static_cast<bool>(run));
  EXPECT_EQ(llvm::toString(run.takeError()),
            "cannot allocate " + std::to_string(bytes0) + " bytes for output 0 '" + name + "'");
}

} // namespace

namespace {

/// add_scale compiled with `cpu` / `features`; `result` gets the compile
/// result (its target CPU).
std::vector<uint8_t> compileAddScaleFor(const std::string &cpu, const std::string &features,
                                        kiln::CompileResult *result = nullptr) {
  kiln::CompileOptions options;
  options.target.cpu = cpu;
  options.target.features = features;
  auto compiled = kiln::compile(std::string(KILN_TEST_DATA_DIR) + "/mlir/add_scale.mlir", options);
  EXPECT_TRUE(static_cast<bool>(compiled)) << llvm::toString(compiled.takeError());
  if (!compiled)
    return {};
  if (result)
    *result = *compiled;
  return compiled->artifact;
}

std::vector<std::string> requiredFeatures(const std::vector<uint8_t> &bytes) {
  std::vector<std::string> out;
  const fb::Executable *e = fb::GetArtifact(bytes.data())->executables()->Get(0);
  if (e->required_cpu_features())
    for (const flatbuffers::String *f : *e->required_cpu_features())
      out.push_back(f->str());
  return out;
}

bool contains(const std::vector<std::string> &v, const std::string &x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

#if defined(__x86_64__)
TEST(CpuFeatures, ArtifactRecordsWhatItsCodeNeeds) {
  // generic x86-64 needs nothing beyond SSE2; x86-64-v3 needs AVX2 and FMA;
  // x86-64-v4 AVX-512 F/BW/DQ/VL as well.
  std::vector<uint8_t> generic = compileAddScaleFor("generic", "");
  ASSERT_FALSE(generic.empty());
  EXPECT_TRUE(requiredFeatures(generic).empty());
  std::vector<std::string> v3 = requiredFeatures(compileAddScaleFor("x86-64-v3", ""));
  for (const char *f : {"avx", "avx2", "fma", "bmi2", "sse4.2"})
    EXPECT_TRUE(contains(v3, f)) << f;
  EXPECT_FALSE(contains(v3, "avx512f"));
  std::vector<std::string> v4 = requiredFeatures(compileAddScaleFor("x86-64-v4", ""));
  for (const char *f : {"avx2", "avx512f", "avx512bw", "avx512dq", "avx512vl"})
    EXPECT_TRUE(contains(v4, f)) << f;
}

TEST(CpuFeatures, TargetCpuHostIsThisMachinesCpu) {
  kiln::CompileResult result;
  std::vector<uint8_t> bytes = compileAddScaleFor("host", "", &result);
  ASSERT_FALSE(bytes.empty());
  EXPECT_NE(result.cpu, "host");
  EXPECT_FALSE(result.cpu.empty());
  std::vector<std::string> needed = requiredFeatures(bytes);
  EXPECT_EQ(contains(needed, "avx2"), __builtin_cpu_supports("avx2") != 0);
  EXPECT_EQ(contains(needed, "avx512f"), __builtin_cpu_supports("avx512f") != 0);
  // Code for this CPU runs on this CPU.
  Aligned a(bytes);
  kiln_module_t *module = nullptr;
  kiln_status_t s = kiln_module_load(a.data, a.size, &module);
  EXPECT_EQ(s.code, KILN_OK) << s.message;
  kiln_module_release(module);
  // host is this machine: not a cross target.
  kiln::CompileOptions cross;
  cross.target.triple = "aarch64-unknown-linux-gnu";
  cross.target.cpu = "host";
  auto refused = kiln::compileArtifact(std::string(KILN_TEST_DATA_DIR) + "/mlir/add_scale.mlir", cross);
  ASSERT_FALSE(static_cast<bool>(refused));
  EXPECT_NE(llvm::toString(refused.takeError()).find("need the host target"), std::string::npos);
}

TEST(CpuFeatures, UnknownFeatureIsRefusedByName) {
  std::vector<uint8_t> bytes = compileAddScaleFor("x86-64-v3", "");
  ASSERT_FALSE(bytes.empty());
  // Rename "avx2" in place to a name no runtime knows, reseal.
  fb::Executable *e = fb::GetMutableArtifact(bytes.data())->mutable_executables()->GetMutableObject(0);
  bool renamed = false;
  for (flatbuffers::uoffset_t i = 0; i < e->required_cpu_features()->size(); ++i) {
    auto *f = const_cast<flatbuffers::String *>(e->required_cpu_features()->Get(i));
    if (f->str() == "avx2") {
      std::memcpy(f->data(), "zzz2", 4);
      renamed = true;
    }
  }
  ASSERT_TRUE(renamed);
  kiln::test::reseal(bytes);
  Aligned a(bytes);
  kiln_module_t *module = nullptr;
  kiln_status_t s = kiln_module_load(a.data, a.size, &module);
  EXPECT_EQ(s.code, KILN_INCOMPATIBLE);
  EXPECT_NE(std::string(s.message).find("zzz2 (unknown to this runtime)"), std::string::npos)
      << s.message;
  EXPECT_NE(std::string(s.message).find("x86-64-v3"), std::string::npos) << s.message;
  EXPECT_EQ(module, nullptr);
}

TEST(CpuFeatures, MissingFeatureIsRefusedBeforeAnyCodeRuns) {
  // A feature this CPU lacks: the first of these it does not have.
  const char *missing = nullptr;
  if (!__builtin_cpu_supports("avx512fp16"))
    missing = "avx512fp16";
  else if (!__builtin_cpu_supports("avx512bf16"))
    missing = "avx512bf16";
  if (!missing)
    GTEST_SKIP() << "this CPU has AVX512-FP16 and AVX512-BF16: no feature left to lack";
  std::vector<uint8_t> bytes = compileAddScaleFor("generic", std::string("+") + missing);
  ASSERT_FALSE(bytes.empty());
  ASSERT_TRUE(contains(requiredFeatures(bytes), missing));
  Aligned a(bytes);
  kiln_module_t *module = nullptr;
  kiln_status_t s = kiln_module_load(a.data, a.size, &module);
  EXPECT_EQ(s.code, KILN_INCOMPATIBLE);
  EXPECT_NE(std::string(s.message).find(std::string("uses features this CPU lacks: ")),
            std::string::npos)
      << s.message;
  EXPECT_NE(std::string(s.message).find(missing), std::string::npos) << s.message;
}
#endif

} // namespace

TEST(ArtifactGate, QuantizationThatPassesAndOldArtifacts) {
  // Per channel along dimension 1 of i8[2, 8]: 8 scales and zero points in
  // range pass; so does an artifact of format 1.1 (no quantization field).
  kiln::test::HandArtifact perChannel;
  perChannel.inputType = kiln::artifact::ElementType::i8;
  perChannel.inputShape = {2, 8};
  perChannel.quantized = true;
  perChannel.scales = {0.5f, 0.25f, 1, 2, 3, 4, 5, 6};
  perChannel.zeroPoints = {-128, 127, 0, 1, 2, 3, 4, 5};
  perChannel.quantizedDimension = 1;
  std::vector<uint8_t> bytes = kiln::test::buildArtifact(perChannel);
  kiln_status_t s = kiln_artifact_verify(bytes.data(), bytes.size(), nullptr);
  EXPECT_EQ(s.code, KILN_OK) << s.message;
  kiln::test::HandArtifact old;
  old.formatMinor = 1;
  bytes = kiln::test::buildArtifact(old);
  kiln_artifact_info_t info;
  s = kiln_artifact_verify(bytes.data(), bytes.size(), &info);
  EXPECT_EQ(s.code, KILN_OK) << s.message;
  EXPECT_EQ(info.format_minor, 1u);
}
