//===- RuntimeTest.cpp - Runtime C API: loading, checks, invoke -----------===//
#include "kiln/Artifact.h"
#include "kiln/Compiler.h"
#include "kiln/runtime.h"
#include "kiln_artifact_generated.h"


#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

namespace fb = kiln::artifact;

namespace {

/// A 64-byte aligned copy of `bytes` (the runtime reads constants in place).
struct Aligned {
  explicit Aligned(const std::vector<uint8_t> &bytes) : size(bytes.size()) {
    data = static_cast<uint8_t *>(std::aligned_alloc(64, (size + 63) / 64 * 64 + 64));
    std::memcpy(data, bytes.data(), size);
  }
  ~Aligned() { std::free(data); }
  uint8_t *data;
  size_t size;
};

std::vector<uint8_t> compileAddScale() {
  auto artifact = kiln::compileArtifact(std::string(KILN_TEST_DATA_DIR) + "/mlir/add_scale.mlir",
                                        kiln::CompileOptions());
  EXPECT_TRUE(static_cast<bool>(artifact)) << llvm::toString(artifact.takeError());
  return artifact ? *artifact : std::vector<uint8_t>();
}

/// Appends the "KSUM" + CRC-32 trailer every artifact ends with.
std::vector<uint8_t> withTrailer(std::vector<uint8_t> bytes) {
  kiln::appendChecksumTrailer(bytes);
  return bytes;
}

/// A hand-built artifact with one dispatch binding [offset, +length) of input 0.
std::vector<uint8_t> handBuilt(uint32_t major, uint64_t offset, uint64_t length) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<int64_t> shape = {4};
  std::vector<flatbuffers::Offset<fb::TensorDesc>> ins = {
      fb::CreateTensorDescDirect(fbb, "x", fb::ElementType::f32, &shape)};
  std::vector<flatbuffers::Offset<fb::TensorDesc>> outs = {
      fb::CreateTensorDescDirect(fbb, "y", fb::ElementType::f32, &shape)};
  auto io = fb::CreateIOTableDirect(fbb, &ins, &outs);
  std::vector<flatbuffers::Offset<fb::Binding>> bindings = {
      fb::CreateBinding(fbb, fb::BindingKind::input, 0, offset, length)};
  std::vector<uint32_t> wg = {1, 1, 1};
  std::vector<flatbuffers::Offset<fb::Command>> commands = {
      fb::CreateCommandDirect(fbb, fb::CommandKind::dispatch, 0, 0, &wg, &bindings)};
  std::vector<uint8_t> code(64, 0);
  std::vector<std::string> entries = {"e"};
  auto entryOffsets = fbb.CreateVectorOfStrings(entries);
  std::vector<flatbuffers::Offset<fb::Executable>> exes = {fb::CreateExecutable(
      fbb, fb::ExecutableFormat::elf_shared_object, fbb.CreateString("x86_64"),
      fbb.CreateString("generic"), entryOffsets, fbb.CreateVector(code))};
  auto root = fb::CreateArtifactDirect(fbb, major, 0, "test", "test", io, &commands, 0, &exes);
  fb::FinishArtifactBuffer(fbb, root);
  return withTrailer(
      std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()));
}

TEST(Runtime, RejectsNonArtifacts) {
  std::vector<uint8_t> junk(100, 0x5a);
  Aligned a(junk);
  kiln_module_t *m = nullptr;
  kiln_status_t s = kiln_module_load(a.data, a.size, &m);
  EXPECT_EQ(s.code, KILN_DATA_LOSS);
  EXPECT_NE(std::string(s.message).find("not a Kiln artifact"), std::string::npos) << s.message;
  EXPECT_EQ(m, nullptr);
}

TEST(Runtime, NamesBothVersionsOnMismatch) {
  Aligned a(handBuilt(2, 0, 16));
  kiln_module_t *m = nullptr;
  kiln_status_t s = kiln_module_load(a.data, a.size, &m);
  EXPECT_EQ(s.code, KILN_INCOMPATIBLE);
  EXPECT_NE(std::string(s.message).find("artifact format 2.0"), std::string::npos) << s.message;
  EXPECT_NE(std::string(s.message).find("reads 1.x"), std::string::npos) << s.message;
}

TEST(Runtime, RejectsBindingOutsideItsBuffer) {
  // Input 0 is 4 x f32 = 16 bytes; [8, +16) runs 8 bytes past its end.
  Aligned a(handBuilt(1, 8, 16));
  kiln_module_t *m = nullptr;
  kiln_status_t s = kiln_module_load(a.data, a.size, &m);
  EXPECT_EQ(s.code, KILN_DATA_LOSS);
  EXPECT_NE(std::string(s.message).find("outside its 16-byte buffer"), std::string::npos) << s.message;
}

TEST(Runtime, ChecksumCatchesAnyFlippedByte) {
  std::vector<uint8_t> bytes = compileAddScale();
  ASSERT_FALSE(bytes.empty());
  for (size_t at = 0; at < bytes.size(); at += std::max<size_t>(1, bytes.size() / 61)) {
    std::vector<uint8_t> damaged = bytes;
    damaged[at] ^= 0x5a;
    Aligned a(damaged);
    kiln_module_t *m = nullptr;
    kiln_status_t s = kiln_module_load(a.data, a.size, &m);
    EXPECT_EQ(s.code, KILN_DATA_LOSS) << "byte " << at;
    EXPECT_EQ(m, nullptr);
  }
}

TEST(Runtime, EveryTruncationFailsCleanly) {
  std::vector<uint8_t> bytes = compileAddScale();
  ASSERT_FALSE(bytes.empty());
  for (size_t cut = 0; cut < bytes.size(); cut += std::max<size_t>(1, bytes.size() / 97)) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + cut);
    Aligned a(prefix);
    kiln_module_t *m = nullptr;
    kiln_status_t s = kiln_module_load(a.data, a.size, &m);
    EXPECT_NE(s.code, KILN_OK) << "prefix of " << cut << " bytes loaded";
    EXPECT_EQ(m, nullptr);
    kiln_module_release(m);
  }
}

TEST(Runtime, InvokeChecksSizesAndComputes) {
  std::vector<uint8_t> bytes = compileAddScale();
  Aligned a(bytes);
  kiln_module_t *m = nullptr;
  kiln_status_t s = kiln_module_load(a.data, a.size, &m);
  ASSERT_EQ(s.code, KILN_OK) << s.message;
  std::unique_ptr<kiln_module_t, void (*)(kiln_module_t *)> guard(m, kiln_module_release);

  ASSERT_EQ(kiln_module_input_count(m), 2u);
  ASSERT_EQ(kiln_module_output_count(m), 1u);
  kiln_tensor_info_t info;
  ASSERT_EQ(kiln_module_input_info(m, 1, &info).code, KILN_OK);
  EXPECT_STREQ(info.name, "b");
  EXPECT_EQ(info.rank, 2u);
  EXPECT_EQ(info.shape[0], 2);
  EXPECT_EQ(info.shape[1], 3);
  EXPECT_EQ(info.byte_size, 24u);
  EXPECT_EQ(kiln_module_input_info(m, 2, &info).code, KILN_INVALID_ARGUMENT);

  float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {10, 20, 30, 40, 50, 60}, out[6] = {};
  const void *ins[2] = {x, y};
  size_t inSizes[2] = {24, 24};
  void *outs[1] = {out};
  size_t outSizes[1] = {24};
  kiln_invocation_t inv{};
  inv.inputs = ins;
  inv.input_sizes = inSizes;
  inv.input_count = 2;
  inv.outputs = outs;
  inv.output_sizes = outSizes;
  inv.output_count = 1;
  s = kiln_module_invoke(m, &inv);
  ASSERT_EQ(s.code, KILN_OK) << s.message;
  for (int i = 0; i < 6; ++i)
    EXPECT_FLOAT_EQ(out[i], (x[i] + y[i]) * 0.5f);

  size_t shortSizes[2] = {24, 20};
  inv.input_sizes = shortSizes;
  s = kiln_module_invoke(m, &inv);
  EXPECT_EQ(s.code, KILN_INVALID_ARGUMENT);
  EXPECT_STREQ(s.message, "input 1 'b' needs 24 bytes, 20 given");
  inv.input_sizes = inSizes;
  inv.input_count = 1;
  s = kiln_module_invoke(m, &inv);
  EXPECT_STREQ(s.message, "the model takes 2 inputs, 1 given");
}

} // namespace
