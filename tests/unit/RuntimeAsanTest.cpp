//===- RuntimeAsanTest.cpp - Damaged artifacts under AddressSanitizer -----===//
//
// Built with -fsanitize=address against an instrumented copy of the runtime
// (tests/unit/CMakeLists.txt): every section of a real artifact is damaged
// in turn, the artifact is truncated at many lengths, loaded with a too
// small arena and run; the runtime must report an error and never read or
// write outside the buffers it was given (ASan aborts the test if it does).
//
//===----------------------------------------------------------------------===//
#include "ArtifactFixtures.h"
#include "kiln/Artifact.h"
#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

/// Compiles tests/data/ops/<name>/model.tflite with the kiln CLI.
std::vector<uint8_t> compile(const std::string &name) {
  std::string out = "/tmp/kiln-asan-" + name + ".kiln";
  std::string cmd = std::string(KILN_BINARY_PATH) + " compile " + KILN_TEST_DATA_DIR + "/ops/" +
                    name + "/model.tflite -o " + out + " > /dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(out, std::ios::binary);
  std::vector<uint8_t> bytes(std::istreambuf_iterator<char>(in), {});
  std::remove(out.c_str());
  return bytes;
}

/// An exactly-sized, 64-byte aligned heap copy (ASan sees any overread).
struct Exact {
  explicit Exact(const std::vector<uint8_t> &bytes) : size(bytes.size()) {
    data = static_cast<uint8_t *>(std::aligned_alloc(64, (size + 63) / 64 * 64));
    if (size) // memcpy from an empty vector's null data() is undefined
      std::memcpy(data, bytes.data(), size);
  }
  ~Exact() { std::free(data); }
  uint8_t *data;
  size_t size;
};

kiln_status_t load(const std::vector<uint8_t> &bytes, kiln_module_t **m) {
  Exact copy(bytes);
  kiln_status_t s = kiln_module_load(copy.data, copy.size, m);
  if (s.code == KILN_OK) {
    kiln_module_release(*m);
    *m = nullptr;
  }
  return s;
}

TEST(RuntimeAsan, EachDamagedSectionIsRejected) {
  std::vector<uint8_t> bytes = compile("chain_attention");
  ASSERT_FALSE(bytes.empty());
  auto sizes = kiln::readSectionSizes(bytes, "chain_attention.kiln");
  ASSERT_TRUE(static_cast<bool>(sizes)) << llvm::toString(sizes.takeError());
  int damaged = 0;
  for (size_t i = 0; i < sizes->sections.size(); ++i) {
    const auto &[name, length] = sizes->sections[i];
    if (length == 0)
      continue;
    for (int64_t at : {sizes->offsets[i], sizes->offsets[i] + length / 2,
                       sizes->offsets[i] + length - 1}) {
      std::vector<uint8_t> bad = bytes;
      bad[at] ^= 0xA5;
      kiln_module_t *m = nullptr;
      kiln_status_t s = load(bad, &m);
      EXPECT_EQ(s.code, KILN_DATA_LOSS) << name << " byte " << at << ": " << s.message;
      ++damaged;
    }
  }
  EXPECT_GE(damaged, 18); // io, commands, memory_plan, executables, device, constants, reflection
}

TEST(RuntimeAsan, TruncationsAreRejected) {
  std::vector<uint8_t> bytes = compile("chain_attention");
  for (size_t cut = 0; cut < bytes.size(); cut += 1 + bytes.size() / 200) {
    kiln_module_t *m = nullptr;
    kiln_status_t s = load(std::vector<uint8_t>(bytes.begin(), bytes.begin() + cut), &m);
    EXPECT_NE(s.code, KILN_OK) << cut;
  }
}

TEST(RuntimeAsan, SmallArenaIsRejectedAndRunsStayInBounds) {
  std::vector<uint8_t> bytes = compile("chain_attention");
  Exact copy(bytes);
  kiln_module_t *m = nullptr;
  kiln_status_t s = kiln_module_load(copy.data, copy.size, &m);
  ASSERT_EQ(s.code, KILN_OK) << s.message;
  size_t arena = kiln_module_arena_bytes(m);
  ASSERT_GT(arena, 0u);
  std::vector<std::vector<float>> ins, outs;
  std::vector<const void *> inPtrs;
  std::vector<void *> outPtrs;
  std::vector<size_t> inSizes, outSizes;
  for (size_t i = 0; i < kiln_module_input_count(m); ++i) {
    kiln_tensor_info_t info;
    kiln_module_input_info(m, i, &info);
    ins.emplace_back(info.byte_size / 4, 0.5f);
    inPtrs.push_back(ins.back().data());
    inSizes.push_back(info.byte_size);
  }
  for (size_t i = 0; i < kiln_module_output_count(m); ++i) {
    kiln_tensor_info_t info;
    kiln_module_output_info(m, i, &info);
    outs.emplace_back(info.byte_size / 4, 0.0f);
    outPtrs.push_back(outs.back().data());
    outSizes.push_back(info.byte_size);
  }
  // Exactly-sized heap arena: any write past it is an ASan error.
  uint8_t *small = static_cast<uint8_t *>(std::aligned_alloc(64, 64));
  kiln_invocation_t inv{inPtrs.data(),   inSizes.data(), inPtrs.size(), outPtrs.data(),
                        outSizes.data(), outPtrs.size(), small,         64,
                        nullptr,         nullptr,        nullptr,       nullptr};
  s = kiln_module_invoke(m, &inv);
  EXPECT_EQ(s.code, KILN_RESOURCE_EXHAUSTED);
  char expected[96];
  std::snprintf(expected, sizeof(expected), "arena needs %zu bytes, 64 given", arena);
  EXPECT_STREQ(s.message, expected);
  std::free(small);
  uint8_t *exact = static_cast<uint8_t *>(std::aligned_alloc(64, (arena + 63) / 64 * 64));
  inv.arena = exact;
  inv.arena_size = arena;
  s = kiln_module_invoke(m, &inv);
  EXPECT_EQ(s.code, KILN_OK) << s.message;
  std::free(exact);
  kiln_module_release(m);
}

TEST(RuntimeAsan, EveryGateCaseIsRejectedInBounds) {
  // Exactly-sized copies: a check that read past the artifact would be an
  // ASan error, not a status.
  for (const kiln::test::GateCase &c : kiln::test::gateCases()) {
    kiln_module_t *m = nullptr;
    kiln_status_t s = load(kiln::test::buildArtifact(c.artifact), &m);
    EXPECT_EQ(s.code, c.code) << c.name << ": " << s.message;
  }
}

TEST(RuntimeAsan, ResealedByteFlipsStayInBounds) {
  // A small structure-aware fuzz: flip one byte of the flatbuffer, reseal
  // the checksum so the flip reaches the flatbuffer and command-list
  // checks, verify. Whatever the outcome, nothing is read out of bounds.
  std::vector<uint8_t> bytes = compile("chain_attention");
  ASSERT_FALSE(bytes.empty());
  size_t body = bytes.size() - KILN_ARTIFACT_TRAILER_BYTES, refused = 0, tried = 0;
  for (size_t at = 0; at < body; at += 1 + body / 3000) {
    for (uint8_t mask : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> bad = bytes;
      bad[at] ^= mask;
      kiln::test::reseal(bad);
      Exact copy(bad);
      kiln_artifact_info_t info;
      kiln_status_t s = kiln_artifact_verify(copy.data, copy.size, &info);
      refused += s.code != KILN_OK;
      ++tried;
    }
  }
  // Most flips land in code or constant bytes, which no check can judge;
  // the rest must be caught.
  EXPECT_GT(refused, 0u) << tried << " flips";
}

} // namespace
