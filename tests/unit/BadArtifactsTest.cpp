//===- BadArtifactsTest.cpp - The generator of tests/data/bad/*.kiln -------===//
//
// The broken artifacts in tests/data/bad/ are hand-built here
// (tests/support/ArtifactFixtures.h: FlatBufferBuilder, no compiler), so
// they are reproducible and do not drift with the compiler. The test checks
// that each committed file equals its generator's bytes and that the gate
// refuses it with the expected message. To write the files again:
//   KILN_WRITE_BAD_ARTIFACTS=1 build/tests/unit/kiln_unit_tests --gtest_filter='BadArtifacts.*'
// tests/data/bad/README.md describes each; tests/model/CliTest.cpp feeds
// every file there to `kiln compile`, `kiln run` and `kiln inspect`.
//
//===----------------------------------------------------------------------===//
#include "ArtifactFixtures.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

struct BadArtifact {
  std::string file;
  std::vector<uint8_t> bytes;
  /// What the gate says about it (part of the message); empty for the one
  /// that passes the gate and fails later (its code does not load).
  std::string message;
};

std::vector<uint8_t> gateCase(const std::string &name) {
  for (const kiln::test::GateCase &c : kiln::test::gateCases())
    if (c.name == name)
      return kiln::test::buildArtifact(c.artifact);
  ADD_FAILURE() << "no gate case " << name;
  return {};
}

std::vector<BadArtifact> badArtifacts() {
  std::vector<uint8_t> good = kiln::test::buildArtifact({});
  std::vector<uint8_t> flipped = good;
  flipped[good.size() / 2] ^= 0x10; // inside the flatbuffer; trailer kept
  std::string text = "this is a text file named like an artifact\n";
  return {
      {"truncated.kiln", std::vector<uint8_t>(good.begin(), good.begin() + good.size() / 2),
       "no checksum trailer"},
      {"bad_checksum.kiln", flipped, "artifact is corrupted: checksum 0x"},
      {"wrong_version.kiln", gateCase("wrong_major_version"), "artifact format 2.0"},
      {"binding_past_buffer.kiln", gateCase("binding_past_buffer"),
       "command 0 binding [8, +16) lies outside its 16-byte buffer"},
      {"binding_offset_wraps.kiln", gateCase("binding_offset_wraps"),
       "binding [18446744073709551608, +16) lies outside its 16-byte buffer"},
      {"workgroups_overflow.kiln", gateCase("workgroups_above_32_bits"),
       "65536 x 65536 x 2 workgroups"},
      {"element_count_overflow.kiln", gateCase("element_count_overflows"),
       "its byte size overflows 64 bits"},
      {"arena_too_large.kiln", gateCase("arena_above_address_space"),
       "asks for a 9223372036854775808-byte arena"},
      {"quantization_negative_scale.kiln", gateCase("quantization_negative_scale"),
       "input 0 'x' has scale -0.5 at channel 0; scales are finite and positive"},
      {"not_an_artifact.kiln", std::vector<uint8_t>(text.begin(), text.end()),
       "not a Kiln artifact"},
      {"empty.kiln", {}, "not a Kiln artifact: 0 bytes"},
      {"placeholder_code.kiln", good, ""},
  };
}

std::vector<uint8_t> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

TEST(BadArtifacts, CommittedFilesEqualTheirGenerator) {
  const bool write = std::getenv("KILN_WRITE_BAD_ARTIFACTS") != nullptr;
  for (const BadArtifact &bad : badArtifacts()) {
    std::string path = std::string(KILN_TEST_DATA_DIR) + "/bad/" + bad.file;
    if (write) {
      std::ofstream(path, std::ios::binary)
          .write(reinterpret_cast<const char *>(bad.bytes.data()),
                 static_cast<std::streamsize>(bad.bytes.size()));
    }
    EXPECT_EQ(readFile(path), bad.bytes)
        << path << " differs from its generator; KILN_WRITE_BAD_ARTIFACTS=1 rewrites it";
  }
}

TEST(BadArtifacts, TheGateRefusesEachWithItsReason) {
  for (const BadArtifact &bad : badArtifacts()) {
    kiln_status_t s = kiln_artifact_verify(bad.bytes.data(), bad.bytes.size(), nullptr);
    EXPECT_EQ(s.code == KILN_OK, bad.message.empty()) << bad.file << ": " << s.message;
    EXPECT_NE(std::string(s.message).find(bad.message), std::string::npos)
        << bad.file << ": '" << s.message << "' lacks '" << bad.message << "'";
  }
}

} // namespace
