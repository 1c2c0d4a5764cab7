/* tflite_native.c - run a .tflite model on TensorFlow Lite's native C library.
 *
 * A second reference beside the wasm interpreter (tflite_reference.mjs):
 * TensorFlow Lite 2.9's libtensorflowlite_c.so (npm tfjs-tflite-node@0.0.2,
 * cc_deps/linux_amd64/; fetch_models.mjs --bench puts it in the model cache),
 * loaded with dlopen so nothing links against it at build time. The few C
 * API functions used are declared below from TFLite's c_api.h (2.9); the
 * library is used as a black box.
 *
 *   gcc -O1 -std=c11 -o tflite_native tflite_native.c -ldl
 *   tflite_native LIB.so MODEL.tflite [--xnnpack=FLAGS] [--runs=N [--warmup=W]]
 *                 [--steps=S] IN_0.bin ... -- OUT_0.bin ...
 *
 * Each IN_K.bin holds the raw little-endian bytes of interpreter input K
 * (its TfLiteTensorByteSize exactly); OUT_K.bin receives output K. The
 * interpreter runs 1 thread. Without --xnnpack no delegate is added, so
 * TFLite's builtin kernels run (the library logs "Created TensorFlow Lite
 * XNNPACK delegate" only when --xnnpack adds one). --xnnpack=FLAGS adds the
 * XNNPACK delegate, 1 thread, with those option flags (3 = QS8 | QU8: it
 * takes the int8/uint8 operators it supports; 0: float operators only).
 * --runs=N (timing mode, for scripts/bench_int8.py): after the outputs are
 * written, W more untimed TfLiteInterpreterInvoke calls (default 0), then N
 * timed ones on the same inputs, each timed alone with CLOCK_MONOTONIC; the
 * JSON gets "warmup": W and "times_ns": [N per-run times in ns, in order].
 * --steps=S (stateful models: LSTM and SVDF state, resource variables): S
 * consecutive invokes of one interpreter, so each starts from the state the
 * previous one left; the input files are S groups of the model's inputs
 * (step 0's first) and the output files S groups of its outputs.
 * stdout: one JSON object describing inputs and outputs (name, type, dims).
 * Exit status 0 on success, 1 with a message on stderr otherwise.
 *
 * tflite_native_reference.mjs compiles and drives this program.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct TfLiteModel TfLiteModel;
typedef struct TfLiteInterpreterOptions TfLiteInterpreterOptions;
typedef struct TfLiteInterpreter TfLiteInterpreter;
typedef struct TfLiteTensor TfLiteTensor;
typedef struct TfLiteDelegate TfLiteDelegate;

/* TfLiteXNNPackDelegateOptions of TFLite 2.9's xnnpack_delegate.h: thread
 * count and flags (TFLITE_XNNPACK_DELEGATE_FLAG_QS8 = 1, _QU8 = 2: let the
 * delegate take signed / unsigned 8-bit quantized operators). This build's
 * TfLiteXNNPackDelegateOptionsDefault returns all zero (no QS8, no QU8). */
typedef struct {
  int32_t num_threads;
  uint32_t flags;
} XnnOptions;

static struct {
  TfLiteModel *(*modelCreate)(const void *, size_t);
  TfLiteInterpreterOptions *(*optionsCreate)(void);
  void (*optionsSetNumThreads)(TfLiteInterpreterOptions *, int32_t);
  void (*optionsAddDelegate)(TfLiteInterpreterOptions *, TfLiteDelegate *);
  TfLiteInterpreter *(*interpreterCreate)(const TfLiteModel *, const TfLiteInterpreterOptions *);
  int (*allocateTensors)(TfLiteInterpreter *);
  int (*invoke)(TfLiteInterpreter *);
  int32_t (*inputCount)(const TfLiteInterpreter *);
  TfLiteTensor *(*inputTensor)(const TfLiteInterpreter *, int32_t);
  int32_t (*outputCount)(const TfLiteInterpreter *);
  const TfLiteTensor *(*outputTensor)(const TfLiteInterpreter *, int32_t);
  int (*tensorType)(const TfLiteTensor *);
  int32_t (*numDims)(const TfLiteTensor *);
  int32_t (*dim)(const TfLiteTensor *, int32_t);
  size_t (*byteSize)(const TfLiteTensor *);
  const char *(*tensorName)(const TfLiteTensor *);
  int (*copyFrom)(TfLiteTensor *, const void *, size_t);
  int (*copyTo)(const TfLiteTensor *, void *, size_t);
  const char *(*version)(void);
  TfLiteDelegate *(*xnnCreate)(const XnnOptions *);
} api;

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "tflite_native: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  return 1;
}

static int bind(void *lib) {
#define BIND(field, name)                                                                          \
  if (!(*(void **)&api.field = dlsym(lib, name)))                                                  \
    return fail("symbol missing", name);
  BIND(modelCreate, "TfLiteModelCreate")
  BIND(optionsCreate, "TfLiteInterpreterOptionsCreate")
  BIND(optionsSetNumThreads, "TfLiteInterpreterOptionsSetNumThreads")
  BIND(optionsAddDelegate, "TfLiteInterpreterOptionsAddDelegate")
  BIND(interpreterCreate, "TfLiteInterpreterCreate")
  BIND(allocateTensors, "TfLiteInterpreterAllocateTensors")
  BIND(invoke, "TfLiteInterpreterInvoke")
  BIND(inputCount, "TfLiteInterpreterGetInputTensorCount")
  BIND(inputTensor, "TfLiteInterpreterGetInputTensor")
  BIND(outputCount, "TfLiteInterpreterGetOutputTensorCount")
  BIND(outputTensor, "TfLiteInterpreterGetOutputTensor")
  BIND(tensorType, "TfLiteTensorType")
  BIND(numDims, "TfLiteTensorNumDims")
  BIND(dim, "TfLiteTensorDim")
  BIND(byteSize, "TfLiteTensorByteSize")
  BIND(tensorName, "TfLiteTensorName")
  BIND(copyFrom, "TfLiteTensorCopyFromBuffer")
  BIND(copyTo, "TfLiteTensorCopyToBuffer")
  BIND(version, "TfLiteVersion")
  BIND(xnnCreate, "TfLiteXNNPackDelegateCreate")
#undef BIND
  return 0;
}

/* Reads a whole file into a malloc'd buffer; *size gets its length. */
static void *readFile(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *data = malloc(n > 0 ? (size_t)n : 1);
  if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

static void describe(const char *kind, const TfLiteTensor *t, int32_t k, int last) {
  printf("{\"%s\": %d, \"name\": \"%s\", \"type\": %d, \"dims\": [", kind, k, api.tensorName(t),
         api.tensorType(t));
  for (int32_t d = 0; d < api.numDims(t); ++d)
    printf("%s%d", d ? ", " : "", api.dim(t, d));
  printf("], \"bytes\": %zu}%s", api.byteSize(t), last ? "" : ", ");
}

static int setInputs(TfLiteInterpreter *in, char **files, int count) {
  if (count != api.inputCount(in))
    return fail("wrong number of input files for this model", NULL);
  for (int k = 0; k < count; ++k) {
    TfLiteTensor *t = api.inputTensor(in, k);
    size_t size = 0;
    void *data = readFile(files[k], &size);
    if (!data)
      return fail("cannot read", files[k]);
    if (size != api.byteSize(t)) {
      free(data);
      return fail("input file size differs from the tensor's byte size", files[k]);
    }
    int status = api.copyFrom(t, data, size);
    free(data);
    if (status != 0)
      return fail("TfLiteTensorCopyFromBuffer failed", files[k]);
  }
  return 0;
}

static int writeOutputs(TfLiteInterpreter *in, char **files, int count) {
  if (count != api.outputCount(in))
    return fail("wrong number of output files for this model", NULL);
  for (int k = 0; k < count; ++k) {
    const TfLiteTensor *t = api.outputTensor(in, k);
    size_t size = api.byteSize(t);
    void *data = malloc(size ? size : 1);
    FILE *f = fopen(files[k], "wb");
    int ok = data && f && api.copyTo(t, data, size) == 0 && fwrite(data, 1, size, f) == size;
    if (f)
      ok = (fclose(f) == 0) && ok;
    free(data);
    if (!ok)
      return fail("cannot write", files[k]);
  }
  return 0;
}

/* Parses a non-negative decimal option value ("--runs=N"); -1 if malformed. */
static long optionValue(const char *arg, size_t prefix) {
  char *end = NULL;
  long v = strtol(arg + prefix, &end, 10);
  return (end == arg + prefix || *end || v < 0) ? -1 : v;
}

static int64_t nowNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Timing mode: `warmup` untimed invokes, then `runs` timed ones into times[]. */
static int timeInvokes(TfLiteInterpreter *in, long warmup, long runs, int64_t *times) {
  for (long i = 0; i < warmup; ++i)
    if (api.invoke(in) != 0)
      return fail("TfLiteInterpreterInvoke failed (warm-up)", NULL);
  for (long i = 0; i < runs; ++i) {
    int64_t t0 = nowNs();
    int status = api.invoke(in);
    times[i] = nowNs() - t0;
    if (status != 0)
      return fail("TfLiteInterpreterInvoke failed (timed run)", NULL);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4)
    return fail("usage", "tflite_native LIB.so MODEL.tflite [--xnnpack=FLAGS] IN... -- OUT...");
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return fail("dlopen failed", dlerror());
  if (bind(lib))
    return 1;
  int first = 3, xnnpack = 0;
  unsigned long xnnFlags = 0;
  long runs = 0, warmup = 0, steps = 1;
  for (; first < argc && strncmp(argv[first], "--", 2) == 0 && argv[first][2]; ++first) {
    const char *arg = argv[first];
    if (strncmp(arg, "--xnnpack=", 10) == 0) {
      char *end = NULL;
      xnnFlags = strtoul(arg + 10, &end, 0);
      if (!end || *end)
        return fail("--xnnpack=FLAGS needs a number", arg);
      xnnpack = 1;
    } else if (strncmp(arg, "--runs=", 7) == 0) {
      if ((runs = optionValue(arg, 7)) < 1)
        return fail("--runs=N needs a number of at least 1", arg);
    } else if (strncmp(arg, "--steps=", 8) == 0) {
      if ((steps = optionValue(arg, 8)) < 1)
        return fail("--steps=S needs a number of at least 1", arg);
    } else if (strncmp(arg, "--warmup=", 9) == 0) {
      if ((warmup = optionValue(arg, 9)) < 0)
        return fail("--warmup=W needs a number of at least 0", arg);
    } else {
      return fail("unknown option (known: --xnnpack=FLAGS, --runs=N, --warmup=W, --steps=S)", arg);
    }
  }
  if (warmup && !runs)
    return fail("--warmup=W needs --runs=N", NULL);
  int sep = first;
  while (sep < argc && strcmp(argv[sep], "--") != 0)
    ++sep;
  if (sep == argc)
    return fail("missing -- between input and output files", NULL);

  size_t modelSize = 0;
  void *modelData = readFile(argv[2], &modelSize); /* must outlive the model */
  if (!modelData)
    return fail("cannot read", argv[2]);
  TfLiteModel *model = api.modelCreate(modelData, modelSize);
  if (!model)
    return fail("TfLiteModelCreate refused the model", argv[2]);
  TfLiteInterpreterOptions *options = api.optionsCreate();
  api.optionsSetNumThreads(options, 1);
  if (xnnpack) {
    XnnOptions xo = {1, (uint32_t)xnnFlags};
    api.optionsAddDelegate(options, api.xnnCreate(&xo));
  }
  TfLiteInterpreter *in = api.interpreterCreate(model, options);
  if (!in)
    return fail("TfLiteInterpreterCreate failed", argv[2]);
  if (api.allocateTensors(in) != 0)
    return fail("TfLiteInterpreterAllocateTensors failed", argv[2]);
  int inFiles = sep - first, outFiles = argc - sep - 1;
  if (inFiles % steps || outFiles % steps)
    return fail("--steps=S needs S groups of input files and of output files", NULL);
  for (long step = 0; step < steps; ++step) {
    if (setInputs(in, argv + first + step * (inFiles / steps), inFiles / steps))
      return 1;
    if (api.invoke(in) != 0)
      return fail("TfLiteInterpreterInvoke failed", argv[2]);
    if (writeOutputs(in, argv + sep + 1 + step * (outFiles / steps), outFiles / steps))
      return 1;
  }
  int64_t *times = runs ? malloc((size_t)runs * sizeof *times) : NULL;
  if (runs && (!times || timeInvokes(in, warmup, runs, times)))
    return times ? 1 : fail("out of memory for --runs", NULL);

  if (xnnpack)
    printf("{\"version\": \"%s\", \"xnnpack_flags\": %lu, \"inputs\": [", api.version(), xnnFlags);
  else
    printf("{\"version\": \"%s\", \"xnnpack_flags\": null, \"inputs\": [", api.version());
  for (int32_t k = 0; k < api.inputCount(in); ++k)
    describe("input", api.inputTensor(in, k), k, k + 1 == api.inputCount(in));
  printf("], \"outputs\": [");
  for (int32_t k = 0; k < api.outputCount(in); ++k)
    describe("output", api.outputTensor(in, k), k, k + 1 == api.outputCount(in));
  printf("]");
  if (runs) {
    printf(", \"warmup\": %ld, \"times_ns\": [", warmup);
    for (long i = 0; i < runs; ++i)
      printf("%s%lld", i ? ", " : "", (long long)times[i]);
    printf("]");
    free(times);
  }
  printf("}\n");
  return 0;
}
