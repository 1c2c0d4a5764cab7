/* run_model.c - embedding the Kiln runtime in a C program.
 *
 * Loads a .kiln artifact, prints its target and versions and every input
 * and output, allocates the arena, fills the inputs, runs the model once on
 * the local-sync device (inline, on this thread) and prints each output.
 *
 *   run_model MODEL.kiln [INPUT...]
 *
 * One INPUT argument per model input, in order (missing ones are zeros):
 *   a number      every element of the input takes that value;
 *   @FILE         the input's raw bytes (exactly its byte size), row-major.
 *
 * Build (C99 + POSIX; README.md in this folder):
 *   cc -std=c99 -O2 run_model.c $(pkg-config --cflags --libs kiln-runtime)
 *
 * Exit status 0 on success; 1 with one "error:" line on stderr otherwise. */
#define _POSIX_C_SOURCE 200809L

#include <kiln/runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Alignment used for every buffer handed to the runtime (bytes). The
 * runtime needs 16 for the artifact (its constants are read in place), the
 * element size for inputs and outputs and 8 for the arena; 64 suits all and
 * puts each tensor on a cache line. */
#define ALIGNMENT 64

/* Most values of one output printed. */
#define MAX_PRINTED 16

/* 64-byte aligned memory for `bytes` bytes (at least 1), or NULL. */
static void *alignedAlloc(size_t bytes) {
  void *p = NULL;
  size_t rounded = (bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
  if (posix_memalign(&p, ALIGNMENT, rounded ? rounded : ALIGNMENT) != 0)
    return NULL;
  memset(p, 0, rounded ? rounded : ALIGNMENT);
  return p;
}

/* Reads the whole of `path` into a fresh aligned buffer; NULL on error (the
 * error is printed). */
static void *readFile(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "error: %s: cannot open\n", path);
    return NULL;
  }
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0)
    n = ftell(f);
  void *data = n >= 0 && fseek(f, 0, SEEK_SET) == 0 ? alignedAlloc((size_t)n) : NULL;
  if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "error: %s: cannot read\n", path);
    free(data);
    fclose(f);
    return NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

/* IEEE half (binary16) bits to float. */
static float halfToFloat(uint16_t h) {
  int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float magnitude;
  if (exponent == 0)
    magnitude = ldexpf((float)mantissa, -24);
  else if (exponent == 31)
    magnitude = mantissa ? NAN : INFINITY;
  else
    magnitude = ldexpf((float)(mantissa | 0x400), exponent - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}

/* Float to IEEE half bits, rounding to nearest (NaN becomes infinity). */
static uint16_t floatToHalf(float v) {
  uint16_t sign = signbit(v) ? 0x8000 : 0;
  float a = fabsf(v);
  if (!(a < 65520.0f)) /* overflows, infinity or NaN */
    return sign | 0x7c00;
  if (a < ldexpf(1.0f, -14)) /* subnormal or zero */
    return sign | (uint16_t)nearbyintf(ldexpf(a, 24));
  int e;
  float m = frexpf(a, &e); /* a = m 2^e, m in [0.5, 1) */
  /* Rounding up may carry into the exponent field, which is right. */
  return sign | (uint16_t)(((e + 14) << 10) + (int)nearbyintf((2 * m - 1) * 1024));
}

/* Element `i` of a tensor of `type` at `data`, as a double. */
static double elementAt(const void *data, kiln_element_type_t type, size_t i) {
  switch (type) {
  case KILN_F32:
    return ((const float *)data)[i];
  case KILN_F16:
    return halfToFloat(((const uint16_t *)data)[i]);
  case KILN_I32:
    return ((const int32_t *)data)[i];
  case KILN_I64:
    return (double)((const int64_t *)data)[i];
  case KILN_I8:
    return ((const int8_t *)data)[i];
  case KILN_U8:
    return ((const uint8_t *)data)[i];
  case KILN_I1:
    return ((const uint8_t *)data)[i] != 0;
  }
  return 0;
}

/* Stores `value` as element `i` of a tensor of `type` at `data`. */
static void setElement(void *data, kiln_element_type_t type, size_t i, double value) {
  switch (type) {
  case KILN_F32:
    ((float *)data)[i] = (float)value;
    break;
  case KILN_F16:
    ((uint16_t *)data)[i] = floatToHalf((float)value);
    break;
  case KILN_I32:
    ((int32_t *)data)[i] = (int32_t)value;
    break;
  case KILN_I64:
    ((int64_t *)data)[i] = (int64_t)value;
    break;
  case KILN_I8:
    ((int8_t *)data)[i] = (int8_t)value;
    break;
  case KILN_U8:
    ((uint8_t *)data)[i] = (uint8_t)value;
    break;
  case KILN_I1:
    ((uint8_t *)data)[i] = value != 0;
    break;
  }
}

/* Prints "'name': 2x3 f32 (24 bytes)". */
static void printTensor(const kiln_tensor_info_t *info) {
  printf("'%s': ", info->name);
  for (size_t d = 0; d < info->rank; ++d)
    printf("%s%lld", d ? "x" : "", (long long)info->shape[d]);
  printf("%s%s (%zu bytes)\n", info->rank ? " " : "scalar ",
         kiln_element_type_name(info->element_type), info->byte_size);
}

/* Prints a failed call's status as the one error line; returns 0 if OK. */
static int failed(const char *call, kiln_status_t status) {
  if (status.code == KILN_OK)
    return 0;
  fprintf(stderr, "error: %s: %s: %s\n", call, kiln_status_code_name(status.code), status.message);
  return 1;
}

/* Fills input `info` at `data` from its command-line argument (NULL:
 * zeros). Returns 0 on success. */
static int fillInput(const kiln_tensor_info_t *info, void *data, const char *arg) {
  size_t count = info->byte_size / kiln_element_type_size(info->element_type);
  if (!arg)
    return 0; /* alignedAlloc zeroed it */
  if (arg[0] == '@') {
    size_t size = 0;
    void *bytes = readFile(arg + 1, &size);
    if (!bytes)
      return 1;
    if (size != info->byte_size) {
      fprintf(stderr, "error: %s: input '%s' needs %zu bytes, the file has %zu\n", arg + 1,
              info->name, info->byte_size, size);
      free(bytes);
      return 1;
    }
    memcpy(data, bytes, size);
    free(bytes);
    return 0;
  }
  char *end = NULL;
  double value = strtod(arg, &end);
  if (end == arg || *end != '\0') {
    fprintf(stderr, "error: input '%s': '%s' is neither a number nor @FILE\n", info->name, arg);
    return 1;
  }
  for (size_t i = 0; i < count; ++i)
    setElement(data, info->element_type, i, value);
  return 0;
}

/* Prints "output K 'name': min A max B mean C" and the first values. */
static void printOutput(size_t index, const kiln_tensor_info_t *info, const void *data) {
  size_t count = info->byte_size / kiln_element_type_size(info->element_type);
  double lo = 0, hi = 0, sum = 0;
  for (size_t i = 0; i < count; ++i) {
    double v = elementAt(data, info->element_type, i);
    lo = i == 0 || v < lo ? v : lo;
    hi = i == 0 || v > hi ? v : hi;
    sum += v;
  }
  printf("output %zu '%s': min %.9g max %.9g mean %.9g\n", index, info->name, lo, hi,
         count ? sum / (double)count : 0.0);
  printf("output %zu '%s' values:", index, info->name);
  for (size_t i = 0; i < count && i < MAX_PRINTED; ++i)
    printf(" %.9g", elementAt(data, info->element_type, i));
  printf("%s\n", count > MAX_PRINTED ? " ..." : "");
}

/* Every buffer of one run; all freed by releaseRun. */
typedef struct Run {
  size_t input_count, output_count;
  kiln_tensor_info_t *input_info, *output_info;
  void **inputs, **outputs;
  size_t *input_sizes, *output_sizes;
  void *arena;
} Run;

static void releaseRun(Run *run) {
  for (size_t i = 0; run->inputs && i < run->input_count; ++i)
    free(run->inputs[i]);
  for (size_t i = 0; run->outputs && i < run->output_count; ++i)
    free(run->outputs[i]);
  free(run->input_info);
  free(run->output_info);
  free(run->inputs);
  free(run->outputs);
  free(run->input_sizes);
  free(run->output_sizes);
  free(run->arena);
}

/* Prints the artifact and its I/O, then allocates and fills every buffer.
 * `args` holds the INPUT arguments (`arg_count` of them). Returns 0 on
 * success. */
static int prepareRun(const kiln_module_t *module, char **args, size_t arg_count, Run *run) {
  kiln_artifact_info_t artifact;
  if (failed("kiln_module_artifact_info", kiln_module_artifact_info(module, &artifact)))
    return 1;
  printf("runtime: %s\n", kiln_runtime_version());
  printf("artifact: format %u.%u, written by %s, target %s (cpu %s), %zu bytes\n",
         (unsigned)artifact.format_major, (unsigned)artifact.format_minor,
         artifact.producer[0] ? artifact.producer : "?",
         artifact.target_triple[0] ? artifact.target_triple : "none",
         artifact.target_cpu[0] ? artifact.target_cpu : "generic", artifact.file_bytes);

  run->input_count = kiln_module_input_count(module);
  run->output_count = kiln_module_output_count(module);
  if (arg_count > run->input_count) {
    fprintf(stderr, "error: the model takes %zu inputs, %zu given\n", run->input_count, arg_count);
    return 1;
  }
  size_t n_in = run->input_count ? run->input_count : 1;
  size_t n_out = run->output_count ? run->output_count : 1;
  run->input_info = calloc(n_in, sizeof(kiln_tensor_info_t));
  run->output_info = calloc(n_out, sizeof(kiln_tensor_info_t));
  run->inputs = calloc(n_in, sizeof(void *));
  run->outputs = calloc(n_out, sizeof(void *));
  run->input_sizes = calloc(n_in, sizeof(size_t));
  run->output_sizes = calloc(n_out, sizeof(size_t));
  if (!run->input_info || !run->output_info || !run->inputs || !run->outputs || !run->input_sizes ||
      !run->output_sizes) {
    fprintf(stderr, "error: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < run->input_count; ++i) {
    kiln_tensor_info_t *info = &run->input_info[i];
    if (failed("kiln_module_input_info", kiln_module_input_info(module, i, info)))
      return 1;
    printf("input %zu ", i);
    printTensor(info);
    run->input_sizes[i] = info->byte_size;
    run->inputs[i] = alignedAlloc(info->byte_size);
    if (!run->inputs[i] || fillInput(info, run->inputs[i], i < arg_count ? args[i] : NULL))
      return 1;
  }
  for (size_t i = 0; i < run->output_count; ++i) {
    kiln_tensor_info_t *info = &run->output_info[i];
    if (failed("kiln_module_output_info", kiln_module_output_info(module, i, info)))
      return 1;
    printf("output %zu ", i);
    printTensor(info);
    run->output_sizes[i] = info->byte_size;
    run->outputs[i] = alignedAlloc(info->byte_size);
    if (!run->outputs[i])
      return 1;
  }
  size_t arena_bytes = kiln_module_arena_bytes(module);
  printf("arena: %zu bytes\n", arena_bytes);
  run->arena = arena_bytes ? alignedAlloc(arena_bytes) : NULL;
  if (arena_bytes && !run->arena) {
    fprintf(stderr, "error: cannot allocate the %zu-byte arena\n", arena_bytes);
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.kiln [NUMBER | @FILE]...\n", argv[0]);
    return 1;
  }
  size_t artifact_bytes = 0;
  void *artifact = readFile(argv[1], &artifact_bytes);
  if (!artifact)
    return 1;
  kiln_module_t *module = NULL;
  if (failed("kiln_module_load", kiln_module_load(artifact, artifact_bytes, &module))) {
    free(artifact);
    return 1;
  }

  Run run;
  memset(&run, 0, sizeof run);
  int status = prepareRun(module, argv + 2, (size_t)argc - 2, &run);
  kiln_device_t device;
  if (status == 0)
    status = failed("kiln_device_create_local_sync", kiln_device_create_local_sync(&device));
  if (status == 0) {
    kiln_invocation_t invocation;
    memset(&invocation, 0, sizeof invocation);
    invocation.inputs = (const void *const *)run.inputs;
    invocation.input_sizes = run.input_sizes;
    invocation.input_count = run.input_count;
    invocation.outputs = run.outputs;
    invocation.output_sizes = run.output_sizes;
    invocation.output_count = run.output_count;
    invocation.arena = run.arena;
    invocation.arena_size = kiln_module_arena_bytes(module);
    invocation.device = &device; /* NULL would also mean local-sync */
    kiln_status_t result = kiln_module_invoke(module, &invocation);
    printf("kiln_module_invoke: %s\n", kiln_status_code_name(result.code));
    status = failed("kiln_module_invoke", result);
    for (size_t i = 0; status == 0 && i < run.output_count; ++i)
      printOutput(i, &run.output_info[i], run.outputs[i]);
    kiln_device_release(&device);
  }
  releaseRun(&run);
  kiln_module_release(module); /* before the artifact bytes it reads */
  free(artifact);
  return status;
}
