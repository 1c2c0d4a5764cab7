//===- Run.cpp - Run artifacts on the host --------------------------------===//
//
// kiln_host's driver over the runtime (kiln/Run.h).
//
//===----------------------------------------------------------------------===//
#include "kiln/Error.h"
#include "kiln/ReadFile.h"
#include "kiln/Run.h"
#include "kiln/Artifact.h"

#include "kiln/Compiler.h"
#include "Support/Message.h"

#include "llvm/ADT/SmallString.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <algorithm>

#include <cstring>

#include <algorithm>
#include <cmath>

#include "kiln/runtime.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <new>
#include <set>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#if defined(__SANITIZE_ADDRESS__)
#define KILN_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_UNDER_ASAN 1
#endif
#endif
#ifdef KILN_UNDER_ASAN
// runArtifact reports a failed allocation (an artifact's arena, an output)
// as an error naming the bytes; in a program built with AddressSanitizer,
// malloc must then return NULL rather than stop the process.
extern "C" const char *__asan_default_options() { return "allocator_may_return_null=1"; }
#endif

namespace kiln {

static std::string dtypeOf(kiln_element_type_t t) {
  return dtypeOfElementType(kiln_element_type_name(t));
}

/// Reads `file` as the raw little-endian bytes of `array` (shape and
/// dtype already set): its size must be exactly the array's.
static llvm::Error readRawInput(const std::string &spec, llvm::StringRef file,
                                NpyArray &array) {
  auto buffer = readRegularFile(file.str(), "a file of raw input bytes");
  if (!buffer)
    return makeError("--input='" + quoteInput(spec) + "': " + llvm::toString(buffer.takeError()));
  uint64_t want = static_cast<uint64_t>(array.numElements()) * npyDtypeSize(array.dtype);
  uint64_t got = (*buffer)->getBufferSize();
  if (got != want)
    return makeError("--input='" + quoteInput(spec) + "': " + quoteInput(file) + " holds " +
                     llvm::Twine(got) + " bytes; " + tensorTypeText(array.shape, array.dtype) +
                     " is " + llvm::Twine(want) + " bytes of raw little-endian data");
  array.data.assign((*buffer)->getBufferStart(), (*buffer)->getBufferEnd());
  return llvm::Error::success();
}

/// Stores the literal `text` as element `i` of `array`: a number for f32,
/// an integer in the type's range for i32, i64, i8, u8 and i1 (0 or 1).
static llvm::Error storeLiteral(const std::string &spec, llvm::StringRef text, int64_t i,
                                NpyArray &array) {
  const std::string type = elementTypeName(array.dtype);
  uint8_t *at = array.data.data() + i * npyDtypeSize(array.dtype);
  if (type == "f32") {
    double d;
    if (text.getAsDouble(d))
      return makeError("--input='" + quoteInput(spec) + "': '" + quoteInput(text) +
                       "' is not a number");
    float f = static_cast<float>(d);
    std::memcpy(at, &f, 4);
    return llvm::Error::success();
  }
  int64_t x;
  int64_t lo = type == "i8" ? -128 : type == "i32" ? INT32_MIN : type == "i64" ? INT64_MIN : 0;
  int64_t hi = type == "i8"    ? 127
               : type == "u8"  ? 255
               : type == "i1"  ? 1
               : type == "i32" ? INT32_MAX
                               : INT64_MAX;
  if (text.getAsInteger(10, x) || x < lo || x > hi)
    return makeError("--input='" + quoteInput(spec) + "': '" + quoteInput(text) +
                     "' is not an integer from " + llvm::Twine(lo) + " to " + llvm::Twine(hi) +
                     " (" + type + ")");
  if (type == "i32") {
    int32_t x32 = static_cast<int32_t>(x);
    std::memcpy(at, &x32, 4);
  } else if (type == "i64") {
    std::memcpy(at, &x, 8);
  } else {
    *at = static_cast<uint8_t>(x);
  }
  return llvm::Error::success();
}

llvm::Expected<NpyArray> parseInputSpec(const std::string &spec) {
  llvm::StringRef ref(spec);
  if (ref.consume_front("@"))
    return readNpyFile(ref.str());
  size_t eq = ref.find('=');
  if (eq == llvm::StringRef::npos)
    return makeError("--input='" + quoteInput(spec) +
                     "': expected @file.npy, DIMSxTYPE=VALUES (e.g. 1x16x96xf32=0.5) or "
                     "DIMSxTYPE=@file.bin (raw little-endian)");
  llvm::StringRef typeText = ref.take_front(eq);
  llvm::StringRef valuesText = ref.drop_front(eq + 1);
  llvm::SmallVector<llvm::StringRef> parts;
  typeText.split(parts, 'x');
  NpyArray array;
  llvm::StringRef type = parts.pop_back_val();
  array.dtype = dtypeOfElementType(type);
  const bool raw = valuesText.startswith("@");
  if (array.dtype.empty() || type == "f64" || (!raw && type == "f16"))
    return makeError("--input='" + quoteInput(spec) + "': element type '" + quoteInput(type) +
                     "' is not supported (f32, i32, i64, i8, u8, i1" +
                     (raw ? ", f16" : "; f16 from a raw @file.bin") + ")");
  for (llvm::StringRef p : parts) {
    int64_t d;
    if (p.getAsInteger(10, d) || d < 0)
      return makeError("--input='" + quoteInput(spec) + "': bad dimension '" + quoteInput(p) +
                       "'");
    array.shape.push_back(d);
  }
  const int64_t limit = raw ? (int64_t(1) << 40) : (int64_t(1) << 28);
  int64_t n = 1;
  for (int64_t d : array.shape)
    if (d > 0 && n > limit / d)
      return makeError("--input='" + quoteInput(spec) + "': more than " + llvm::Twine(limit) +
                       " elements" + (raw ? "" : " in a literal; pass large inputs as files"));
    else
      n *= d;
  if (raw) {
    if (llvm::Error err = readRawInput(spec, valuesText.drop_front(), array))
      return std::move(err);
    return array;
  }
  llvm::SmallVector<llvm::StringRef> values;
  valuesText.split(values, ',');
  if (values.size() != 1 && static_cast<int64_t>(values.size()) != n)
    return makeError("--input='" + quoteInput(spec) + "': " + llvm::Twine(values.size()) +
                     " values for " + llvm::Twine(n) + " elements");
  if (llvm::Error err = allocateBytes(array.data, npyDtypeSize(array.dtype) * uint64_t(n),
                                      "--input='" + quoteInput(spec) + "'"))
    return std::move(err);
  for (int64_t i = 0; i < n; ++i)
    if (llvm::Error err =
            storeLiteral(spec, (values.size() == 1 ? values[0] : values[i]).trim(), i, array))
      return std::move(err);
  return array;
}

namespace {

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<uint8_t, FreeDeleter>;

/// `bytes` rounded up to a multiple of 64 (at least 64), or 0 when that
/// overflows.
size_t alignedSize(uint64_t bytes) {
  uint64_t rounded;
  if (__builtin_add_overflow(bytes, 63, &rounded) || rounded / 64 * 64 > SIZE_MAX)
    return 0;
  return rounded < 64 ? 64 : static_cast<size_t>(rounded / 64 * 64);
}

/// 64-byte aligned memory for `bytes` bytes, or an error naming the bytes
/// and `what` (kiln run reports a failed allocation, never aborts).
llvm::Expected<AlignedBytes> allocateAligned(uint64_t bytes, const llvm::Twine &what) {
  size_t size = alignedSize(bytes);
  auto *p = size ? static_cast<uint8_t *>(std::aligned_alloc(64, size)) : nullptr;
  if (!p)
    return makeError("cannot allocate " + llvm::Twine(bytes) + " bytes for " + what);
  return AlignedBytes(p);
}

llvm::Expected<AlignedBytes> alignedCopy(llvm::ArrayRef<uint8_t> bytes) {
  auto copy = allocateAligned(bytes.size(), "a copy of the artifact");
  if (copy && !bytes.empty())
    std::memcpy(copy->get(), bytes.data(), bytes.size());
  return copy;
}

struct ModuleDeleter {
  void operator()(kiln_module_t *m) const { kiln_module_release(m); }
};

IOInfo infoOf(const kiln_tensor_info_t &t) {
  IOInfo info;
  info.name = t.name;
  info.dtype = dtypeOf(t.element_type);
  info.shape.assign(t.shape, t.shape + t.rank);
  info.byteSize = t.byte_size;
  if (t.quantized) {
    info.quantization.scales.assign(t.scales, t.scales + t.quantization_count);
    info.quantization.zeroPoints.assign(t.zero_points, t.zero_points + t.quantization_count);
    info.quantization.dimension = t.quantized_dimension;
  }
  return info;
}

} // namespace

/// randomInputs() that reports an input it cannot allocate (naming the
/// bytes) instead of throwing.
static llvm::Expected<std::vector<NpyArray>>
tryRandomInputs(const std::vector<IOInfo> &infos, uint64_t seed) {
  std::vector<NpyArray> inputs;
  uint64_t state = seed;
  for (size_t k = 0; k < infos.size(); ++k) {
    const IOInfo &info = infos[k];
    NpyArray a;
    a.dtype = info.dtype;
    a.shape = info.shape;
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(a.numElements()),
                               static_cast<uint64_t>(npyDtypeSize(a.dtype)), &bytes))
      bytes = UINT64_MAX;
    if (llvm::Error err =
            allocateBytes(a.data, bytes, "input " + llvm::Twine(k) + " '" + info.name + "'"))
      return std::move(err);
    if (a.dtype == "<f4") {
      float *f = reinterpret_cast<float *>(a.data.data());
      for (int64_t i = 0; i < a.numElements(); ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        // Top 24 bits -> [0, 1) -> [-1, 1).
        f[i] = static_cast<float>((state >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
      }
    } else if (a.dtype == "|i1" || a.dtype == "|u1") {
      // Quantized inputs over their whole range: the top 8 bits, as the
      // byte's two's complement (int8, -128..127) or unsigned (0..255).
      for (int64_t i = 0; i < a.numElements(); ++i) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        a.data[i] = static_cast<uint8_t>(state >> 56);
      }
    }
    inputs.push_back(std::move(a));
  }
  return inputs;
}

static llvm::Expected<std::unique_ptr<kiln_module_t, ModuleDeleter>>
loadModule(const uint8_t *data, size_t size, RunResult &result) {
  kiln_module_t *raw = nullptr;
  kiln_status_t status = kiln_module_load(data, size, &raw);
  if (status.code != KILN_OK)
    return makeError(status.message);
  std::unique_ptr<kiln_module_t, ModuleDeleter> module(raw);
  for (size_t i = 0; i < kiln_module_input_count(raw); ++i) {
    kiln_tensor_info_t t;
    kiln_module_input_info(raw, i, &t);
    result.inputs.push_back(infoOf(t));
  }
  for (size_t i = 0; i < kiln_module_output_count(raw); ++i) {
    kiln_tensor_info_t t;
    kiln_module_output_info(raw, i, &t);
    result.outputs.push_back(infoOf(t));
  }
  result.arenaBytes = kiln_module_arena_bytes(raw);
  return module;
}

llvm::Expected<RunResult> describeArtifact(llvm::ArrayRef<uint8_t> artifact) {
  auto bytes = alignedCopy(artifact);
  if (!bytes)
    return bytes.takeError();
  RunResult result;
  auto module = loadModule(bytes->get(), artifact.size(), result);
  if (!module)
    return module.takeError();
  return result;
}

/// Resizes the trace buffer to `n` events, or says it cannot (a run of
/// millions of workgroups asks for tens of MB).
static llvm::Error allocateTrace(std::vector<kiln_trace_event_t> &events, size_t n) {
  try {
    events.resize(n);
  } catch (const std::bad_alloc &) {
    return makeError("cannot allocate a trace of " + std::to_string(n) + " events (" +
                     std::to_string(n * sizeof(kiln_trace_event_t)) + " bytes)");
  }
  return llvm::Error::success();
}

/// `given` checked against the signature `want` (count, then each one's
/// dtype and shape; errors name the input and what was expected), and
/// their data pointers and sizes for an invocation.
static llvm::Error bindInputs(const std::vector<IOInfo> &want, const std::vector<NpyArray> &given,
                              std::vector<const void *> &ptrs, std::vector<size_t> &sizes) {
  if (given.size() != want.size()) {
    std::string expected;
    for (const IOInfo &in : want)
      expected +=
          (expected.empty() ? " '" : ", '") + in.name + "' " + tensorTypeText(in.shape, in.dtype);
    if (want.empty()) // every input fixed (--fix-value) or none at all
      return makeError("the model takes no inputs, " + llvm::Twine(given.size()) +
                       " given (inputs fixed to values at compile time are not given again)");
    return makeError("the model takes " + llvm::Twine(want.size()) + " input(s), " +
                     llvm::Twine(given.size()) + " given; expected, in order:" + expected);
  }
  ptrs.clear();
  sizes.clear();
  for (size_t i = 0; i < given.size(); ++i) {
    const NpyArray &got = given[i];
    if (got.dtype != want[i].dtype || got.shape != want[i].shape)
      return makeError("input " + llvm::Twine(i) + " '" + want[i].name + "' expects " +
                       tensorTypeText(want[i].shape, want[i].dtype) + ", got " +
                       tensorTypeText(got.shape, got.dtype));
    ptrs.push_back(got.data.data());
    sizes.push_back(got.data.size());
  }
  return llvm::Error::success();
}

/// One array per output of the signature `outputs` in `values`, and their
/// data pointers and sizes for an invocation.
static llvm::Error allocateOutputs(const std::vector<IOInfo> &outputs,
                                   std::vector<NpyArray> &values, std::vector<void *> &ptrs,
                                   std::vector<size_t> &sizes) {
  values.assign(outputs.size(), NpyArray());
  ptrs.clear();
  sizes.clear();
  for (size_t i = 0; i < outputs.size(); ++i) {
    NpyArray &out = values[i];
    out.dtype = outputs[i].dtype;
    out.shape = outputs[i].shape;
    if (llvm::Error err = allocateBytes(out.data, outputs[i].byteSize,
                                        "output " + llvm::Twine(i) + " '" + outputs[i].name + "'"))
      return err;
    ptrs.push_back(out.data.data());
    sizes.push_back(out.data.size());
  }
  return llvm::Error::success();
}

/// The HAL device `options` name (local-sync, or local-task with its
/// threads).
static llvm::Error createDevice(const RunOptions &options, kiln_device_t &device) {
  kiln_status_t status;
  if (options.device == "local-sync")
    status = kiln_device_create_local_sync(&device);
  else if (options.device == "local-task")
    status = kiln_device_create_local_task(options.threads, &device);
  else
    return makeError("unknown device '" + options.device + "' (devices: local-sync, local-task)");
  if (status.code != KILN_OK)
    return makeError(status.message);
  return llvm::Error::success();
}

/// The arena of `bytes` (none for 0), 64-byte aligned.
static llvm::Expected<AlignedBytes> arenaOf(uint64_t bytes) {
  if (bytes == 0)
    return AlignedBytes();
  return allocateAligned(bytes, "the arena");
}

/// An invocation over the bound inputs and outputs, `arena` and `device`
/// (no trace, no cancellation).
static kiln_invocation_t invocationOf(const std::vector<const void *> &inPtrs,
                                      const std::vector<size_t> &inSizes,
                                      const std::vector<void *> &outPtrs,
                                      const std::vector<size_t> &outSizes, void *arena,
                                      uint64_t arenaBytes, const kiln_device_t &device) {
  kiln_invocation_t invocation{};
  invocation.inputs = inPtrs.data();
  invocation.input_sizes = inSizes.data();
  invocation.input_count = inPtrs.size();
  invocation.outputs = outPtrs.data();
  invocation.output_sizes = outSizes.data();
  invocation.output_count = outPtrs.size();
  invocation.arena = arena;
  invocation.arena_size = arenaBytes;
  invocation.device = &device;
  return invocation;
}

llvm::Expected<std::vector<std::vector<NpyArray>>>
runArtifactSteps(llvm::ArrayRef<uint8_t> artifact, const std::vector<std::vector<NpyArray>> &steps,
                 const RunOptions &options, const std::vector<size_t> &resetBefore) {
  auto bytes = alignedCopy(artifact);
  if (!bytes)
    return bytes.takeError();
  RunResult result;
  auto module = loadModule(bytes->get(), artifact.size(), result);
  if (!module)
    return module.takeError();
  auto arena = arenaOf(result.arenaBytes);
  if (!arena)
    return arena.takeError();
  kiln_device_t device;
  if (llvm::Error err = createDevice(options, device))
    return std::move(err);
  std::unique_ptr<kiln_device_t, void (*)(kiln_device_t *)> deviceGuard(&device,
                                                                        kiln_device_release);
  std::vector<std::vector<NpyArray>> outputs;
  for (size_t k = 0; k < steps.size(); ++k) {
    if (std::find(resetBefore.begin(), resetBefore.end(), k) != resetBefore.end())
      kiln_module_reset_state(module->get());
    std::vector<const void *> inPtrs;
    std::vector<size_t> inSizes;
    std::vector<void *> outPtrs;
    std::vector<size_t> outSizes;
    std::vector<NpyArray> values;
    if (llvm::Error err = bindInputs(result.inputs, steps[k], inPtrs, inSizes))
      return makeError("step " + llvm::Twine(k) + ": " + llvm::toString(std::move(err)));
    if (llvm::Error err = allocateOutputs(result.outputs, values, outPtrs, outSizes))
      return std::move(err);
    kiln_invocation_t invocation =
        invocationOf(inPtrs, inSizes, outPtrs, outSizes, arena->get(), result.arenaBytes, device);
    kiln_status_t s = kiln_module_invoke(module->get(), &invocation);
    if (s.code != KILN_OK)
      return makeError("step " + llvm::Twine(k) + ": " + s.message);
    outputs.push_back(std::move(values));
  }
  return outputs;
}

llvm::Expected<RunResult> runArtifact(llvm::ArrayRef<uint8_t> artifact,
                                      const std::vector<NpyArray> &inputs,
                                      const RunOptions &options) {
  auto bytes = alignedCopy(artifact);
  if (!bytes)
    return bytes.takeError();
  RunResult result;
  auto module = loadModule(bytes->get(), artifact.size(), result);
  if (!module)
    return module.takeError();
  if (options.trace) {
    // The plan names the traced commands; the gate read it at load.
    kiln_artifact_info_t info;
    kiln_module_artifact_info(module->get(), &info);
    if (auto plan = planOfArtifact(info, "artifact"))
      result.plan = *plan;
    else
      llvm::consumeError(plan.takeError());
  }
  std::vector<NpyArray> generated;
  if (options.randomInputs) {
    auto made = tryRandomInputs(result.inputs, 1);
    if (!made)
      return made.takeError();
    generated = std::move(*made);
  }
  const std::vector<NpyArray> &given = options.randomInputs ? generated : inputs;
  std::vector<const void *> inPtrs;
  std::vector<size_t> inSizes;
  if (llvm::Error err = bindInputs(result.inputs, given, inPtrs, inSizes))
    return std::move(err);
  std::vector<void *> outPtrs;
  std::vector<size_t> outSizes;
  if (llvm::Error err = allocateOutputs(result.outputs, result.outputValues, outPtrs, outSizes))
    return std::move(err);
  auto arena = arenaOf(result.arenaBytes);
  if (!arena)
    return arena.takeError();
  kiln_device_t device;
  if (llvm::Error err = createDevice(options, device))
    return std::move(err);
  std::unique_ptr<kiln_device_t, void (*)(kiln_device_t *)> deviceGuard(
      &device, kiln_device_release);

  std::vector<kiln_trace_event_t> events;
  kiln_trace_t trace{};
  if (options.trace) {
    if (llvm::Error err = allocateTrace(events, size_t(1) << 16))
      return std::move(err);
    trace.events = events.data();
    trace.capacity = events.size();
  }
  kiln_invocation_t invocation =
      invocationOf(inPtrs, inSizes, outPtrs, outSizes, arena->get(), result.arenaBytes, device);
  if (options.cancelled) {
    invocation.cancelled = [](void *context) -> int {
      return (*static_cast<const std::function<bool()> *>(context))() ? 1 : 0;
    };
    invocation.cancel_context = const_cast<std::function<bool()> *>(&options.cancelled);
  }
  auto invoke = [&]() -> llvm::Error {
    if (options.cancelled && options.cancelled())
      return makeError("run cancelled");
    kiln_status_t s = kiln_module_invoke(module->get(), &invocation);
    if (s.code == KILN_CANCELLED)
      return makeError("run " + llvm::Twine(s.message));
    if (s.code != KILN_OK)
      return makeError(s.message);
    return llvm::Error::success();
  };
  // The trace covers the first run, or with benchmark runs one more warm
  // run after the timed ones (as the per-dispatch profile needs); the
  // timed runs are never traced, so their times are the plain latency.
  // A buffer too small for the run (count + dropped is every event)
  // is grown to fit and the traced run repeated once, so no dispatch's
  // workgroups are cut off; what still did not fit is reported.
  auto tracedRun = [&]() -> llvm::Error {
    invocation.trace = &trace;
    for (int attempt = 0; attempt < 2; ++attempt) {
      trace.count = 0;
      trace.dropped = 0;
      if (llvm::Error err = invoke()) {
        invocation.trace = nullptr;
        return err;
      }
      if (trace.dropped == 0 || attempt == 1)
        break;
      if (llvm::Error err = allocateTrace(events, trace.count + trace.dropped)) {
        invocation.trace = nullptr;
        return err;
      }
      trace.events = events.data();
      trace.capacity = events.size();
    }
    invocation.trace = nullptr;
    result.traceDropped = trace.dropped;
    size_t n = std::min(trace.count, trace.capacity);
    for (size_t i = 0; i < n; ++i) {
      const kiln_trace_event_t &e = events[i];
      result.trace.push_back({e.command,
                              e.workgroup == UINT32_MAX ? -1 : int64_t(e.workgroup),
                              e.thread, e.start_ns, e.end_ns});
    }
    return llvm::Error::success();
  };
  const bool traceFirst = options.trace && options.benchmarkRuns == 0;
  if (llvm::Error err = traceFirst ? tracedRun() : invoke())
    return std::move(err);
  // A stateful model's later runs start from the state the first one left:
  // the outputs reported are the first run's, from the initial state.
  std::vector<NpyArray> firstOutputs;
  if (kiln_module_state_count(module->get()) > 0)
    firstOutputs = result.outputValues;
  for (unsigned i = 0; i < options.benchmarkRuns; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error err = invoke())
      return std::move(err);
    auto end = std::chrono::steady_clock::now();
    result.timesMs.push_back(
        std::chrono::duration<double, std::milli>(end - start).count());
  }
  result.latency = latencyOf(result.timesMs, options);
  if (options.trace && options.benchmarkRuns > 0)
    if (llvm::Error err = tracedRun())
      return std::move(err);
  if (!firstOutputs.empty())
    for (size_t i = 0; i < firstOutputs.size(); ++i)
      result.outputValues[i].data = firstOutputs[i].data; // same size: outPtrs stay valid
  return result;
}

std::string traceToChromeJson(const std::vector<TraceEvent> &events,
                              const std::vector<std::string> &names) {
  uint64_t origin = UINT64_MAX;
  for (const TraceEvent &e : events)
    origin = std::min(origin, e.startNs);
  llvm::json::Array out;
  std::set<int64_t> threads;
  for (const TraceEvent &e : events) {
    std::string name = e.command >= 0 && size_t(e.command) < names.size()
                           ? names[e.command]
                           : "command " + std::to_string(e.command);
    llvm::json::Object args{{"command", e.command}};
    if (e.workgroup >= 0) {
      args["workgroup"] = e.workgroup;
      name += " wg " + std::to_string(e.workgroup);
    }
    // Dispatch spans on their own track above the worker threads.
    int64_t tid = e.workgroup >= 0 ? e.thread : 1000;
    threads.insert(tid);
    out.push_back(llvm::json::Object{
        {"name", name},
        {"cat", e.workgroup >= 0 ? "workgroup" : "dispatch"},
        {"ph", "X"},
        {"pid", 1},
        {"tid", tid},
        {"ts", double(e.startNs - origin) / 1000.0},
        {"dur", double(e.endNs - e.startNs) / 1000.0},
        {"args", std::move(args)}});
  }
  for (int64_t tid : threads)
    out.push_back(llvm::json::Object{
        {"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", tid},
        {"args", llvm::json::Object{{"name", tid == 1000 ? std::string("dispatches")
                                                         : "thread " + std::to_string(tid)}}}});
  llvm::json::Object root{{"traceEvents", std::move(out)},
                          {"displayTimeUnit", "ns"}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(root));
  return os.str();
}

std::vector<NpyArray> randomInputs(const std::vector<IOInfo> &infos, uint64_t seed) {
  auto inputs = tryRandomInputs(infos, seed);
  if (!inputs) {
    llvm::consumeError(inputs.takeError());
    return {};
  }
  return std::move(*inputs);
}

double medianOf(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

LatencyStats latencyOf(std::vector<double> t, const RunOptions &options) {
  LatencyStats s;
  s.device = options.device;
  s.threads = options.device == "local-task" ? options.threads : 1;
  s.runs = static_cast<unsigned>(t.size());
  if (t.empty())
    return s;
  s.medianMs = medianOf(t);
  s.minMs = *std::min_element(t.begin(), t.end());
  s.maxMs = *std::max_element(t.begin(), t.end());
  return s;
}

/// `v` with three significant digits ("6.61", "16.0", "0.123").
static std::string threeDigits(double v) {
  const char *format = v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : v >= 1 ? "%.2f" : "%.3f";
  char text[32];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

std::string latencyText(const LatencyStats &s) {
  if (s.medianMs < 0)
    return "not measured";
  return "median " + threeDigits(s.medianMs) + " ms, " + s.device + " " +
         std::to_string(s.threads) + (s.threads == 1 ? " thread, " : " threads, ") +
         std::to_string(s.runs) + (s.runs == 1 ? " run" : " runs");
}

bool withinSpread(const LatencyStats &a, const LatencyStats &b) {
  if (a.medianMs < 0 || b.medianMs < 0)
    return false;
  return a.minMs <= b.maxMs && b.minMs <= a.maxMs;
}

llvm::Expected<LatencyStats> benchmarkArtifact(llvm::ArrayRef<uint8_t> artifact, unsigned runs,
                                               const RunOptions &options) {
  RunOptions timed = options;
  timed.benchmarkRuns = std::max(1u, runs);
  timed.trace = false;
  timed.randomInputs = true;
  auto result = runArtifact(artifact, {}, timed);
  if (!result)
    return result.takeError();
  if (result->timesMs.empty())
    return makeError("no timed runs");
  return result->latency;
}

llvm::Expected<std::pair<LatencyStats, LatencyStats>>
benchmarkPair(llvm::ArrayRef<uint8_t> a, llvm::ArrayRef<uint8_t> b, unsigned runs,
              const std::string &nameA, const std::string &nameB, const RunOptions &options) {
  constexpr unsigned kRounds = 5;
  RunOptions timed = options;
  timed.benchmarkRuns = std::max(1u, (runs + kRounds - 1) / kRounds);
  timed.trace = false;
  timed.randomInputs = true;
  std::vector<double> times[2];
  const llvm::ArrayRef<uint8_t> builds[2] = {a, b};
  for (unsigned round = 0; round < kRounds; ++round)
    for (int k = 0; k < 2; ++k) {
      auto result = runArtifact(builds[k], {}, timed);
      if (!result)
        return makeError((k ? nameB : nameA) + ": " + llvm::toString(result.takeError()));
      times[k].insert(times[k].end(), result->timesMs.begin(), result->timesMs.end());
    }
  return std::make_pair(latencyOf(times[0], timed), latencyOf(times[1], timed));
}

llvm::Expected<std::pair<BuildSummary, BuildSummary>>
compareBuilds(const std::vector<uint8_t> &a, const std::vector<uint8_t> &b,
              const std::string &nameA, const std::string &nameB, unsigned runs,
              std::vector<std::string> &warnings, const RunOptions &options) {
  auto summaryA = summarizeArtifact(a, nameA);
  if (!summaryA)
    return summaryA.takeError();
  auto summaryB = summarizeArtifact(b, nameB);
  if (!summaryB)
    return summaryB.takeError();
  if (runs > 0) {
    auto latency = benchmarkPair(a, b, runs, nameA, nameB, options);
    if (latency) {
      summaryA->latency = latency->first;
      summaryB->latency = latency->second;
    } else {
      warnings.push_back("latency not measured: " + llvm::toString(latency.takeError()));
    }
  }
  return std::make_pair(std::move(*summaryA), std::move(*summaryB));
}

/// Metrics of one f32 output against its reference (same shape).
static ValidationMetrics floatMetrics(const NpyArray &got, const NpyArray &ref,
                                      const Tolerance &tolerance) {
  ValidationMetrics m;
  m.elements = got.numElements();
  const float *g = reinterpret_cast<const float *>(got.data.data());
  const float *r = reinterpret_cast<const float *>(ref.data.data());
  double sq = 0, dot = 0, gg = 0, rr = 0;
  for (int64_t i = 0; i < m.elements; ++i) {
    // Equal values, the same infinity and NaN against NaN are no error
    // (inf - inf would be NaN), as numpy.testing compares them.
    bool same = g[i] == r[i] || (std::isnan(g[i]) && std::isnan(r[i]));
    double d = same ? 0.0 : double(g[i]) - double(r[i]);
    m.maxAbsError = std::max(m.maxAbsError, std::fabs(d));
    sq += d * d;
    if (std::isfinite(g[i]) && std::isfinite(r[i])) { // cosine over the finite pairs
      dot += double(g[i]) * double(r[i]);
      gg += double(g[i]) * double(g[i]);
      rr += double(r[i]) * double(r[i]);
    }
    // A zero reference allows atol alone (rtol = inf times 0 would be NaN).
    double allowed = tolerance.atol + (r[i] == 0 ? 0.0 : tolerance.rtol * std::fabs(double(r[i])));
    if (!same && !(std::isfinite(d) && std::fabs(d) <= allowed))
      ++m.outsideTolerance;
    if (!same)
      ++m.differing;
  }
  m.rmse = m.elements ? std::sqrt(sq / double(m.elements)) : 0;
  m.cosine = (gg == 0 && rr == 0) ? 1.0 : (gg == 0 || rr == 0) ? 0.0 : dot / std::sqrt(gg * rr);
  return m;
}

/// Metrics of one integer output against its reference (same dtype and
/// shape), in LSB: |got - ref| <= tolerance.lsb passes.
static ValidationMetrics integerMetrics(const NpyArray &got, const NpyArray &ref,
                                        const Tolerance &tolerance) {
  ValidationMetrics m;
  m.integer = true;
  m.elements = got.numElements();
  double sq = 0, dot = 0, gg = 0, rr = 0;
  for (int64_t i = 0; i < m.elements; ++i) {
    const int64_t g = integerElement(got, i), r = integerElement(ref, i);
    // |g - r| without overflow (i64 outputs): INT64_MAX when it would.
    int64_t d;
    if (__builtin_sub_overflow(g, r, &d) || d == INT64_MIN)
      d = INT64_MAX;
    d = d < 0 ? -d : d;
    m.maxAbsError = std::max(m.maxAbsError, double(d));
    sq += double(d) * double(d);
    dot += double(g) * double(r);
    gg += double(g) * double(g);
    rr += double(r) * double(r);
    m.outsideTolerance += d > tolerance.lsb;
    m.differing += d != 0;
  }
  m.rmse = m.elements ? std::sqrt(sq / double(m.elements)) : 0;
  m.cosine = (gg == 0 && rr == 0) ? 1.0 : (gg == 0 || rr == 0) ? 0.0 : dot / std::sqrt(gg * rr);
  return m;
}

llvm::Expected<std::vector<ValidationMetrics>>
validateOutputs(const std::vector<NpyArray> &outputs, const std::vector<NpyArray> &reference,
                const std::vector<std::string> &names, const Tolerance &tolerance) {
  if (outputs.size() != reference.size())
    return makeError("the model has " + std::to_string(outputs.size()) + " outputs; " +
                     std::to_string(reference.size()) + " reference arrays given");
  std::vector<ValidationMetrics> metrics;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const NpyArray &got = outputs[k], &ref = reference[k];
    std::string name = k < names.size() ? names[k] : "output " + std::to_string(k);
    if (got.dtype != ref.dtype)
      return makeError(name + ": the output is " + elementTypeName(got.dtype) +
                       ", the reference is " + elementTypeName(ref.dtype));
    if (got.dtype != "<f4" && !isIntegerDtype(got.dtype))
      return makeError(name + ": " + elementTypeName(got.dtype) +
                       " outputs are not validated (f32 and integer types are)");
    if (got.shape != ref.shape) {
      auto text = [](const std::vector<int64_t> &shape) {
        std::string s;
        for (size_t i = 0; i < shape.size(); ++i)
          s += (i ? "x" : "") + std::to_string(shape[i]);
        return s.empty() ? std::string("scalar") : s;
      };
      return makeError(name + ": shape " + text(got.shape) + ", the reference is " +
                       text(ref.shape));
    }
    ValidationMetrics m = got.dtype == "<f4" ? floatMetrics(got, ref, tolerance)
                                             : integerMetrics(got, ref, tolerance);
    m.name = name;
    metrics.push_back(m);
  }
  return metrics;
}

namespace {

/// `DIR/name`.
std::string pathIn(const std::string &dir, const std::string &name) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  return path.str().str();
}

/// Reads `DIR/{prefix}_K.npy` for K < count; errors name the missing file.
llvm::Expected<std::vector<NpyArray>> readNumbered(const std::string &dir, const char *prefix,
                                                   size_t count, const char *kind) {
  std::vector<NpyArray> arrays;
  for (size_t k = 0; k < count; ++k) {
    std::string file = pathIn(dir, std::string(prefix) + "_" + std::to_string(k) + ".npy");
    if (!llvm::sys::fs::exists(file))
      return makeError(file + " does not exist; the model has " + llvm::Twine(count) + " " +
                       kind + (count == 1 ? "" : "s") + " (" + prefix + "_0.npy" +
                       (count == 1 ? std::string()
                                   : " to " + std::string(prefix) + "_" +
                                         std::to_string(count - 1) + ".npy") +
                       ")");
    auto a = readNpyFile(file);
    if (!a)
      return a.takeError();
    arrays.push_back(std::move(*a));
  }
  return arrays;
}

/// Sample `s` of `stacked` (N x shape): the slice along the leading axis.
llvm::Expected<NpyArray> sliceSample(const NpyArray &stacked, int64_t s, int64_t n,
                                     const std::string &what) {
  if (stacked.shape.empty() || stacked.shape[0] != n)
    return makeError(what + ": --samples=" + llvm::Twine(n) + " needs a leading axis of " +
                     llvm::Twine(n) + " samples; the array is " +
                     tensorTypeText(stacked.shape, stacked.dtype));
  NpyArray a;
  a.dtype = stacked.dtype;
  a.shape.assign(stacked.shape.begin() + 1, stacked.shape.end());
  size_t bytes = stacked.data.size() / static_cast<size_t>(n);
  a.data.assign(stacked.data.begin() + s * bytes, stacked.data.begin() + (s + 1) * bytes);
  return a;
}

/// One sample's inputs and references, and the folder they came from.
struct Sample {
  std::string name;
  std::vector<NpyArray> inputs, reference;
  std::string folder;
};

/// Checks that `arrays` (DIR/{prefix}_K.npy) match the signature `infos`;
/// the error names the file and, for an array that holds N samples of the
/// signature's shape, suggests --samples=N.
llvm::Error checkAgainstSignature(const std::vector<NpyArray> &arrays,
                                  const std::vector<IOInfo> &infos, const std::string &folder,
                                  const char *prefix, const char *kind, bool stacked) {
  for (size_t k = 0; k < arrays.size() && k < infos.size(); ++k) {
    const NpyArray &a = arrays[k];
    const IOInfo &want = infos[k];
    if (a.dtype == want.dtype && a.shape == want.shape)
      continue;
    bool looksStacked = !stacked && a.dtype == want.dtype &&
                        a.shape.size() == want.shape.size() + 1 &&
                        std::equal(want.shape.begin(), want.shape.end(), a.shape.begin() + 1);
    return makeError(pathIn(folder, std::string(prefix) + "_" + std::to_string(k) + ".npy") +
                     ": " + tensorTypeText(a.shape, a.dtype) + "; the model's " + kind + " " +
                     llvm::Twine(k) + " '" + want.name + "' is " +
                     tensorTypeText(want.shape, want.dtype) +
                     (looksStacked ? "; for " + std::to_string(a.shape[0]) +
                                         " samples stacked on a leading axis add --samples=" +
                                         std::to_string(a.shape[0])
                                   : std::string()));
  }
  return llvm::Error::success();
}

/// The inputs and references in `folder` (input_K.npy, output_K.npy).
llvm::Expected<Sample> readSampleFolder(const std::string &folder, const std::string &name,
                                        size_t inputCount, size_t outputCount) {
  auto in = readNumbered(folder, "input", inputCount, "input");
  if (!in)
    return in.takeError();
  auto out = readNumbered(folder, "output", outputCount, "output");
  if (!out)
    return out.takeError();
  return Sample{name, std::move(*in), std::move(*out), folder};
}

llvm::Expected<std::vector<Sample>> readSamples(const std::string &dir, size_t inputCount,
                                                size_t outputCount, int64_t stacked) {
  std::vector<Sample> samples;
  if (stacked == 0 && llvm::sys::fs::is_directory(pathIn(dir, "sample_0"))) {
    for (int s = 0; llvm::sys::fs::is_directory(pathIn(dir, "sample_" + std::to_string(s)));
         ++s) {
      std::string name = "sample_" + std::to_string(s);
      auto sample = readSampleFolder(pathIn(dir, name), name, inputCount, outputCount);
      if (!sample)
        return sample.takeError();
      samples.push_back(std::move(*sample));
    }
    return samples;
  }
  auto all = readSampleFolder(dir, "sample", inputCount, outputCount);
  if (!all)
    return all.takeError();
  std::vector<NpyArray> *in = &all->inputs, *out = &all->reference;
  if (stacked == 0) {
    samples.push_back(std::move(*all));
    return samples;
  }
  for (int64_t s = 0; s < stacked; ++s) {
    Sample sample{"sample " + std::to_string(s), {}, {}, dir};
    for (size_t k = 0; k < in->size(); ++k) {
      auto a = sliceSample((*in)[k], s, stacked, pathIn(dir, "input_" + std::to_string(k) + ".npy"));
      if (!a)
        return a.takeError();
      sample.inputs.push_back(std::move(*a));
    }
    for (size_t k = 0; k < out->size(); ++k) {
      auto a = sliceSample((*out)[k], s, stacked, pathIn(dir, "output_" + std::to_string(k) + ".npy"));
      if (!a)
        return a.takeError();
      sample.reference.push_back(std::move(*a));
    }
    samples.push_back(std::move(sample));
  }
  return samples;
}

/// Appends the bytes of `a` to `all` as one flat array (overall metrics).
void appendFlat(NpyArray &all, const NpyArray &a) {
  all.dtype = a.dtype;
  all.data.insert(all.data.end(), a.data.begin(), a.data.end());
  all.shape = {static_cast<int64_t>(all.data.size() / std::max<size_t>(1, npyDtypeSize(a.dtype)))};
}

} // namespace

llvm::Expected<ValidationReport> validateArtifact(llvm::ArrayRef<uint8_t> artifact,
                                                  const std::string &dir,
                                                  const ValidationOptions &options) {
  if (!llvm::sys::fs::exists(dir))
    return makeError(dir + ": no such folder");
  if (!llvm::sys::fs::is_directory(dir))
    return makeError(dir + ": not a folder (expected input_K.npy and output_K.npy files, or "
                           "sample_S folders holding them)");
  if (options.stackedSamples > 0 && llvm::sys::fs::is_directory(pathIn(dir, "sample_0")))
    return makeError(dir + ": holds sample_S folders, one sample each; --samples=N reads N "
                           "samples stacked in " + dir + "/input_K.npy instead: drop it");
  auto signature = describeArtifact(artifact);
  if (!signature)
    return signature.takeError();
  auto samples = readSamples(dir, signature->inputs.size(), signature->outputs.size(),
                             options.stackedSamples);
  if (!samples)
    return samples.takeError();
  ValidationReport report;
  report.outputs = signature->outputs;
  report.tolerance = options.tolerance;
  std::vector<std::string> names;
  for (const IOInfo &info : signature->outputs)
    names.push_back(info.name);
  std::vector<NpyArray> allGot(names.size()), allRef(names.size());
  for (const Sample &sample : *samples) {
    const bool stacked = options.stackedSamples > 0;
    if (llvm::Error err = checkAgainstSignature(sample.inputs, signature->inputs, sample.folder,
                                                "input", "input", stacked))
      return std::move(err);
    if (llvm::Error err = checkAgainstSignature(sample.reference, signature->outputs,
                                                sample.folder, "output", "output", stacked))
      return std::move(err);
    auto result = runArtifact(artifact, sample.inputs, options.run);
    if (!result)
      return makeError(sample.name + ": " + llvm::toString(result.takeError()));
    auto metrics = validateOutputs(result->outputValues, sample.reference, names,
                                   options.tolerance);
    if (!metrics)
      return makeError(sample.name + ": " + llvm::toString(metrics.takeError()));
    for (size_t k = 0; k < names.size(); ++k) {
      appendFlat(allGot[k], result->outputValues[k]);
      appendFlat(allRef[k], sample.reference[k]);
      report.pass = report.pass && (*metrics)[k].outsideTolerance == 0;
    }
    report.sampleNames.push_back(sample.name);
    report.samples.push_back(std::move(*metrics));
    report.outputValues = std::move(result->outputValues);
  }
  auto overall = validateOutputs(allGot, allRef, names, options.tolerance);
  if (!overall)
    return overall.takeError();
  report.overall = std::move(*overall);
  return report;
}

/// A metric as JSON: the number, or null where it is NaN or infinite
/// (JSON has no such numbers; llvm::json would write "nan").
static llvm::json::Value jsonNumber(double v) {
  if (std::isfinite(v))
    return v;
  return nullptr;
}

/// One output's metrics per element of `metrics`, as `kiln validate --json`
/// writes them.
static llvm::json::Array metricsToJson(const std::vector<ValidationMetrics> &metrics) {
  llvm::json::Array outputs;
  for (const ValidationMetrics &m : metrics)
    outputs.push_back(llvm::json::Object{{"name", m.name},
                                         {"elements", m.elements},
                                         {"integer", m.integer},
                                         {"max_abs_error", jsonNumber(m.maxAbsError)},
                                         {"rmse", jsonNumber(m.rmse)},
                                         {"cosine", jsonNumber(m.cosine)},
                                         {"outside_tolerance", m.outsideTolerance},
                                         {"differing", m.differing}});
  return outputs;
}

llvm::json::Value validationReportToJson(const ValidationReport &report) {
  llvm::json::Array samples;
  for (size_t s = 0; s < report.samples.size(); ++s)
    samples.push_back(llvm::json::Object{{"sample", report.sampleNames[s]},
                                         {"outputs", metricsToJson(report.samples[s])}});
  return llvm::json::Object{
      {"outputs", metricsToJson(report.overall)},
      {"samples", std::move(samples)},
      {"tolerance", llvm::json::Object{{"atol", report.tolerance.atol},
                                       {"rtol", report.tolerance.rtol},
                                       {"lsb", report.tolerance.lsb}}},
      {"pass", report.pass}};
}

/// `v` as printf's %g writes it (1e-04, 0.02).
static std::string shortNumber(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

std::string passCriterionText(const ValidationReport &report) {
  bool anyFloat = false, anyInteger = false;
  for (const IOInfo &out : report.outputs)
    (isIntegerDtype(out.dtype) ? anyInteger : anyFloat) = true;
  const Tolerance &t = report.tolerance;
  const std::string floatText = "within |error| <= " + shortNumber(t.atol) + " + " +
                                shortNumber(t.rtol) + " x |reference|";
  const std::string integerText = t.lsb == 0 ? "equal to the reference"
                                             : "within " + std::to_string(t.lsb) +
                                                   " LSB of the reference";
  if (anyFloat && anyInteger)
    return floatText + "; integer outputs " + integerText;
  return anyInteger ? integerText : floatText;
}

} // namespace kiln
