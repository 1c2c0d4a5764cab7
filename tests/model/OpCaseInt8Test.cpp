//===- OpCaseInt8Test.cpp - int8/uint8 TFLite operators vs TensorFlow Lite ===//
//
// Every folder of tests/data/ops_int8 holds a small quantized model (one
// int8 or uint8 operator; one float -> QUANTIZE -> CONV_2D -> DEQUANTIZE
// chain), inputs over the whole integer range and the outputs of TensorFlow
// Lite 2.9's builtin integer kernels (tests/reference/make_int8_cases.mjs;
// tests/data/ops_int8/README.md; int8 DIV, which 2.9 lacks: int8_eval.mjs's
// evaluation of TFLite Micro's kernel, meta.json "reference"). Each case is
// compiled and run in-process and every output element is compared as an
// integer: exactly, or within 1 LSB for the operators of kOneLsbOperators,
// on which TensorFlow Lite's own engines disagree by 1 LSB. Float outputs
// (DEQUANTIZE) are compared in units of their LSB, the scale of the
// dequantized tensor ("lsb" in meta.json).
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/Run.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

using namespace kiln::test;

namespace {

const std::string kRoot = std::string(KILN_TEST_DATA_DIR) + "/ops_int8";

/// Operators on which TensorFlow Lite's engines differ by 1 LSB among
/// themselves (tests/data/ops_int8/README.md, KNOWN_ENGINE_DIFFERENCES in
/// make_int8_cases.mjs). A case containing one of them may differ from the
/// stored builtin-kernel reference by at most 1 LSB per element; every
/// other case must be exact.
const std::map<std::string, const char *> kOneLsbOperators = {
    // XNNPACK's requantization (the wasm build and TFLite 2.9 + XNNPACK QS8
    // agree) puts some elements 1 LSB from TFLite's fixed-point
    // MultiplyByQuantizedMultiplier.
    {"CONV_2D", "XNNPACK requantization vs builtin MultiplyByQuantizedMultiplier"},
    {"FULLY_CONNECTED", "XNNPACK requantization vs builtin MultiplyByQuantizedMultiplier"},
    {"ADD", "XNNPACK requantization vs builtin MultiplyByQuantizedMultiplierSmallerThanOneExp"},
    {"SUB", "XNNPACK requantization vs builtin MultiplyByQuantizedMultiplierSmallerThanOneExp"},
    // XNNPACK's int8 bilinear resize interpolates differently from
    // ResizeBilinearInteger (10-bit fractions).
    {"RESIZE_BILINEAR", "XNNPACK interpolation vs builtin ResizeBilinearInteger"},
    // 2.9's optimized int8 BatchMatMul rounds a near tie 1 LSB away from
    // MultiplyByQuantizedMultiplier, which the wasm build follows.
    {"BATCH_MATMUL", "TFLite 2.9 builtin vs the wasm build and MultiplyByQuantizedMultiplier"},
    // The wasm build differs by 1 LSB from 2.9's builtin kernels, which 2.9
    // + XNNPACK reproduces (most likely the wasm build's later XNNPACK takes
    // these nodes).
    {"LEAKY_RELU", "wasm build vs TFLite 2.9 builtin"},
    {"QUANTIZE", "wasm build vs TFLite 2.9 builtin (int8 -> int8 requantization)"},
};

std::vector<std::string> listCases() {
  std::vector<std::string> cases;
  std::error_code ec;
  for (const auto &entry : std::filesystem::directory_iterator(kRoot, ec))
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "model.tflite"))
      cases.push_back(entry.path().filename().string());
  std::sort(cases.begin(), cases.end());
  return cases;
}

/// What the test needs from a case's meta.json: its operators and, per
/// output, the LSB of a float output (0 for integer outputs).
struct CaseInfo {
  std::set<std::string> operators;
  std::vector<double> floatLsb;
};

llvm::Expected<CaseInfo> readCaseInfo(const std::string &dir) {
  auto buffer = llvm::MemoryBuffer::getFile(dir + "/meta.json");
  if (!buffer)
    return llvm::createStringError(buffer.getError(), "%s/meta.json: cannot read", dir.c_str());
  auto json = llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return json.takeError();
  const llvm::json::Object *kase = json->getAsObject() ? json->getAsObject()->getObject("case") : nullptr;
  const llvm::json::Array *ops = kase ? kase->getArray("operators") : nullptr;
  const llvm::json::Array *outs = kase ? kase->getArray("outputs") : nullptr;
  if (!ops || !outs)
    return llvm::createStringError(std::errc::invalid_argument,
                                   "%s/meta.json: no case.operators / case.outputs", dir.c_str());
  CaseInfo info;
  for (const llvm::json::Value &op : *ops)
    if (auto name = op.getAsString())
      info.operators.insert(name->str());
  for (const llvm::json::Value &out : *outs) {
    const llvm::json::Object *o = out.getAsObject();
    info.floatLsb.push_back(o ? o->getNumber("lsb").value_or(0.0) : 0.0);
  }
  return info;
}

/// Element i of an |i1, |u1, |b1, <i4 or <f4 array as a double (exact for
/// the integer types; a bool is 0 or 1).
double element(const kiln::NpyArray &a, int64_t i) {
  const uint8_t *p = a.data.data();
  if (a.dtype == "|i1")
    return static_cast<int8_t>(p[i]);
  if (a.dtype == "|u1" || a.dtype == "|b1")
    return p[i];
  int32_t i32;
  float f32;
  if (a.dtype == "<i4") {
    std::memcpy(&i32, p + 4 * i, 4);
    return i32;
  }
  std::memcpy(&f32, p + 4 * i, 4);
  return f32;
}

/// Differences between an output and its reference, in LSB.
struct LsbDiff {
  std::string error; ///< dtype or shape mismatch ("" when comparable)
  int64_t elements = 0, differing = 0, worst = -1;
  double maxLsb = 0;
};

/// Compares `got` with `want` element by element in units of `lsb` (1 for
/// integer outputs).
LsbDiff compareLsb(const kiln::NpyArray &got, const kiln::NpyArray &want, double lsb) {
  LsbDiff d;
  if (got.dtype != want.dtype)
    d.error = "dtype " + got.dtype + ", reference " + want.dtype;
  else if (got.shape != want.shape)
    d.error = "shape differs from the reference";
  else if (want.dtype != "|i1" && want.dtype != "|u1" && want.dtype != "|b1" &&
           want.dtype != "<i4" && want.dtype != "<f4")
    d.error = "unexpected reference dtype " + want.dtype;
  if (!d.error.empty())
    return d;
  d.elements = want.numElements();
  for (int64_t i = 0; i < d.elements; ++i) {
    double diff = std::fabs(element(got, i) - element(want, i)) / lsb;
    if (diff == 0)
      continue;
    ++d.differing;
    if (!(diff <= d.maxLsb)) {
      d.maxLsb = diff;
      d.worst = i;
    }
  }
  return d;
}

/// Passes when no element of `got` is more than `allowed` LSB from `want`
/// (a float output up to float rounding of its scale). The message gives the
/// count of differing elements, the max |diff| in LSB and the worst element.
::testing::AssertionResult withinLsb(const kiln::NpyArray &got, const kiln::NpyArray &want,
                                     double lsb, int allowed) {
  LsbDiff d = compareLsb(got, want, lsb);
  if (!d.error.empty())
    return ::testing::AssertionFailure() << d.error;
  bool pass = d.maxLsb <= allowed + (want.dtype == "<f4" ? 1e-3 : 0);
  auto result = pass ? ::testing::AssertionSuccess() : ::testing::AssertionFailure();
  result << d.differing << " of " << d.elements << " elements differ, max |diff| " << d.maxLsb
         << " LSB (allowed " << allowed << ")";
  if (d.worst >= 0)
    result << "; worst at flat index " << d.worst << ": got " << element(got, d.worst)
           << ", reference " << element(want, d.worst);
  return result;
}

class OpCaseInt8 : public ::testing::TestWithParam<std::string> {};

TEST_P(OpCaseInt8, MatchesTFLiteBitExact) {
  std::string dir = kRoot + "/" + GetParam();
  auto info = readCaseInfo(dir);
  ASSERT_TRUE(static_cast<bool>(info)) << llvm::toString(info.takeError());
  int allowed = 0;
  for (const std::string &op : info->operators)
    if (kOneLsbOperators.count(op))
      allowed = 1;
  auto artifact = kiln::compileArtifact(dir + "/model.tflite", kiln::CompileOptions());
  ASSERT_TRUE(static_cast<bool>(artifact)) << llvm::toString(artifact.takeError());
  std::vector<kiln::NpyArray> inputs;
  for (const std::string &path : numberedFiles(dir, "input"))
    inputs.push_back(loadNpy(path));
  auto result = kiln::runArtifact(*artifact, inputs);
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  std::vector<std::string> expected = numberedFiles(dir, "output");
  ASSERT_EQ(result->outputValues.size(), expected.size());
  ASSERT_EQ(info->floatLsb.size(), expected.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    SCOPED_TRACE("output " + std::to_string(k));
    kiln::NpyArray want = loadNpy(expected[k]);
    double lsb = want.dtype == "<f4" ? info->floatLsb[k] : 1.0;
    ASSERT_GT(lsb, 0) << "a float output needs its LSB (meta.json case.outputs[k].lsb)";
    auto verdict = withinLsb(result->outputValues[k], want, lsb, allowed);
    EXPECT_TRUE(verdict);
    // A difference the table allows is still reported.
    if (verdict && compareLsb(result->outputValues[k], want, lsb).differing)
      std::cout << "[ int8     ] " << GetParam() << " output " << k << ": " << verdict.message()
                << "\n";
  }
}

// The suite must not silently shrink, and every int8 operator Kiln supports must
// keep at least one case.
TEST(OpCasesInt8, FolderCoversEveryOperator) {
  std::set<std::string> seen;
  for (const std::string &name : listCases()) {
    auto info = readCaseInfo(kRoot + "/" + name);
    ASSERT_TRUE(static_cast<bool>(info)) << llvm::toString(info.takeError());
    seen.insert(info->operators.begin(), info->operators.end());
  }
  // clang-format off
  const char *const operators[] = {
      "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "BATCH_MATMUL", "ADD", "SUB", "MUL",
      "AVERAGE_POOL_2D", "MAX_POOL_2D", "MEAN", "SOFTMAX", "LOGISTIC", "TANH", "HARD_SWISH",
      "LEAKY_RELU", "RELU", "RELU6", "RESHAPE", "SQUEEZE", "EXPAND_DIMS", "TRANSPOSE",
      "CONCATENATION", "PAD", "SLICE", "STRIDED_SLICE", "GATHER", "RESIZE_BILINEAR",
      "RESIZE_NEAREST_NEIGHBOR", "QUANTIZE", "DEQUANTIZE", "PACK", "UNPACK", "SPLIT", "SPLIT_V",
      "DEPTH_TO_SPACE", "SPACE_TO_DEPTH", "SPACE_TO_BATCH_ND", "BATCH_TO_SPACE_ND",
      "BROADCAST_TO", "GATHER_ND", "REVERSE_V2", "MIRROR_PAD", "ARG_MAX", "ARG_MIN",
      "REDUCE_MAX", "REDUCE_MIN", "SUM", "ABS", "RSQRT", "MAXIMUM", "MINIMUM",
      "SQUARED_DIFFERENCE", "PRELU", "EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS",
      "LESS_EQUAL", "SELECT", "SELECT_V2", "DIV"};
  // clang-format on
  for (const char *op : operators)
    EXPECT_TRUE(seen.count(op)) << "no int8 case for " << op;
  EXPECT_GE(listCases().size(), 90u);
}

// The comparison itself: 1 LSB passes only where allowed, and the count and
// size of the differences are reported.
TEST(OpCasesInt8, ComparisonCountsLsb) {
  kiln::NpyArray want{"|i1", {4}, {0x00, 0x7f, 0x80, 0x05}};
  kiln::NpyArray got = want;
  EXPECT_TRUE(withinLsb(got, want, 1, 0));
  got.data[0] = 0x01;                    // 0 -> 1
  got.data[2] = 0x81;                    // -128 -> -127
  auto exact = withinLsb(got, want, 1, 0);
  EXPECT_FALSE(exact);
  EXPECT_NE(std::string(exact.message()).find("2 of 4 elements differ, max |diff| 1 LSB"),
            std::string::npos)
      << exact.message();
  EXPECT_TRUE(withinLsb(got, want, 1, 1));
  got.data[3] = 0x07;                    // 5 -> 7
  EXPECT_FALSE(withinLsb(got, want, 1, 1));
  kiln::NpyArray u8{"|u1", {2}, {0, 255}};
  kiln::NpyArray u8got{"|u1", {2}, {0, 254}};
  EXPECT_TRUE(withinLsb(u8got, u8, 1, 1));
  EXPECT_FALSE(withinLsb(u8got, u8, 1, 0));
  EXPECT_FALSE(withinLsb(u8got, want, 1, 1)) << "dtype mismatch must fail";
}

// Bad operands of the int8 elementwise operators (tests/data/ops_int8_refused,
// REFUSALS in make_int8_cases.mjs) are refused with one line naming the
// operator and what is supported.
TEST(OpCasesInt8, RefusesBadOperands) {
  const std::pair<const char *, const char *> cases[] = {
      {"maximum_input_scale_differs",
       "operator #0 (MAXIMUM): input 1 has scale 0.04 zero point -3, the output scale 0.05 zero "
       "point -3; int8 MAXIMUM / MINIMUM compare stored values, so the inputs must have the "
       "output's scale and zero point"},
      {"minimum_output_zero_point_differs",
       "operator #0 (MINIMUM): input 0 has scale 0.05 zero point -3, the output scale 0.05 zero "
       "point 0; int8 MAXIMUM / MINIMUM compare stored values"},
      {"maximum_shapes_do_not_broadcast",
       "operator #0 (MAXIMUM): input shapes do not broadcast (dimension 1: 3 vs 4)"},
      {"greater_input_scale_above_1",
       "operator #0 (GREATER): input 1 has scale 1.5; TFLite's int8 comparisons take input "
       "scales below 1 (QuantizeMultiplierSmallerThanOneExp)"},
      {"prelu_alpha_per_channel", "operator #0 (PRELU): alpha is quantized per channel ("},
      {"div_fused_tanh", "operator #0 (DIV): fused activation TANH is not supported on int8 "
                         "(supported: NONE, RELU, RELU_N1_TO_1, RELU6)"},
      {"abs_float_output", "operator #0 (ABS): the output has no int8 quantization (scale and "
                           "zero point); mixed float/int8 operators are not supported"},
      {"squared_difference_float_input",
       "operator #0 (SQUARED_DIFFERENCE): input 1 has no int8 quantization (scale and zero "
       "point); mixed float/int8 operators are not supported"},
      {"select_v2_value_scale_differs",
       "operator #0 (SELECT_V2): input 2 has scale 0.04 zero point -3, the output scale 0.05 "
       "zero point -3; int8 SELECT copies stored values, so both values must have the "
       "output's scale and zero point"},
      {"add_n_input_scale_differs",
       "operator #0 (ADD_N): input 1 has scale 0.04 zero point -17, input 0 scale 0.05 zero "
       "point -17; int8 ADD_N adds inputs of one scale and zero point (TFLite Micro)"},
      {"cast_int8_to_bool",
       "operator #0 (CAST): casts INT8 to BOOL; int8 casts supported (TFLite Micro cast.cc): "
       "INT8 to INT8, INT32, FLOAT32 and INT32, FLOAT32, BOOL to INT8"},
      {"zeros_like_uint8", "operator #0 (ZEROS_LIKE): takes UINT8 to UINT8; int8 ZEROS_LIKE "
                           "supported (TFLite Micro zeros_like.cc): INT8 to INT8"},
      {"fill_float_value_int8_output",
       "operator #0 (FILL): fills INT8 with a FLOAT32 value; int8 FILL takes an INT8 value for "
       "an INT8 output (TFLite Micro fill.cc)"},
      {"embedding_lookup_hybrid_zero_point",
       "operator #0 (EMBEDDING_LOOKUP): value (input 1) has scale 0.02 zero point 3; the hybrid "
       "(FLOAT32 output) EMBEDDING_LOOKUP takes one scale and zero point 0"},
      {"cumsum_int8_computed_axis", "operator #0 (CUMSUM): the axis (input 1) must be a "
                                    "constant; a computed axis is not supported"},
      {"elu_uint8", "operator #0 (ELU): takes an INT8 input and output here (TFLite Micro's "
                    "ELU: FLOAT32 or INT8)"},
      {"transpose_conv_weight_zero_point",
       "operator #0 (TRANSPOSE_CONV): the weights have a nonzero zero point; TFLite's int8 "
       "TRANSPOSE_CONV takes symmetric weights (zero point 0)"},
      {"dynamic_update_slice_update_too_large",
       "operator #0 (DYNAMIC_UPDATE_SLICE): update (input 1) [3,2] must have the rank of "
       "operand [2,4] and fit in it"},
  };
  for (const auto &[name, what] : cases) {
    SCOPED_TRACE(name);
    auto artifact = kiln::compileArtifact(std::string(KILN_TEST_DATA_DIR) + "/ops_int8_refused/" +
                                              name + ".tflite",
                                          kiln::CompileOptions());
    ASSERT_FALSE(static_cast<bool>(artifact));
    std::string message = llvm::toString(artifact.takeError());
    EXPECT_NE(message.find(what), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

INSTANTIATE_TEST_SUITE_P(TFLite, OpCaseInt8, ::testing::ValuesIn(listCases()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return info.param;
                         });

} // namespace
