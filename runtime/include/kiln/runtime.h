/*===- kiln/runtime.h - Kiln runtime C API ----------------------*- C -*-===//
 *
 * Loads a `.kiln` artifact (format: runtime/schema/kiln_artifact.fbs) and
 * replays its static command list. The runtime makes no scheduling
 * decisions: the compiler made them all.
 *
 * Conventions (after IREE's hal/buffer.h):
 *  - functions are named kiln_<object>_<verb>; outputs come last;
 *  - every fallible call returns a kiln_status_t by value whose message
 *    carries the numbers ("input 0 'x' needs 6144 bytes, 4096 given");
 *  - memory: the caller owns the artifact bytes (read in place, constants
 *    are never copied; the buffer must stay alive and unmodified while the
 *    module lives and be 64-byte aligned), the inputs, the outputs and the
 *    transient arena (kiln_module_arena_bytes() reports its size). The
 *    runtime allocates only inside kiln_module_load (the module object and
 *    the loaded executables); kiln_module_invoke allocates nothing itself.
 *
 * Thread safety: a module may be invoked from one thread at a time.
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_H
#define KILN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Artifact format version this runtime reads (major must match exactly). */
#define KILN_FORMAT_MAJOR 1
#define KILN_FORMAT_MINOR 0

typedef enum kiln_status_code_e {
  KILN_OK = 0,
  KILN_INVALID_ARGUMENT = 1,   /* wrong index, size, shape or null pointer */
  KILN_DATA_LOSS = 2,          /* corrupted or truncated artifact */
  KILN_INCOMPATIBLE = 3,       /* format version or target mismatch */
  KILN_RESOURCE_EXHAUSTED = 4, /* arena or memory too small */
  KILN_INTERNAL = 5,           /* executable failed to load or run */
  KILN_UNIMPLEMENTED = 6,      /* feature not in this runtime build */
} kiln_status_code_t;

/* A status: code plus a NUL-terminated message ("" when KILN_OK). */
typedef struct kiln_status_t {
  kiln_status_code_t code;
  char message[240];
} kiln_status_t;

/* Element types (values match kiln.artifact.ElementType). */
typedef enum kiln_element_type_e {
  KILN_F32 = 0,
  KILN_F16 = 1,
  KILN_I32 = 2,
  KILN_I64 = 3,
  KILN_I8 = 4,
  KILN_U8 = 5,
  KILN_I1 = 6,
} kiln_element_type_t;

#define KILN_MAX_RANK 8

/* Description of one model input or output. `name` points into the
 * artifact buffer and lives as long as the module. */
typedef struct kiln_tensor_info_t {
  const char *name;
  kiln_element_type_t element_type;
  size_t rank;
  int64_t shape[KILN_MAX_RANK];
  size_t byte_size; /* product of shape x element size, in bytes */
} kiln_tensor_info_t;

typedef struct kiln_module_t kiln_module_t;

/* Returns a KILN_OK status. */
kiln_status_t kiln_status_ok(void);

/* Bytes per element of `type` (0 for an unknown value). */
size_t kiln_element_type_size(kiln_element_type_t type);

/* Short name of `type`: "f32", "f16", "i32", ... */
const char *kiln_element_type_name(kiln_element_type_t type);

/* Version string of this runtime, e.g. "0.1.0 (format 1.0)". */
const char *kiln_runtime_version(void);

/* Verifies and loads the artifact in `data[0, size)`, then loads its
 * executables. Errors: KILN_DATA_LOSS (not a Kiln artifact, truncated or
 * corrupted, naming the failing check), KILN_INCOMPATIBLE (format version:
 * "artifact format 2.0, this runtime reads 1.x"; another target's code),
 * KILN_INTERNAL (executable could not be loaded). */
kiln_status_t kiln_module_load(const void *data, size_t size,
                               kiln_module_t **out_module);

/* Releases a module from kiln_module_load (NULL is allowed). */
void kiln_module_release(kiln_module_t *module);

size_t kiln_module_input_count(const kiln_module_t *module);
size_t kiln_module_output_count(const kiln_module_t *module);

/* Fills `out_info` for input/output `index`; KILN_INVALID_ARGUMENT if the
 * index is out of range. */
kiln_status_t kiln_module_input_info(const kiln_module_t *module, size_t index,
                                     kiln_tensor_info_t *out_info);
kiln_status_t kiln_module_output_info(const kiln_module_t *module,
                                      size_t index,
                                      kiln_tensor_info_t *out_info);

/* Bytes of transient arena kiln_module_invoke needs (may be 0). */
size_t kiln_module_arena_bytes(const kiln_module_t *module);

/* Runs the command list once. `inputs[i]` / `outputs[i]` point to buffers of
 * input/output i (byte sizes given in the sizes arrays, checked against the
 * signature); `arena` is caller-owned scratch of `arena_size` bytes (may be
 * NULL when kiln_module_arena_bytes() is 0). Errors name the buffer and both
 * sizes; KILN_RESOURCE_EXHAUSTED when the arena is too small ("arena needs
 * 41216 bytes, 32768 given"). */
kiln_status_t kiln_module_invoke(kiln_module_t *module,
                                 const void *const *inputs,
                                 const size_t *input_sizes, size_t input_count,
                                 void *const *outputs,
                                 const size_t *output_sizes,
                                 size_t output_count, void *arena,
                                 size_t arena_size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_H */
