//===- PlanCheckerTest.cpp - checkPlan on hand-made plans -----------------===//
//
// Small plans written by hand, each violating one output-binding rule, so
// the checker that every compile runs is known to catch it.
//
//===----------------------------------------------------------------------===//
#include "kiln/Plan.h"

#include <gtest/gtest.h>

namespace {

using namespace kiln;

/// Input 0 (16 bytes) -> dispatch 0 writes output 0 (16 bytes); output 1
/// (16 bytes) is a copy of input 0.
CompilationPlan validPlan() {
  CompilationPlan plan;
  plan.memory.buffers = {
      {0, BufferKind::Input, 0, 16, 0, 0, 1, -1, "4xf32"},
      {1, BufferKind::Output, 0, 16, 0, 0, 0, -1, "4xf32"},
      {2, BufferKind::Output, 1, 16, 0, 1, 1, -1, "4xf32"},
  };
  Command dispatch;
  dispatch.index = 0;
  dispatch.dispatch = 0;
  dispatch.bindings = {{0, 0, 16, false}, {1, 0, 16, true}};
  Command copy;
  copy.index = 1;
  copy.kind = CommandKind::Copy;
  copy.bindings = {{0, 0, 16, false}, {2, 0, 16, true}};
  plan.schedule = {1, {dispatch, copy}};
  plan.outputs = {{0, "neg", 1, 16, {0}}, {1, "x", 2, 16, {1}}};
  return plan;
}

bool mentions(const std::vector<std::string> &errors, const std::string &text) {
  for (const std::string &e : errors)
    if (e.find(text) != std::string::npos)
      return true;
  return false;
}

TEST(PlanChecker, ValidPlanPasses) { EXPECT_TRUE(checkPlan(validPlan()).empty()); }

TEST(PlanChecker, UnwrittenOutputIsCaught) {
  CompilationPlan plan = validPlan();
  plan.schedule.commands.pop_back(); // the copy into output 1
  plan.outputs[1].writers.clear();
  auto errors = checkPlan(plan);
  EXPECT_TRUE(mentions(errors, "output 1 ('x'): 16 of its 16 bytes are never written"))
      << (errors.empty() ? "" : errors.front());
}

TEST(PlanChecker, PartlyWrittenOutputIsCaught) {
  CompilationPlan plan = validPlan();
  plan.schedule.commands[1].bindings = {{0, 0, 8, false}, {2, 0, 8, true}};
  EXPECT_TRUE(mentions(checkPlan(plan), "8 of its 16 bytes are never written"));
}

TEST(PlanChecker, OutputWrittenTwiceIsCaught) {
  CompilationPlan plan = validPlan();
  // The copy now writes output 0, which the dispatch already wrote.
  plan.schedule.commands[1].bindings[1].buffer = 1;
  auto errors = checkPlan(plan);
  EXPECT_TRUE(mentions(errors, "output 0 ('neg'): bytes from 0 are written twice"));
  EXPECT_TRUE(mentions(errors, "output 1 ('x'): 16 of its 16 bytes are never written"));
}

TEST(PlanChecker, MissingSlotIsCaught) {
  CompilationPlan plan = validPlan();
  plan.outputs.pop_back();
  EXPECT_TRUE(mentions(checkPlan(plan), "2 output buffers for 1 model outputs"));
}

TEST(PlanChecker, SlotBoundToTheWrongBufferIsCaught) {
  CompilationPlan plan = validPlan();
  std::swap(plan.outputs[0].buffer, plan.outputs[1].buffer);
  EXPECT_TRUE(mentions(checkPlan(plan), "output 0 ('neg') is not bound to output buffer 0"));
}

TEST(PlanChecker, ReadOfAnOutputBeforeItsWriteIsCaught) {
  CompilationPlan plan = validPlan();
  // The copy reads output 0 in the wave the dispatch writes it.
  plan.schedule.commands[1].bindings[0].buffer = 1;
  EXPECT_TRUE(mentions(checkPlan(plan), "reads output 0 ('neg') before its last write"));
}

} // namespace
