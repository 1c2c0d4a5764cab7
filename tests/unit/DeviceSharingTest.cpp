//===- DeviceSharingTest.cpp - One HAL device shared by many callers ------===//
//
// Stress: 2, 4 and 8 threads, each with its own module (four
// different models, so 2-4 modules per artifact), all on one local-task
// device, 1000 invocations per thread: every output is byte-identical to
// the model's local-sync output, and every thread finishes within a bound
// (a watchdog fails the test instead of hanging CTest). Before the device
// serialized its waves, about one call in fifty returned KILN_OK with
// other bytes and one run in six never returned.
// Then the trace buffer: `count` never passes `capacity`, `dropped` counts
// the rest, so count + dropped is every event of a run.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/Npy.h"
#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

/// One compiled model: its artifact in 64-byte aligned memory, its input
/// (the op case's input_0.npy) and its local-sync output bytes.
struct Model {
  std::string name;
  uint8_t *bytes = nullptr;
  size_t size = 0;
  std::vector<uint8_t> input;
  std::vector<uint8_t> want;
  size_t arena = 0;
  ~Model() { std::free(bytes); }
};

/// A module of `m` plus the buffers of one caller.
struct Caller {
  kiln_module_t *module = nullptr;
  std::vector<uint8_t> out;
  void *arena = nullptr;
  ~Caller() {
    kiln_module_release(module);
    std::free(arena);
  }
};

kiln_status_t invoke(Caller &c, const Model &m, const kiln_device_t *device,
                     kiln_trace_t *trace = nullptr) {
  const void *ins[1] = {m.input.data()};
  size_t inSizes[1] = {m.input.size()};
  void *outs[1] = {c.out.data()};
  size_t outSizes[1] = {c.out.size()};
  kiln_invocation_t inv{};
  inv.inputs = ins;
  inv.input_sizes = inSizes;
  inv.input_count = 1;
  inv.outputs = outs;
  inv.output_sizes = outSizes;
  inv.output_count = 1;
  inv.arena = c.arena;
  inv.arena_size = m.arena;
  inv.device = device;
  inv.trace = trace;
  return kiln_module_invoke(c.module, &inv);
}

/// Loads `m` into a new caller (output sized like the expected bytes).
std::unique_ptr<Caller> load(const Model &m) {
  auto c = std::make_unique<Caller>();
  kiln_status_t s = kiln_module_load(m.bytes, m.size, &c->module);
  EXPECT_EQ(s.code, KILN_OK) << m.name << ": " << s.message;
  c->out.assign(m.want.size(), 0);
  if (m.arena)
    c->arena = std::aligned_alloc(64, (m.arena + 63) / 64 * 64);
  return c;
}

/// Compiles op case `name` and records its local-sync output.
std::unique_ptr<Model> compile(const std::string &name) {
  auto m = std::make_unique<Model>();
  m->name = name;
  std::string dir = std::string(KILN_TEST_DATA_DIR) + "/ops/" + name;
  auto artifact = kiln::compileArtifact(dir + "/model.tflite", kiln::CompileOptions());
  if (!artifact) {
    ADD_FAILURE() << name << ": " << llvm::toString(artifact.takeError());
    return nullptr;
  }
  m->size = artifact->size();
  m->bytes = static_cast<uint8_t *>(std::aligned_alloc(64, (m->size + 63) / 64 * 64 + 64));
  std::memcpy(m->bytes, artifact->data(), m->size);
  m->input = kiln::test::loadNpy(dir + "/input_0.npy").data;
  kiln::NpyArray expected = kiln::test::loadNpy(dir + "/output_0.npy");
  kiln_module_t *probe = nullptr;
  if (kiln_module_load(m->bytes, m->size, &probe).code != KILN_OK) {
    ADD_FAILURE() << name << " does not load";
    return nullptr;
  }
  kiln_artifact_info_t info{};
  EXPECT_EQ(kiln_module_artifact_info(probe, &info).code, KILN_OK);
  m->arena = static_cast<size_t>(info.arena_bytes);
  kiln_module_release(probe);
  m->want.assign(expected.data.size(), 0);
  auto c = load(*m);
  kiln_status_t s = invoke(*c, *m, nullptr);
  EXPECT_EQ(s.code, KILN_OK) << s.message;
  m->want = c->out;
  // The reference run itself is right (the op case's TFLite output).
  kiln::NpyArray got = expected;
  got.data = m->want;
  EXPECT_TRUE(kiln::test::allClose(got, expected)) << name;
  return m;
}

TEST(DeviceSharing, ManyThreadsOneLocalTaskDeviceSameBytesAndAllReturn) {
  std::vector<std::unique_ptr<Model>> models;
  for (const char *name : {"chain_conv_pad_maxpool_reshape_fc_softmax", "conv_2d_tile_edges",
                           "depthwise_conv_2d_tile_edges_5x5_s2", "batch_matmul_tile_edges"}) {
    models.push_back(compile(name));
    ASSERT_TRUE(models.back()) << name;
  }
  const int kInvocations = 1000;
  for (int threads : {2, 4, 8}) {
    kiln_device_t device;
    ASSERT_EQ(kiln_device_create_local_task(3, &device).code, KILN_OK);
    std::vector<std::unique_ptr<Caller>> callers;
    for (int t = 0; t < threads; ++t)
      callers.push_back(load(*models[t % models.size()]));
    std::atomic<int> wrong{0}, failed{0};
    std::vector<std::future<void>> done;
    for (int t = 0; t < threads; ++t)
      done.push_back(std::async(std::launch::async, [&, t] {
        const Model &m = *models[t % models.size()];
        Caller &c = *callers[t];
        for (int i = 0; i < kInvocations; ++i) {
          std::memset(c.out.data(), 0xA5, c.out.size());
          if (invoke(c, m, &device).code != KILN_OK)
            ++failed;
          else if (c.out != m.want)
            ++wrong;
        }
      }));
    // Bounded: a caller that never returns fails here instead of hanging.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
    for (int t = 0; t < threads; ++t)
      if (done[t].wait_until(deadline) != std::future_status::ready) {
        std::fprintf(stderr, "DeviceSharing: thread %d of %d did not return within 240 s\n", t,
                     threads);
        std::abort(); // the hung threads cannot be joined
      }
    EXPECT_EQ(failed.load(), 0) << threads << " threads";
    EXPECT_EQ(wrong.load(), 0) << threads << " threads: outputs differing from local-sync";
    kiln_device_release(&device);
  }
}

TEST(DeviceSharing, TraceCountsWhatItStoredAndWhatItDropped) {
  auto m = compile("conv_2d_tile_edges");
  ASSERT_TRUE(m);
  auto c = load(*m);
  // How many events one run makes, with room for all of them.
  std::vector<kiln_trace_event_t> events(1 << 16);
  kiln_trace_t all{events.data(), events.size(), 0, 0};
  ASSERT_EQ(invoke(*c, *m, nullptr, &all).code, KILN_OK);
  ASSERT_EQ(all.dropped, 0u);
  ASSERT_GT(all.count, 2u);
  kiln_device_t task;
  ASSERT_EQ(kiln_device_create_local_task(2, &task).code, KILN_OK);
  for (const kiln_device_t *device : {static_cast<const kiln_device_t *>(nullptr),
                                      static_cast<const kiln_device_t *>(&task)}) {
    std::vector<kiln_trace_event_t> two(2);
    kiln_trace_t small{two.data(), two.size(), 0, 0};
    ASSERT_EQ(invoke(*c, *m, device, &small).code, KILN_OK);
    EXPECT_EQ(small.count, 2u) << (device ? "local-task" : "local-sync");
    EXPECT_EQ(small.count + small.dropped, all.count) << (device ? "local-task" : "local-sync");
  }
  kiln_device_release(&task);
}

} // namespace
