//===- kiln/Compare.h - What quantization costs ----------------*- C++ -*-===//
//
// Compares two models on the same inputs, output by output, as
// STM32Cube.AI's `validate` reports a quantized model against its float
// original: max |error|, RMSE, cosine similarity and, for classifier-like
// outputs, top-1 agreement. Integer outputs are dequantized with their
// quantization (kiln/TensorTypes.h IOQuantization: real = scale * (q -
// zero_point)), so a float model and its int8 twin compare in real units.
// `kiln validate A --compare-with=B`, the workbench's Compare view and
// tests share it. Part of kiln_host (host/).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPARE_H
#define KILN_COMPARE_H

#include "kiln/Npy.h"
#include "kiln/Run.h"
#include "kiln/TensorTypes.h"

#include <cstdint>
#include <string>
#include <vector>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace kiln {

/// The elements of `array` in real units, row-major: float32 as stored;
/// integer dtypes (isIntegerDtype) through `q` when it is quantized,
/// real = scales[c] * (v - zeroPoints[c]) with c the element's index along
/// q.dimension (c = 0 per tensor), else the stored integer. Errors: a dtype
/// with no numbers to compare (f16, f64), a quantization whose channel
/// count differs from array.shape[q.dimension]; `what` names the tensor.
llvm::Expected<std::vector<double>> realValues(const NpyArray &array, const IOQuantization &q,
                                               const std::string &what);

/// How closely two models agree on one output, over every sample. With a
/// and b the real values of all samples' elements (n in all):
///   maxAbsError = max_i |a_i - b_i|;
///   rmse        = sqrt(sum_i (a_i - b_i)^2 / n);
///   cosine      = sum_i a_i b_i / (sqrt(sum_i a_i^2) sqrt(sum_i b_i^2)),
///                 1 when both are all zero, 0 when only one is;
///   top1Agreement (classifier outputs only: shape [N] or [1, N], N >= 2) =
///                 the fraction of samples whose argmax over the N scores
///                 (the first index of the largest, as numpy.argmax) is the
///                 same in a and b; -1 for other outputs.
struct OutputAgreement {
  std::string name;
  /// Elements compared: the output's elements x samples.
  int64_t elements = 0;
  int64_t samples = 0;
  double maxAbsError = 0;
  double rmse = 0;
  double cosine = 1;
  bool classifier = false;
  double top1Agreement = -1;
  /// Whether the output was dequantized in model A / model B (an integer
  /// output with a quantization).
  bool dequantizedA = false, dequantizedB = false;
};

/// Whether an output of `shape` is classifier-like: [N] or [1, N], N >= 2.
bool isClassifierShape(const std::vector<int64_t> &shape);

/// Compares output sets `a` and `b`: a[s][k] and b[s][k] are output k of
/// sample s of models A and B, described by outputsA[k] / outputsB[k]
/// (their quantization dequantizes integer outputs; outputsA names them).
/// Errors name the output whose count or shape differs between the two
/// models, or whose values realValues refuses; "no samples" when a is empty.
llvm::Expected<std::vector<OutputAgreement>>
compareOutputSets(const std::vector<std::vector<NpyArray>> &a,
                  const std::vector<std::vector<NpyArray>> &b, const std::vector<IOInfo> &outputsA,
                  const std::vector<IOInfo> &outputsB);

/// What compareModels runs the two models on.
struct ModelComparisonOptions {
  /// Random samples when `inputDir` is empty (>= 1).
  int64_t samples = 8;
  /// Seed of the random inputs (the same seed gives the same inputs).
  uint64_t seed = 1;
  /// Empty: random inputs. Else DIR/input_K.npy for every input K, each of
  /// the signature's shape (one sample) or with one more leading axis of N
  /// samples (the same N for every input): float32 real values, quantized
  /// per model as below, or an array of the input's own integer dtype fed
  /// unchanged to both models.
  std::string inputDir;
  RunOptions run;
};

/// The two models' outputs compared, and what they ran on.
struct ModelComparison {
  std::vector<IOInfo> inputsA, inputsB, outputsA, outputsB;
  int64_t samples = 0;
  /// "8 random samples (seed 1)" or "DIR/input_K.npy, 3 samples".
  std::string inputSource;
  std::vector<OutputAgreement> outputs;
};

/// The inputs of sample `s` in real units, one float32 array per input of
/// `inputsA` (the two signatures' shapes agree): each element uniform in
/// [lo, hi) from a 64-bit LCG (Knuth's MMIX constants) seeded with seed +
/// s, the top 24 bits of each step; [lo, hi) the real range of the first of
/// inputsA[k], inputsB[k] that is quantized (scale * (qmin - zero_point),
/// scale * (qmax - zero_point) of its first channel), else [-1, 1).
std::vector<NpyArray> realRandomInputs(const std::vector<IOInfo> &inputsA,
                                       const std::vector<IOInfo> &inputsB, uint64_t seed);

/// `real` (float32 real values) as input `info` takes it: float32 as is; an
/// i8 or u8 input with a quantization q = clamp(round(x / scale) +
/// zero_point) to the type's range (round half away from zero, as TFLite's
/// QUANTIZE); an integer array of the input's own dtype unchanged. Errors
/// name the input when neither applies (an unquantized integer input fed
/// float values, a shape that differs).
llvm::Expected<NpyArray> modelInputOf(const NpyArray &real, const IOInfo &info,
                                      const std::string &what);

/// Runs `a` and `b` (artifact bytes, both runnable on this host) on the
/// same inputs and compares every output (compareOutputSets). Errors name
/// `nameA` or `nameB`: different input or output counts or shapes, a
/// missing or mismatched DIR/input_K.npy, the runtime's errors.
llvm::Expected<ModelComparison> compareModels(llvm::ArrayRef<uint8_t> a, llvm::ArrayRef<uint8_t> b,
                                              const std::string &nameA, const std::string &nameB,
                                              const ModelComparisonOptions &options = {});

/// The table `kiln validate A --compare-with=B` prints: a header, then one
/// row per output (name, elements, max |error|, RMSE, cosine, top-1
/// agreement or "-"), numbers "%.4e" / "%.8f".
std::string formatModelComparison(const ModelComparison &c);

/// The `--json` document: {"samples", "inputs": source, "outputs": [{"name",
/// "elements", "max_abs_error", "rmse", "cosine", "top1_agreement" (null
/// unless a classifier), "dequantized_a", "dequantized_b"}]}.
llvm::json::Value modelComparisonToJson(const ModelComparison &c);

} // namespace kiln

#endif
