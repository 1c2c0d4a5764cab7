//===- OpCaseTest.cpp - One TFLite operator at a time vs TensorFlow Lite --===//
//
// Every folder of tests/data/ops holds a small float32 model (one operator,
// or a short chain), seeded inputs and the outputs the real TensorFlow Lite
// interpreter computed for them (tests/reference/make_op_cases.mjs). Each is
// compiled and run in-process and compared within 1e-4 * (1 + |reference|);
// bool and int32 outputs (comparisons, CAST, FLOOR_DIV) must match exactly.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/Run.h"

#include <algorithm>
#include <filesystem>

using namespace kiln::test;

namespace {

std::vector<std::string> listCases() {
  std::vector<std::string> cases;
  std::filesystem::path root = std::filesystem::path(KILN_TEST_DATA_DIR) / "ops";
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(root, ec))
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "model.tflite"))
      cases.push_back(entry.path().filename().string());
  std::sort(cases.begin(), cases.end());
  return cases;
}

class OpCase : public ::testing::TestWithParam<std::string> {};

/// Compiles case `name` with `options`, runs it on its inputs and compares
/// every output with the stored reference.
void expectMatchesTFLite(const std::string &name, const kiln::CompileOptions &options) {
  expectFolderMatchesReference(std::string(KILN_TEST_DATA_DIR) + "/ops/" + name, options);
}

TEST_P(OpCase, MatchesTFLite) { expectMatchesTFLite(GetParam(), kiln::CompileOptions()); }

// The register-tiled kernels (kiln-register-tile-contractions) pick their
// tile from the vector width: 4 lanes with the default generic CPU (above),
// 8 with AVX2 and 16 with AVX-512. Every case with a matmul, convolution or
// depthwise convolution runs again at the wider widths, where the column
// tails (narrow and masked vectors) and row blocks differ. A host without
// the instructions cannot run that code: those variants skip, saying so.
bool usesContractionKernels(const std::string &name) {
  for (const char *op : {"conv", "fully_connected", "batch_matmul", "chain_", "dequantize"})
    if (name.find(op) != std::string::npos)
      return true;
  return false;
}

std::vector<std::string> listContractionCases() {
  std::vector<std::string> cases;
  for (const std::string &name : listCases())
    if (usesContractionKernels(name))
      cases.push_back(name);
  return cases;
}

class WideVectorOpCase : public ::testing::TestWithParam<std::string> {};

void expectMatchesAtCpu(const std::string &name, const char *cpu, bool hostHasIt) {
  if (!hostHasIt)
    GTEST_SKIP() << "this host cannot run " << cpu << " code";
  kiln::CompileOptions options;
  options.target.cpu = cpu;
  expectMatchesTFLite(name, options);
}

TEST_P(WideVectorOpCase, MatchesTFLiteWithAVX2Tiles) {
#if defined(__x86_64__)
  expectMatchesAtCpu(GetParam(), "x86-64-v3",
                     __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
#else
  GTEST_SKIP() << "x86-64 host only";
#endif
}

TEST_P(WideVectorOpCase, MatchesTFLiteWithAVX512Tiles) {
#if defined(__x86_64__)
  expectMatchesAtCpu(GetParam(), "x86-64-v4", __builtin_cpu_supports("avx512f") &&
                                                  __builtin_cpu_supports("avx512bw") &&
                                                  __builtin_cpu_supports("avx512vl") &&
                                                  __builtin_cpu_supports("avx512dq"));
#else
  GTEST_SKIP() << "x86-64 host only";
#endif
}

// The suite must not silently shrink to nothing.
TEST(OpCases, FolderIsPopulated) { EXPECT_GE(listCases().size(), 50u); }

/// Compiling tests/data/bad/`file` fails with one line holding `where` and
/// `what`.
void expectRefused(const char *file, const char *where, const char *what) {
  SCOPED_TRACE(file);
  auto artifact = kiln::compileArtifact(std::string(KILN_TEST_DATA_DIR) + "/bad/" + file,
                                        kiln::CompileOptions());
  ASSERT_FALSE(static_cast<bool>(artifact));
  std::string message = llvm::toString(artifact.takeError());
  EXPECT_NE(message.find(where), std::string::npos) << message;
  EXPECT_NE(message.find(what), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// MIRROR_PAD paddings beyond the mode's limit (REFLECT: dim - 1, SYMMETRIC:
// dim) or not constant are refused with one line naming the operator
// (tests/data/bad/mirror_pad_*.tflite; TFLite itself runs the first two).
TEST(OpCases, MirrorPadRefusesIllegalPaddings) {
  const std::pair<const char *, const char *> cases[] = {
      {"mirror_pad_reflect_too_large.tflite",
       "paddings [3, 0] of dimension 1 (size 3) are out of range: REFLECT mode pads each side by 0 to 2"},
      {"mirror_pad_symmetric_too_large.tflite",
       "paddings [5, 0] of dimension 1 (size 4) are out of range: SYMMETRIC mode pads each side by 0 to 4"},
      {"mirror_pad_computed_paddings.tflite", "input 1 must be a constant tensor"},
  };
  for (const auto &[file, what] : cases)
    expectRefused(file, "operator #0 (MIRROR_PAD): ", what);
}

// SPLIT_V sizes, an ARG_MAX axis and a BROADCAST_TO shape that are graph
// inputs, not constants, are refused with one line naming the operator and
// what it supports (tests/data/bad/*_computed_*.tflite).
TEST(OpCases, MovementOpsRefuseComputedShapeOperands) {
  const std::pair<const char *, const char *> cases[] = {
      {"split_v_computed_sizes.tflite",
       "operator #0 (SPLIT_V): size_splits (input 1) must be a constant; computed split sizes "
       "are not supported"},
      {"arg_max_computed_axis.tflite",
       "operator #0 (ARG_MAX): the axis (input 1) must be a constant; a computed axis is not "
       "supported"},
      {"broadcast_to_computed_shape.tflite",
       "operator #0 (BROADCAST_TO): the shape (input 1) must be a constant; a computed shape "
       "(other than a SHAPE or BROADCAST_ARGS result) is not supported"},
  };
  for (const auto &[file, what] : cases)
    expectRefused(file, "operator #0 (", what);
}

// CUMSUM with an axis that is a graph input, or of a type Kiln does not sum
// (bool), is refused with one line naming the operator
// (tests/data/bad/cumsum_*.tflite).
TEST(OpCases, CumsumRefusesComputedAxisAndOtherTypes) {
  const std::pair<const char *, const char *> cases[] = {
      {"cumsum_computed_axis.tflite",
       "the axis (input 1) must be a constant; a computed axis is not supported"},
      {"cumsum_bool.tflite", "only float32 and int32 inputs are supported"},
  };
  for (const auto &[file, what] : cases)
    expectRefused(file, "operator #0 (CUMSUM): ", what);
}

// REDUCE_ALL of a non-bool tensor and DYNAMIC_UPDATE_SLICE of an element
// type Kiln does not update or with start indices of the wrong length are
// refused with one line naming the operator (tests/data/bad/reduce_all_*,
// dynamic_update_slice_*).
TEST(OpCases, ReduceAllAndDynamicUpdateSliceRefuseBadOperands) {
  const std::pair<const char *, const char *> cases[] = {
      {"reduce_all_float.tflite",
       "operator #0 (REDUCE_ALL): input 0 has element type float32; REDUCE_ALL takes bool"},
      {"dynamic_update_slice_bool.tflite",
       "operator #0 (DYNAMIC_UPDATE_SLICE): operand (input 0) has element type bool; supported: "
       "float32, int32, int8"},
      {"dynamic_update_slice_start_rank.tflite",
       "operator #0 (DYNAMIC_UPDATE_SLICE): start_indices (input 2) must have shape [2] (one "
       "index per operand dimension), not [3]"},
  };
  for (const auto &[file, what] : cases)
    expectRefused(file, "operator #0 (", what);
}

// CAST to a type Kiln does not compute (int64 here) is refused with one line
// naming the operator and the casts it supports (tests/data/bad/
// cast_through_int64.tflite; TFLite runs it).
TEST(OpCases, CastRefusesUnsupportedTypes) {
  auto artifact = kiln::compileArtifact(
      std::string(KILN_TEST_DATA_DIR) + "/bad/cast_through_int64.tflite", kiln::CompileOptions());
  ASSERT_FALSE(static_cast<bool>(artifact));
  std::string message = llvm::toString(artifact.takeError());
  EXPECT_NE(message.find("operator #0 (CAST): casts FLOAT32 to INT64; supported: FLOAT32, INT32 "
                         "and BOOL to each other"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// A corrupt sparse tensor (tests/data/bad/sparse_*.tflite, written by
// tests/reference/make_sparse_cases.mjs) is one error line naming the
// tensor, the level and the bad index, segment or count; never a crash or
// an out-of-bounds read.
TEST(OpCases, SparseTensorsRefuseCorruptIndices) {
  const char *where = "sparse tensor 'weights' (index 1, FLOAT32 [6,10])";
  const std::pair<const char *, const char *> cases[] = {
      {"sparse_index_out_of_range.tflite",
       "level 1 (dimension 1, size 10) array_indices[3] = 10 is out of range: the dimension has "
       "10 coordinates (shape [6,10])"},
      {"sparse_segments_not_monotonic.tflite",
       "level 1 (dimension 1, size 10) array_segments[2] = 2 breaks the segments: they start at "
       "0, never decrease and end at the 17 array_indices"},
      {"sparse_indices_not_increasing.tflite",
       "level 1 (dimension 1, size 10) array_indices[1] = 5 does not increase within its segment "
       "(array_indices[0] = 5)"},
      {"sparse_traversal_order_length.tflite",
       "traversal_order [0] has 1 entries; a rank-2 tensor with 0 block dimensions needs 2"},
      {"sparse_too_few_values.tflite",
       "stores 64 bytes; its sparsity describes 17 values (68 bytes)"},
  };
  for (const auto &[file, what] : cases)
    expectRefused(file, where, what);
}

// Sparse weights are densified at import: the compile result carries one
// warning per densified tensor with its stored and dense sizes
// (tests/data/ops/sparse_*; DENSIFY's output is the same constant, no
// second warning).
TEST(OpCases, SparseWeightsReportTheirDensification) {
  const std::pair<const char *, const char *> cases[] = {
      {"sparse_fully_connected_1x4",
       "tensor 'weights' (sparse FLOAT32 [8,32], 1x4 blocks, 96 of 256 values stored, 516 bytes "
       "with its indices) densified at import to 1 KiB"},
      {"sparse_densify_4x4_fully_connected",
       "tensor 'weights' (sparse FLOAT32 [8,16], 4x4 blocks, 112 of 128 values stored, 468 bytes "
       "with its indices) densified at import to 512 bytes"},
      {"sparse_densify_fp16_dequantize",
       "tensor 'weights' (sparse FLOAT16 [8,24], 1x4 blocks, 80 of 192 values stored, 276 bytes "
       "with its indices) densified at import to 384 bytes"},
  };
  for (const auto &[name, warning] : cases) {
    SCOPED_TRACE(name);
    auto result = kiln::compile(std::string(KILN_TEST_DATA_DIR) + "/ops/" + name + "/model.tflite",
                                kiln::CompileOptions());
    ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
    EXPECT_EQ(result->warnings, std::vector<std::string>{warning});
  }
}

INSTANTIATE_TEST_SUITE_P(TFLite, OpCase, ::testing::ValuesIn(listCases()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return info.param;
                         });
INSTANTIATE_TEST_SUITE_P(TFLite, WideVectorOpCase, ::testing::ValuesIn(listContractionCases()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return info.param;
                         });

} // namespace
