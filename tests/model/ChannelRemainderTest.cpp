//===- ChannelRemainderTest.cpp - Channel loops vectorized to the last lane ===//
//
// Pooling and elementwise kernels are scalar loops that LLVM's loop
// vectorizer vectorizes along channels (the innermost, contiguous loop).
// A channel count that is no multiple of the vector width used to leave its
// remainder to scalar code (28 = 3 x 8 + 4 scalar iterations with AVX2,
// 42 = 2 x 16 + 8 + 2 scalar ones with AVX-512); optimizeModule's
// VectorizeScalarRemainders now runs it as narrower vectors. For even
// channel counts (24, 28, 42, 88) at 4, 8 and 16 lanes, the kernels' assembly
// must hold no scalar single-precision instruction, and every output must
// match values computed here.
//
// Softmax over the channels (24 and 88): its exp was one expf call per
// lane and its row max and sum gathered the rows into vectors. Now exp is
// packed arithmetic (kiln-approximate-math), the reductions run along the
// channels (kiln-interchange-for-vectorization), and only the one
// horizontal step per row is scalar.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/Run.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

using namespace kiln::test;

namespace {

constexpr int kChannels[] = {24, 28, 42, 88};

struct Cpu {
  const char *name;     ///< for test messages
  const char *cpu;      ///< TargetOptions::cpu
  const char *features; ///< TargetOptions::features
  int lanes;            ///< f32 lanes of the vectors LLVM picks
};

// x86-64-v4 prefers 256-bit vectors; without prefer-256-bit it takes the
// 512-bit ones, as --target-cpu=host does on AVX-512 machines.
constexpr Cpu kCpus[] = {
    {"generic (SSE2)", "generic", "", 4},
    {"x86-64-v3 (AVX2)", "x86-64-v3", "", 8},
    {"x86-64-v4 (AVX-512, 256-bit)", "x86-64-v4", "", 8},
    {"x86-64-v4 (AVX-512, 512-bit)", "x86-64-v4", "-prefer-256-bit", 16},
};

bool hostRuns(const Cpu &cpu) {
#if defined(__x86_64__)
  if (std::string(cpu.cpu) == "generic")
    return true;
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (std::string(cpu.cpu) == "x86-64-v3")
    return avx2;
  return avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#else
  (void)cpu;
  return false;
#endif
}

enum class Op { MaxPool, AvgPool, Add };

const char *opName(Op op) {
  return op == Op::MaxPool ? "MAX_POOL 2x2/2" : op == Op::AvgPool ? "AVG_POOL 3x3/1 pad 1" : "ADD bias";
}

/// One-operator TOSA model on 1x6x6xC: MAX_POOL 2x2 stride 2 (BlazeFace's),
/// AVG_POOL 3x3 stride 1 padded by 1, ADD of a 1x1x1xC bias.
std::string modelText(Op op, int c) {
  std::string in = "tensor<1x6x6x" + std::to_string(c) + "xf32>";
  switch (op) {
  case Op::MaxPool: {
    std::string out = "tensor<1x3x3x" + std::to_string(c) + "xf32>";
    return "func.func @main(%x: " + in + " {kiln.name = \"x\"}) -> (" + out +
           " {kiln.name = \"y\"}) {\n"
           "  %0 = \"tosa.max_pool2d\"(%x) {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>,"
           " stride = array<i64: 2, 2>} : (" + in + ") -> " + out + "\n"
           "  return %0 : " + out + "\n}\n";
  }
  case Op::AvgPool:
    return "func.func @main(%x: " + in + " {kiln.name = \"x\"}) -> (" + in +
           " {kiln.name = \"y\"}) {\n"
           "  %0 = \"tosa.avg_pool2d\"(%x) {kernel = array<i64: 3, 3>, pad = array<i64: 1, 1, 1, 1>,"
           " stride = array<i64: 1, 1>} : (" + in + ") -> " + in + "\n"
           "  return %0 : " + in + "\n}\n";
  case Op::Add: {
    std::string bias = "tensor<1x1x1x" + std::to_string(c) + "xf32>";
    return "func.func @main(%x: " + in + " {kiln.name = \"x\"}, %b: " + bias +
           " {kiln.name = \"b\"}) -> (" + in + " {kiln.name = \"y\"}) {\n"
           "  %0 = \"tosa.add\"(%x, %b) : (" + in + ", " + bias + ") -> " + in + "\n"
           "  return %0 : " + in + "\n}\n";
  }
  }
  return {};
}

kiln::NpyArray makeArray(std::vector<int64_t> shape, const std::vector<float> &values) {
  kiln::NpyArray a;
  a.shape = std::move(shape);
  a.data.resize(values.size() * sizeof(float));
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

/// Distinct values in [-1, 1), no two channels of a pixel alike.
std::vector<float> pattern(size_t n, unsigned salt) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(static_cast<int>((i * 7919 + salt * 104729) % 2003) - 1001) / 1002.0f;
  return v;
}

/// The model's inputs and the outputs computed here, in double precision.
void reference(Op op, int c, std::vector<kiln::NpyArray> &inputs, kiln::NpyArray &expected) {
  const int h = 6, w = 6;
  std::vector<float> x = pattern(static_cast<size_t>(h) * w * c, 1);
  auto at = [&](int y, int xx, int ch) { return static_cast<double>(x[(y * w + xx) * c + ch]); };
  inputs = {makeArray({1, h, w, c}, x)};
  std::vector<float> y;
  switch (op) {
  case Op::MaxPool:
    for (int oy = 0; oy < 3; ++oy)
      for (int ox = 0; ox < 3; ++ox)
        for (int ch = 0; ch < c; ++ch) {
          double m = -std::numeric_limits<double>::infinity();
          for (int ky = 0; ky < 2; ++ky)
            for (int kx = 0; kx < 2; ++kx)
              m = std::max(m, at(2 * oy + ky, 2 * ox + kx, ch));
          y.push_back(static_cast<float>(m));
        }
    expected = makeArray({1, 3, 3, c}, y);
    return;
  case Op::AvgPool:
    // TOSA and TFLite average only the window's elements inside the input.
    for (int oy = 0; oy < h; ++oy)
      for (int ox = 0; ox < w; ++ox)
        for (int ch = 0; ch < c; ++ch) {
          double sum = 0;
          int count = 0;
          for (int iy = oy - 1; iy <= oy + 1; ++iy)
            for (int ix = ox - 1; ix <= ox + 1; ++ix)
              if (iy >= 0 && iy < h && ix >= 0 && ix < w) {
                sum += at(iy, ix, ch);
                ++count;
              }
          y.push_back(static_cast<float>(sum / count));
        }
    expected = makeArray({1, h, w, c}, y);
    return;
  case Op::Add: {
    std::vector<float> b = pattern(c, 2);
    inputs.push_back(makeArray({1, 1, 1, c}, b));
    for (int p = 0; p < h * w; ++p)
      for (int ch = 0; ch < c; ++ch)
        y.push_back(static_cast<float>(static_cast<double>(x[p * c + ch]) + b[ch]));
    expected = makeArray({1, h, w, c}, y);
    return;
  }
  }
}

/// Lines of `assembly` that compute on or move one float: the SSE/AVX
/// scalar single-precision forms (addss, vmaxss, vfmadd231ss, movss, ...).
std::vector<std::string> scalarFloatLines(const std::string &assembly) {
  static const std::regex scalar(
      R"(^\s+v?(add|sub|mul|div|max|min|sqrt|rcp|rsqrt|mov|cmp[a-z]*|f[n]?m(add|sub)[0-9]+)ss\s)");
  std::vector<std::string> lines;
  std::istringstream in(assembly);
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, scalar))
      lines.push_back(line);
  return lines;
}

std::string join(const std::vector<std::string> &lines) {
  std::string s;
  for (const std::string &line : lines)
    s += line + "\n";
  return s;
}

class ChannelRemainder : public ::testing::TestWithParam<Op> {};

TEST_P(ChannelRemainder, NoScalarFloatCodeAndExactOutputs) {
  Op op = GetParam();
  TempDir dir;
  for (int c : kChannels) {
    std::string model = dir.file("op_" + std::to_string(c) + ".mlir");
    std::ofstream(model) << modelText(op, c);
    std::vector<kiln::NpyArray> inputs;
    kiln::NpyArray expected;
    reference(op, c, inputs, expected);
    for (const Cpu &cpu : kCpus) {
      SCOPED_TRACE(std::string(opName(op)) + ", " + std::to_string(c) + " channels, " + cpu.name);
      kiln::CompileOptions options;
      options.target.triple = "x86_64-unknown-linux-gnu";
      options.target.cpu = cpu.cpu;
      options.target.features = cpu.features;
      auto assembly = kiln::emitStage(model, kiln::EmitStage::Asm, options);
      ASSERT_TRUE(static_cast<bool>(assembly)) << llvm::toString(assembly.takeError());
      // Vectorized along channels at the CPU's width...
      const char *wide = cpu.lanes == 16 ? "%zmm" : cpu.lanes == 8 ? "%ymm" : "%xmm";
      const char *vectorOp = op == Op::MaxPool ? "maxps" : "addps";
      EXPECT_TRUE(assembly->find(vectorOp) != std::string::npos &&
                  assembly->find(wide) != std::string::npos)
          << "no " << vectorOp << " on " << wide << ":\n" << *assembly;
      // ...and nothing left to scalar code: c % lanes, when not 0, is
      // 4 or 8 (24, 28, 88) or 2 and 8 (42) channels, all vector widths.
      std::vector<std::string> scalar = scalarFloatLines(*assembly);
      EXPECT_TRUE(scalar.empty()) << c % cpu.lanes << " channels past the last full "
                                  << cpu.lanes << "-lane vector; scalar code:\n"
                                  << join(scalar);

      if (!hostRuns(cpu))
        continue;
      options.target.triple.clear();
      auto artifact = kiln::compileArtifact(model, options);
      ASSERT_TRUE(static_cast<bool>(artifact)) << llvm::toString(artifact.takeError());
      auto result = kiln::runArtifact(*artifact, inputs);
      ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
      ASSERT_EQ(result->outputValues.size(), 1u);
      EXPECT_TRUE(allClose(result->outputValues[0], expected, 1e-6));
    }
  }
}

/// SOFTMAX over the last axis of 1x6x6xC as the TFLite importer lowers it
/// (reduce_max, sub, exp, reduce_sum, reciprocal, mul over [36, C]).
std::string softmaxText(int c) {
  std::string in = "tensor<1x6x6x" + std::to_string(c) + "xf32>";
  std::string m = "tensor<36x" + std::to_string(c) + "xf32>";
  std::string r = "tensor<36x1xf32>";
  return "func.func @main(%x: " + in + " {kiln.name = \"x\"}) -> (" + in +
         " {kiln.name = \"y\"}) {\n"
         "  %0 = \"tosa.reshape\"(%x) {new_shape = array<i64: 36, " + std::to_string(c) +
         ">} : (" + in + ") -> " + m + "\n"
         "  %1 = \"tosa.reduce_max\"(%0) {axis = 1 : i64} : (" + m + ") -> " + r + "\n"
         "  %2 = \"tosa.sub\"(%0, %1) : (" + m + ", " + r + ") -> " + m + "\n"
         "  %3 = \"tosa.exp\"(%2) : (" + m + ") -> " + m + "\n"
         "  %4 = \"tosa.reduce_sum\"(%3) {axis = 1 : i64} : (" + m + ") -> " + r + "\n"
         "  %5 = \"tosa.reciprocal\"(%4) : (" + r + ") -> " + r + "\n"
         "  %6 = \"tosa.mul\"(%3, %5) {shift = 0 : i32} : (" + m + ", " + r + ") -> " + m + "\n"
         "  %7 = \"tosa.reshape\"(%6) {new_shape = array<i64: 1, 6, 6, " + std::to_string(c) +
         ">} : (" + m + ") -> " + in + "\n"
         "  return %7 : " + in + "\n}\n";
}

/// The kernels of `assembly`: each main_dispatch_N's lines.
std::vector<std::string> kernels(const std::string &assembly) {
  static const std::regex start(R"(^main_dispatch_[0-9]+:)");
  std::vector<std::string> out;
  std::istringstream in(assembly);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, start)) {
      out.emplace_back();
      inside = true;
    } else if (line.rfind(".Lfunc_end", 0) == 0) {
      inside = false;
    }
    if (inside)
      out.back() += line + "\n";
  }
  return out;
}

bool has(const std::string &text, const std::string &pattern) {
  return std::regex_search(text, std::regex(pattern));
}

TEST(ChannelRemainderSoftmax, ExpPackedReductionsAlongChannels) {
  TempDir dir;
  for (int c : {24, 88}) {
    std::string model = dir.file("softmax_" + std::to_string(c) + ".mlir");
    std::ofstream(model) << softmaxText(c);
    // Inputs in [-8, 8): exp(x - max) down to about e^-16.
    std::vector<float> x = pattern(static_cast<size_t>(36) * c, 3);
    for (float &v : x)
      v *= 8.0f;
    std::vector<float> y(x.size());
    for (int row = 0; row < 36; ++row) {
      const float *in = &x[static_cast<size_t>(row) * c];
      double max = *std::max_element(in, in + c), sum = 0;
      for (int ch = 0; ch < c; ++ch)
        sum += std::exp(static_cast<double>(in[ch]) - max);
      for (int ch = 0; ch < c; ++ch)
        y[static_cast<size_t>(row) * c + ch] =
            static_cast<float>(std::exp(static_cast<double>(in[ch]) - max) / sum);
    }
    std::vector<kiln::NpyArray> inputs = {makeArray({1, 6, 6, c}, x)};
    kiln::NpyArray expected = makeArray({1, 6, 6, c}, y);
    for (const Cpu &cpu : kCpus) {
      SCOPED_TRACE("SOFTMAX, " + std::to_string(c) + " channels, " + cpu.name);
      kiln::CompileOptions options;
      options.target.triple = "x86_64-unknown-linux-gnu";
      options.target.cpu = cpu.cpu;
      options.target.features = cpu.features;
      auto assembly = kiln::emitStage(model, kiln::EmitStage::Asm, options);
      ASSERT_TRUE(static_cast<bool>(assembly)) << llvm::toString(assembly.takeError());
      std::string wide = cpu.lanes == 16 ? "%zmm" : cpu.lanes == 8 ? "%ymm" : "%xmm";
      // exp is arithmetic on full vectors: no libm call (expf, or floorf
      // and fmaf from the approximation), 2^k built in the exponent bits
      // of a whole vector, its polynomial packed multiply-adds.
      EXPECT_FALSE(has(*assembly, R"(call[a-z]*\s+[a-z_]*(exp|floor|fma|tanh))"))
          << "a libm call per element:\n" << *assembly;
      EXPECT_TRUE(has(*assembly, R"(pslld\s+\$23, )" + wide))
          << "no packed 2^k of exp on " << wide << ":\n" << *assembly;
      EXPECT_TRUE(has(*assembly, std::string(cpu.lanes == 4 ? R"(\smulps\s)" : R"(vfmadd[0-9]+ps\s)") +
                                     ".*" + wide))
          << "no packed polynomial on " << wide << ":\n" << *assembly;
      for (const std::string &kernel : kernels(*assembly)) {
        // The row max and sum run along the channels in full vectors,
        // never gathering rows into a vector (insertps on SSE and AVX2,
        // vgatherqps with AVX-512).
        EXPECT_FALSE(has(kernel, R"(insertps|gather)")) << "rows gathered into a vector:\n"
                                                         << kernel;
        if (has(kernel, R"(max[sp]s)"))
          EXPECT_TRUE(has(kernel, R"(maxps\s.*)" + wide))
              << "the row max is not along the channels on " << wide << ":\n" << kernel;
        if (has(kernel, R"(addss)"))
          EXPECT_TRUE(has(kernel, R"(addps\s.*)" + wide))
              << "the row sum is not along the channels on " << wide << ":\n" << kernel;
      }

      if (!hostRuns(cpu))
        continue;
      options.target.triple.clear();
      auto artifact = kiln::compileArtifact(model, options);
      ASSERT_TRUE(static_cast<bool>(artifact)) << llvm::toString(artifact.takeError());
      auto result = kiln::runArtifact(*artifact, inputs);
      ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
      ASSERT_EQ(result->outputValues.size(), 1u);
      // exp within 2e-6 relative (6e-6 without FMA).
      EXPECT_TRUE(allClose(result->outputValues[0], expected, 2e-5));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, ChannelRemainder,
                         ::testing::Values(Op::MaxPool, Op::AvgPool, Op::Add),
                         [](const ::testing::TestParamInfo<Op> &info) {
                           return std::string(info.param == Op::MaxPool   ? "MaxPool"
                                              : info.param == Op::AvgPool ? "AvgPool"
                                                                          : "Add");
                         });

} // namespace
