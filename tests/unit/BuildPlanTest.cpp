//===- BuildPlanTest.cpp - The plan read off @main -----------------------===//
//
// buildPlan on @main bodies whose commands bind buffers through views
// (memref.expand_shape / collapse_shape): every binding names the buffer
// the view is of. The long chain makes the view map grow while a view is
// being inserted, the case that once read a freed bucket (a SIGSEGV in
// about 1 of 40 compiles of a 400-command model, and a heap-use-after-free
// under AddressSanitizer, where this test runs in CI).
//
//===----------------------------------------------------------------------===//
#include "Schedule/BuildPlan.h"
#include "PassTestSupport.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;

namespace {

/// @main(%in, %out): `n` transient buffers, buffer k reached only through
/// 2 or 4 views (expand/collapse pairs) and a cast; copy k
/// moves buffer k-1 (the input for k = 0) into buffer k, and the last copy
/// writes the output. With 4 or 6 map entries per buffer, the inserts that
/// grow the map (LLVM's DenseMap grows at 3/4 full: entries 47, 95, 191,
/// ...) are views.
std::string chainOfViews(int n) {
  std::string s = "func.func @main(%in: memref<4xf32>, %out: memref<4xf32>) {\n";
  for (int k = 0; k < n; ++k) {
    std::string view = "%a" + std::to_string(k);
    s += "  " + view + " = memref.alloc() : memref<4xf32>\n";
    for (int pair = 0; pair < 1 + k % 2; ++pair) {
      std::string id = std::to_string(k) + "_" + std::to_string(pair);
      s += "  %e" + id + " = memref.expand_shape " + view +
           " [[0, 1]] : memref<4xf32> into memref<2x2xf32>\n";
      s += "  %c" + id + " = memref.collapse_shape %e" + id +
           " [[0, 1]] : memref<2x2xf32> into memref<4xf32>\n";
      view = "%c" + id;
    }
    s += "  memref.copy " + (k == 0 ? std::string("%in") : "%v" + std::to_string(k - 1)) + ", " +
         view + " : memref<4xf32> to memref<4xf32>\n";
    // The last view of buffer k under a name the next copy can use.
    s += "  %v" + std::to_string(k) + " = memref.cast " + view +
         " : memref<4xf32> to memref<4xf32>\n";
  }
  s += "  memref.copy %v" + std::to_string(n - 1) + ", %out : memref<4xf32> to memref<4xf32>\n";
  s += "  return\n}\n";
  return s;
}

TEST(BuildPlan, ViewsBindTheBufferTheyAreOf) {
  for (int n : {1, 20, 47, 48, 100, 300}) {
    MLIRContext context;
    std::string source = chainOfViews(n);
    OwningOpRef<ModuleOp> module = kiln::test::parse(context, source.c_str());
    ASSERT_TRUE(module) << n;
    auto plan = kiln::buildPlan(*module, /*numInputs=*/1, /*numConstants=*/0, {"y"});
    ASSERT_TRUE(static_cast<bool>(plan)) << llvm::toString(plan.takeError());
    // Buffers 0 and 1 are the input and output arguments; allocation k is
    // buffer k + 2 (versions, if any, come after them).
    const std::vector<kiln::Buffer> &buffers = plan->memory.buffers;
    ASSERT_GE(buffers.size(), static_cast<size_t>(n + 2));
    std::vector<const kiln::Command *> copies;
    for (const kiln::Command &cmd : plan->schedule.commands)
      if (cmd.kind == kiln::CommandKind::Copy)
        copies.push_back(&cmd);
    ASSERT_EQ(copies.size(), static_cast<size_t>(n + 1)) << n;
    for (int k = 0; k <= n; ++k) {
      const kiln::Command &cmd = *copies[k];
      ASSERT_EQ(cmd.bindings.size(), 2u);
      int64_t from = k == 0 ? 0 : k + 1, to = k == n ? 1 : k + 2;
      EXPECT_EQ(cmd.bindings[0].buffer, from) << "copy " << k << " of " << n;
      EXPECT_FALSE(cmd.bindings[0].write);
      EXPECT_EQ(cmd.bindings[1].buffer, to) << "copy " << k << " of " << n;
      EXPECT_TRUE(cmd.bindings[1].write);
      EXPECT_EQ(cmd.bindings[1].length, 16);
    }
    EXPECT_TRUE(kiln::checkPlan(*plan).empty()) << n;
  }
}

} // namespace
