//===- GemmBench.cpp - Kiln's matmul kernel against OpenBLAS sgemm --------===//
//
// A benchmark, not a test (docs/benchmarks.md, "GEMM"). For each shape
// C[M,N] = A[M,K] x B[K,N] it compiles two one-operator TOSA models with
// Kiln for the host's widest vector ISA: tosa.matmul with both operands
// inputs (B read in its K x N layout), and tosa.fully_connected with B a
// constant (packed into panels at compile time, as a layer's weights are).
// It checks both results against OpenBLAS, then times the two Kiln models
// (local-sync, one thread) and OpenBLAS cblas_sgemm (one thread)
// interleaved: `--rounds` rounds, each a median of `--runs` runs of each
// engine; the report takes the best round's median of each. GFLOP/s count
// 2*M*N*K FLOP. Peak = `--peak-flop-per-cycle` x `--ghz` (default: 32 FLOP
// per cycle, two 8-lane FMA pipes, and the clock /proc/cpuinfo reports).
//
//   build/tests/bench/kiln_gemm_bench [--rounds=3] [--runs=50] [--cpu=x86-64-v3]
//       [--shapes=MxNxK,...]
//
//===----------------------------------------------------------------------===//
#include "kiln/Compiler.h"
#include "kiln/Plan.h"
#include "kiln/Run.h"
#include "kiln/runtime.h"

#include "llvm/Support/Error.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" void openblas_set_num_threads(int);

namespace {

struct Shape {
  int64_t m, n, k;
  std::string what;
};

/// The shapes the issue names: squares, and the largest GEMMs of the
/// embedding model and BlazeFace (M = output pixels, N = output channels,
/// K = input channels x window).
std::vector<Shape> defaultShapes() {
  return {{256, 256, 256, "square"},
          {512, 512, 512, "square"},
          {1024, 1024, 1024, "square"},
          {4096, 24, 24, "BlazeFace 1x1 conv 64x64x24 -> 24"},
          {1024, 32, 28, "BlazeFace 1x1 conv 32x32x28 -> 32"},
          {256, 96, 88, "BlazeFace 1x1 conv 16x16x88 -> 96"},
          {4096, 24, 75, "BlazeFace 5x5 conv stem (75 = 5x5x3)"},
          {1824, 64, 288, "embedding 3x3 conv (K = 3x3x32)"},
          {1, 96, 1536, "embedding-size dense layer (GEMV)"}};
}

std::string mlirFor(const Shape &s) {
  std::ostringstream os;
  os << "func.func @main(%a: tensor<1x" << s.m << "x" << s.k << "xf32> {kiln.name = \"a\"}, "
     << "%b: tensor<1x" << s.k << "x" << s.n << "xf32> {kiln.name = \"b\"}) -> (tensor<1x" << s.m
     << "x" << s.n << "xf32> {kiln.name = \"c\"}) {\n"
     << "  %0 = \"tosa.matmul\"(%a, %b) : (tensor<1x" << s.m << "x" << s.k << "xf32>, tensor<1x"
     << s.k << "x" << s.n << "xf32>) -> tensor<1x" << s.m << "x" << s.n << "xf32>\n"
     << "  return %0 : tensor<1x" << s.m << "x" << s.n << "xf32>\n}\n";
  return os.str();
}

/// The same product with B a constant of the model, as a layer's weights
/// are: tosa.fully_connected (weights [N, K], so its B^T) with a zero bias.
/// Kiln packs constant weights into panels at compile time
/// (kiln-pack-weights); B here is a model input and is not.
std::string constantWeightsMlirFor(const Shape &s, const std::vector<float> &b) {
  std::ostringstream os;
  os << "func.func @main(%a: tensor<" << s.m << "x" << s.k << "xf32> {kiln.name = \"a\"}) -> "
     << "(tensor<" << s.m << "x" << s.n << "xf32> {kiln.name = \"c\"}) {\n"
     << "  %w = \"tosa.const\"() {value = dense<\"0x";
  static const char *hex = "0123456789ABCDEF";
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t k = 0; k < s.k; ++k) {
      float v = b[k * s.n + n];
      unsigned char bytes[4];
      std::memcpy(bytes, &v, 4);
      for (unsigned char byte : bytes)
        os << hex[byte >> 4] << hex[byte & 15];
    }
  os << "\"> : tensor<" << s.n << "x" << s.k << "xf32>} : () -> tensor<" << s.n << "x" << s.k
     << "xf32>\n"
     << "  %z = \"tosa.const\"() {value = dense<0.0> : tensor<" << s.n << "xf32>} : () -> tensor<"
     << s.n << "xf32>\n"
     << "  %0 = \"tosa.fully_connected\"(%a, %w, %z) : (tensor<" << s.m << "x" << s.k
     << "xf32>, tensor<" << s.n << "x" << s.k << "xf32>, tensor<" << s.n << "xf32>) -> tensor<"
     << s.m << "x" << s.n << "xf32>\n"
     << "  return %0 : tensor<" << s.m << "x" << s.n << "xf32>\n}\n";
  return os.str();
}

/// The core's clock while busy, GHz: a chain of dependent integer adds
/// retires one per cycle on every x86-64 core, so cycles = adds. (cpuinfo's
/// "cpu MHz" is the base clock on VMs, not the boost clock the kernels run
/// at.) The median of 5 measurements of 2^26 x 8 adds.
double measuredGhz() {
#if defined(__x86_64__)
  std::vector<double> ghz;
  for (int r = 0; r < 5; ++r) {
    uint64_t x = 0, iterations = uint64_t(1) << 26;
    auto t0 = std::chrono::steady_clock::now();
    for (uint64_t i = 0; i < iterations; ++i)
      asm volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                   "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
                   : "+r"(x));
    auto t1 = std::chrono::steady_clock::now();
    double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    ghz.push_back(double(iterations) * 8 / ns);
  }
  return kiln::medianOf(ghz);
#else
  return 0;
#endif
}

std::string defaultCpu() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
    return "x86-64-v4";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "x86-64-v3";
#endif
  return "generic";
}

/// A compiled model loaded into the runtime (its artifact kept aligned).
struct LoadedModel {
  std::vector<uint8_t> storage;
  kiln_module_t *module = nullptr;
  /// The first dispatch's kernel tile, e.g. "gemm 6x4x16".
  std::string tile;
  LoadedModel() = default;
  LoadedModel(const LoadedModel &) = delete;
  LoadedModel(LoadedModel &&other) noexcept
      : storage(std::move(other.storage)), module(other.module), tile(std::move(other.tile)) {
    other.module = nullptr;
  }
  ~LoadedModel() {
    if (module)
      kiln_module_release(module);
  }
};

/// Writes `text` to `path`, compiles it for `cpu` and loads it; prints the
/// error and returns nullopt on failure.
std::optional<LoadedModel> loadModel(const std::string &path, const std::string &text,
                                     const std::string &cpu) {
  std::ofstream(path) << text;
  kiln::CompileOptions options;
  options.target.cpu = cpu;
  auto compiled = kiln::compile(path, options);
  if (!std::getenv("KILN_GEMM_BENCH_KEEP")) std::remove(path.c_str());
  if (!compiled) {
    std::fprintf(stderr, "kiln_gemm_bench: error: %s\n",
                 llvm::toString(compiled.takeError()).c_str());
    return std::nullopt;
  }
  LoadedModel m;
  m.tile = compiled->plan && !compiled->plan->dispatches.empty()
               ? kiln::kernelTileText(compiled->plan->dispatches.front().kernel)
               : "?";
  // kiln_module_load reads the artifact in place: 64-byte aligned storage.
  m.storage.resize(compiled->artifact.size() + 64);
  size_t pad = (64 - reinterpret_cast<uintptr_t>(m.storage.data()) % 64) % 64;
  uint8_t *aligned = m.storage.data() + pad;
  std::memcpy(aligned, compiled->artifact.data(), compiled->artifact.size());
  kiln_status_t st = kiln_module_load(aligned, compiled->artifact.size(), &m.module);
  if (st.code != KILN_OK) {
    std::fprintf(stderr, "kiln_gemm_bench: error: %s\n", st.message);
    return std::nullopt;
  }
  return m;
}

} // namespace

int main(int argc, char **argv) {
  int rounds = 3, runs = 50;
  double peakPerCycle = 0, ghz = 0;
  std::string cpu = defaultCpu();
  std::vector<Shape> shapes = defaultShapes();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag) -> const char * {
      size_t n = std::strlen(flag);
      return a.compare(0, n, flag) == 0 ? argv[i] + n : nullptr;
    };
    if (const char *v = value("--rounds="))
      rounds = std::max(1, std::atoi(v));
    else if (const char *v = value("--runs="))
      runs = std::max(1, std::atoi(v));
    else if (const char *v = value("--cpu="))
      cpu = v;
    else if (const char *v = value("--ghz="))
      ghz = std::atof(v);
    else if (const char *v = value("--peak-flop-per-cycle="))
      peakPerCycle = std::atof(v);
    else if (const char *v = value("--shapes=")) {
      shapes.clear();
      std::stringstream list(v);
      std::string item;
      while (std::getline(list, item, ',')) {
        Shape s{};
        if (std::sscanf(item.c_str(), "%ldx%ldx%ld", &s.m, &s.n, &s.k) != 3) {
          std::fprintf(stderr, "kiln_gemm_bench: error: --shapes item '%s' is not MxNxK\n",
                       item.c_str());
          return 1;
        }
        s.what = "custom";
        shapes.push_back(s);
      }
    } else {
      std::fprintf(stderr,
                   "usage: kiln_gemm_bench [--rounds=N] [--runs=N] [--cpu=NAME] [--ghz=F] "
                   "[--peak-flop-per-cycle=F] [--shapes=MxNxK,...]\n");
      return 2;
    }
  }
  openblas_set_num_threads(1);
  if (ghz <= 0)
    ghz = measuredGhz();
  // 2 FMA pipes x lanes x 2 FLOP: AVX-512 at full width (Zen 5, Intel
  // server cores; Zen 4 splits 512-bit FMAs, pass --peak-flop-per-cycle=32).
  if (peakPerCycle <= 0)
    peakPerCycle = cpu == "x86-64-v4" ? 64 : cpu == "x86-64-v3" ? 32 : 16;
  const double peak = peakPerCycle * ghz;
  std::printf("Kiln --target-cpu=%s (local-sync) vs OpenBLAS cblas_sgemm, 1 thread; best of %d "
              "interleaved rounds, each a median of %d runs; peak %.0f FLOP/cycle x %.2f GHz = "
              "%.1f GFLOP/s\n\n",
              cpu.c_str(), rounds, runs, peakPerCycle, ghz, peak);
  std::printf("| M x N x K | shape | Kiln tile | Kiln ms | Kiln packed ms | OpenBLAS ms | Kiln "
              "GFLOP/s | Kiln packed GFLOP/s | OpenBLAS GFLOP/s | Kiln / OpenBLAS | Kiln packed / "
              "OpenBLAS | Kiln packed %% of peak |\n"
              "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  std::string dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
  for (const Shape &s : shapes) {
    std::vector<float> a(s.m * s.k), b(s.k * s.n), c(s.m * s.n), cp(s.m * s.n), ref(s.m * s.n);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-1, 1);
    for (float &x : a)
      x = dist(rng);
    for (float &x : b)
      x = dist(rng);
    std::string name = dir + "/kiln_gemm_bench_" + std::to_string(s.m) + "x" +
                       std::to_string(s.n) + "x" + std::to_string(s.k);
    // B an input (read in its K x N layout), and B a constant (packed).
    std::optional<LoadedModel> plain = loadModel(name + ".mlir", mlirFor(s), cpu);
    std::optional<LoadedModel> packed =
        loadModel(name + "_const.mlir", constantWeightsMlirFor(s, b), cpu);
    if (!plain || !packed)
      return 1;
    kiln_device_t device;
    kiln_device_create_local_sync(&device);
    auto invoke = [&](LoadedModel &m, std::vector<const void *> in, std::vector<size_t> sizes,
                      float *out) {
      size_t outSize = c.size() * 4;
      void *outPtrs[1] = {out};
      kiln_invocation_t inv{};
      inv.inputs = in.data();
      inv.input_sizes = sizes.data();
      inv.input_count = in.size();
      inv.outputs = outPtrs;
      inv.output_sizes = &outSize;
      inv.output_count = 1;
      inv.device = &device;
      kiln_status_t r = kiln_module_invoke(m.module, &inv);
      if (r.code != KILN_OK) {
        std::fprintf(stderr, "kiln_gemm_bench: error: %s\n", r.message);
        std::exit(1);
      }
    };
    auto kiln = [&] {
      invoke(*plain, {a.data(), b.data()}, {a.size() * 4, b.size() * 4}, c.data());
    };
    auto kilnPacked = [&] { invoke(*packed, {a.data()}, {a.size() * 4}, cp.data()); };
    auto blas = [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(s.m), int(s.n), int(s.k), 1.0f,
                  a.data(), int(s.k), b.data(), int(s.n), 0.0f, ref.data(), int(s.n));
    };
    kiln();
    kilnPacked();
    blas();
    for (const auto &[out, what] : {std::pair{&c, "B an input"}, std::pair{&cp, "B packed"}}) {
      double worst = 0;
      for (size_t i = 0; i < c.size(); ++i)
        worst = std::max(worst, double(std::fabs((*out)[i] - ref[i]) / (1 + std::fabs(ref[i]))));
      if (worst > 1e-4) {
        std::fprintf(stderr, "kiln_gemm_bench: error: %ldx%ldx%ld (%s) differs from OpenBLAS by %g\n",
                     s.m, s.n, s.k, what, worst);
        return 1;
      }
    }
    auto timeMs = [&](auto &&fn) {
      std::vector<double> t;
      for (int r = 0; r < runs; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        fn();
        auto t1 = std::chrono::steady_clock::now();
        t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
      return kiln::medianOf(t);
    };
    double kilnMs = 1e30, packedMs = 1e30, blasMs = 1e30;
    for (int r = 0; r < rounds; ++r) {
      kilnMs = std::min(kilnMs, timeMs(kiln));
      packedMs = std::min(packedMs, timeMs(kilnPacked));
      blasMs = std::min(blasMs, timeMs(blas));
    }
    double flop = 2.0 * double(s.m) * double(s.n) * double(s.k);
    double kilnGf = flop / kilnMs / 1e6, packedGf = flop / packedMs / 1e6,
           blasGf = flop / blasMs / 1e6;
    std::printf("| %ldx%ldx%ld | %s | %s | %.4f | %.4f | %.4f | %.1f | %.1f | %.1f | %.2fx | "
                "%.2fx | %.0f%% |\n",
                s.m, s.n, s.k, s.what.c_str(), packed->tile.c_str(), kilnMs, packedMs, blasMs,
                kilnGf, packedGf, blasGf, kilnGf / blasGf, packedGf / blasGf,
                peak > 0 ? 100 * packedGf / peak : 0.0);
    std::fflush(stdout);
    kiln_device_release(&device);
  }
  return 0;
}
