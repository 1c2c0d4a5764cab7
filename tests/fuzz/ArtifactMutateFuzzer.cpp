//===- ArtifactMutateFuzzer.cpp - Fuzz target: mutated valid artifacts ----===//
//
// Structure-aware: LLVMFuzzerCustomMutator takes a (valid) artifact from the
// corpus, mutates it and reseals its checksum trailer with
// kiln_artifact_seal, so every mutant gets past the checksum to the
// flatbuffer verifier, the version check and the command-list checks of the
// artifact gate. Two kinds of mutation:
//  - field mutations (2 in 3, when the flatbuffer verifies): a walk of the
//    buffer with flatbuffers' reflection API (the schema is embedded by
//    `flatc --bfbs-gen-embed`) collects every scalar present in place
//    (binding offsets and lengths, indices, kinds, workgroup counts, shapes,
//    arena sizes, vector lengths), and 1-3 of them get boundary values (0,
//    1, all ones, sign bits, +-small, x2, powers of two, another field's
//    value). The buffer stays a well-formed flatbuffer, so the mutation
//    reaches the checks after the verifier.
//  - byte mutations: libFuzzer's own (LLVMFuzzerMutate) on the bytes before
//    the trailer.
// The body under test is the same as ArtifactLoadFuzzer's (ArtifactFuzzing.h).
//
//===----------------------------------------------------------------------===//
#include "ArtifactFuzzing.h"
#include "FuzzSupport.h"

#include "kiln/runtime.h"
#include "kiln_artifact_bfbs_generated.h"
#include "kiln_artifact_generated.h"

#include "flatbuffers/reflection.h"

#include <cstring>
#include <random>
#include <vector>

// libFuzzer's byte mutator (weak: the replay build has none and never mutates).
extern "C" __attribute__((weak)) size_t LLVMFuzzerMutate(uint8_t *data, size_t size,
                                                          size_t maxSize);

namespace {

namespace refl = reflection;

/// A scalar of the artifact, in place.
struct Slot {
  uint8_t *address;
  size_t bytes;
};

/// Most slots collected per walk (large command lists are sampled by the
/// walk's order: the first ones).
constexpr size_t kMaxSlots = 8192;

const refl::Schema &artifactSchema() {
  static const refl::Schema *schema =
      refl::GetSchema(kiln::artifact::ArtifactBinarySchema::data());
  return *schema;
}

const refl::Object &objectOf(const refl::Type &type) {
  return *artifactSchema().objects()->Get(type.index());
}

void collectStruct(const refl::Object &object, uint8_t *base, std::vector<Slot> &out) {
  for (const refl::Field *field : *object.fields()) {
    refl::BaseType t = field->type()->base_type();
    if (flatbuffers::IsScalar(t))
      out.push_back({base + field->offset(), flatbuffers::GetTypeSize(t)});
    else if (t == refl::Obj)
      collectStruct(objectOf(*field->type()), base + field->offset(), out);
  }
}

void collectTable(const refl::Object &object, flatbuffers::Table *table,
                  std::vector<Slot> &out) {
  for (const refl::Field *field : *object.fields()) {
    if (out.size() >= kMaxSlots)
      return;
    const refl::Type &type = *field->type();
    uint8_t *address = table->GetAddressOf(field->offset());
    if (!address)
      continue; // absent (default value): nothing in place to change
    refl::BaseType t = type.base_type();
    if (flatbuffers::IsScalar(t)) {
      out.push_back({address, flatbuffers::GetTypeSize(t)});
    } else if (t == refl::Obj) {
      if (objectOf(type).is_struct())
        collectStruct(objectOf(type), address, out);
      else
        collectTable(objectOf(type), flatbuffers::GetFieldT(*table, *field), out);
    } else if (t == refl::Vector) {
      flatbuffers::VectorOfAny *vector = flatbuffers::GetFieldAnyV(*table, *field);
      out.push_back({reinterpret_cast<uint8_t *>(vector), sizeof(flatbuffers::uoffset_t)});
      refl::BaseType e = type.element();
      if (e == refl::UByte || e == refl::Byte)
        continue; // code and constant data: byte mutations cover them
      for (flatbuffers::uoffset_t i = 0; i < vector->size() && out.size() < kMaxSlots; ++i) {
        if (flatbuffers::IsScalar(e)) {
          size_t size = flatbuffers::GetTypeSize(e);
          out.push_back({vector->Data() + i * size, size});
        } else if (e == refl::Obj && objectOf(type).is_struct()) {
          collectStruct(objectOf(type), vector->Data() + i * objectOf(type).bytesize(), out);
        } else if (e == refl::Obj) {
          // The walk owns the (mutable) buffer; the reflection API hands out const.
          collectTable(objectOf(type),
                       const_cast<flatbuffers::Table *>(
                           flatbuffers::GetAnyVectorElemPointer<const flatbuffers::Table>(vector, i)),
                       out);
        }
      }
    }
  }
}

uint64_t readSlot(const Slot &slot) {
  uint64_t value = 0;
  std::memcpy(&value, slot.address, slot.bytes); // little-endian host
  return value;
}

/// A boundary value for `slot` (written back truncated to its width).
uint64_t interestingValue(const Slot &slot, const std::vector<Slot> &slots, std::minstd_rand &rng) {
  unsigned bits = static_cast<unsigned>(slot.bytes * 8);
  uint64_t old = readSlot(slot);
  uint64_t signBit = uint64_t(1) << (bits - 1);
  switch (rng() % 10) {
  case 0: return 0;
  case 1: return 1;
  case 2: return ~uint64_t(0);
  case 3: return signBit - 1;
  case 4: return signBit;
  case 5: return old + 1 + rng() % 16;
  case 6: return old - 1 - rng() % 16;
  case 7: return old * 2;
  case 8: return uint64_t(1) << (rng() % bits);
  default: return readSlot(slots[rng() % slots.size()]);
  }
}

/// Mutates 1-3 scalars of the verified artifact body in place; false when
/// the body is not a verified artifact flatbuffer.
bool mutateFields(uint8_t *body, size_t size, std::minstd_rand &rng) {
  flatbuffers::Verifier verifier(body, size);
  if (!kiln::artifact::VerifyArtifactBuffer(verifier))
    return false;
  std::vector<Slot> slots;
  collectTable(*artifactSchema().root_table(), flatbuffers::GetMutableRoot<flatbuffers::Table>(body),
               slots);
  if (slots.empty())
    return false;
  for (unsigned n = 1 + rng() % 3; n > 0; --n) {
    const Slot &slot = slots[rng() % slots.size()];
    uint64_t value = interestingValue(slot, slots, rng);
    std::memcpy(slot.address, &value, slot.bytes);
  }
  return true;
}

} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t maxSize,
                                          unsigned int seed) {
  constexpr size_t trailer = KILN_ARTIFACT_TRAILER_BYTES;
  if (maxSize < trailer + 16)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::minstd_rand rng(seed);
  size_t body = size >= trailer && std::memcmp(data + size - trailer, "KSUM", 4) == 0
                    ? size - trailer
                    : size;
  if (rng() % 3 == 0 || !mutateFields(data, body, rng))
    body = LLVMFuzzerMutate(data, body, maxSize - trailer);
  kiln_artifact_seal(data, body + trailer);
  return body + trailer;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln::fuzz::fuzzArtifact(data, size);
  return 0;
}
