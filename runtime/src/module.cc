// Kiln runtime: artifact loading and command replay.
#include "kiln/runtime.h"

#include "artifact.h"
#include "checked.h"
#include "executable_loader.h"
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace fb = kiln::artifact;
using kiln::runtime::makeStatus;

namespace kiln::runtime {

kiln_status_t makeStatus(kiln_status_code_t code, const char *format, ...) {
  kiln_status_t status;
  status.code = code;
  va_list args;
  va_start(args, format);
  vsnprintf(status.message, sizeof(status.message), format, args);
  va_end(args);
  return status;
}

} // namespace kiln::runtime

namespace {

/// A resolved command: for dispatches the entry point; bindings point into
/// the artifact's flatbuffer; `pointers` is this command's slice of the
/// module's binding scratch (resolved at invoke time).
struct ResolvedCommand {
  fb::CommandKind kind;
  kiln_dispatch_fn_t fn;
  uint32_t workgroup_count[3];
  uint32_t fill_pattern;
  const flatbuffers::Vector<flatbuffers::Offset<fb::Binding>> *bindings;
  void **pointers;
};

} // namespace

struct kiln_module_t {
  const fb::Artifact *artifact = nullptr;
  /// What the gate learned at load.
  kiln_artifact_info_t info;
  size_t input_count = 0;
  size_t output_count = 0;
  size_t arena_bytes = 0;
  size_t library_count = 0;
  kiln::runtime::LoadedLibrary *libraries = nullptr;
  size_t command_count = 0;
  ResolvedCommand *commands = nullptr;
  /// Binding pointers of every command, resolved at invoke time.
  void **binding_scratch = nullptr;
  /// Per-wave dispatch list handed to the device (sized for the largest wave).
  kiln_dispatch_t *wave_scratch = nullptr;
  /// The arena whose persistent region holds the state variables' current
  /// values; null after load and kiln_module_reset_state (the next
  /// invocation writes the initial values first).
  void *state_arena = nullptr;
};

/// Writes every state variable's initial value into `arena`'s persistent
/// region (kiln.artifact.StateVariable: its initial bytes, or its fill
/// pattern repeated).
static void initializeState(const fb::MemoryPlan *plan, uint8_t *arena) {
  for (const fb::StateVariable *v : *plan->state()) {
    uint8_t *to = arena + v->arena_offset();
    if (v->initial()) {
      memcpy(to, v->initial()->data(), v->bytes());
      continue;
    }
    uint32_t pattern = v->fill_pattern();
    for (uint64_t i = 0; i < v->bytes(); ++i)
      to[i] = static_cast<uint8_t>(pattern >> (8 * (i % 4)));
  }
}

/// The state check of an invocation: with state variables, the first
/// invocation after load or reset initializes them in its arena, and every
/// later one must pass that same arena.
static kiln_status_t prepareState(kiln_module_t *module, const kiln_invocation_t *inv) {
  const fb::MemoryPlan *plan = module->artifact->memory_plan();
  if (!plan || !plan->state() || plan->state()->size() == 0)
    return kiln_status_ok();
  if (!module->state_arena) {
    initializeState(plan, static_cast<uint8_t *>(inv->arena));
    module->state_arena = inv->arena;
    return kiln_status_ok();
  }
  if (module->state_arena != inv->arena)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "the module's %u state variable(s) live in the arena of its first invocation "
                      "(%p), not %p: pass the same arena to every invocation, or call "
                      "kiln_module_reset_state to start over",
                      plan->state()->size(), module->state_arena, inv->arena);
  return kiln_status_ok();
}

/// KILN_OUT_OF_RANGE for the first access a --check-bounds kernel of
/// `module` refused since the last call (the kernel's workgroup stopped
/// there), the record cleared for the next wave; KILN_OK otherwise.
static kiln_status_t takeBoundsViolation(kiln_module_t *module) {
  for (size_t i = 0; i < module->library_count; ++i) {
    kiln::runtime::BoundsReport *r = module->libraries[i].bounds;
    if (!r || !__atomic_load_n(&r->violated, __ATOMIC_ACQUIRE))
      continue;
    kiln_status_t s = makeStatus(
        KILN_OUT_OF_RANGE, "KILN_OUT_OF_RANGE: %s %s binding %u at byte %lld of %llu (%u bytes)",
        r->label ? r->label : "a dispatch", r->is_store ? "wrote" : "read", r->binding,
        static_cast<long long>(r->offset), static_cast<unsigned long long>(r->extent),
        r->access_bytes);
    __atomic_store_n(&r->violated, 0, __ATOMIC_RELEASE);
    return s;
  }
  return kiln_status_ok();
}

extern "C" {

kiln_status_t kiln_status_ok(void) {
  kiln_status_t status;
  status.code = KILN_OK;
  status.message[0] = '\0';
  return status;
}

size_t kiln_element_type_size(kiln_element_type_t type) {
  switch (type) {
  case KILN_F32:
  case KILN_I32:
    return 4;
  case KILN_F16:
    return 2;
  case KILN_I64:
    return 8;
  case KILN_I8:
  case KILN_U8:
  case KILN_I1:
    return 1;
  }
  return 0;
}

const char *kiln_element_type_name(kiln_element_type_t type) {
  switch (type) {
  case KILN_F32:
    return "f32";
  case KILN_F16:
    return "f16";
  case KILN_I32:
    return "i32";
  case KILN_I64:
    return "i64";
  case KILN_I8:
    return "i8";
  case KILN_U8:
    return "u8";
  case KILN_I1:
    return "i1";
  }
  return "unknown";
}

const char *kiln_status_code_name(kiln_status_code_t code) {
  // Switch on the raw value: a C caller may pass any int, and an enum value
  // outside its range is undefined behaviour in C++.
  switch (static_cast<int>(code)) {
  case KILN_OK:
    return "KILN_OK";
  case KILN_INVALID_ARGUMENT:
    return "KILN_INVALID_ARGUMENT";
  case KILN_DATA_LOSS:
    return "KILN_DATA_LOSS";
  case KILN_INCOMPATIBLE:
    return "KILN_INCOMPATIBLE";
  case KILN_RESOURCE_EXHAUSTED:
    return "KILN_RESOURCE_EXHAUSTED";
  case KILN_INTERNAL:
    return "KILN_INTERNAL";
  case KILN_UNIMPLEMENTED:
    return "KILN_UNIMPLEMENTED";
  case KILN_OUT_OF_RANGE:
    return "KILN_OUT_OF_RANGE";
  case KILN_CANCELLED:
    return "KILN_CANCELLED";
  }
  return "unknown";
}

const char *kiln_runtime_version(void) {
#ifndef KILN_VERSION_STRING
#define KILN_VERSION_STRING "0.0.0"
#endif
  return KILN_VERSION_STRING " (format 1.3)";
}

} // extern "C"

/// Architecture of the code this runtime can load (first triple component).
#if defined(__x86_64__)
static const char kHostArch[] = "x86_64";
#elif defined(__aarch64__)
static const char kHostArch[] = "aarch64";
#elif defined(__riscv) && __riscv_xlen == 64
static const char kHostArch[] = "riscv64";
#elif defined(__arm__)
static const char kHostArch[] = "thumbv7em";
#else
static const char kHostArch[] = "unknown";
#endif

using kiln::runtime::tensorByteSize;

/// Whether this CPU has the feature an executable names (LLVM's names, the
/// compiler's list checkableCpuFeatures()); *known is false for a name this
/// runtime cannot check. GCC's and clang's __builtin_cpu_supports read
/// CPUID and also check that the OS saves the AVX/AVX-512 register state.
static bool cpuHasFeature(const char *name, bool *known) {
  *known = true;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  const struct {
    const char *name;
    bool has;
  } table[] = {
      {"sse3", __builtin_cpu_supports("sse3") != 0},
      {"ssse3", __builtin_cpu_supports("ssse3") != 0},
      {"sse4.1", __builtin_cpu_supports("sse4.1") != 0},
      {"sse4.2", __builtin_cpu_supports("sse4.2") != 0},
      {"popcnt", __builtin_cpu_supports("popcnt") != 0},
      {"avx", __builtin_cpu_supports("avx") != 0},
      {"avx2", __builtin_cpu_supports("avx2") != 0},
      {"fma", __builtin_cpu_supports("fma") != 0},
      {"bmi", __builtin_cpu_supports("bmi") != 0},
      {"bmi2", __builtin_cpu_supports("bmi2") != 0},
      {"avx512f", __builtin_cpu_supports("avx512f") != 0},
      {"avx512bw", __builtin_cpu_supports("avx512bw") != 0},
      {"avx512cd", __builtin_cpu_supports("avx512cd") != 0},
      {"avx512dq", __builtin_cpu_supports("avx512dq") != 0},
      {"avx512vl", __builtin_cpu_supports("avx512vl") != 0},
      {"avx512vnni", __builtin_cpu_supports("avx512vnni") != 0},
      {"avx512bf16", __builtin_cpu_supports("avx512bf16") != 0},
#ifndef __clang__ // clang 16 (the fuzz build) does not know this name: unknown there
      {"avx512fp16", __builtin_cpu_supports("avx512fp16") != 0},
#endif
  };
  for (const auto &entry : table)
    if (strcmp(entry.name, name) == 0)
      return entry.has;
#endif
  *known = false;
  return false;
}

/// The features `e` requires that this CPU lacks (or this runtime cannot
/// check), comma-separated into `missing`; false if there are any.
static bool cpuRunsExecutable(const fb::Executable *e, char *missing, size_t capacity) {
  missing[0] = '\0';
  if (!e->required_cpu_features())
    return true;
  bool ok = true;
  for (const flatbuffers::String *f : *e->required_cpu_features()) {
    bool known = false;
    if (cpuHasFeature(f->c_str(), &known))
      continue;
    ok = false;
    size_t used = strlen(missing);
    snprintf(missing + used, capacity - used, "%s%s%s", used ? ", " : "", f->c_str(),
             known ? "" : " (unknown to this runtime)");
  }
  return ok;
}

static kiln_status_t fillInfo(const fb::TensorDesc *desc, kiln_tensor_info_t *out) {
  memset(out, 0, sizeof(*out));
  out->name = desc->name() ? desc->name()->c_str() : "";
  out->element_type = static_cast<kiln_element_type_t>(desc->element_type());
  out->rank = desc->shape() ? desc->shape()->size() : 0;
  for (size_t i = 0; i < out->rank; ++i)
    out->shape[i] = desc->shape()->Get(static_cast<flatbuffers::uoffset_t>(i));
  tensorByteSize(desc, &out->byte_size);
  // The gate checked the counts, the dimension and every value.
  out->quantized_dimension = -1;
  if (const fb::Quantization *q = desc->quantization()) {
    out->quantized = 1;
    out->quantized_dimension = q->quantized_dimension();
    out->quantization_count = q->scales()->size();
    out->scales = q->scales()->data();
    out->zero_points = q->zero_points()->data();
    if (out->quantized_dimension < 0) {
      out->scale = out->scales[0];
      out->zero_point = out->zero_points[0];
    }
  }
  return kiln_status_ok();
}

/// What the gate does not check because it depends on this host and this
/// buffer, not on the file: the code's architecture and format, and the
/// constants' alignment in memory (kernels read them in place).
static kiln_status_t checkRunsHere(const fb::Artifact *a) {
  for (const fb::Executable *e : *a->executables()) {
    // The architecture part of the target triple must be this host's.
    const char *triple = e->target_triple() ? e->target_triple()->c_str() : "";
    size_t archLength = strcspn(triple, "-");
    if (strlen(kHostArch) != archLength || strncmp(triple, kHostArch, archLength) != 0)
      return makeStatus(KILN_INCOMPATIBLE,
                        "the artifact's code targets %s; this runtime runs %s code (compile "
                        "it for this machine: kiln compile --target=host)",
                        triple[0] ? triple : "an unknown target", kHostArch);
    char missing[256];
    if (!cpuRunsExecutable(e, missing, sizeof missing))
      return makeStatus(KILN_INCOMPATIBLE,
                        "the artifact's code was compiled for CPU '%s' and uses features this "
                        "CPU lacks: %s (recompile without them: --target-cpu=host on this "
                        "machine, or a CPU and --target-cpu-features this one has)",
                        e->target_cpu() ? e->target_cpu()->c_str() : "?", missing);
    if (e->format() != fb::ExecutableFormat::elf_shared_object)
      return makeStatus(KILN_INCOMPATIBLE, "executable format %u is not supported by this runtime",
                        static_cast<unsigned>(e->format()));
  }
  if (!a->constants())
    return kiln_status_ok();
  flatbuffers::uoffset_t index = 0;
  for (const fb::Constant *k : *a->constants()) {
    if (reinterpret_cast<uintptr_t>(k->data()->data()) % 16 != 0)
      return makeStatus(KILN_INVALID_ARGUMENT,
                        "constant %u is not 16-byte aligned: load the artifact into a "
                        "64-byte aligned buffer",
                        index);
    ++index;
  }
  return kiln_status_ok();
}

/// calloc(count, size), or NULL with `status` naming the bytes asked for.
static void *allocateTable(size_t count, size_t size, const char *what, kiln_status_t *status) {
  size_t n = count ? count : 1;
  uint64_t bytes = 0;
  bool fits = kiln::runtime::checkedMul(n, size, &bytes) && bytes <= kiln::runtime::kMaxObjectBytes;
  void *p = fits ? calloc(n, size) : nullptr;
  if (!p && status->code == KILN_OK)
    *status = fits ? makeStatus(KILN_RESOURCE_EXHAUSTED, "cannot allocate %llu bytes for the %s",
                                static_cast<unsigned long long>(bytes), what)
                   : makeStatus(KILN_RESOURCE_EXHAUSTED,
                                "cannot allocate %zu x %zu bytes for the %s", n, size, what);
  return p;
}

extern "C" kiln_status_t kiln_module_load(const void *data, size_t size,
                                          kiln_module_t **out_module) {
  if (!out_module || (!data && size))
    return makeStatus(KILN_INVALID_ARGUMENT, "kiln_module_load: null argument");
  *out_module = nullptr;
  kiln_artifact_info_t info;
  kiln_status_t status = kiln_artifact_verify(data, size, &info);
  if (status.code != KILN_OK)
    return status;
  const fb::Artifact *artifact = fb::GetArtifact(data);
  status = checkRunsHere(artifact);
  if (status.code != KILN_OK)
    return status;

  kiln_module_t *m = static_cast<kiln_module_t *>(
      allocateTable(1, sizeof(kiln_module_t), "module", &status));
  if (!m)
    return status;
  m->artifact = artifact;
  m->info = info;
  m->input_count = info.input_count;
  m->output_count = info.output_count;
  m->arena_bytes = static_cast<size_t>(info.arena_bytes);
  m->library_count = info.executable_count;
  m->command_count = info.command_count;
  m->libraries = static_cast<kiln::runtime::LoadedLibrary *>(allocateTable(
      m->library_count, sizeof(kiln::runtime::LoadedLibrary), "executable table", &status));
  m->commands = static_cast<ResolvedCommand *>(
      allocateTable(m->command_count, sizeof(ResolvedCommand), "command table", &status));
  m->binding_scratch = static_cast<void **>(
      allocateTable(info.binding_count, sizeof(void *), "binding table", &status));
  m->wave_scratch = static_cast<kiln_dispatch_t *>(
      allocateTable(info.largest_wave, sizeof(kiln_dispatch_t), "wave table", &status));
  if (status.code != KILN_OK) {
    kiln_module_release(m);
    return status;
  }
  for (size_t i = 0; i < m->library_count; ++i) {
    const fb::Executable *e = artifact->executables()->Get(static_cast<flatbuffers::uoffset_t>(i));
    status = kiln::runtime::loadLibrary(e->code()->data(), e->code()->size(), &m->libraries[i]);
    if (status.code != KILN_OK) {
      kiln_module_release(m);
      return status;
    }
  }
  void **next_pointers = m->binding_scratch;
  for (size_t i = 0; i < m->command_count; ++i) {
    const fb::Command *c = artifact->commands()->Get(static_cast<flatbuffers::uoffset_t>(i));
    ResolvedCommand &r = m->commands[i];
    r.kind = c->kind();
    r.bindings = c->bindings();
    r.pointers = next_pointers;
    r.fill_pattern = c->fill_pattern();
    if (c->kind() == fb::CommandKind::barrier)
      continue; // replayed without bindings (the gate counts none for it)
    next_pointers += c->bindings()->size();
    if (c->kind() != fb::CommandKind::dispatch)
      continue;
    for (int d = 0; d < 3; ++d)
      r.workgroup_count[d] = c->workgroup_count()->Get(d);
    const fb::Executable *e = artifact->executables()->Get(c->executable());
    const char *name = e->entry_points()->Get(c->entry_point())->c_str();
    kiln::runtime::DispatchFn fn = nullptr;
    status = kiln::runtime::lookupEntryPoint(m->libraries[c->executable()], name, &fn);
    if (status.code != KILN_OK) {
      kiln_module_release(m);
      return status;
    }
    r.fn = fn;
  }
  *out_module = m;
  return kiln_status_ok();
}

extern "C" void kiln_module_release(kiln_module_t *module) {
  if (!module)
    return;
  if (module->libraries)
    for (size_t i = 0; i < module->library_count; ++i)
      kiln::runtime::unloadLibrary(&module->libraries[i]);
  free(module->libraries);
  free(module->commands);
  free(module->binding_scratch);
  free(module->wave_scratch);
  free(module);
}

extern "C" size_t kiln_module_input_count(const kiln_module_t *module) {
  return module ? module->input_count : 0;
}

extern "C" size_t kiln_module_output_count(const kiln_module_t *module) {
  return module ? module->output_count : 0;
}

extern "C" kiln_status_t kiln_module_input_info(const kiln_module_t *module, size_t index,
                                                kiln_tensor_info_t *out_info) {
  if (!module || !out_info)
    return makeStatus(KILN_INVALID_ARGUMENT, "kiln_module_input_info: null argument");
  if (index >= module->input_count)
    return makeStatus(KILN_INVALID_ARGUMENT, "input %zu requested, the model has %zu", index,
                      module->input_count);
  return fillInfo(module->artifact->io()->inputs()->Get(static_cast<flatbuffers::uoffset_t>(index)),
                  out_info);
}

extern "C" kiln_status_t kiln_module_output_info(const kiln_module_t *module, size_t index,
                                                 kiln_tensor_info_t *out_info) {
  if (!module || !out_info)
    return makeStatus(KILN_INVALID_ARGUMENT, "kiln_module_output_info: null argument");
  if (index >= module->output_count)
    return makeStatus(KILN_INVALID_ARGUMENT, "output %zu requested, the model has %zu", index,
                      module->output_count);
  return fillInfo(
      module->artifact->io()->outputs()->Get(static_cast<flatbuffers::uoffset_t>(index)), out_info);
}

extern "C" size_t kiln_module_arena_bytes(const kiln_module_t *module) {
  return module ? module->arena_bytes : 0;
}

size_t kiln_module_state_count(const kiln_module_t *module) {
  const fb::MemoryPlan *plan = module ? module->artifact->memory_plan() : nullptr;
  return plan && plan->state() ? plan->state()->size() : 0;
}

kiln_status_t kiln_module_reset_state(kiln_module_t *module) {
  if (!module)
    return makeStatus(KILN_INVALID_ARGUMENT, "kiln_module_reset_state: null module");
  module->state_arena = nullptr;
  return kiln_status_ok();
}

extern "C" kiln_status_t kiln_module_artifact_info(const kiln_module_t *module,
                                                   kiln_artifact_info_t *out_info) {
  if (!module || !out_info)
    return makeStatus(KILN_INVALID_ARGUMENT, "kiln_module_artifact_info: null argument");
  *out_info = module->info;
  return kiln_status_ok();
}

/// Replays the command list of `module` on the checked invocation `inv`
/// (kiln_module_invoke's work after its checks).
static kiln_status_t replay(kiln_module_t *module, const kiln_invocation_t *inv) {

  kiln_device_t inline_device;
  const kiln_device_t *device = inv->device;
  if (!device) {
    kiln_device_create_local_sync(&inline_device);
    device = &inline_device;
  }
  const auto *constants = module->artifact->constants();
  size_t wave_count = 0, dispatches_run = 0;
  auto flush = [&]() -> kiln_status_t {
    kiln_status_t s = kiln_status_ok();
    if (wave_count && inv->cancelled && inv->cancelled(inv->cancel_context))
      return makeStatus(KILN_CANCELLED, "cancelled after %zu of %zu dispatches", dispatches_run,
                        module->info.dispatch_count);
    if (wave_count) {
      s = device->execute_wave(device->self, module->wave_scratch, wave_count, inv->trace);
      dispatches_run += wave_count;
    }
    wave_count = 0;
    if (s.code == KILN_OK)
      s = takeBoundsViolation(module);
    return s;
  };
  for (size_t c = 0; c < module->command_count; ++c) {
    ResolvedCommand &cmd = module->commands[c];
    if (cmd.kind == fb::CommandKind::barrier) {
      kiln_status_t s = flush();
      if (s.code != KILN_OK)
        return s;
      continue;
    }
    flatbuffers::uoffset_t n = cmd.bindings->size();
    for (flatbuffers::uoffset_t i = 0; i < n; ++i) {
      const fb::Binding *b = cmd.bindings->Get(i);
      uint8_t *base = nullptr;
      switch (b->kind()) {
      case fb::BindingKind::input:
        base = static_cast<uint8_t *>(const_cast<void *>(inv->inputs[b->index()]));
        break;
      case fb::BindingKind::output:
        base = static_cast<uint8_t *>(inv->outputs[b->index()]);
        break;
      case fb::BindingKind::constant:
        base = const_cast<uint8_t *>(constants->Get(b->index())->data()->data());
        break;
      case fb::BindingKind::arena:
        base = static_cast<uint8_t *>(inv->arena);
        break;
      }
      cmd.pointers[i] = base + b->offset();
    }
    if (cmd.kind == fb::CommandKind::copy) {
      memmove(cmd.pointers[1], cmd.pointers[0], cmd.bindings->Get(0)->length());
    } else if (cmd.kind == fb::CommandKind::fill) {
      uint8_t *p = static_cast<uint8_t *>(cmd.pointers[0]);
      uint64_t length = cmd.bindings->Get(0)->length();
      for (uint64_t k = 0; k < length; ++k)
        p[k] = static_cast<uint8_t>(cmd.fill_pattern >> (8 * (k % 4)));
    } else {
      kiln_dispatch_t &d = module->wave_scratch[wave_count++];
      d.fn = cmd.fn;
      d.bindings = cmd.pointers;
      d.workgroup_count[0] = cmd.workgroup_count[0];
      d.workgroup_count[1] = cmd.workgroup_count[1];
      d.workgroup_count[2] = cmd.workgroup_count[2];
      d.command = static_cast<uint32_t>(c);
    }
  }
  return flush();
}
extern "C" kiln_status_t kiln_module_invoke(kiln_module_t *module, const kiln_invocation_t *inv) {
  if (!module || !inv)
    return makeStatus(KILN_INVALID_ARGUMENT, "kiln_module_invoke: null argument");
  const fb::IOTable *io = module->artifact->io();
  if (inv->input_count != module->input_count)
    return makeStatus(KILN_INVALID_ARGUMENT, "the model takes %zu inputs, %zu given",
                      module->input_count, inv->input_count);
  if (inv->output_count != module->output_count)
    return makeStatus(KILN_INVALID_ARGUMENT, "the model has %zu outputs, %zu given",
                      module->output_count, inv->output_count);
  for (size_t i = 0; i < inv->input_count; ++i) {
    const fb::TensorDesc *d = io->inputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
    size_t need = 0;
    tensorByteSize(d, &need);
    bool given = inv->inputs && inv->inputs[i] && inv->input_sizes;
    if (!given || inv->input_sizes[i] != need)
      return makeStatus(KILN_INVALID_ARGUMENT, "input %zu '%s' needs %zu bytes, %zu given", i,
                        d->name() ? d->name()->c_str() : "", need, given ? inv->input_sizes[i] : 0);
  }
  for (size_t i = 0; i < inv->output_count; ++i) {
    const fb::TensorDesc *d = io->outputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
    size_t need = 0;
    tensorByteSize(d, &need);
    bool given = inv->outputs && inv->outputs[i] && inv->output_sizes;
    if (!given || inv->output_sizes[i] != need)
      return makeStatus(KILN_INVALID_ARGUMENT, "output %zu '%s' needs %zu bytes, %zu given", i,
                        d->name() ? d->name()->c_str() : "", need,
                        given ? inv->output_sizes[i] : 0);
  }
  if (module->arena_bytes > 0 && (!inv->arena || inv->arena_size < module->arena_bytes))
    return makeStatus(KILN_RESOURCE_EXHAUSTED, "arena needs %zu bytes, %zu given",
                      module->arena_bytes, inv->arena ? inv->arena_size : 0);
  kiln_status_t stateStatus = prepareState(module, inv);
  if (stateStatus.code != KILN_OK)
    return stateStatus;
  kiln_status_t status = replay(module, inv);
  // An invocation stopped part way (cancelled, a --check-bounds refusal, a
  // device error) may have written some state variables and not others:
  // they start over from their initial values at the next invocation.
  if (status.code != KILN_OK && module->state_arena) {
    module->state_arena = nullptr;
    size_t used = strlen(status.message);
    snprintf(status.message + used, sizeof(status.message) - used, "; state reset");
  }
  return status;
}
