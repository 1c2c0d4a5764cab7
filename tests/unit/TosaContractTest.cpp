//===- TosaContractTest.cpp - The TOSA contract gate ----------------------===//
//
// One hand-written module per TOSA 0.60 ERROR_IF condition the gate checks
// (TosaContract.h): each breaks exactly that condition and must be named;
// a valid twin of each passes. Then the two message forms: an imported
// model names the source operator from its location, a .mlir file names
// the file and line; and `kiln compile` of such a file stops there.
//
//===----------------------------------------------------------------------===//
#include "Import/TosaContract.h"
#include "PassTestSupport.h"
#include "TestSupport.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

using namespace mlir;

namespace {

/// The gate's verdict on a module whose @main body is `body` (ops reading
/// %x of `xType`, returning `resultType`).
std::string verdict(const std::string &xType, const std::string &resultType,
                    const std::string &body) {
  MLIRContext context;
  std::string source = "func.func @main(%x: " + xType + ") -> " + resultType + " {\n" + body +
                       "\n}\n";
  auto module = kiln::test::parse(context, source.c_str());
  if (!module)
    return "<does not parse>";
  llvm::Error err = kiln::checkTosaContract(*module, "m.mlir", false);
  if (!err)
    return "";
  return llvm::toString(std::move(err));
}

void expectViolation(const std::string &xType, const std::string &resultType,
                     const std::string &body, const std::string &needle) {
  std::string v = verdict(xType, resultType, body);
  EXPECT_NE(v.find(needle), std::string::npos) << "want '" << needle << "', got: " << v;
  EXPECT_NE(v.find("<does not parse>"), 0u) << body;
}

const char *kWeights = "%w = \"tosa.const\"() {value = dense<1.0> : tensor<2x3x3x1xf32>} : () -> "
                       "tensor<2x3x3x1xf32>\n"
                       "%b = \"tosa.const\"() {value = dense<0.0> : tensor<2xf32>} : () -> "
                       "tensor<2xf32>\n";

std::string conv(const std::string &pad, const std::string &stride, const std::string &dilation,
                 const std::string &out) {
  return std::string(kWeights) + "%y = \"tosa.conv2d\"(%x, %w, %b) {pad = array<i64: " + pad +
         ">, stride = array<i64: " + stride + ">, dilation = array<i64: " + dilation +
         ">} : (tensor<1x8x8x1xf32>, tensor<2x3x3x1xf32>, tensor<2xf32>) -> " + out +
         "\nreturn %y : " + out;
}

TEST(TosaContract, Conv2D) {
  const std::string in = "tensor<1x8x8x1xf32>";
  // Valid: 8 + 0 + 0 - 3 = 5, stride 1: 6. With pad 1/0 and stride 2:
  // 8 + 1 - 3 = 6, / 2 + 1 = 4.
  EXPECT_EQ(verdict(in, "tensor<1x6x6x2xf32>", conv("0, 0, 0, 0", "1, 1", "1, 1", "tensor<1x6x6x2xf32>")), "");
  EXPECT_EQ(verdict(in, "tensor<1x4x4x2xf32>", conv("1, 0, 1, 0", "2, 2", "1, 1", "tensor<1x4x4x2xf32>")), "");
  expectViolation(in, "tensor<1x3x3x2xf32>", conv("0, -1, 0, -1", "2, 2", "1, 1", "tensor<1x3x3x2xf32>"),
                  "pad -1 < 0");
  expectViolation(in, "tensor<1x6x6x2xf32>", conv("0, 0, 0, 0", "0, 1", "1, 1", "tensor<1x6x6x2xf32>"),
                  "stride 0 < 1");
  expectViolation(in, "tensor<1x6x6x2xf32>", conv("0, 0, 0, 0", "1, 1", "0, 1", "tensor<1x6x6x2xf32>"),
                  "dilation 0 < 1");
  // 8 - 3 = 5, stride 2: out 3 with one row unread (allowed without end
  // padding); 4 is wrong; the unread row beside an end pad is refused.
  EXPECT_EQ(verdict(in, "tensor<1x3x3x2xf32>", conv("0, 0, 0, 0", "2, 2", "1, 1", "tensor<1x3x3x2xf32>")), "");
  expectViolation(in, "tensor<1x4x3x2xf32>", conv("0, 0, 0, 0", "2, 2", "1, 1", "tensor<1x4x3x2xf32>"),
                  "output height 4 != (8 + 0 + 0 - 3) / 2 + 1");
  expectViolation(in, "tensor<1x4x4x2xf32>", conv("1, 1, 1, 1", "2, 2", "1, 1", "tensor<1x4x4x2xf32>"),
                  "end pad 1 beside 1 unread input rows");
  // A dilated kernel (extent 2 * 4 + 1 = 9) larger than the input.
  expectViolation(in, "tensor<1x1x1x2xf32>", conv("0, 0, 0, 0", "1, 1", "4, 4", "tensor<1x1x1x2xf32>"),
                  "window height 9 > padded input 8");
}

std::string pool(const std::string &op, const std::string &kernel, const std::string &stride,
                 const std::string &pad, const std::string &out) {
  return "%y = \"tosa." + op + "\"(%x) {kernel = array<i64: " + kernel +
         ">, stride = array<i64: " + stride + ">, pad = array<i64: " + pad +
         ">} : (tensor<1x8x8x1xf32>) -> " + out + "\nreturn %y : " + out;
}

TEST(TosaContract, Pools) {
  const std::string in = "tensor<1x8x8x1xf32>";
  for (const char *op : {"max_pool2d", "avg_pool2d"}) {
    EXPECT_EQ(verdict(in, "tensor<1x4x4x1xf32>", pool(op, "2, 2", "2, 2", "0, 0, 0, 0", "tensor<1x4x4x1xf32>")), "") << op;
    expectViolation(in, "tensor<1x4x4x1xf32>", pool(op, "3, 3", "2, 2", "0, -1, 0, -1", "tensor<1x4x4x1xf32>"),
                    "pad -1 < 0");
    expectViolation(in, "tensor<1x4x4x1xf32>", pool(op, "0, 2", "2, 2", "0, 0, 0, 0", "tensor<1x4x4x1xf32>"),
                    "kernel 0 < 1");
    expectViolation(in, "tensor<1x8x8x1xf32>", pool(op, "2, 2", "0, 1", "0, 0, 0, 0", "tensor<1x8x8x1xf32>"),
                    "stride 0 < 1");
    expectViolation(in, "tensor<1x5x5x1xf32>", pool(op, "2, 2", "2, 2", "2, 0, 2, 0", "tensor<1x5x5x1xf32>"),
                    "pad 2 >= kernel 2");
    // 8 - 3 = 5, stride 2: 3 windows; 2 is a wrong output size.
    EXPECT_EQ(verdict(in, "tensor<1x3x3x1xf32>", pool(op, "3, 3", "2, 2", "0, 0, 0, 0", "tensor<1x3x3x1xf32>")), "") << op;
    expectViolation(in, "tensor<1x2x3x1xf32>", pool(op, "3, 3", "2, 2", "0, 0, 0, 0", "tensor<1x2x3x1xf32>"),
                    "output height 2 != (8 + 0 + 0 - 3) / 2 + 1");
  }
}

TEST(TosaContract, TransposeConv2D) {
  auto body = [](const std::string &outPad, const std::string &out) {
    return std::string(kWeights) + "%y = \"tosa.transpose_conv2d\"(%x, %w, %b) {out_pad = array<i64: " +
           outPad + ">, stride = array<i64: 1, 1>, out_shape = array<i64: -1, -1, -1, -1>} : "
           "(tensor<1x8x8x1xf32>, tensor<2x3x3x1xf32>, tensor<2xf32>) -> " + out + "\nreturn %y : " + out;
  };
  const std::string in = "tensor<1x8x8x1xf32>";
  // (8 - 1) * 1 + 0 + 0 + 3 = 10; with out_pad -2/-2: 6.
  EXPECT_EQ(verdict(in, "tensor<1x10x10x2xf32>", body("0, 0, 0, 0", "tensor<1x10x10x2xf32>")), "");
  EXPECT_EQ(verdict(in, "tensor<1x6x6x2xf32>", body("-2, -2, -2, -2", "tensor<1x6x6x2xf32>")), "");
  expectViolation(in, "tensor<1x4x10x2xf32>", body("-3, -3, 0, 0", "tensor<1x4x10x2xf32>"), "out_pad -3 <= -3");
  expectViolation(in, "tensor<1x9x10x2xf32>", body("0, 0, 0, 0", "tensor<1x9x10x2xf32>"),
                  "output height 9 != (8 - 1) * 1 + 0 + 0 + 3");
}

TEST(TosaContract, PadSliceAxesTransposeClamp) {
  const std::string in = "tensor<2x3xf32>";
  auto pad = [](const std::string &pads, const std::string &out) {
    return "%p = \"tosa.const\"() {value = dense<[" + pads + "]> : tensor<2x2xi32>} : () -> tensor<2x2xi32>\n"
           "%y = \"tosa.pad\"(%x, %p) : (tensor<2x3xf32>, tensor<2x2xi32>) -> " + out + "\nreturn %y : " + out;
  };
  EXPECT_EQ(verdict(in, "tensor<3x5xf32>", pad("[1, 0], [1, 1]", "tensor<3x5xf32>")), "");
  expectViolation(in, "tensor<2x2xf32>", pad("[0, 0], [0, -1]", "tensor<2x2xf32>"), "padding -1 < 0");
  expectViolation(in, "tensor<3x6xf32>", pad("[1, 0], [1, 1]", "tensor<3x6xf32>"), "output dimension 1 6 != 3 + 1 + 1");
  auto slice = [](const std::string &start, const std::string &size, const std::string &out) {
    return "%y = \"tosa.slice\"(%x) {start = array<i64: " + start + ">, size = array<i64: " + size +
           ">} : (tensor<2x3xf32>) -> " + out + "\nreturn %y : " + out;
  };
  EXPECT_EQ(verdict(in, "tensor<1x2xf32>", slice("1, 1", "1, 2", "tensor<1x2xf32>")), "");
  expectViolation(in, "tensor<1x2xf32>", slice("-1, 0", "1, 2", "tensor<1x2xf32>"), "start -1 < 0");
  expectViolation(in, "tensor<1x2xf32>", slice("1, 2", "1, 2", "tensor<1x2xf32>"), "start 2 + size 2 > input dimension 1 of 3");
  auto reduce = [](int axis) {
    return "%y = \"tosa.reduce_sum\"(%x) {axis = " + std::to_string(axis) +
           " : i64} : (tensor<2x3xf32>) -> tensor<1x3xf32>\nreturn %y : tensor<1x3xf32>";
  };
  EXPECT_EQ(verdict(in, "tensor<1x3xf32>", reduce(0)), "");
  expectViolation(in, "tensor<1x3xf32>", reduce(2), "axis 2 outside [0, 2)");
  auto transpose = [](const std::string &perms) {
    return "%p = \"tosa.const\"() {value = dense<[" + perms + "]> : tensor<2xi32>} : () -> tensor<2xi32>\n"
           "%y = \"tosa.transpose\"(%x, %p) : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<3x2xf32>\n"
           "return %y : tensor<3x2xf32>";
  };
  EXPECT_EQ(verdict(in, "tensor<3x2xf32>", transpose("1, 0")), "");
  expectViolation(in, "tensor<3x2xf32>", transpose("1, 1"), "perms is not a permutation of [0, 2)");
  auto clamp = [](const std::string &lo, const std::string &hi) {
    return "%y = \"tosa.clamp\"(%x) {min_int = 0 : i64, max_int = 0 : i64, min_fp = " + lo +
           " : f32, max_fp = " + hi + " : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
           "return %y : tensor<2x3xf32>";
  };
  EXPECT_EQ(verdict(in, "tensor<2x3xf32>", clamp("0.0", "6.0")), "");
  expectViolation(in, "tensor<2x3xf32>", clamp("6.0", "0.0"), "min_fp 6.000000 > max_fp 0.000000");
}

TEST(TosaContract, Rescale) {
  auto rescale = [](const std::string &multiplier, const std::string &shift, bool perChannel,
                    int inZp) {
    return "%y = \"tosa.rescale\"(%x) {input_zp = " + std::to_string(inZp) +
           " : i32, output_zp = 0 : i32, multiplier = array<i32: " + multiplier +
           ">, shift = array<i32: " + shift + ">, scale32 = true, double_round = true, per_channel = " +
           (perChannel ? "true" : "false") + "} : (tensor<2x3xi32>) -> tensor<2x3xi8>\n"
           "return %y : tensor<2x3xi8>";
  };
  const std::string in = "tensor<2x3xi32>", out = "tensor<2x3xi8>";
  EXPECT_EQ(verdict(in, out, rescale("1073741824", "31", false, 0)), "");
  EXPECT_EQ(verdict(in, out, rescale("1073741824, 1, 2", "31, 30, 62", true, 0)), "");
  expectViolation(in, out, rescale("1073741824", "1", false, 0), "shift 1 outside [2, 62]");
  expectViolation(in, out, rescale("1073741824", "63", false, 0), "shift 63 outside [2, 62]");
  expectViolation(in, out, rescale("-5", "31", false, 0), "multiplier -5 < 0");
  expectViolation(in, out, rescale("1, 2", "31, 31", true, 0), "per-channel multipliers 2 != channels 3");
  expectViolation(in, out, rescale("1, 2, 3", "31, 31, 31", false, 0), "3 multipliers without per_channel");
  expectViolation(in, out, rescale("1073741824", "31", false, 5), "input_zp 5 != 0 on a 32-bit input");
}

TEST(TosaContract, MessagesNameTheSourceOperatorOrTheLine) {
  MLIRContext context;
  const char *source =
      "func.func @main(%x: tensor<1x8x8x1xf32>) -> tensor<1x4x3x1xf32> {\n"
      "  %y = \"tosa.max_pool2d\"(%x) {kernel = array<i64: 3, 3>, stride = array<i64: 2, 2>,\n"
      "       pad = array<i64: 0, 0, 0, 0>} : (tensor<1x8x8x1xf32>) -> tensor<1x4x3x1xf32>\n"
      "       loc(\"MaxPool \\\"pool1\\\"#3\"(\"p1\"))\n"
      "  return %y : tensor<1x4x3x1xf32>\n}\n";
  auto module = kiln::test::parse(context, source);
  ASSERT_TRUE(module);
  llvm::Error imported = kiln::checkTosaContract(*module, "net.onnx", true);
  ASSERT_TRUE(static_cast<bool>(imported));
  EXPECT_EQ(llvm::toString(std::move(imported)),
            "internal error: the importer built an invalid TOSA op for MaxPool \"pool1\" #3 "
            "(tosa.max_pool2d): output height 4 != (8 + 0 + 0 - 3) / 2 + 1");
  // The same op in a user's .mlir file: the file, the line, the spec.
  kiln::test::TempDir tmp;
  std::string path = tmp.file("bad_pool.mlir");
  std::ofstream(path) << "func.func @main(%x: tensor<1x8x8x1xf32> {kiln.name = \"x\"}) -> "
                         "(tensor<1x3x3x1xf32> {kiln.name = \"y\"}) {\n"
                         "  %y = \"tosa.max_pool2d\"(%x) {kernel = array<i64: 3, 3>, stride = "
                         "array<i64: 2, 2>, pad = array<i64: 0, -1, 0, -1>} : "
                         "(tensor<1x8x8x1xf32>) -> tensor<1x3x3x1xf32>\n"
                         "  return %y : tensor<1x3x3x1xf32>\n}\n";
  EXPECT_TRUE(kiln::test::kilnFailsCleanly(
      "compile " + kiln::test::shellQuote(path) + " -o " + kiln::test::shellQuote(tmp.file("x.kiln")),
      {"bad_pool.mlir: line 2: tosa.max_pool2d: pad -1 < 0 (TOSA 0.60 ERROR_IF)"}));
}

} // namespace
