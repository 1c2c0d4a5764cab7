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
 *    module lives), the inputs, the outputs and the transient arena
 *    (kiln_module_arena_bytes() reports its size). The runtime allocates
 *    only inside kiln_module_load (the module object and the loaded
 *    executables) and kiln_device_create_local_task; kiln_module_invoke
 *    allocates nothing itself.
 *
 * Alignment (addresses, in bytes): what the code requires, and what to use.
 *  - artifact buffer: kernels read constants in place and kiln_module_load
 *    refuses a constant not 16-byte aligned in memory (KILN_INVALID_ARGUMENT).
 *    The writer places constants at multiples of 64 bytes in the file, so any
 *    16-byte aligned buffer passes; use a 64-byte aligned one
 *    (aligned_alloc(64, size rounded up to 64)). kiln_artifact_verify and
 *    kiln_artifact_recognize need no alignment.
 *  - inputs and outputs: not checked; kernels access elements at their
 *    natural alignment, so each buffer must be aligned to its element size
 *    (kiln_element_type_size: 4 for f32 and i32, 8 for i64). Use 64.
 *  - arena: not checked; it holds tensors of every element type at offsets
 *    that are multiples of 64, so at least 8-byte alignment is required. Use
 *    64 (the planner's own alignment: each tensor starts on a cache line).
 *
 * Linking: the runtime is C++ built without exceptions, RTTI or guarded
 * statics and needs no C++ runtime library. Link a C program with
 *   cc prog.c -I<prefix>/include <libdir>/libkiln_runtime.a -ldl -lpthread -lm
 * or `cc prog.c $(pkg-config --cflags --libs kiln-runtime)` (kiln-runtime.pc,
 * installed by the Debian package). examples/c/ is a complete program.
 *
 * Thread safety: a module may be invoked from one thread at a time; any
 * number of modules may be invoked from their own threads at once, also
 * on one shared device (see kiln_device_t).
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
#define KILN_FORMAT_MINOR 3

/* Every status a runtime call returns has one of these codes
 * (kiln_status_code_name spells them). */
typedef enum kiln_status_code_e {
  KILN_OK = 0,
  KILN_INVALID_ARGUMENT = 1,   /* wrong index, size, shape or null pointer */
  KILN_DATA_LOSS = 2,          /* corrupted or truncated artifact */
  KILN_INCOMPATIBLE = 3,       /* format version or target mismatch */
  KILN_RESOURCE_EXHAUSTED = 4, /* arena or memory too small */
  KILN_INTERNAL = 5,           /* executable failed to load or run */
  KILN_UNIMPLEMENTED = 6,      /* feature not in this runtime build */
  KILN_OUT_OF_RANGE = 7,       /* a --check-bounds kernel refused an access
                                  outside its binding: "main_dispatch_4
                                  (MaxPool #2) read binding 0 at byte 9216
                                  of 8192 (16 bytes)" */
  KILN_CANCELLED = 8,          /* kiln_invocation_t::cancelled asked the
                                  invocation to stop: "cancelled after
                                  12 of 40 dispatches" (outputs
                                  incomplete) */
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

/* Description of one model input or output. `name`, `scales` and
 * `zero_points` point into the artifact buffer and live as long as the
 * module.
 *
 * Quantization (format 1.2; absent in older artifacts): the affine
 * quantization of an integer tensor as the TensorFlow Lite schema's
 * QuantizationParameters record it and TFLite's interpreter reports it in
 * get_input_details(): real = scale * (q - zero_point), q the stored
 * integer.
 *  - not quantized (a float tensor, or an integer one without parameters):
 *    quantized 0, scale 0.0f, zero_point 0, quantized_dimension -1,
 *    quantization_count 0, scales and zero_points NULL;
 *  - per tensor: quantized 1, `scale` and `zero_point` the parameters,
 *    quantized_dimension -1, quantization_count 1 (scales[0] == scale);
 *  - per channel (one pair per index of dimension quantized_dimension):
 *    quantized 1, quantization_count = shape[quantized_dimension], the
 *    pairs in scales[c], zero_points[c]; scale 0.0f and zero_point 0, as
 *    TFLite's "quantization" tuple is (0.0, 0) for a per-channel tensor.
 * kiln_artifact_verify guarantees every scale finite and positive and
 * every zero point in the element type's range (i8 -128..127, u8 0..255). */
typedef struct kiln_tensor_info_t {
  const char *name;
  kiln_element_type_t element_type;
  size_t rank;
  int64_t shape[KILN_MAX_RANK];
  size_t byte_size; /* product of shape x element size, in bytes */
  int quantized;
  float scale;
  int32_t zero_point;
  int32_t quantized_dimension;
  size_t quantization_count;
  const float *scales;
  const int32_t *zero_points;
} kiln_tensor_info_t;

typedef struct kiln_module_t kiln_module_t;

/* Returns a KILN_OK status. */
kiln_status_t kiln_status_ok(void);

/* Name of a status code, spelled as its enumerator: "KILN_OK",
 * "KILN_INVALID_ARGUMENT", ..., "KILN_UNIMPLEMENTED"; "unknown" for any other
 * value. The string is static. */
const char *kiln_status_code_name(kiln_status_code_t code);

/* Bytes per element of `type` (0 for an unknown value). */
size_t kiln_element_type_size(kiln_element_type_t type);

/* Short name of `type`: "f32", "f16", "i32", ... */
const char *kiln_element_type_name(kiln_element_type_t type);

/* Version string of this runtime, e.g. "0.1.0 (format 1.3)": the Kiln
 * release, then the artifact format version it reads (KILN_FORMAT_MAJOR,
 * KILN_FORMAT_MINOR). An artifact's own format version, producer and target
 * come from kiln_module_artifact_info (or kiln_artifact_verify). */
const char *kiln_runtime_version(void);

/*===------------------------------------------------------------------===//
 * The artifact gate: the one place a `.kiln` file is recognized and
 * verified. kiln_module_load, the compiler's readers (kiln inspect, diff,
 * validate, the workbench) and the fuzzers all go through it.
 *===------------------------------------------------------------------===*/

/* Bytes of the trailer every artifact ends with: the ASCII tag "KSUM" and
 * the CRC-32 (IEEE 802.3, as zlib computes it) of every byte before it,
 * little endian. */
#define KILN_ARTIFACT_TRAILER_BYTES 8

/* Most named sections kiln_artifact_verify reports (the writer records 7). */
#define KILN_ARTIFACT_MAX_SECTIONS 16

/* One named section of an artifact ("io", "commands", "memory_plan",
 * "executables", "device", "constants", "reflection") and its size. */
typedef struct kiln_artifact_section_t {
  const char *name; /* points into the artifact */
  uint64_t bytes;
} kiln_artifact_section_t;

/* What the gate learned about a verified artifact. Every pointer points
 * into the verified buffer (NUL-terminated) and lives as long as it does. */
typedef struct kiln_artifact_info_t {
  uint32_t format_major;
  uint32_t format_minor;
  size_t file_bytes;        /* the whole file, trailer included */
  const char *producer;     /* kiln version that wrote it; "" if absent */
  const char *source;       /* source model file name; "" if absent */
  size_t input_count;
  size_t output_count;
  size_t constant_count;
  size_t executable_count;
  const char *target_triple; /* of executable 0; "" when there is none */
  const char *target_cpu;    /* of executable 0; "" when there is none */
  size_t command_count;      /* entries of the command list, barriers too */
  size_t dispatch_count;
  size_t binding_count;      /* bindings of every command together */
  size_t wave_count;         /* barrier-separated groups holding a command */
  size_t largest_wave;       /* most dispatches between two barriers */
  uint64_t arena_bytes;      /* transient arena the commands use */
  uint64_t lower_bound_bytes; /* memory plan's lower bound; 0 if absent */
  const char *reflection_json; /* the plan as JSON; NULL when stripped */
  size_t reflection_json_bytes;
  size_t section_count;      /* 0 for format 1.0 (no size table) */
  kiln_artifact_section_t sections[KILN_ARTIFACT_MAX_SECTIONS];
} kiln_artifact_info_t;

/* Recognition by content: 1 when `data[0, size)` starts like a Kiln
 * artifact (the flatbuffer file identifier "KILN" at bytes 4-7), else 0.
 * Says nothing about integrity; kiln_artifact_verify checks that. */
int kiln_artifact_recognize(const void *data, size_t size);

/* The gate. Verifies `data[0, size)` as an untrusted artifact, in order:
 * the "KILN" identifier, the checksum trailer, the format version, the
 * flatbuffer structure, then every size and index the runtime will use:
 * tensor byte sizes (element size x dimensions, overflow-checked, at most
 * PTRDIFF_MAX), each input's and output's quantization (only on an i8, u8
 * or i32 tensor; as many zero points as scales; one pair per tensor, or
 * shape[quantized_dimension] pairs for 0 <= quantized_dimension < rank;
 * scales finite and positive; zero points in the element type's range;
 * the message names the tensor), the arena and memory plan, every command's kind, executable
 * and entry point, workgroup counts (each >= 1; a dispatch's and a wave's
 * total fit 32 bits), and every binding's [offset, +length) inside its
 * buffer (input, output, constant data or arena), constant data inside the
 * file and 16-byte aligned in it, the section sizes within the file.
 * Reads nothing outside `data[0, size)`; allocates nothing; the buffer needs
 * no particular alignment. Fills `out_info` on success (may be NULL).
 * Errors: KILN_DATA_LOSS (not an artifact, truncated, corrupted or
 * inconsistent: the message names the check and its numbers),
 * KILN_INCOMPATIBLE (format major version), KILN_UNIMPLEMENTED (a command
 * kind this runtime does not replay), KILN_INVALID_ARGUMENT (NULL data). */
kiln_status_t kiln_artifact_verify(const void *data, size_t size,
                                   kiln_artifact_info_t *out_info);

/* Rewrites the trailer at data[size - 8, size) for the bytes before it:
 * writers append 8 bytes and seal; tests and fuzzers that mutate an
 * artifact reseal it so the mutation reaches the checks after the checksum.
 * KILN_INVALID_ARGUMENT when size < 8 or data is NULL. */
kiln_status_t kiln_artifact_seal(void *data, size_t size);

/* Passes `data` through kiln_artifact_verify, then checks that this host
 * can run it and loads its executables. Errors: those of
 * kiln_artifact_verify, KILN_INCOMPATIBLE (another target's code or an
 * executable format this runtime cannot load, or code using CPU features
 * this CPU lacks), KILN_INVALID_ARGUMENT (NULL `out_module`, or constants
 * not 16-byte aligned in memory: load the file into a 64-byte aligned
 * buffer), KILN_RESOURCE_EXHAUSTED (the module's own tables, naming
 * the bytes asked for), KILN_INTERNAL (executable could not be loaded). */
kiln_status_t kiln_module_load(const void *data, size_t size,
                               kiln_module_t **out_module);

/* Releases a module from kiln_module_load (NULL is allowed). */
void kiln_module_release(kiln_module_t *module);

/* Number of inputs / outputs of the model (0 for a NULL module). */
size_t kiln_module_input_count(const kiln_module_t *module);
size_t kiln_module_output_count(const kiln_module_t *module);

/* Fills `out_info` for input/output `index`. Errors: KILN_INVALID_ARGUMENT
 * (NULL argument, or the index is out of range: the message gives both). */
kiln_status_t kiln_module_input_info(const kiln_module_t *module, size_t index,
                                     kiln_tensor_info_t *out_info);
kiln_status_t kiln_module_output_info(const kiln_module_t *module,
                                      size_t index,
                                      kiln_tensor_info_t *out_info);

/* Bytes of transient arena kiln_module_invoke needs (may be 0; 0 for a
 * NULL module). */
size_t kiln_module_arena_bytes(const kiln_module_t *module);

/* State (format 1.3): a model may carry variables from one invocation to
 * the next (TFLite resource variables; the state of LSTM, RNN and SVDF
 * layers). They live in the arena's persistent region, bytes [0, N) of
 * kiln_module_arena_bytes(), which the memory plan never reuses. The first
 * kiln_module_invoke after kiln_module_load or kiln_module_reset_state
 * writes their initial values into the arena it is given; each invocation
 * then leaves their new values there for the next, which must be given the
 * same arena (same address, contents untouched in between): another
 * address is KILN_INVALID_ARGUMENT ("the module's 2 state variable(s) live
 * in the arena of its first invocation ..."). An invocation that stops part
 * way (KILN_CANCELLED, KILN_OUT_OF_RANGE, a device error; the message then
 * ends "; state reset") may have written some variables and not others, so
 * the state is reset: the next invocation starts from the initial values. A
 * stateless module has none of these requirements. */

/* Number of state variables (0 for a stateless or NULL module). */
size_t kiln_module_state_count(const kiln_module_t *module);

/* Sets the state variables back to their initial values: the next
 * kiln_module_invoke writes them into the arena it is given (which may be
 * a different one from then on), as after load. Allocates nothing.
 * Errors: KILN_INVALID_ARGUMENT (NULL module). */
kiln_status_t kiln_module_reset_state(kiln_module_t *module);

/* The query of a loaded artifact's target and versions: fills `out_info`
 * with what the gate learned when the module was loaded (kiln_artifact_verify's
 * info: format_major/format_minor, producer = the Kiln version that wrote it,
 * target_triple and target_cpu of its code, sizes and counts; pointers into
 * the artifact buffer). Errors: KILN_INVALID_ARGUMENT (NULL argument). */
kiln_status_t kiln_module_artifact_info(const kiln_module_t *module,
                                        kiln_artifact_info_t *out_info);

/*===------------------------------------------------------------------===//
 * HAL: devices that execute the dispatches of one wave.
 *===------------------------------------------------------------------===*/

/* Entry point ABI of compiled dispatches: bindings[i] is the base address
 * of binding i; workgroup_id points to (x, y, z). */
typedef void (*kiln_dispatch_fn_t)(void **bindings,
                                   const uint32_t *workgroup_id);

/* One dispatch of a wave, as handed to a device. */
typedef struct kiln_dispatch_t {
  kiln_dispatch_fn_t fn;
  void **bindings;
  uint32_t workgroup_count[3];
  /* Index of the command in the artifact's command list (for traces). */
  uint32_t command;
} kiln_dispatch_t;

/* One measured interval of a trace: a whole dispatch (workgroup ==
 * UINT32_MAX) or one workgroup (linearized x + y*nx + z*nx*ny), run by
 * `thread` (0 = the invoking thread), CLOCK_MONOTONIC nanoseconds. */
typedef struct kiln_trace_event_t {
  uint32_t command;
  uint32_t workgroup;
  uint32_t thread;
  uint64_t start_ns;
  uint64_t end_ns;
} kiln_trace_event_t;

/* Caller-owned trace buffer. The runtime stores events in
 * events[0, count) and never lets `count` pass `capacity`; each event that
 * found the buffer full is counted in `dropped` instead (so count + dropped
 * is every event of the run). The caller sets count and dropped to 0 before
 * an invocation; several invocations may append to one buffer. */
typedef struct kiln_trace_t {
  kiln_trace_event_t *events;
  size_t capacity;
  size_t count;
  size_t dropped;
} kiln_trace_t;

/* A device: a table of function pointers plus its state, so users can plug
 * in their own. `execute_wave` runs every workgroup of every dispatch given
 * (they are independent) and returns when all have completed; `trace` may
 * be NULL.
 *
 * Sharing: one device may serve any number of modules invoked from any
 * number of threads at once. Kiln's devices are safe for it: local-sync
 * keeps no state, and local-task runs one wave at a time, a caller that
 * finds the pool busy waiting (on a mutex, not spinning) until the wave
 * before it completes, so every invocation gives the bytes local-sync
 * gives and returns. Waves of different modules interleave; a module's own
 * waves stay in order. A user-supplied device must give the same
 * guarantee, or be used by one invocation at a time. */
typedef struct kiln_device_t {
  const char *name;
  void *self;
  kiln_status_t (*execute_wave)(void *self, const kiln_dispatch_t *dispatches,
                                size_t count, kiln_trace_t *trace);
  void (*release)(void *self);
} kiln_device_t;

/* local-sync: runs workgroups inline on the calling thread, in order
 * (z, y, x). Allocates nothing. Always returns KILN_OK (a NULL `out_device`
 * is left alone). */
kiln_status_t kiln_device_create_local_sync(kiln_device_t *out_device);

/* local-task: a pool of `threads` threads (the caller counts as one, so
 * threads - 1 workers are started; 1 means inline) that run the workgroups
 * of one wave concurrently: each thread a fixed contiguous share of each
 * dispatch (the same rows of consecutive dispatches stay on one core), and
 * the caller runs a share no worker has claimed 5 us after the wave starts
 * (docs/design.md, "Runtime"). Results do not depend on the thread count.
 * Threads and their stacks are allocated here, never during execution.
 * Errors: KILN_INVALID_ARGUMENT (NULL `out_device`, threads 0 or above 256),
 * KILN_RESOURCE_EXHAUSTED (memory or a thread could not be had). Its
 * execute_wave returns KILN_RESOURCE_EXHAUSTED for a wave of more than 4096
 * dispatches. */
kiln_status_t kiln_device_create_local_task(size_t threads,
                                            kiln_device_t *out_device);

/* Stops a device's threads and frees its state (NULL-safe). */
void kiln_device_release(kiln_device_t *device);

/* Every buffer of one invocation; all caller-owned. */
typedef struct kiln_invocation_t {
  const void *const *inputs;  /* input_count pointers */
  const size_t *input_sizes;  /* bytes of each input */
  size_t input_count;
  void *const *outputs;       /* output_count pointers */
  const size_t *output_sizes; /* bytes of each output */
  size_t output_count;
  void *arena;                /* scratch (8-byte aligned at least, 64 best);
                                 NULL allowed when the module needs 0 */
  size_t arena_size;          /* bytes */
  const kiln_device_t *device; /* NULL: local-sync */
  kiln_trace_t *trace;        /* NULL: no tracing */
  /* NULL: the invocation runs to the end. Otherwise asked before each wave
   * (with `cancel_context`, from the invoking thread): nonzero stops the
   * invocation there with KILN_CANCELLED, so a run can be cancelled
   * within one wave's time (a wave already started completes). */
  int (*cancelled)(void *cancel_context);
  void *cancel_context;
} kiln_invocation_t;

/* Replays the command list once: copies and fills inline, the dispatches
 * of each wave on the device, a barrier between waves. Allocates nothing.
 * Errors: KILN_INVALID_ARGUMENT (NULL argument, wrong input or output count,
 * a missing buffer or a size that differs from the signature: the message
 * names the buffer and both sizes), KILN_RESOURCE_EXHAUSTED (arena too small:
 * "arena needs 41216 bytes, 32768 given"), and any status the device's
 * execute_wave returns (local-sync: none; local-task: see above), and for
 * an artifact built with --check-bounds KILN_OUT_OF_RANGE when a kernel
 * refused an access outside its binding (the message names the dispatch,
 * binding, byte offset and extent; outputs are then incomplete), and
 * KILN_CANCELLED when `cancelled` answered nonzero (outputs incomplete). Buffers
 * are not checked for alignment (see "Alignment" at the top). */
kiln_status_t kiln_module_invoke(kiln_module_t *module,
                                 const kiln_invocation_t *invocation);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_H */
