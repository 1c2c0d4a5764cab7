//===- PackedWeightsTest.cpp - Kernels reading panel-packed weights -------===//
//
// kiln-pack-weights stores constant matmul and convolution weights in
// panels of the kernel's column block. These tests compile dense layers and
// convolutions whose output channels span several panels (and a narrower
// last one), at 4-, 8- and 16-lane register tiles, check that the plan says
// the weights are packed (so the tests cannot silently stop covering it),
// and compare every output with a product computed here in double.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include "kiln/Compiler.h"
#include "kiln/Plan.h"
#include "kiln/Recipe.h"
#include "kiln/Run.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace {

/// The hex dense literal of `values` (little-endian f32), as MLIR prints it.
std::string hexOf(const std::vector<float> &values) {
  static const char *digits = "0123456789ABCDEF";
  std::string text = "0x";
  for (float v : values) {
    unsigned char bytes[4];
    std::memcpy(bytes, &v, 4);
    for (unsigned char b : bytes) {
      text += digits[b >> 4];
      text += digits[b & 15];
    }
  }
  return text;
}

std::vector<float> seeded(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

kiln::NpyArray arrayOf(std::vector<int64_t> shape, const std::vector<float> &values) {
  kiln::NpyArray a;
  a.shape = std::move(shape);
  a.data.resize(values.size() * 4);
  std::memcpy(a.data.data(), values.data(), a.data.size());
  return a;
}

struct Built {
  std::vector<uint8_t> artifact;
  std::string weightLayout;
  /// Workgroups of the dispatch.
  int64_t workgroups = 0;
};

/// Compiles `mlir` for `cpu` (with `tile` overrides, "ID=S0,..." or empty)
/// and returns the artifact and its dispatch's weight layout and workgroups.
Built build(const std::string &name, const std::string &mlir, const std::string &cpu,
            const std::string &tile = "") {
  std::string path = ::testing::TempDir() + name + ".mlir";
  std::ofstream(path) << mlir;
  kiln::BuildRecipe recipe;
  llvm::Error set = kiln::setRecipeOption(recipe, "target-cpu", cpu);
  if (!set && !tile.empty())
    set = kiln::setRecipeOption(recipe, "tile", tile);
  EXPECT_FALSE(static_cast<bool>(set)) << llvm::toString(std::move(set));
  auto made = kiln::recipeCompileOptions(recipe);
  EXPECT_TRUE(static_cast<bool>(made)) << llvm::toString(made.takeError());
  if (!made)
    return {};
  kiln::CompileOptions options = std::move(*made);
  auto result = kiln::compile(path, options);
  EXPECT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  if (!result)
    return {};
  Built b;
  b.artifact = result->artifact;
  // Each model here is one dispatch (the product with its bias add).
  EXPECT_EQ(result->plan->dispatches.size(), 1u);
  if (result->plan->dispatches.empty())
    return b;
  const kiln::Dispatch &d = result->plan->dispatches.front();
  b.weightLayout = d.kernel.weightLayout;
  b.workgroups = d.workgroupCount[0] * d.workgroupCount[1] * d.workgroupCount[2];
  return b;
}

/// Runs `artifact` on `input` and checks its one output against `expected`
/// within 1e-4 x (1 + |expected|).
void expectOutput(const std::vector<uint8_t> &artifact, const kiln::NpyArray &input,
                  const std::vector<double> &expected) {
  auto result = kiln::runArtifact(artifact, {input});
  ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
  ASSERT_EQ(result->outputValues.size(), 1u);
  const kiln::NpyArray &out = result->outputValues[0];
  ASSERT_EQ(out.data.size(), expected.size() * 4);
  std::vector<float> got(expected.size());
  std::memcpy(got.data(), out.data.data(), out.data.size());
  int bad = 0;
  for (size_t i = 0; i < expected.size(); ++i)
    if (std::fabs(got[i] - expected[i]) > 1e-4 * (1 + std::fabs(expected[i])) && bad++ < 5)
      ADD_FAILURE() << "element " << i << ": " << got[i] << ", expected " << expected[i];
  EXPECT_EQ(bad, 0);
}

/// FULLY_CONNECTED as TOSA: x[M, K] times weights w[N, K] (transposed), plus
/// a bias.
struct Dense {
  int64_t m, n, k;
  std::vector<float> x, w, bias;
  Dense(int64_t m, int64_t n, int64_t k)
      : m(m), n(n), k(k), x(seeded(m * k, 1)), w(seeded(n * k, 2)), bias(seeded(n, 3)) {}
  std::string mlir() const {
    std::ostringstream os;
    os << "func.func @main(%x: tensor<" << m << "x" << k << "xf32>) -> tensor<" << m << "x" << n
       << "xf32> {\n  %w = \"tosa.const\"() {value = dense<\"" << hexOf(w) << "\"> : tensor<" << n
       << "x" << k << "xf32>} : () -> tensor<" << n << "x" << k << "xf32>\n"
       << "  %b = \"tosa.const\"() {value = dense<\"" << hexOf(bias) << "\"> : tensor<" << n
       << "xf32>} : () -> tensor<" << n << "xf32>\n"
       << "  %0 = \"tosa.fully_connected\"(%x, %w, %b) : (tensor<" << m << "x" << k
       << "xf32>, tensor<" << n << "x" << k << "xf32>, tensor<" << n << "xf32>) -> tensor<" << m
       << "x" << n << "xf32>\n  return %0 : tensor<" << m << "x" << n << "xf32>\n}\n";
    return os.str();
  }
  std::vector<double> expected() const {
    std::vector<double> out(m * n);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = bias[j];
        for (int64_t r = 0; r < k; ++r)
          acc += double(x[i * k + r]) * double(w[j * k + r]);
        out[i * n + j] = acc;
      }
    return out;
  }
};

/// CONV_2D as TOSA, valid padding, stride 1: x[1, H, W, C], weights
/// w[F, KH, KW, C], bias[F].
struct Conv {
  int64_t h, wd, c, f, kh, kw;
  std::vector<float> x, w, bias;
  Conv(int64_t h, int64_t wd, int64_t c, int64_t f, int64_t kh, int64_t kw)
      : h(h), wd(wd), c(c), f(f), kh(kh), kw(kw), x(seeded(h * wd * c, 4)),
        w(seeded(f * kh * kw * c, 5)), bias(seeded(f, 6)) {}
  int64_t oh() const { return h - kh + 1; }
  int64_t ow() const { return wd - kw + 1; }
  std::string mlir() const {
    auto t = [](std::vector<int64_t> d) {
      std::string s = "tensor<";
      for (int64_t v : d)
        s += std::to_string(v) + "x";
      return s + "f32>";
    };
    std::string in = t({1, h, wd, c}), wt = t({f, kh, kw, c}), bt = t({f}),
                out = t({1, oh(), ow(), f});
    std::ostringstream os;
    os << "func.func @main(%x: " << in << ") -> " << out << " {\n"
       << "  %w = \"tosa.const\"() {value = dense<\"" << hexOf(w) << "\"> : " << wt
       << "} : () -> " << wt << "\n"
       << "  %b = \"tosa.const\"() {value = dense<\"" << hexOf(bias) << "\"> : " << bt
       << "} : () -> " << bt << "\n"
       << "  %0 = \"tosa.conv2d\"(%x, %w, %b) {dilation = array<i64: 1, 1>, pad = array<i64: 0, "
          "0, 0, 0>, stride = array<i64: 1, 1>} : ("
       << in << ", " << wt << ", " << bt << ") -> " << out << "\n  return %0 : " << out
       << "\n}\n";
    return os.str();
  }
  std::vector<double> expected() const {
    std::vector<double> out(oh() * ow() * f);
    for (int64_t y = 0; y < oh(); ++y)
      for (int64_t xo = 0; xo < ow(); ++xo)
        for (int64_t o = 0; o < f; ++o) {
          double acc = bias[o];
          for (int64_t dy = 0; dy < kh; ++dy)
            for (int64_t dx = 0; dx < kw; ++dx)
              for (int64_t ci = 0; ci < c; ++ci)
                acc += double(x[((y + dy) * wd + xo + dx) * c + ci]) *
                       double(w[((o * kh + dy) * kw + dx) * c + ci]);
          out[(y * ow() + xo) * f + o] = acc;
        }
    return out;
  }
};

/// CPUs to build for: generic (4-lane SSE tiles) always, AVX2 and AVX-512
/// (8- and 16-lane) where this host runs their code.
std::vector<std::string> cpusThisHostRuns() {
  std::vector<std::string> cpus = {"generic"};
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    cpus.push_back("x86-64-v3");
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    cpus.push_back("x86-64-v4");
#endif
  return cpus;
}

// N = 100: SSE panels of 8 (12 + a 4-wide tail), AVX2 panels of 16 (6 + 4),
// AVX-512 panels of 64 (1 + 36: two vectors and a masked one). N = 24 on
// AVX2 is one 24-wide block: nothing to pack.
TEST(PackedWeights, DenseLayerAcrossPanelsMatchesTheProduct) {
  for (const std::string &cpu : cpusThisHostRuns())
    for (auto [m, n, k] : {std::tuple{13, 100, 37}, std::tuple{3, 200, 5}}) {
      SCOPED_TRACE(cpu + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                   std::to_string(k));
      Dense d(m, n, k);
      Built b = build("packed_dense", d.mlir(), cpu);
      EXPECT_NE(b.weightLayout.find("KxN packed"), std::string::npos) << b.weightLayout;
      expectOutput(b.artifact, arrayOf({m, k}, d.x), d.expected());
    }
}

TEST(PackedWeights, ConvolutionAcrossPanelsMatchesTheProduct) {
  for (const std::string &cpu : cpusThisHostRuns()) {
    SCOPED_TRACE(cpu);
    Conv c(9, 11, 5, 72, 3, 2);
    Built b = build("packed_conv", c.mlir(), cpu);
    EXPECT_NE(b.weightLayout.find("KxN packed"), std::string::npos) << b.weightLayout;
    expectOutput(b.artifact, arrayOf({1, c.h, c.wd, c.c}, c.x), c.expected());
  }
}

// Workgroups that each take a slice of the columns: a slice of whole panels
// starts on a panel boundary (packed); a 24-column slice of SSE panels of 8
// is 3 whole panels. Slices that do not divide N leave a partial last tile
// (dynamic columns): the loop path reads the unpacked weights.
TEST(PackedWeights, ColumnSlicedWorkgroupsReadTheirPanels) {
  Dense d(6, 96, 10);
  Built b = build("packed_sliced", d.mlir(), "generic", "0=0,24");
  EXPECT_NE(b.weightLayout.find("KxN packed"), std::string::npos) << b.weightLayout;
  EXPECT_EQ(b.workgroups, 4); // 96 columns in slices of 24
  expectOutput(b.artifact, arrayOf({6, 10}, d.x), d.expected());
  Built unaligned = build("packed_partial", d.mlir(), "generic", "0=0,40");
  EXPECT_EQ(unaligned.weightLayout.find("packed"), std::string::npos) << unaligned.weightLayout;
  EXPECT_EQ(unaligned.workgroups, 3); // 40 + 40 + 16
  expectOutput(unaligned.artifact, arrayOf({6, 10}, d.x), d.expected());
}

} // namespace
