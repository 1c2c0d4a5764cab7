//===- InPlaceTest.cpp - Elementwise results written in place -------------===//
//
// tests/data/ops/chain_attention has an elementwise dispatch whose input
// dies in that dispatch: the planner gives its output the input's memory
// (alias_of). The plan must stay valid, the kernel must be told the two
// bindings alias, and the outputs must still match TensorFlow Lite.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/Plan.h"
#include "kiln/Run.h"

using namespace kiln::test;

namespace {

TEST(InPlace, ElementwiseOutputReusesDeadInput) {
  std::string dir = std::string(KILN_TEST_DATA_DIR) + "/ops/chain_attention";
  auto result = kiln::compile(dir + "/model.tflite", kiln::CompileOptions());
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  const kiln::CompilationPlan &plan = *result->plan;
  std::vector<std::string> errors = kiln::checkPlan(plan);
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors.front());

  int aliases = 0;
  for (const kiln::Buffer &b : plan.memory.buffers) {
    if (b.aliasOf < 0)
      continue;
    ++aliases;
    const kiln::Buffer &target = plan.memory.buffers[b.aliasOf];
    EXPECT_EQ(b.offset, target.offset);
    EXPECT_EQ(b.bytes, target.bytes);
    // The dispatch that writes the alias is the last reader of its target.
    const kiln::Command *writer = nullptr;
    for (const kiln::Command &c : plan.schedule.commands)
      for (const kiln::BindingRef &r : c.bindings)
        if (r.write && r.buffer == b.id)
          writer = &c;
    ASSERT_NE(writer, nullptr);
    EXPECT_EQ(target.lastCommand, writer->index);
    const kiln::Dispatch *d = nullptr;
    for (const kiln::Dispatch &x : plan.dispatches)
      if (x.id == writer->dispatch)
        d = &x;
    ASSERT_NE(d, nullptr);
    ASSERT_EQ(d->aliasedBindings.size(), 2u);
    EXPECT_EQ(writer->bindings[d->aliasedBindings[0]].buffer, b.aliasOf);
    EXPECT_EQ(writer->bindings[d->aliasedBindings[1]].buffer, b.id);
  }
  EXPECT_GE(aliases, 1);

  std::vector<kiln::NpyArray> inputs;
  for (const std::string &path : numberedFiles(dir, "input"))
    inputs.push_back(loadNpy(path));
  auto ran = kiln::runArtifact(result->artifact, inputs);
  ASSERT_TRUE(static_cast<bool>(ran)) << llvm::toString(ran.takeError());
  std::vector<std::string> expected = numberedFiles(dir, "output");
  ASSERT_EQ(ran->outputValues.size(), expected.size());
  for (size_t k = 0; k < expected.size(); ++k)
    EXPECT_TRUE(allClose(ran->outputValues[k], loadNpy(expected[k])));
}

} // namespace
