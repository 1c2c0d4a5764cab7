// Kiln runtime: the artifact gate. Recognizes and verifies `.kiln` files
// (format: runtime/schema/kiln_artifact.fbs) as untrusted input; every
// reader of an artifact, in the runtime and in the compiler, goes through
// kiln_artifact_verify.
#include "artifact.h"

#include "checked.h"
#include "crc32.h"
#include "status.h"

#include <stdio.h>
#include <string.h>

namespace fb = kiln::artifact;
using kiln::runtime::checkedAdd;
using kiln::runtime::checkedMul;
using kiln::runtime::kMaxObjectBytes;
using kiln::runtime::makeStatus;
using kiln::runtime::rangeInside;

namespace kiln::runtime {

namespace {

/// What keeps a tensor description from being a tensor this process can
/// hold (none: `*bytes` is its byte size).
enum class TensorProblem { none, elementType, rank, negativeDim, overflow, addressSpace };

TensorProblem tensorBytes(const fb::TensorDesc *desc, uint64_t *bytes) {
  // The raw byte is range-checked before it becomes the C enum: an enum
  // value out of its range is undefined behaviour in C++ (found by the
  // artifact_mutate fuzzer).
  auto raw = static_cast<unsigned>(desc->element_type());
  *bytes = raw <= KILN_I1 ? kiln_element_type_size(static_cast<kiln_element_type_t>(raw)) : 0;
  if (*bytes == 0)
    return TensorProblem::elementType;
  if (desc->shape()) {
    if (desc->shape()->size() > KILN_MAX_RANK)
      return TensorProblem::rank;
    for (int64_t d : *desc->shape())
      if (d < 0)
        return TensorProblem::negativeDim;
    for (int64_t d : *desc->shape())
      if (!checkedMul(*bytes, static_cast<uint64_t>(d), bytes))
        return TensorProblem::overflow;
  }
  return *bytes > kMaxObjectBytes ? TensorProblem::addressSpace : TensorProblem::none;
}

} // namespace

bool tensorByteSize(const fb::TensorDesc *desc, size_t *out) {
  uint64_t bytes;
  if (tensorBytes(desc, &bytes) != TensorProblem::none)
    return false;
  *out = static_cast<size_t>(bytes);
  return true;
}

/// The status for input/output `index` (`what`) when it is no tensor this
/// process can hold, naming it, its shape and the reason; OK otherwise.
static kiln_status_t checkTensor(const fb::TensorDesc *t, const char *what, uint32_t index) {
  if (!t)
    return makeStatus(KILN_DATA_LOSS, "artifact's %s %u is missing", what, index);
  uint64_t bytes;
  TensorProblem problem = tensorBytes(t, &bytes);
  if (problem == TensorProblem::none)
    return kiln_status_ok();
  const char *name = t->name() ? t->name()->c_str() : "";
  char shape[KILN_MAX_RANK * 21 + 1] = "";
  size_t used = 0;
  if (t->shape() && t->shape()->size() <= KILN_MAX_RANK)
    for (int64_t d : *t->shape())
      used += static_cast<size_t>(snprintf(shape + used, sizeof(shape) - used, "%s%lld",
                                           used ? "x" : "", static_cast<long long>(d)));
  switch (problem) {
  case TensorProblem::elementType:
    return makeStatus(KILN_DATA_LOSS, "artifact's %s %u '%.40s' has unknown element type %u",
                      what, index, name, static_cast<unsigned>(t->element_type()));
  case TensorProblem::rank:
    return makeStatus(KILN_DATA_LOSS, "artifact's %s %u '%.40s' has rank %u, above %d", what,
                      index, name, t->shape()->size(), KILN_MAX_RANK);
  case TensorProblem::negativeDim:
    return makeStatus(KILN_DATA_LOSS, "artifact's %s %u '%.40s' has a negative dimension: %s",
                      what, index, name, shape);
  case TensorProblem::overflow:
    return makeStatus(KILN_DATA_LOSS,
                      "artifact's %s %u '%.40s' of shape %s: its byte size overflows 64 bits",
                      what, index, name, shape);
  default:
    return makeStatus(KILN_DATA_LOSS,
                      "artifact's %s %u '%.40s' of shape %s has %llu bytes, above the %llu this "
                      "process can address",
                      what, index, name, shape, static_cast<unsigned long long>(bytes),
                      static_cast<unsigned long long>(kMaxObjectBytes));
  }
}

/// The quantization of input/output `index` (`what`, already a valid
/// tensor): absent, or on an i8/u8/i32 tensor with as many zero points as
/// scales, one pair per tensor (dimension -1) or shape[dimension] pairs,
/// every scale finite and positive, every zero point in the element type's
/// range. Data loss naming the tensor otherwise.
static kiln_status_t checkQuantization(const fb::TensorDesc *t, const char *what, uint32_t index) {
  const fb::Quantization *q = t->quantization();
  if (!q)
    return kiln_status_ok();
  const char *name = t->name() ? t->name()->c_str() : "";
  auto type = static_cast<unsigned>(t->element_type());
  int64_t lo = INT32_MIN, hi = INT32_MAX;
  if (type == KILN_I8)
    lo = -128, hi = 127;
  else if (type == KILN_U8)
    lo = 0, hi = 255;
  else if (type != KILN_I32)
    return makeStatus(KILN_DATA_LOSS,
                      "artifact's %s %u '%.40s' is %s but has a quantization; only i8, u8 and "
                      "i32 tensors are quantized",
                      what, index, name,
                      kiln_element_type_name(static_cast<kiln_element_type_t>(type)));
  uint32_t scales = q->scales() ? q->scales()->size() : 0;
  uint32_t zeroPoints = q->zero_points() ? q->zero_points()->size() : 0;
  int32_t dim = q->quantized_dimension();
  uint32_t rank = t->shape() ? t->shape()->size() : 0;
  if (dim < -1 || dim >= static_cast<int64_t>(rank))
    return makeStatus(KILN_DATA_LOSS,
                      "artifact's %s %u '%.40s' is quantized along dimension %d of a rank-%u "
                      "tensor",
                      what, index, name, dim, rank);
  int64_t want = dim < 0 ? 1 : t->shape()->Get(static_cast<flatbuffers::uoffset_t>(dim));
  if (scales != want || zeroPoints != want)
    return makeStatus(KILN_DATA_LOSS,
                      "artifact's %s %u '%.40s' has %u scales and %u zero points; its "
                      "quantization (dimension %d) needs %lld of each",
                      what, index, name, scales, zeroPoints, dim, static_cast<long long>(want));
  for (uint32_t c = 0; c < scales; ++c) {
    float scale = q->scales()->Get(c);
    // Written so that NaN fails too.
    if (!(scale > 0.0f && scale <= 3.4028234663852886e38f))
      return makeStatus(KILN_DATA_LOSS,
                        "artifact's %s %u '%.40s' has scale %g at channel %u; scales are finite "
                        "and positive",
                        what, index, name, static_cast<double>(scale), c);
    int64_t zp = q->zero_points()->Get(c);
    if (zp < lo || zp > hi)
      return makeStatus(KILN_DATA_LOSS,
                        "artifact's %s %u '%.40s' has zero point %lld at channel %u, outside "
                        "%s's range %lld..%lld",
                        what, index, name, static_cast<long long>(zp), c,
                        kiln_element_type_name(static_cast<kiln_element_type_t>(type)),
                        static_cast<long long>(lo), static_cast<long long>(hi));
  }
  return kiln_status_ok();
}

} // namespace kiln::runtime

namespace {

const char *stringOr(const flatbuffers::String *s, const char *fallback) {
  return s ? s->c_str() : fallback;
}

/// Little-endian 32-bit value at `p`.
uint32_t readLe32(const uint8_t *p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

/// Identifier, size limits, trailer and checksum: everything checked before
/// a byte of the flatbuffer is interpreted.
kiln_status_t checkEnvelope(const uint8_t *bytes, size_t size) {
  if (!kiln_artifact_recognize(bytes, size))
    return makeStatus(KILN_DATA_LOSS,
                      "not a Kiln artifact: %zu bytes without the 'KILN' file identifier", size);
  if (size < 8 + KILN_ARTIFACT_TRAILER_BYTES)
    return makeStatus(KILN_DATA_LOSS,
                      "artifact is truncated: %zu bytes, at least %d needed for the header and "
                      "checksum trailer",
                      size, 8 + KILN_ARTIFACT_TRAILER_BYTES);
  if (size - KILN_ARTIFACT_TRAILER_BYTES >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return makeStatus(KILN_DATA_LOSS, "artifact of %zu bytes exceeds the format's limit of %llu",
                      size, static_cast<unsigned long long>(FLATBUFFERS_MAX_BUFFER_SIZE));
  const uint8_t *trailer = bytes + size - KILN_ARTIFACT_TRAILER_BYTES;
  if (memcmp(trailer, "KSUM", 4) != 0)
    return makeStatus(KILN_DATA_LOSS,
                      "artifact is truncated or corrupted: no checksum trailer at the end "
                      "of its %zu bytes",
                      size);
  uint32_t stored = readLe32(trailer + 4);
  uint32_t actual = kiln::runtime::crc32(bytes, size - KILN_ARTIFACT_TRAILER_BYTES);
  if (stored != actual)
    return makeStatus(KILN_DATA_LOSS,
                      "artifact is corrupted: checksum 0x%08x, the trailer says 0x%08x", actual,
                      stored);
  return kiln_status_ok();
}

/// Whether the elements of vector `v` lie at a multiple of `align` bytes from
/// the start of the file (a null or empty vector passes: FlatBufferBuilder
/// does not align an empty vector of structs, and nothing is read from it).
template <typename Vector>
bool elementsAligned(const Vector *v, const uint8_t *bytes, size_t align) {
  return !v || v->size() == 0 || static_cast<size_t>(v->Data() - bytes) % align == 0;
}

/// The 8-byte vectors (shapes, memory plan allocations) are 8-byte aligned
/// in the file. The flatbuffers 2.0 verifier checks only the 4-byte length
/// in front of a vector, so a crafted file can misalign the elements, and
/// reading them in place would be undefined behaviour (found by the
/// artifact_mutate fuzzer, tests/fuzz/regressions/artifact_mutate).
kiln_status_t checkAlignment(const fb::Artifact *a, const uint8_t *bytes) {
  auto shapesAligned = [&](const auto *list) {
    if (list)
      for (const auto *t : *list)
        if (t && !elementsAligned(t->shape(), bytes, 8))
          return false;
    return true;
  };
  // Quantization parameters are read in place through the 4-byte pointers
  // of kiln_tensor_info_t.
  auto quantizationAligned = [&](const auto *list) {
    if (list)
      for (const fb::TensorDesc *t : *list)
        if (t && t->quantization() &&
            (!elementsAligned(t->quantization()->scales(), bytes, 4) ||
             !elementsAligned(t->quantization()->zero_points(), bytes, 4)))
          return false;
    return true;
  };
  const fb::IOTable *io = a->io();
  if ((io && (!shapesAligned(io->inputs()) || !shapesAligned(io->outputs()) ||
              !quantizationAligned(io->inputs()) || !quantizationAligned(io->outputs()))) ||
      !shapesAligned(a->constants()) ||
      (a->memory_plan() && !elementsAligned(a->memory_plan()->allocations(), bytes, 8)))
    return makeStatus(KILN_DATA_LOSS, "artifact is corrupted: a shape, a quantization or the "
                                      "memory plan is not aligned in the file");
  return kiln_status_ok();
}

/// The version through a verifier of the version fields alone, so an
/// artifact of another format major is reported as such, not as damage;
/// then the whole flatbuffer.
kiln_status_t checkStructure(const uint8_t *bytes, size_t size) {
  flatbuffers::Verifier header(bytes, size);
  if (!header.VerifyBuffer<fb::ArtifactVersion>(fb::ArtifactIdentifier()))
    return makeStatus(KILN_DATA_LOSS, "artifact is truncated or corrupted (header check failed)");
  const fb::ArtifactVersion *v = flatbuffers::GetRoot<fb::ArtifactVersion>(bytes);
  if (v->format_major() != KILN_FORMAT_MAJOR)
    return makeStatus(KILN_INCOMPATIBLE,
                      "artifact format %u.%u, this runtime (kiln %s) reads %u.x: recompile "
                      "the model with a matching kiln",
                      v->format_major(), v->format_minor(), kiln_runtime_version(),
                      KILN_FORMAT_MAJOR);
  flatbuffers::Verifier verifier(bytes, size);
  if (!fb::VerifyArtifactBuffer(verifier))
    return makeStatus(KILN_DATA_LOSS,
                      "artifact is truncated or corrupted (flatbuffers verification of %zu bytes "
                      "failed)",
                      size);
  return checkAlignment(fb::GetArtifact(bytes), bytes);
}

kiln_status_t checkSignature(const fb::IOTable *io) {
  if (!io || !io->inputs() || !io->outputs())
    return makeStatus(KILN_DATA_LOSS, "artifact has no I/O description table");
  for (flatbuffers::uoffset_t i = 0; i < io->inputs()->size(); ++i) {
    kiln_status_t s = kiln::runtime::checkTensor(io->inputs()->Get(i), "input", i);
    if (s.code == KILN_OK)
      s = kiln::runtime::checkQuantization(io->inputs()->Get(i), "input", i);
    if (s.code != KILN_OK)
      return s;
  }
  for (flatbuffers::uoffset_t i = 0; i < io->outputs()->size(); ++i) {
    kiln_status_t s = kiln::runtime::checkTensor(io->outputs()->Get(i), "output", i);
    if (s.code == KILN_OK)
      s = kiln::runtime::checkQuantization(io->outputs()->Get(i), "output", i);
    if (s.code != KILN_OK)
      return s;
  }
  return kiln_status_ok();
}

kiln_status_t checkConstantsAndCode(const fb::Artifact *a, const uint8_t *bytes) {
  if (!a->commands() || !a->executables())
    return makeStatus(KILN_DATA_LOSS, "artifact has no command list or executables");
  flatbuffers::uoffset_t index = 0;
  for (const fb::Executable *e : *a->executables()) {
    if (!e || !e->code() || !e->entry_points())
      return makeStatus(KILN_DATA_LOSS, "artifact's executable %u has no code or entry points",
                        index);
    for (const flatbuffers::String *name : *e->entry_points())
      if (!name)
        return makeStatus(KILN_DATA_LOSS, "artifact's executable %u has an unnamed entry point",
                          index);
    ++index;
  }
  if (!a->constants())
    return kiln_status_ok();
  index = 0;
  for (const fb::Constant *k : *a->constants()) {
    if (!k || !k->data())
      return makeStatus(KILN_DATA_LOSS, "constant %u has no data", index);
    // Kernels read constants in place: their data must be aligned in the
    // file (kiln_module_load checks the buffer's own alignment).
    size_t at = static_cast<size_t>(k->data()->data() - bytes);
    if (at % 16 != 0)
      return makeStatus(KILN_DATA_LOSS, "constant %u's data at file offset %zu is not 16-byte "
                                        "aligned", index, at);
    ++index;
  }
  return kiln_status_ok();
}

/// The state variables (format 1.3): each inside the persistent region,
/// which lies inside the arena, apart from the others, with an initial
/// value of exactly its size or none (a fill).
static kiln_status_t checkState(const fb::Artifact *a, const fb::MemoryPlan *plan) {
  uint64_t persistent = plan->persistent_bytes();
  if (persistent > a->arena_bytes())
    return makeStatus(KILN_DATA_LOSS, "persistent region of %llu bytes exceeds the %llu-byte arena",
                      static_cast<unsigned long long>(persistent),
                      static_cast<unsigned long long>(a->arena_bytes()));
  flatbuffers::uoffset_t count = plan->state()->size();
  for (flatbuffers::uoffset_t i = 0; i < count; ++i) {
    const fb::StateVariable *v = plan->state()->Get(i);
    if (!v || !rangeInside(v->arena_offset(), v->bytes(), persistent))
      return makeStatus(KILN_DATA_LOSS,
                        "state variable %u [%llu, +%llu) lies outside the %llu-byte persistent "
                        "region",
                        i, v ? static_cast<unsigned long long>(v->arena_offset()) : 0ull,
                        v ? static_cast<unsigned long long>(v->bytes()) : 0ull,
                        static_cast<unsigned long long>(persistent));
    if (v->initial() && v->initial()->size() != v->bytes())
      return makeStatus(KILN_DATA_LOSS, "state variable %u has %u initial bytes for its %llu", i,
                        v->initial()->size(), static_cast<unsigned long long>(v->bytes()));
    for (flatbuffers::uoffset_t j = 0; j < i; ++j) {
      const fb::StateVariable *w = plan->state()->Get(j);
      if (v->arena_offset() < w->arena_offset() + w->bytes() &&
          w->arena_offset() < v->arena_offset() + v->bytes())
        return makeStatus(KILN_DATA_LOSS, "state variables %u and %u overlap", j, i);
    }
  }
  return kiln_status_ok();
}

kiln_status_t checkMemoryPlan(const fb::Artifact *a) {
  if (a->arena_bytes() > kMaxObjectBytes)
    return makeStatus(KILN_DATA_LOSS, "artifact asks for a %llu-byte arena, above the %llu bytes "
                                      "this process can address",
                      static_cast<unsigned long long>(a->arena_bytes()),
                      static_cast<unsigned long long>(kMaxObjectBytes));
  const fb::MemoryPlan *plan = a->memory_plan();
  if (plan && plan->state()) {
    kiln_status_t s = checkState(a, plan);
    if (s.code != KILN_OK)
      return s;
  }
  if (!plan || !plan->allocations())
    return kiln_status_ok();
  flatbuffers::uoffset_t count = plan->allocations()->size();
  for (flatbuffers::uoffset_t i = 0; i < count; ++i) {
    const fb::Allocation *al = plan->allocations()->Get(i);
    if (!rangeInside(al->offset(), al->bytes(), plan->arena_bytes()))
      return makeStatus(KILN_DATA_LOSS,
                        "memory plan allocation %u [%llu, +%llu) lies outside its %llu-byte arena",
                        i, static_cast<unsigned long long>(al->offset()),
                        static_cast<unsigned long long>(al->bytes()),
                        static_cast<unsigned long long>(plan->arena_bytes()));
    if (al->alias_of() < -1 || al->alias_of() >= static_cast<int64_t>(count))
      return makeStatus(KILN_DATA_LOSS, "memory plan allocation %u aliases allocation %lld of %u",
                        i, static_cast<long long>(al->alias_of()), count);
  }
  return kiln_status_ok();
}

/// Bytes of the buffer binding `b` of command `index` points into.
kiln_status_t bindingLimit(const fb::Artifact *a, const fb::Binding *b, uint32_t index,
                           uint64_t *limit) {
  const fb::IOTable *io = a->io();
  size_t bytes = 0;
  switch (b->kind()) {
  case fb::BindingKind::input:
    if (b->index() >= io->inputs()->size())
      return makeStatus(KILN_DATA_LOSS, "command %u binds input %u of %u", index, b->index(),
                        io->inputs()->size());
    kiln::runtime::tensorByteSize(io->inputs()->Get(b->index()), &bytes);
    break;
  case fb::BindingKind::output:
    if (b->index() >= io->outputs()->size())
      return makeStatus(KILN_DATA_LOSS, "command %u binds output %u of %u", index, b->index(),
                        io->outputs()->size());
    kiln::runtime::tensorByteSize(io->outputs()->Get(b->index()), &bytes);
    break;
  case fb::BindingKind::constant:
    if (!a->constants() || b->index() >= a->constants()->size())
      return makeStatus(KILN_DATA_LOSS, "command %u binds constant %u of %u", index, b->index(),
                        a->constants() ? a->constants()->size() : 0);
    bytes = a->constants()->Get(b->index())->data()->size();
    break;
  case fb::BindingKind::arena:
    *limit = a->arena_bytes();
    return kiln_status_ok();
  default:
    return makeStatus(KILN_DATA_LOSS, "command %u has a binding of unknown kind %u", index,
                      static_cast<unsigned>(b->kind()));
  }
  *limit = bytes;
  return kiln_status_ok();
}

kiln_status_t checkBindings(const fb::Artifact *a, const fb::Command *c, uint32_t index) {
  for (const fb::Binding *b : *c->bindings()) {
    if (!b)
      return makeStatus(KILN_DATA_LOSS, "command %u has a missing binding", index);
    uint64_t limit = 0;
    kiln_status_t s = bindingLimit(a, b, index, &limit);
    if (s.code != KILN_OK)
      return s;
    if (!rangeInside(b->offset(), b->length(), limit))
      return makeStatus(KILN_DATA_LOSS,
                        "command %u binding [%llu, +%llu) lies outside its %llu-byte buffer",
                        index, static_cast<unsigned long long>(b->offset()),
                        static_cast<unsigned long long>(b->length()),
                        static_cast<unsigned long long>(limit));
  }
  // Copies and fills write their last binding: never the caller's inputs or
  // the artifact's constants (the buffer is read only).
  if (c->kind() != fb::CommandKind::dispatch) {
    const fb::Binding *target = c->bindings()->Get(c->bindings()->size() - 1);
    if (target->kind() != fb::BindingKind::output && target->kind() != fb::BindingKind::arena)
      return makeStatus(KILN_DATA_LOSS,
                        "%s command %u writes into %s %u; only outputs and the arena are "
                        "writable",
                        fb::EnumNameCommandKind(c->kind()), index,
                        fb::EnumNameBindingKind(target->kind()), target->index());
  }
  return kiln_status_ok();
}

/// Workgroups of a dispatch: each count >= 1 and the product within 32 bits
/// (devices number workgroups with uint32_t).
kiln_status_t checkWorkgroups(const fb::Command *c, uint32_t index, uint64_t *total) {
  if (!c->workgroup_count() || c->workgroup_count()->size() != 3)
    return makeStatus(KILN_DATA_LOSS, "dispatch command %u has no (x, y, z) workgroup count",
                      index);
  uint64_t n = 1;
  bool fits = true;
  for (uint32_t d : *c->workgroup_count()) {
    if (d == 0)
      return makeStatus(KILN_DATA_LOSS, "dispatch command %u has a workgroup count of 0", index);
    fits = fits && checkedMul(n, d, &n);
  }
  if (!fits || n > UINT32_MAX)
    return makeStatus(KILN_DATA_LOSS,
                      "dispatch command %u has %u x %u x %u workgroups, more than %u", index,
                      c->workgroup_count()->Get(0), c->workgroup_count()->Get(1),
                      c->workgroup_count()->Get(2), UINT32_MAX);
  *total = n;
  return kiln_status_ok();
}

kiln_status_t checkDispatch(const fb::Artifact *a, const fb::Command *c, uint32_t index,
                            uint64_t *workgroups) {
  kiln_status_t s = checkWorkgroups(c, index, workgroups);
  if (s.code != KILN_OK)
    return s;
  if (c->executable() >= a->executables()->size())
    return makeStatus(KILN_DATA_LOSS, "command %u uses executable %u of %u", index,
                      c->executable(), a->executables()->size());
  const fb::Executable *e = a->executables()->Get(c->executable());
  if (c->entry_point() >= e->entry_points()->size())
    return makeStatus(KILN_DATA_LOSS, "command %u uses entry point %u of %u", index,
                      c->entry_point(), e->entry_points()->size());
  return kiln_status_ok();
}

/// The command list: kinds, bindings, dispatch indices, workgroups; counts
/// into `info`.
kiln_status_t checkCommands(const fb::Artifact *a, kiln_artifact_info_t *info) {
  uint32_t index = 0;
  size_t waveDispatches = 0, waveCommands = 0;
  uint64_t waveWorkgroups = 0;
  for (const fb::Command *c : *a->commands()) {
    if (!c)
      return makeStatus(KILN_DATA_LOSS, "command %u is missing", index);
    fb::CommandKind kind = c->kind();
    if (kind == fb::CommandKind::barrier) {
      info->wave_count += waveCommands > 0;
      waveDispatches = waveCommands = 0;
      waveWorkgroups = 0;
      ++index;
      continue;
    }
    if (kind != fb::CommandKind::dispatch && kind != fb::CommandKind::copy &&
        kind != fb::CommandKind::fill)
      return makeStatus(KILN_UNIMPLEMENTED,
                        "command %u has kind %u, which this runtime does not replay", index,
                        static_cast<unsigned>(kind));
    if (!c->bindings() || c->bindings()->size() == 0)
      return makeStatus(KILN_DATA_LOSS, "command %u has no bindings", index);
    if (kind == fb::CommandKind::copy &&
        (c->bindings()->size() != 2 ||
         c->bindings()->Get(0)->length() != c->bindings()->Get(1)->length()))
      return makeStatus(KILN_DATA_LOSS, "copy command %u needs two bindings of equal length",
                        index);
    if (kind == fb::CommandKind::fill && c->bindings()->size() != 1)
      return makeStatus(KILN_DATA_LOSS, "fill command %u needs one binding", index);
    kiln_status_t s = checkBindings(a, c, index);
    if (s.code != KILN_OK)
      return s;
    if (kind == fb::CommandKind::dispatch) {
      uint64_t workgroups = 0;
      s = checkDispatch(a, c, index, &workgroups);
      if (s.code != KILN_OK)
        return s;
      // Devices number a wave's workgroups together with uint32_t.
      if (!checkedAdd(waveWorkgroups, workgroups, &waveWorkgroups) ||
          waveWorkgroups > UINT32_MAX)
        return makeStatus(KILN_DATA_LOSS,
                          "the wave of command %u holds more than %u workgroups", index,
                          UINT32_MAX);
      ++info->dispatch_count;
      if (++waveDispatches > info->largest_wave)
        info->largest_wave = waveDispatches;
    }
    ++waveCommands;
    info->binding_count += c->bindings()->size();
    ++index;
  }
  info->wave_count += waveCommands > 0;
  return kiln_status_ok();
}

/// Every output is bound by commands for at least its whole size: the
/// compiler writes each output byte exactly once, so bindings (writes plus
/// any later reads) cover at least the output; an output that no command
/// writes would come back uninitialized (a damaged size, say). Outputs are
/// counted in blocks of 64 so the check needs no allocation.
kiln_status_t checkOutputsBound(const fb::Artifact *a) {
  const auto *outputs = a->io()->outputs();
  constexpr uint32_t kBlock = 64;
  for (uint32_t first = 0; first < outputs->size(); first += kBlock) {
    uint64_t bound[kBlock] = {};
    for (const fb::Command *c : *a->commands())
      if (c->kind() != fb::CommandKind::barrier)
        for (const fb::Binding *b : *c->bindings())
          if (b->kind() == fb::BindingKind::output && b->index() >= first &&
              b->index() - first < kBlock) {
            uint64_t &sum = bound[b->index() - first];
            if (!checkedAdd(sum, b->length(), &sum))
              sum = UINT64_MAX;
          }
    for (uint32_t k = first; k < outputs->size() && k - first < kBlock; ++k) {
      size_t bytes = 0;
      kiln::runtime::tensorByteSize(outputs->Get(k), &bytes);
      if (bound[k - first] < static_cast<uint64_t>(bytes))
        return makeStatus(KILN_DATA_LOSS,
                          "output %u is %llu bytes but the commands write at most %llu of it",
                          k, static_cast<unsigned long long>(bytes),
                          static_cast<unsigned long long>(bound[k - first]));
    }
  }
  return kiln_status_ok();
}

/// The size table: at most KILN_ARTIFACT_MAX_SECTIONS named sections whose
/// bytes add up to no more than the file.
kiln_status_t checkSections(const fb::Artifact *a, size_t fileBytes,
                            kiln_artifact_info_t *info) {
  if (!a->sections())
    return kiln_status_ok();
  if (a->sections()->size() > KILN_ARTIFACT_MAX_SECTIONS)
    return makeStatus(KILN_DATA_LOSS, "artifact lists %u sections, at most %d are read",
                      a->sections()->size(), KILN_ARTIFACT_MAX_SECTIONS);
  uint64_t sum = 0;
  for (const fb::SectionSize *s : *a->sections()) {
    if (!s || !s->name())
      return makeStatus(KILN_DATA_LOSS, "artifact's section %zu has no name",
                        info->section_count);
    if (!checkedAdd(sum, s->bytes(), &sum) || sum > fileBytes)
      return makeStatus(KILN_DATA_LOSS,
                        "artifact's section sizes exceed its %zu bytes (section '%s', %llu bytes)",
                        fileBytes, s->name()->c_str(),
                        static_cast<unsigned long long>(s->bytes()));
    info->sections[info->section_count++] = {s->name()->c_str(), s->bytes()};
  }
  return kiln_status_ok();
}

void describe(const fb::Artifact *a, size_t size, kiln_artifact_info_t *info) {
  info->format_major = a->format_major();
  info->format_minor = a->format_minor();
  info->file_bytes = size;
  info->producer = stringOr(a->producer(), "");
  info->source = stringOr(a->source(), "");
  info->input_count = a->io()->inputs()->size();
  info->output_count = a->io()->outputs()->size();
  info->constant_count = a->constants() ? a->constants()->size() : 0;
  info->executable_count = a->executables()->size();
  const fb::Executable *first =
      info->executable_count ? a->executables()->Get(0) : nullptr;
  info->target_triple = first ? stringOr(first->target_triple(), "") : "";
  info->target_cpu = first ? stringOr(first->target_cpu(), "") : "";
  info->command_count = a->commands()->size();
  info->arena_bytes = a->arena_bytes();
  info->lower_bound_bytes = a->memory_plan() ? a->memory_plan()->lower_bound_bytes() : 0;
  const fb::Reflection *r = a->reflection();
  if (r && r->plan_json()) {
    info->reflection_json = r->plan_json()->c_str();
    info->reflection_json_bytes = r->plan_json()->size();
  }
}

} // namespace

extern "C" int kiln_artifact_recognize(const void *data, size_t size) {
  return data && size >= 8 && memcmp(static_cast<const uint8_t *>(data) + 4, "KILN", 4) == 0;
}

extern "C" kiln_status_t kiln_artifact_seal(void *data, size_t size) {
  if (!data || size < KILN_ARTIFACT_TRAILER_BYTES)
    return makeStatus(KILN_INVALID_ARGUMENT,
                      "kiln_artifact_seal: %zu bytes, the trailer alone takes %d", size,
                      KILN_ARTIFACT_TRAILER_BYTES);
  uint8_t *bytes = static_cast<uint8_t *>(data);
  size_t body = size - KILN_ARTIFACT_TRAILER_BYTES;
  uint32_t crc = kiln::runtime::crc32(bytes, body);
  memcpy(bytes + body, "KSUM", 4);
  for (int i = 0; i < 4; ++i)
    bytes[body + 4 + i] = static_cast<uint8_t>(crc >> (8 * i));
  return kiln_status_ok();
}

extern "C" kiln_status_t kiln_artifact_verify(const void *data, size_t size,
                                              kiln_artifact_info_t *out_info) {
  if (!data && size)
    return makeStatus(KILN_INVALID_ARGUMENT, "kiln_artifact_verify: null data");
  const uint8_t *bytes = static_cast<const uint8_t *>(data);
  kiln_status_t s = checkEnvelope(bytes, size);
  if (s.code != KILN_OK)
    return s;
  s = checkStructure(bytes, size - KILN_ARTIFACT_TRAILER_BYTES);
  if (s.code != KILN_OK)
    return s;
  const fb::Artifact *a = fb::GetArtifact(bytes);
  kiln_artifact_info_t info;
  memset(&info, 0, sizeof(info));
  if ((s = checkSignature(a->io())).code != KILN_OK ||
      (s = checkConstantsAndCode(a, bytes)).code != KILN_OK ||
      (s = checkMemoryPlan(a)).code != KILN_OK || (s = checkCommands(a, &info)).code != KILN_OK ||
      (s = checkOutputsBound(a)).code != KILN_OK ||
      (s = checkSections(a, size, &info)).code != KILN_OK)
    return s;
  describe(a, size, &info);
  if (out_info)
    *out_info = info;
  return kiln_status_ok();
}
