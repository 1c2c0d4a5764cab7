//===- StateTest.cpp - State carried from one invocation to the next ------===//
//
// Every folder of tests/data/state (resource variables by
// tests/reference/make_state_cases.mjs; LSTM, RNN and SVDF state by their
// generators; TFLite Micro's real stateful models) is compiled once and
// run step by step on one module and arena (kiln::runArtifactSteps): step
// 0's input_K.npy at the folder's top, step_N/ for the later invocations,
// each starting from the state the previous left. Outputs are compared
// with TensorFlow Lite 2.9's, which ran the same steps on one interpreter:
// float32 within 1e-4 x (1 + |reference|), integers exactly. Also checked:
// reset (kiln_module_reset_state) starts over from the initial values, an
// invocation with another arena is refused, the plan keeps each variable
// in the arena's persistent region, and the refused models give one line.
//
//===----------------------------------------------------------------------===//
#include "IntegerCompare.h"
#include "TestSupport.h"

#include "kiln/Artifact.h"
#include "kiln/Compiler.h"
#include "kiln/Plan.h"
#include "kiln/Run.h"
#include "kiln/runtime.h"

#include <filesystem>

using namespace kiln::test;

namespace {

const std::string kStateDir = std::string(KILN_TEST_DATA_DIR) + "/state";

std::vector<std::string> listCases() {
  std::vector<std::string> cases;
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(kStateDir, ec))
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "model.tflite"))
      cases.push_back(entry.path().filename().string());
  std::sort(cases.begin(), cases.end());
  return cases;
}

/// The folder of step `s` of case `dir`: the case folder itself for step
/// 0, `step_S` after it.
std::string stepDir(const std::string &dir, size_t s) {
  return s == 0 ? dir : dir + "/step_" + std::to_string(s);
}

/// Step folders present: 0, then step_1, step_2, ... while they exist.
size_t stepCount(const std::string &dir) {
  size_t n = 1;
  while (std::filesystem::exists(stepDir(dir, n)))
    ++n;
  return n;
}

std::vector<kiln::NpyArray> loadAll(const std::string &dir, const std::string &prefix) {
  std::vector<kiln::NpyArray> arrays;
  for (const std::string &path : numberedFiles(dir, prefix))
    arrays.push_back(loadNpy(path));
  return arrays;
}

void expectOutputsMatch(const std::vector<kiln::NpyArray> &got,
                        const std::vector<kiln::NpyArray> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    SCOPED_TRACE("output " + std::to_string(k));
    if (want[k].dtype == "<f4")
      EXPECT_TRUE(allClose(got[k], want[k]));
    else
      EXPECT_TRUE(integersEqual(got[k], want[k]));
  }
}

class StateCase : public ::testing::TestWithParam<std::string> {};

// Each step's outputs as TFLite's, the state carried between them; then a
// reset, after which step 0 gives step 0's outputs again.
TEST_P(StateCase, StepsMatchTFLite) {
  std::string dir = kStateDir + "/" + GetParam();
  auto artifact = kiln::compileArtifact(dir + "/model.tflite", kiln::CompileOptions());
  ASSERT_TRUE(static_cast<bool>(artifact)) << llvm::toString(artifact.takeError());
  size_t steps = stepCount(dir);
  ASSERT_GE(steps, 3u) << dir << " has fewer than 3 steps";
  std::vector<std::vector<kiln::NpyArray>> inputs;
  for (size_t s = 0; s < steps; ++s)
    inputs.push_back(loadAll(stepDir(dir, s), "input"));
  inputs.push_back(inputs.front()); // after the reset below
  auto outputs = kiln::runArtifactSteps(*artifact, inputs, kiln::RunOptions(), {steps});
  ASSERT_TRUE(static_cast<bool>(outputs)) << llvm::toString(outputs.takeError());
  for (size_t s = 0; s <= steps; ++s) {
    SCOPED_TRACE(s < steps ? "step " + std::to_string(s) : "step 0 after kiln_module_reset_state");
    expectOutputsMatch((*outputs)[s], loadAll(stepDir(dir, s < steps ? s : 0), "output"));
  }
}

INSTANTIATE_TEST_SUITE_P(TFLite, StateCase, ::testing::ValuesIn(listCases()),
                         [](const auto &info) { return info.param; });

TEST(State, CasesArePresent) { EXPECT_GE(listCases().size(), 3u); }

std::shared_ptr<const kiln::CompilationPlan> planOf(const std::string &name) {
  auto plan = kiln::planModel(kStateDir + "/" + name + "/model.tflite", kiln::CompileOptions());
  if (!plan) {
    ADD_FAILURE() << llvm::toString(plan.takeError());
    return nullptr;
  }
  return *plan;
}

// Two variables (a float32 counter: 4 bytes; a 1x4 float32: 16 bytes), each
// at a cache line of the persistent region, which no transient buffer
// enters; each written once, by the copy of its final value, after every
// read (checkPlan holds the invariants; here the layout itself).
TEST(State, VariablesLiveInThePersistentRegion) {
  auto plan = planOf("resource_counter_and_decay");
  ASSERT_TRUE(plan);
  ASSERT_EQ(plan->state.size(), 2u);
  EXPECT_EQ(plan->state[0].name, "count");
  EXPECT_EQ(plan->state[0].bytes, 4);
  EXPECT_EQ(plan->state[0].offset, 0);
  EXPECT_EQ(plan->state[0].type, "1xf32");
  EXPECT_EQ(plan->state[1].name, "v");
  EXPECT_EQ(plan->state[1].bytes, 16);
  EXPECT_EQ(plan->state[1].offset, 64);
  EXPECT_EQ(plan->memory.persistentBytes, 128);
  EXPECT_GE(plan->memory.arenaBytes, 128);
  EXPECT_GE(plan->memory.lowerBoundBytes, 128);
  for (const kiln::Buffer &b : plan->memory.buffers)
    if (b.kind == kiln::BufferKind::Transient && b.firstCommand >= 0)
      EXPECT_GE(b.offset, 128) << "buffer " << b.id;
  for (const kiln::StateVariable &v : plan->state) {
    const kiln::Buffer &b = plan->memory.buffers[v.buffer];
    EXPECT_EQ(b.kind, kiln::BufferKind::State);
    // The last command writing it is a copy.
    int64_t writer = -1;
    for (const kiln::Command &c : plan->schedule.commands)
      for (const kiln::BindingRef &r : c.bindings)
        if (r.write && r.buffer == v.buffer)
          writer = c.index;
    ASSERT_GE(writer, 0) << v.name;
    EXPECT_EQ(plan->schedule.commands[writer].kind, kiln::CommandKind::Copy) << v.name;
  }
  EXPECT_TRUE(kiln::checkPlan(*plan).empty());
}

// A variable nothing assigns is its initial value: a constant, no state.
TEST(State, ReadOnlyVariableIsAConstant) {
  auto plan = planOf("resource_read_only");
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->state.empty());
  EXPECT_EQ(plan->memory.persistentBytes, 0);
}

/// resource_accumulator (acc, initially 0.5 -1 2 0, += x; y = acc) loaded
/// through the runtime's C API with a 64-byte aligned copy of its artifact,
/// one arena and x = 1 2 3 4 bound to `inv`.
struct Accumulator {
  using Bytes = std::unique_ptr<uint8_t, decltype(&std::free)>;
  static Bytes aligned(size_t bytes) {
    return Bytes(static_cast<uint8_t *>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)),
                 &std::free);
  }
  Bytes data{nullptr, &std::free}, arena{nullptr, &std::free};
  kiln_module_t *module = nullptr;
  size_t arenaBytes = 0;
  float x[4] = {1, 2, 3, 4}, y[4] = {};
  const void *ins[1] = {x};
  size_t inSizes[1] = {sizeof x};
  void *outs[1] = {y};
  size_t outSizes[1] = {sizeof y};
  kiln_invocation_t inv{};

  /// Compiles and loads the model; false (with a test failure) if it fails.
  bool load() {
    auto artifact = kiln::compileArtifact(kStateDir + "/resource_accumulator/model.tflite",
                                          kiln::CompileOptions());
    if (!artifact) {
      ADD_FAILURE() << llvm::toString(artifact.takeError());
      return false;
    }
    data = aligned(artifact->size());
    std::memcpy(data.get(), artifact->data(), artifact->size());
    if (kiln_module_load(data.get(), artifact->size(), &module).code != KILN_OK) {
      ADD_FAILURE() << "kiln_module_load failed";
      return false;
    }
    arenaBytes = kiln_module_arena_bytes(module);
    arena = aligned(arenaBytes);
    inv.inputs = ins;
    inv.input_sizes = inSizes;
    inv.input_count = 1;
    inv.outputs = outs;
    inv.output_sizes = outSizes;
    inv.output_count = 1;
    inv.arena = arena.get();
    inv.arena_size = arenaBytes;
    return true;
  }
  kiln_status_t invoke() { return kiln_module_invoke(module, &inv); }
  ~Accumulator() { kiln_module_release(module); }
};

// The state lives in the first invocation's arena: another arena is
// refused with the numbers, and after a reset it is accepted.
TEST(State, AnotherArenaIsRefusedUntilReset) {
  Accumulator acc;
  ASSERT_TRUE(acc.load());
  EXPECT_EQ(kiln_module_state_count(acc.module), 1u);
  ASSERT_EQ(acc.invoke().code, KILN_OK);
  EXPECT_FLOAT_EQ(acc.y[0], 1.5f); // 0.5 + 1
  ASSERT_EQ(acc.invoke().code, KILN_OK);
  EXPECT_FLOAT_EQ(acc.y[0], 2.5f); // 1.5 + 1: carried
  Accumulator::Bytes other = Accumulator::aligned(acc.arenaBytes);
  acc.inv.arena = other.get();
  kiln_status_t s = acc.invoke();
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_NE(
      std::string(s.message).find("state variable(s) live in the arena of its first invocation"),
      std::string::npos)
      << s.message;
  ASSERT_EQ(kiln_module_reset_state(acc.module).code, KILN_OK);
  ASSERT_EQ(acc.invoke().code, KILN_OK);
  EXPECT_FLOAT_EQ(acc.y[0], 1.5f); // initial value again, in the new arena
  EXPECT_EQ(kiln_module_reset_state(nullptr).code, KILN_INVALID_ARGUMENT);
}

// A stripped artifact (no reflection) still says it has state: the
// memory_plan section, which every profile keeps, lists the variables.
TEST(State, StrippedArtifactDescribesItsState) {
  kiln::CompileOptions options;
  options.reflection = false;
  auto artifact = kiln::compileArtifact(kStateDir + "/resource_accumulator/model.tflite", options);
  ASSERT_TRUE(static_cast<bool>(artifact)) << llvm::toString(artifact.takeError());
  auto info = kiln::verifyArtifact(*artifact, "a.kiln");
  ASSERT_TRUE(static_cast<bool>(info)) << llvm::toString(info.takeError());
  EXPECT_EQ(info->format_minor, 3u);
  EXPECT_EQ(info->reflection_json, nullptr);
  auto d = kiln::artifactDescriptionOf(*info, *artifact, "a.kiln");
  ASSERT_TRUE(static_cast<bool>(d)) << llvm::toString(d.takeError());
  ASSERT_EQ(d->state.size(), 1u);
  EXPECT_EQ(d->state[0].name, "acc");
  EXPECT_EQ(d->state[0].type, "1x4xf32");
  EXPECT_EQ(d->state[0].bytes, 16);
  EXPECT_EQ(d->persistentBytes, 64u);
  std::string text = kiln::formatArtifactDescription(*d, false);
  EXPECT_NE(text.find("state     64 bytes persistent (1 variable, carried across invocations)\n"
                      "  state 0 'acc' 1x4xf32, 16 bytes at arena offset 0\n"),
            std::string::npos)
      << text;
}

// An invocation cancelled at its last wave (the state's write-back copy
// not run, the rest done) must not leave half-written state: it is reset,
// and the next invocation gives the first invocation's output again.
TEST(State, CancelledInvocationResetsTheState) {
  Accumulator acc;
  ASSERT_TRUE(acc.load());
  struct Counter {
    int calls = 0, cancelAt = -1;
  } counter;
  acc.inv.cancelled = [](void *c) -> int {
    auto *k = static_cast<Counter *>(c);
    return ++k->calls == k->cancelAt ? 1 : 0;
  };
  acc.inv.cancel_context = &counter;
  ASSERT_EQ(acc.invoke().code, KILN_OK); // counts the waves
  EXPECT_FLOAT_EQ(acc.y[0], 1.5f);       // 0.5 + 1
  counter.cancelAt = counter.calls;      // the last wave
  counter.calls = 0;
  kiln_status_t s = acc.invoke();
  EXPECT_EQ(s.code, KILN_CANCELLED);
  EXPECT_NE(std::string(s.message).find("; state reset"), std::string::npos) << s.message;
  counter.cancelAt = -1;
  ASSERT_EQ(acc.invoke().code, KILN_OK);
  EXPECT_FLOAT_EQ(acc.y[0], 1.5f); // from the initial value again, not 2.5 or 3.5
}

TEST(State, RefusalsAreOneLineSayingWhy) {
  struct Refusal {
    const char *file;
    std::vector<std::string> parts;
  };
  std::vector<Refusal> refusals = {
      {"refused_computed_initial_value.tflite",
       {"operator #0 (CALL_ONCE): in its initialization (subgraph 1 'init'): operator #2 "
        "(ASSIGN_VARIABLE): initializes variable 'v' with a computed value; Kiln takes initial "
        "values that are constants"}},
      {"refused_type_mismatch.tflite",
       {"operator #2 (READ_VARIABLE): reads variable 'v' as [1,2] float32, but it holds [1,4] "
        "float32"}},
  };
  for (const Refusal &r : refusals) {
    SCOPED_TRACE(r.file);
    TempDir tmp;
    std::string args = "compile " + shellQuote(kStateDir + "/refused/" + r.file) + " -o " +
                       shellQuote(tmp.file("out.kiln"));
    CommandResult run = runCommand(shellQuote(kilnBinary()) + " " + args + " 2>&1");
    EXPECT_EQ(run.exitCode, 1) << run.output;
    for (const std::string &part : r.parts)
      EXPECT_NE(run.output.find(part), std::string::npos) << run.output;
    EXPECT_EQ(std::count(run.output.begin(), run.output.end(), '\n'), 1) << run.output;
  }
}

} // namespace
