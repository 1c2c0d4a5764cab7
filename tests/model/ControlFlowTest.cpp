//===- ControlFlowTest.cpp - TFLite IF, WHILE, CALL_ONCE and subgraphs ----===//
//
// The cases of tests/data/control_flow (tests/reference/
// make_control_flow_cases.mjs): models with several subgraphs whose IF,
// WHILE and CALL_ONCE operators Kiln resolves at import. Each case is
// compiled and run in-process (float32 and int8 branches) and compared with TensorFlow Lite 2.9's
// builtin kernels (stored outputs, which the script also checks against
// its own evaluation of the case) within 1e-4 x (1 + |reference|); int32
// outputs exactly. The importer's decision for each operator (folded
// branch, both branches selected, iterations unrolled) is checked from the
// case's definition, and the refused models give one error line saying
// why.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/Plan.h"
#include "kiln/Run.h"

#include <filesystem>

using namespace kiln::test;

namespace {

std::string caseDir(const std::string &name) {
  return std::string(KILN_TEST_DATA_DIR) + "/control_flow/" + name;
}

std::vector<std::string> listCases() {
  std::vector<std::string> cases;
  std::error_code ec;
  for (const auto &entry :
       std::filesystem::directory_iterator(std::string(KILN_TEST_DATA_DIR) + "/control_flow", ec))
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "model.tflite"))
      cases.push_back(entry.path().filename().string());
  std::sort(cases.begin(), cases.end());
  return cases;
}

class ControlFlowCase : public ::testing::TestWithParam<std::string> {};

TEST_P(ControlFlowCase, MatchesTFLite) {
  expectFolderMatchesReference(caseDir(GetParam()), kiln::CompileOptions());
}

INSTANTIATE_TEST_SUITE_P(TFLite, ControlFlowCase, ::testing::ValuesIn(listCases()),
                         [](const auto &info) { return info.param; });

TEST(ControlFlow, CasesArePresent) { EXPECT_GE(listCases().size(), 12u); }

/// "decision: reason" of each decision the import of case `name` made.
std::vector<std::string> decisionsOf(const std::string &name) {
  auto planned = kiln::planOnly(caseDir(name) + "/model.tflite", kiln::CompileOptions());
  if (!planned) {
    ADD_FAILURE() << llvm::toString(planned.takeError());
    return {};
  }
  std::vector<std::string> out;
  for (const kiln::ControlFlowDecision &d : planned->controlFlow) {
    EXPECT_FALSE(d.reason.empty()) << d.node;
    out.push_back(d.node + ": " + d.decision);
  }
  return out;
}

TEST(ControlFlow, EachOperatorSaysWhatItBecame) {
  EXPECT_EQ(decisionsOf("if_constant_true"),
            (std::vector<std::string>{"operator #0 (IF): then branch taken (subgraph 1 'then')"}));
  EXPECT_EQ(decisionsOf("if_constant_false"),
            (std::vector<std::string>{"operator #0 (IF): else branch taken (subgraph 2 'else')"}));
  EXPECT_EQ(decisionsOf("if_input_condition_true"),
            (std::vector<std::string>{"operator #0 (IF): both branches, selected at run time"}));
  // int8 branches (RELU, REVERSE_V2) select the same way.
  EXPECT_EQ(decisionsOf("if_int8_branches_false"),
            (std::vector<std::string>{"operator #0 (IF): both branches, selected at run time"}));
  // SUM then LESS: the condition is operator #2's input, computed at run time.
  EXPECT_EQ(decisionsOf("if_computed_condition"),
            (std::vector<std::string>{"operator #2 (IF): both branches, selected at run time"}));
  EXPECT_EQ(decisionsOf("while_counter_5"),
            (std::vector<std::string>{"operator #0 (WHILE): unrolled 5 iterations"}));
  EXPECT_EQ(decisionsOf("while_zero_iterations"),
            (std::vector<std::string>{"operator #0 (WHILE): unrolled 0 iterations"}));
  // A condition subgraph whose output is a constant tensor is known too.
  EXPECT_EQ(decisionsOf("while_constant_false_condition"),
            (std::vector<std::string>{"operator #0 (WHILE): unrolled 0 iterations"}));
  // The loop first, then the IF of each iteration (i == 2 takes then).
  std::vector<std::string> nested = {"operator #0 (WHILE): unrolled 4 iterations"};
  for (int i = 0; i < 4; ++i)
    nested.push_back("operator #2 (IF) in WHILE#0 body (iteration " + std::to_string(i) + "): " +
                     (i == 2 ? "then branch taken (subgraph 3 'then')"
                             : "else branch taken (subgraph 4 'else')"));
  EXPECT_EQ(decisionsOf("while_body_with_if"), nested);
  std::vector<std::string> once = decisionsOf("call_once_then_relu");
  ASSERT_EQ(once.size(), 1u);
  EXPECT_EQ(once[0].rfind("operator #0 (CALL_ONCE): initialization converted in place", 0), 0u)
      << once[0];
}

// A constant branch leaves no trace of the other: the folded IF plans the
// two operators of its taken branch only, named after the IF.
TEST(ControlFlow, FoldedBranchOperatorsAreNamedAfterTheirCall) {
  auto plan =
      kiln::planModel(caseDir("if_constant_true") + "/model.tflite", kiln::CompileOptions());
  ASSERT_TRUE(static_cast<bool>(plan)) << llvm::toString(plan.takeError());
  std::vector<std::string> names;
  for (const kiln::Dispatch &d : (*plan)->dispatches)
    for (const kiln::SourceOp &op : d.ops) {
      names.push_back(op.name);
      EXPECT_EQ(op.sourceIndex, 0) << op.name; // the IF, operator #0 of subgraph 0
    }
  EXPECT_EQ(names,
            (std::vector<std::string>{"MUL in IF#0 then branch", "ADD in IF#0 then branch"}));
}

TEST(ControlFlow, RefusalsAreOneLineSayingWhy) {
  struct Refusal {
    const char *file;
    std::vector<std::string> parts;
  };
  std::vector<Refusal> refusals = {
      {"refused_while_data_dependent.tflite",
       {"operator #0 (WHILE): its condition (subgraph 1 'cond') depends on input data",
        "a static schedule cannot loop on data"}},
      {"refused_while_too_many_iterations.tflite",
       {"operator #0 (WHILE): unrolled, the loop passes 512 operations",
        "the most Kiln adds for one WHILE"}},
      {"refused_while_int32_condition.tflite",
       {"operator #0 (WHILE): its condition (subgraph 1 'cond') gives an int32 tensor; a WHILE "
        "condition gives one "
        "bool"}},
      {"refused_if_branches_disagree.tflite",
       {"operator #0 (IF): its condition is computed at run time", "([2,3] and [2,1])",
        "a static schedule cannot branch on data"}},
      {"refused_call_once_self.tflite",
       {"operator #0 (CALL_ONCE): its initialization is subgraph 0 'main', the model itself: a "
        "call cannot run the model it is part of"}},
      {"refused_if_missing_subgraph.tflite",
       {"operator #0 (IF): its else branch is subgraph 7, which does not exist: the model has "
        "subgraphs 0 to 1"}},
  };
  TempDir tmp;
  for (const Refusal &r : refusals) {
    CommandResult c = runCommand(kilnBinary() + " compile " + shellQuote(caseDir(r.file)) + " -o " +
                                 shellQuote(tmp.file("m.kiln")));
    EXPECT_EQ(c.exitCode, 1) << r.file << ": " << c.output;
    EXPECT_EQ(std::count(c.output.begin(), c.output.end(), '\n'), 1) << c.output;
    EXPECT_EQ(c.output.rfind(std::string("kiln: error: ") + r.file + ": ", 0), 0u) << c.output;
    for (const std::string &part : r.parts)
      EXPECT_NE(c.output.find(part), std::string::npos) << part << "\n" << c.output;
    EXPECT_FALSE(std::filesystem::exists(tmp.file("m.kiln")));
  }
}

// A second subgraph that nothing calls is not the model: subgraph 0 is
// compiled, as TFLite runs it (tests/data/bad/two_subgraphs.tflite: RELU,
// and an unreferenced TANH).
TEST(ControlFlow, UnreferencedSubgraphIsIgnored) {
  auto artifact = kiln::compileArtifact(
      std::string(KILN_TEST_DATA_DIR) + "/bad/two_subgraphs.tflite", kiln::CompileOptions());
  ASSERT_TRUE(static_cast<bool>(artifact)) << llvm::toString(artifact.takeError());
  kiln::NpyArray x;
  x.dtype = "<f4";
  x.shape = {1, 8};
  const float in[8] = {-2, -1, -0.5f, 0, 0.5f, 1, 2, 3};
  x.data.assign(reinterpret_cast<const uint8_t *>(in),
                reinterpret_cast<const uint8_t *>(in) + sizeof in);
  auto result = kiln::runArtifact(*artifact, {x});
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  const float *y = reinterpret_cast<const float *>(result->outputValues[0].data.data());
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(y[i], std::max(in[i], 0.0f)) << i; // RELU, not TANH
}

} // namespace
