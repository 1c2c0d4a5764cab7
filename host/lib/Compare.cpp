//===- Compare.cpp - What quantization costs ------------------------------===//
#include "kiln/Compare.h"

#include "kiln/Error.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace kiln {

namespace {

/// "1x2x3" ("scalar" for rank 0).
std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s.empty() ? std::string("scalar") : s;
}

/// Elements of one index of dimension `dim` of `shape` that are contiguous
/// (the product of the dimensions after it).
int64_t innerElements(const std::vector<int64_t> &shape, int32_t dim) {
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(dim) + 1; d < shape.size(); ++d)
    inner *= shape[d];
  return inner;
}

/// The smallest and largest integer of an integer dtype.
std::pair<double, double> integerRange(const std::string &dtype) {
  if (dtype == "|u1")
    return {0, 255};
  if (dtype == "|i1")
    return {-128, 127};
  if (dtype == "<i4")
    return {-2147483648.0, 2147483647.0};
  return {0, 0};
}

/// The next value in [0, 1) of the LCG `state` (top 24 bits).
double nextUnit(uint64_t &state) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return static_cast<double>(state >> 40) * (1.0 / 16777216.0);
}

/// Index (from `begin`) of the first largest value of v[begin, end).
size_t argmaxOf(const std::vector<double> &v, size_t begin, size_t end) {
  size_t best = begin;
  for (size_t i = begin; i < end; ++i)
    if (v[i] > v[best])
      best = i;
  return best - begin;
}

} // namespace

llvm::Expected<std::vector<double>> realValues(const NpyArray &array, const IOQuantization &q,
                                               const std::string &what) {
  const int64_t n = array.numElements();
  std::vector<double> out(static_cast<size_t>(n));
  if (array.dtype == "<f4") {
    for (int64_t i = 0; i < n; ++i) {
      float f;
      std::memcpy(&f, array.data.data() + 4 * i, 4);
      out[i] = f;
    }
    return out;
  }
  if (!isIntegerDtype(array.dtype))
    return makeError(what + ": " + elementTypeName(array.dtype) +
                     " values are not compared (f32 and integer types are)");
  if (!q.quantized()) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = static_cast<double>(integerElement(array, i));
    return out;
  }
  int64_t channels = 1, inner = 1;
  if (q.dimension >= 0) {
    if (static_cast<size_t>(q.dimension) >= array.shape.size() ||
        array.shape[q.dimension] != static_cast<int64_t>(q.scales.size()))
      return makeError(what + ": " + std::to_string(q.scales.size()) +
                       " quantization channels along dimension " + std::to_string(q.dimension) +
                       " of a " + shapeText(array.shape) + " tensor");
    channels = array.shape[q.dimension];
    inner = innerElements(array.shape, q.dimension);
  }
  for (int64_t i = 0; i < n; ++i) {
    size_t c = q.dimension >= 0 ? static_cast<size_t>((i / inner) % channels) : 0;
    out[i] = static_cast<double>(q.scales[c]) *
             static_cast<double>(integerElement(array, i) - q.zeroPoints[c]);
  }
  return out;
}

bool isClassifierShape(const std::vector<int64_t> &shape) {
  return (shape.size() == 1 && shape[0] >= 2) ||
         (shape.size() == 2 && shape[0] == 1 && shape[1] >= 2);
}

/// Output k of every sample: the metrics of OutputAgreement.
static llvm::Expected<OutputAgreement> compareOutput(const std::vector<std::vector<NpyArray>> &a,
                                                     const std::vector<std::vector<NpyArray>> &b,
                                                     const IOInfo &infoA, const IOInfo &infoB,
                                                     size_t k) {
  OutputAgreement m;
  m.name = infoA.name.empty() ? "output " + std::to_string(k) : infoA.name;
  m.samples = static_cast<int64_t>(a.size());
  m.classifier = isClassifierShape(infoA.shape);
  m.dequantizedA = isIntegerDtype(infoA.dtype) && infoA.quantization.quantized();
  m.dequantizedB = isIntegerDtype(infoB.dtype) && infoB.quantization.quantized();
  double sumSq = 0, dot = 0, normA = 0, normB = 0;
  int64_t agree = 0;
  for (size_t s = 0; s < a.size(); ++s) {
    const NpyArray &x = a[s][k], &y = b[s][k];
    if (x.shape != y.shape)
      return makeError(m.name + ": shape " + shapeText(x.shape) + " in the first model, " +
                       shapeText(y.shape) + " in the second");
    auto va = realValues(x, infoA.quantization, m.name);
    if (!va)
      return va.takeError();
    auto vb = realValues(y, infoB.quantization, m.name);
    if (!vb)
      return vb.takeError();
    for (size_t i = 0; i < va->size(); ++i) {
      double d = (*va)[i] - (*vb)[i];
      m.maxAbsError = std::max(m.maxAbsError, std::fabs(d));
      sumSq += d * d;
      dot += (*va)[i] * (*vb)[i];
      normA += (*va)[i] * (*va)[i];
      normB += (*vb)[i] * (*vb)[i];
    }
    m.elements += static_cast<int64_t>(va->size());
    if (m.classifier && !va->empty())
      agree += argmaxOf(*va, 0, va->size()) == argmaxOf(*vb, 0, vb->size());
  }
  m.rmse = m.elements ? std::sqrt(sumSq / static_cast<double>(m.elements)) : 0;
  if (normA == 0 && normB == 0)
    m.cosine = 1;
  else if (normA == 0 || normB == 0)
    m.cosine = 0;
  else if (double product = normA * normB; std::isfinite(product))
    // One square root: sqrt(fl(x * x)) == x exactly, so a model compared
    // with itself gets a cosine of exactly 1.
    m.cosine = dot / std::sqrt(product);
  else
    m.cosine = dot / (std::sqrt(normA) * std::sqrt(normB));
  if (m.classifier && m.samples > 0)
    m.top1Agreement = static_cast<double>(agree) / static_cast<double>(m.samples);
  return m;
}

llvm::Expected<std::vector<OutputAgreement>>
compareOutputSets(const std::vector<std::vector<NpyArray>> &a,
                  const std::vector<std::vector<NpyArray>> &b, const std::vector<IOInfo> &outputsA,
                  const std::vector<IOInfo> &outputsB) {
  if (a.empty())
    return makeError("no samples to compare");
  if (a.size() != b.size())
    return makeError(std::to_string(a.size()) + " samples of the first model, " +
                     std::to_string(b.size()) + " of the second");
  if (outputsA.size() != outputsB.size())
    return makeError("the first model has " + std::to_string(outputsA.size()) +
                     " outputs, the second " + std::to_string(outputsB.size()));
  for (size_t s = 0; s < a.size(); ++s)
    if (a[s].size() != outputsA.size() || b[s].size() != outputsB.size())
      return makeError("sample " + std::to_string(s) + " holds " + std::to_string(a[s].size()) +
                       " and " + std::to_string(b[s].size()) + " outputs; the models have " +
                       std::to_string(outputsA.size()));
  std::vector<OutputAgreement> out;
  for (size_t k = 0; k < outputsA.size(); ++k) {
    auto m = compareOutput(a, b, outputsA[k], outputsB[k], k);
    if (!m)
      return m.takeError();
    out.push_back(std::move(*m));
  }
  return out;
}

std::vector<NpyArray> realRandomInputs(const std::vector<IOInfo> &inputsA,
                                       const std::vector<IOInfo> &inputsB, uint64_t seed) {
  std::vector<NpyArray> out;
  uint64_t state = seed;
  for (size_t k = 0; k < inputsA.size(); ++k) {
    double lo = -1, hi = 1;
    for (const IOInfo *info : {&inputsA[k], k < inputsB.size() ? &inputsB[k] : nullptr})
      if (info && info->quantization.quantized() && isIntegerDtype(info->dtype)) {
        auto [qmin, qmax] = integerRange(info->dtype);
        double scale = info->quantization.scales[0], zp = info->quantization.zeroPoints[0];
        lo = scale * (qmin - zp);
        hi = scale * (qmax - zp);
        break;
      }
    NpyArray a;
    a.dtype = "<f4";
    a.shape = inputsA[k].shape;
    a.data.resize(static_cast<size_t>(a.numElements()) * 4);
    for (int64_t i = 0; i < a.numElements(); ++i) {
      float f = static_cast<float>(lo + (hi - lo) * nextUnit(state));
      std::memcpy(a.data.data() + 4 * i, &f, 4);
    }
    out.push_back(std::move(a));
  }
  return out;
}

llvm::Expected<NpyArray> modelInputOf(const NpyArray &real, const IOInfo &info,
                                      const std::string &what) {
  if (real.shape != info.shape)
    return makeError(what + ": the values are " + tensorTypeText(real.shape, real.dtype) +
                     ", the input is " + tensorTypeText(info.shape, info.dtype));
  if (real.dtype == info.dtype)
    return real;
  const IOQuantization &q = info.quantization;
  if (real.dtype != "<f4" || !(info.dtype == "|i1" || info.dtype == "|u1") || !q.quantized())
    return makeError(what + ": " + elementTypeName(real.dtype) + " values for an " +
                     elementTypeName(info.dtype) +
                     (q.quantized() ? std::string(" input") : " input without quantization") +
                     "; give float32 values for float or quantized int8/uint8 inputs, or the "
                     "input's own type");
  NpyArray out;
  out.dtype = info.dtype;
  out.shape = info.shape;
  out.data.resize(static_cast<size_t>(out.numElements()));
  auto [qmin, qmax] = integerRange(info.dtype);
  const int64_t inner = q.dimension >= 0 ? innerElements(info.shape, q.dimension) : 1;
  const int64_t channels = q.dimension >= 0 ? info.shape[q.dimension] : 1;
  for (int64_t i = 0; i < out.numElements(); ++i) {
    size_t c = q.dimension >= 0 ? static_cast<size_t>((i / inner) % channels) : 0;
    float x;
    std::memcpy(&x, real.data.data() + 4 * i, 4);
    double v = std::round(static_cast<double>(x) / q.scales[c]) + q.zeroPoints[c];
    v = std::clamp(std::isnan(v) ? 0.0 : v, qmin, qmax);
    // The byte of an int8 (two's complement) or a uint8.
    out.data[i] = static_cast<uint8_t>(static_cast<int>(v) & 0xff);
  }
  return out;
}

namespace {

/// Sample `s` of input K: `stacked` itself (one sample) or its slice along
/// the leading axis.
NpyArray sampleOf(const NpyArray &stacked, int64_t s, int64_t samples,
                  const std::vector<int64_t> &shape) {
  if (samples == 1 && stacked.shape == shape)
    return stacked;
  NpyArray a;
  a.dtype = stacked.dtype;
  a.shape = shape;
  size_t bytes = stacked.data.size() / static_cast<size_t>(samples);
  a.data.assign(stacked.data.begin() + s * bytes, stacked.data.begin() + (s + 1) * bytes);
  return a;
}

/// DIR/input_K.npy for every input; the sample count they agree on.
llvm::Expected<std::vector<NpyArray>>
readInputFiles(const std::string &dir, const std::vector<IOInfo> &inputs, int64_t &samples) {
  std::vector<NpyArray> files;
  samples = -1;
  for (size_t k = 0; k < inputs.size(); ++k) {
    llvm::SmallString<256> buffer(dir);
    llvm::sys::path::append(buffer, "input_" + std::to_string(k) + ".npy");
    const std::string path = buffer.str().str();
    if (!llvm::sys::fs::exists(path))
      return makeError(path + " does not exist; the models have " + std::to_string(inputs.size()) +
                       " input(s), input_0.npy ...");
    auto a = readNpyFile(path);
    if (!a)
      return a.takeError();
    int64_t n = 0;
    if (a->shape == inputs[k].shape)
      n = 1;
    else if (a->shape.size() == inputs[k].shape.size() + 1 && !a->shape.empty() &&
             std::equal(inputs[k].shape.begin(), inputs[k].shape.end(), a->shape.begin() + 1))
      n = a->shape[0];
    if (n < 1 || (samples >= 0 && n != samples))
      return makeError(
          path + " is " + tensorTypeText(a->shape, a->dtype) + "; input " + std::to_string(k) +
          " '" + inputs[k].name + "' is " + shapeText(inputs[k].shape) +
          (samples >= 0 ? ", the other files hold " + std::to_string(samples) + " samples"
                        : std::string(" (or N x that: N samples)")));
    samples = n;
    files.push_back(std::move(*a));
  }
  if (samples < 0)
    samples = 1;
  return files;
}

/// Checks that the two signatures' inputs agree in count and shape.
llvm::Error checkSignatures(const RunResult &a, const RunResult &b, const std::string &nameA,
                            const std::string &nameB) {
  auto counted = [](size_t n, const char *what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  if (a.inputs.size() != b.inputs.size() || a.outputs.size() != b.outputs.size())
    return makeError(nameA + " has " + counted(a.inputs.size(), "input") + " and " +
                     counted(a.outputs.size(), "output") + ", " + nameB + " " +
                     counted(b.inputs.size(), "input") + " and " +
                     counted(b.outputs.size(), "output") +
                     "; only models of one signature "
                     "compare");
  auto same = [&](const std::vector<IOInfo> &x, const std::vector<IOInfo> &y,
                  const char *kind) -> llvm::Error {
    for (size_t k = 0; k < x.size(); ++k)
      if (x[k].shape != y[k].shape)
        return makeError(std::string(kind) + " " + std::to_string(k) + " is " +
                         tensorTypeText(x[k].shape, x[k].dtype) + " '" + x[k].name + "' in " +
                         nameA + ", " + tensorTypeText(y[k].shape, y[k].dtype) + " '" + y[k].name +
                         "' in " + nameB);
    return llvm::Error::success();
  };
  if (llvm::Error err = same(a.inputs, b.inputs, "input"))
    return err;
  return same(a.outputs, b.outputs, "output");
}

} // namespace

llvm::Expected<ModelComparison> compareModels(llvm::ArrayRef<uint8_t> a, llvm::ArrayRef<uint8_t> b,
                                              const std::string &nameA, const std::string &nameB,
                                              const ModelComparisonOptions &options) {
  auto sigA = describeArtifact(a);
  if (!sigA)
    return makeError(nameA + ": " + llvm::toString(sigA.takeError()));
  auto sigB = describeArtifact(b);
  if (!sigB)
    return makeError(nameB + ": " + llvm::toString(sigB.takeError()));
  if (llvm::Error err = checkSignatures(*sigA, *sigB, nameA, nameB))
    return std::move(err);
  ModelComparison c;
  c.inputsA = sigA->inputs, c.inputsB = sigB->inputs;
  c.outputsA = sigA->outputs, c.outputsB = sigB->outputs;
  std::vector<NpyArray> files;
  if (!options.inputDir.empty()) {
    auto read = readInputFiles(options.inputDir, c.inputsA, c.samples);
    if (!read)
      return read.takeError();
    files = std::move(*read);
    c.inputSource = options.inputDir + "/input_K.npy, " + std::to_string(c.samples) + " sample" +
                    (c.samples == 1 ? "" : "s");
  } else {
    if (options.samples < 1)
      return makeError("compare " + std::to_string(options.samples) +
                       " samples: at least 1 is needed");
    c.samples = options.samples;
    c.inputSource = std::to_string(c.samples) + " random sample" + (c.samples == 1 ? "" : "s") +
                    " (seed " + std::to_string(options.seed) + ")";
  }
  RunOptions run = options.run;
  run.benchmarkRuns = 0, run.trace = false, run.randomInputs = false;
  std::vector<std::vector<NpyArray>> outA, outB;
  for (int64_t s = 0; s < c.samples; ++s) {
    std::vector<NpyArray> real;
    if (files.empty())
      real = realRandomInputs(c.inputsA, c.inputsB, options.seed + static_cast<uint64_t>(s));
    else
      for (size_t k = 0; k < files.size(); ++k)
        real.push_back(sampleOf(files[k], s, c.samples, c.inputsA[k].shape));
    std::vector<NpyArray> inA, inB;
    for (size_t k = 0; k < real.size(); ++k) {
      std::string label = "input " + std::to_string(k) + " '" + c.inputsA[k].name + "'";
      auto x = modelInputOf(real[k], c.inputsA[k], nameA + ": " + label);
      if (!x)
        return x.takeError();
      auto y = modelInputOf(real[k], c.inputsB[k], nameB + ": " + label);
      if (!y)
        return y.takeError();
      inA.push_back(std::move(*x));
      inB.push_back(std::move(*y));
    }
    auto ra = runArtifact(a, inA, run);
    if (!ra)
      return makeError(nameA + ": " + llvm::toString(ra.takeError()));
    auto rb = runArtifact(b, inB, run);
    if (!rb)
      return makeError(nameB + ": " + llvm::toString(rb.takeError()));
    outA.push_back(std::move(ra->outputValues));
    outB.push_back(std::move(rb->outputValues));
  }
  auto metrics = compareOutputSets(outA, outB, c.outputsA, c.outputsB);
  if (!metrics)
    return metrics.takeError();
  c.outputs = std::move(*metrics);
  return c;
}

std::string formatModelComparison(const ModelComparison &c) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "compared on " << c.inputSource << "\n"
     << "output                       elements   max |error|         rmse      cosine   "
        "top-1\n";
  for (const OutputAgreement &m : c.outputs) {
    os << llvm::format("%-26s %12lld %13.4e %12.4e %11.8f ", m.name.substr(0, 26).c_str(),
                       (long long)m.elements, m.maxAbsError, m.rmse, m.cosine);
    if (m.classifier)
      os << llvm::format("%7.4f", m.top1Agreement);
    else
      os << "      -";
    os << (m.dequantizedA || m.dequantizedB ? std::string("  (dequantized: ") +
                                                  (m.dequantizedA && m.dequantizedB ? "both"
                                                   : m.dequantizedA                 ? "first"
                                                                                    : "second") +
                                                  ")"
                                            : std::string())
       << "\n";
  }
  return os.str();
}

/// A metric as JSON: the number, or null where it is NaN or infinite.
static llvm::json::Value finiteOrNull(double v) {
  if (std::isfinite(v))
    return v;
  return nullptr;
}

llvm::json::Value modelComparisonToJson(const ModelComparison &c) {
  llvm::json::Array outputs;
  for (const OutputAgreement &m : c.outputs)
    outputs.push_back(
        llvm::json::Object{{"name", m.name},
                           {"elements", m.elements},
                           {"max_abs_error", finiteOrNull(m.maxAbsError)},
                           {"rmse", finiteOrNull(m.rmse)},
                           {"cosine", finiteOrNull(m.cosine)},
                           {"top1_agreement", m.classifier ? llvm::json::Value(m.top1Agreement)
                                                           : llvm::json::Value(nullptr)},
                           {"dequantized_a", m.dequantizedA},
                           {"dequantized_b", m.dequantizedB}});
  return llvm::json::Object{
      {"samples", c.samples}, {"inputs", c.inputSource}, {"outputs", std::move(outputs)}};
}

} // namespace kiln
