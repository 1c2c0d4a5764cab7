//===- ProfileTest.cpp - The per-dispatch profile (kiln/Profile.h) --------===//
//
// kiln::profileDispatches on plans of small models in tests/data, checked
// against numbers worked out by hand from the models' shapes:
//   - BATCH_MATMUL [3, 4] x [4, 5] (ops/batch_matmul_rank2): 3 x 4 x 5 =
//     60 multiply-accumulates = 120 FLOP; reads (12 + 20) x 4 = 128 bytes,
//     writes 15 x 4 = 60; the cost model's time 0.5 us + max(120 / 8000,
//     188 / 10000) us = 518.8 ns;
//   - int8 CONV_2D 3x3 VALID stride 2, 1x7x7x4 -> 1x3x3x5
//     (ops_int8/conv_2d_valid_stride2_relu): 3 x 3 x 5 outputs x 3 x 3 x 4
//     taps = 1620 multiply-accumulates = 3240 integer operations, "OP";
//   - a trace made up here (durations chosen by hand): each dispatch's
//     time is the median of its intervals, shares are time / sum, rates
//     work / time;
//   - a real traced run on this host: every dispatch measured, shares
//     summing to 1.
//
//===----------------------------------------------------------------------===//
#include "kiln/Profile.h"
#include "kiln/Compiler.h"
#include "kiln/Run.h"

#include <gtest/gtest.h>

#include <numeric>

namespace {

std::shared_ptr<const kiln::CompilationPlan> planOf(const std::string &relative) {
  auto plan = kiln::planModel(KILN_TEST_DATA_DIR "/" + relative, {});
  if (!plan) {
    ADD_FAILURE() << relative << ": " << llvm::toString(plan.takeError());
    return nullptr;
  }
  return *plan;
}

/// The row of the dispatch that fused source operator `op`.
const kiln::DispatchProfile *rowWithOp(const kiln::CompilationPlan &plan,
                                       const std::vector<kiln::DispatchProfile> &rows,
                                       const std::string &op) {
  for (size_t i = 0; i < plan.dispatches.size(); ++i)
    for (const kiln::SourceOp &s : plan.dispatches[i].ops)
      if (s.name == op)
        return &rows[i];
  return nullptr;
}

double shareSum(const std::vector<kiln::DispatchProfile> &rows) {
  return std::accumulate(rows.begin(), rows.end(), 0.0,
                         [](double s, const kiln::DispatchProfile &p) { return s + p.share; });
}

TEST(Profile, MatmulWorkBytesAndEstimateByHand) {
  auto plan = planOf("ops/batch_matmul_rank2/model.tflite");
  ASSERT_TRUE(plan);
  auto rows = kiln::profileDispatches(*plan, nullptr);
  ASSERT_EQ(rows.size(), plan->dispatches.size());
  const kiln::DispatchProfile *mm = rowWithOp(*plan, rows, "BATCH_MATMUL");
  ASSERT_TRUE(mm);
  EXPECT_EQ(mm->work, 2 * 3 * 4 * 5);
  EXPECT_FALSE(mm->integer);
  EXPECT_STREQ(kiln::workUnit(mm->integer), "FLOP");
  EXPECT_EQ(mm->bytesRead, (3 * 4 + 4 * 5) * 4);
  EXPECT_EQ(mm->bytesWritten, 3 * 5 * 4);
  EXPECT_NEAR(mm->estimatedNs, 518.8, 1e-9);
  // Not run: times are the estimate, no measurement and no rate.
  EXPECT_EQ(mm->measuredNs, -1);
  EXPECT_EQ(mm->timeNs, mm->estimatedNs);
  EXPECT_EQ(mm->workPerSecond, -1);
  EXPECT_NEAR(shareSum(rows), 1.0, 1e-12);
  // No frames given: the stack is unknown.
  EXPECT_EQ(mm->stackBytes, -1);
  EXPECT_FALSE(mm->kernel.empty());
}

TEST(Profile, Int8ConvolutionCountsIntegerOperations) {
  auto plan = planOf("ops_int8/conv_2d_valid_stride2_relu/model.tflite");
  ASSERT_TRUE(plan);
  auto rows = kiln::profileDispatches(*plan, nullptr);
  const kiln::DispatchProfile *conv = rowWithOp(*plan, rows, "CONV_2D");
  ASSERT_TRUE(conv);
  EXPECT_TRUE(conv->integer);
  EXPECT_STREQ(kiln::workUnit(conv->integer), "OP");
  EXPECT_EQ(conv->work, 2 * (3 * 3 * 5) * (3 * 3 * 4));
  // The input is 1x7x7x4 int8: 196 bytes of what the dispatch reads.
  EXPECT_GE(conv->bytesRead, 196);
  // Its kernel's rate is per cycle in OP too.
  EXPECT_EQ(conv->kernelDetail.find("FLOP"), std::string::npos) << conv->kernelDetail;
  const kiln::Dispatch &d = plan->dispatches[conv - rows.data()];
  if (d.kernel.tileRows > 0)
    EXPECT_NE(conv->kernelDetail.find(" OP/cycle"), std::string::npos) << conv->kernelDetail;
}

TEST(Profile, MeasuredTimesAreMediansOfTheTrace) {
  auto plan = planOf("ops/chain_blaze_block/model.tflite");
  ASSERT_TRUE(plan);
  ASSERT_GE(plan->dispatches.size(), 2u);
  // Three runs of every dispatch command: 100k, 500k, 200k ns for the first
  // dispatch command, twice that for the second, ...; workgroup events are
  // ignored.
  std::vector<kiln::TraceEvent> trace;
  std::map<int64_t, double> expected; // dispatch id -> median ns
  int k = 0;
  for (const kiln::Command &c : plan->schedule.commands) {
    if (c.kind != kiln::CommandKind::Dispatch)
      continue;
    ++k;
    uint64_t t = 1000000 * k;
    for (uint64_t d : {100000, 500000, 200000}) {
      trace.push_back({c.index, -1, 0, t, t + d * k});
      trace.push_back({c.index, 0, 1, t, t + 7}); // a workgroup
      t += 10 * d * k;
    }
    expected[c.dispatch] += 200000.0 * k;
  }
  auto rows = kiln::profileDispatches(*plan, &trace);
  double total = 0;
  for (const auto &[id, ns] : expected)
    total += ns;
  for (size_t i = 0; i < rows.size(); ++i) {
    const kiln::DispatchProfile &p = rows[i];
    SCOPED_TRACE(p.name);
    ASSERT_TRUE(expected.count(p.id));
    EXPECT_EQ(p.measuredNs, expected[p.id]);
    EXPECT_EQ(p.timeNs, p.measuredNs);
    EXPECT_DOUBLE_EQ(p.share, expected[p.id] / total);
    EXPECT_DOUBLE_EQ(p.workPerSecond, double(plan->dispatches[i].flops) / expected[p.id] * 1e9);
  }
  EXPECT_NEAR(shareSum(rows), 1.0, 1e-12);
  // A trace without a dispatch's events: that row is not measured and
  // counts 0 of the total.
  std::vector<kiln::TraceEvent> partial;
  for (const kiln::TraceEvent &e : trace)
    if (e.command != trace.front().command)
      partial.push_back(e);
  rows = kiln::profileDispatches(*plan, &partial);
  int unmeasured = 0;
  for (const kiln::DispatchProfile &p : rows)
    if (p.timeNs < 0) {
      ++unmeasured;
      EXPECT_EQ(p.share, 0);
      EXPECT_EQ(p.workPerSecond, -1);
    }
  EXPECT_EQ(unmeasured, 1);
  EXPECT_NEAR(shareSum(rows), 1.0, 1e-12);
}

TEST(Profile, RealTracedRunMeasuresEveryDispatch) {
  auto compiled = kiln::compile(KILN_TEST_DATA_DIR "/ops/chain_blaze_block/model.tflite", {});
  ASSERT_TRUE(static_cast<bool>(compiled)) << llvm::toString(compiled.takeError());
  kiln::RunOptions options;
  options.trace = true;
  options.randomInputs = true;
  auto run = kiln::runArtifact(compiled->artifact, {}, options);
  ASSERT_TRUE(static_cast<bool>(run)) << llvm::toString(run.takeError());
  auto rows = kiln::profileDispatches(*compiled->plan, &run->trace);
  ASSERT_EQ(rows.size(), compiled->plan->dispatches.size());
  for (const kiln::DispatchProfile &p : rows) {
    EXPECT_GT(p.measuredNs, 0) << p.name;
    EXPECT_GT(p.workPerSecond, 0) << p.name;
  }
  EXPECT_NEAR(shareSum(rows), 1.0, 1e-12);
}

TEST(Profile, TraceCommandNamesLabelEachCommand) {
  auto plan = planOf("ops/chain_blaze_block/model.tflite");
  ASSERT_TRUE(plan);
  std::vector<std::string> names = kiln::traceCommandNames(*plan);
  ASSERT_EQ(names.size(), plan->schedule.commands.size());
  for (const kiln::Command &c : plan->schedule.commands) {
    if (c.kind != kiln::CommandKind::Dispatch) {
      EXPECT_EQ(names[c.index], kiln::toString(c.kind));
      continue;
    }
    for (const kiln::Dispatch &d : plan->dispatches)
      if (d.id == c.dispatch)
        EXPECT_EQ(names[c.index], kiln::dispatchLabel(d));
  }
}

TEST(Profile, ElementTypesAndIntegerDispatches) {
  kiln::Buffer b;
  b.type = "1x64x64x24xf32";
  EXPECT_EQ(kiln::elementTypeOf(b), "f32");
  b.type = "i8";
  EXPECT_EQ(kiln::elementTypeOf(b), "i8");
  // A hand-made plan: dispatch 0 binds i8 and i32 buffers, dispatch 1 an i8
  // and an f32 one (a dequantize), dispatch 2 nothing.
  kiln::CompilationPlan plan;
  for (const char *type : {"1x4xi8", "4xi32", "1x4xf32"}) {
    kiln::Buffer buffer;
    buffer.id = int64_t(plan.memory.buffers.size());
    buffer.type = type;
    plan.memory.buffers.push_back(buffer);
  }
  for (int64_t id : {0, 1, 2}) {
    kiln::Dispatch d;
    d.id = id;
    plan.dispatches.push_back(d);
  }
  kiln::Command c0, c1;
  c0.dispatch = 0;
  c0.bindings = {{0, 0, 4, false}, {1, 0, 16, true}};
  c1.index = 1;
  c1.dispatch = 1;
  c1.bindings = {{0, 0, 4, false}, {2, 0, 16, true}};
  plan.schedule.commands = {c0, c1};
  EXPECT_TRUE(kiln::isIntegerDispatch(plan, plan.dispatches[0]));
  EXPECT_FALSE(kiln::isIntegerDispatch(plan, plan.dispatches[1]));
  EXPECT_FALSE(kiln::isIntegerDispatch(plan, plan.dispatches[2]));
}

} // namespace
