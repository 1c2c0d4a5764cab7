//===- ShapeFixTest.cpp - --fix-shape with several dynamic dimensions -----===//
//
// `kiln` on small hand-built models (tests/support/ShapeFixModels.h):
//   - one input with two dynamic dimensions [-1,-1] (batch, samples), fixed
//     as 1x16000 and as 2x8000: each dimension keeps its own size through
//     MUL, SUM, RESHAPE [-1,2000] and FULLY_CONNECTED (shape inference);
//   - two inputs [-1,4] sharing a batch, one --fix-shape each;
//   - sizes an operator rejects: one error line naming the operator and why;
//   - the --fix-shape an error suggests compiles.
// Expected values are computed here from the model's definition (double
// loops and the closed forms in the comments), not taken from Kiln.
//
//===----------------------------------------------------------------------===//
#include "ShapeFixModels.h"
#include "TestSupport.h"

#include "kiln/Npy.h"

#include <cstring>
#include <regex>

using namespace kiln::test;

namespace {

/// A float32 .npy of `shape` whose flat element k is (k % 10) * 0.1.
std::string writeRamp(const TempDir &tmp, const std::string &name, std::vector<int64_t> shape) {
  kiln::NpyArray a;
  a.shape = shape;
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  a.data.resize(n * 4);
  for (int64_t k = 0; k < n; ++k) {
    float v = static_cast<float>(k % 10) * 0.1f;
    std::memcpy(a.data.data() + 4 * k, &v, 4);
  }
  std::string path = tmp.file(name);
  EXPECT_FALSE(static_cast<bool>(kiln::writeNpyFile(path, a)));
  return path;
}

const float *floats(const kiln::NpyArray &a) { return reinterpret_cast<const float *>(a.data.data()); }

/// Runs the audio model fixed to batch x samples on the ramp input and checks
/// both outputs against the model's arithmetic.
void checkAudio(const TempDir &tmp, const std::string &model, int64_t batch, int64_t samples) {
  std::string shape = std::to_string(batch) + "x" + std::to_string(samples);
  std::string in = writeRamp(tmp, "audio_" + shape + ".npy", {batch, samples});
  std::string sums = tmp.file("sums_" + shape + ".npy"), features = tmp.file("features_" + shape + ".npy");
  CommandResult r = runCommand(kilnBinary() + " run " + shellQuote(model) + " --fix-shape=audio=" + shape +
                               " --input=@" + shellQuote(in) + " --output=@" + shellQuote(sums) +
                               " --output=@" + shellQuote(features));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  // scaled = 2 * x, x[k] = (k % 10) / 10 over the flat index k.
  std::vector<double> x(batch * samples);
  for (size_t k = 0; k < x.size(); ++k)
    x[k] = 2.0 * static_cast<double>(k % 10) * 0.1;
  kiln::NpyArray s = loadNpy(sums);
  ASSERT_EQ(s.shape, (std::vector<int64_t>{batch}));
  for (int64_t b = 0; b < batch; ++b) {
    double want = 0;
    for (int64_t i = 0; i < samples; ++i)
      want += x[b * samples + i];
    // Each run of 10 samples adds 2 * 4.5 = 9: samples / 10 * 9.
    EXPECT_NEAR(want, samples / 10 * 9.0, 1e-6);
    EXPECT_NEAR(floats(s)[b], want, 1e-3 * want) << "sum of batch " << b;
  }
  // frames = [-1, 2000] rows of the flat samples; features = frames x W^T + bias.
  int64_t rows = batch * samples / 2000;
  kiln::NpyArray f = loadNpy(features);
  ASSERT_EQ(f.shape, (std::vector<int64_t>{rows, 3}));
  for (int64_t r0 = 0; r0 < rows; ++r0) {
    double want[3] = {1, 2, 3};
    for (int64_t j = 0; j < 2000; ++j) {
      double v = x[r0 * 2000 + j];
      want[0] += v;
      want[1] += 0.5 * v;
      want[2] += (j % 2 ? -1.0 : 1.0) * v;
    }
    // Closed forms: 200 runs of 10 per row: 1800 + 1, 900 + 2, -200 + 3.
    EXPECT_NEAR(want[0], 1801, 1e-6);
    EXPECT_NEAR(want[1], 902, 1e-6);
    EXPECT_NEAR(want[2], -197, 1e-6);
    for (int u = 0; u < 3; ++u)
      EXPECT_NEAR(floats(f)[r0 * 3 + u], want[u], 1e-2) << "row " << r0 << " unit " << u;
  }
}

/// Every --fix-shape=... the message suggests.
std::vector<std::string> suggestedFixes(const std::string &message) {
  std::vector<std::string> fixes;
  std::regex re("--fix-shape=(\\S+)");
  for (auto it = std::sregex_iterator(message.begin(), message.end(), re); it != std::sregex_iterator(); ++it)
    fixes.push_back(it->str());
  return fixes;
}

TEST(ShapeFix, TwoDynamicDimensionsOfOneInputEachTakeTheirSize) {
  TempDir tmp;
  std::string model = tmp.file("audio.tflite");
  ASSERT_TRUE(writeAudioModel(model));
  checkAudio(tmp, model, 1, 16000);
  checkAudio(tmp, model, 2, 8000);
  // The outputs take the inferred sizes: sums [2] (8 bytes), features
  // [8,3] (96 bytes).
  CommandResult r = runCommand(kilnBinary() + " inspect " + shellQuote(model) + " --fix-shape=0=2x8000");
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("output 0 'sums' (8 bytes)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("output 1 'features' (96 bytes)"), std::string::npos) << r.output;
}

TEST(ShapeFix, TwoInputsShareABatchDimension) {
  TempDir tmp;
  std::string model = tmp.file("pair.tflite");
  ASSERT_TRUE(writePairModel(model));
  std::string out = tmp.file("sum.npy");
  CommandResult r = runCommand(kilnBinary() + " run " + shellQuote(model) +
                               " --fix-shape=a=3x4 --fix-shape=1=3x4 --input=3x4xf32=1,2,3,4,5,6,7,8,9,10,11,12"
                               " --input=3x4xf32=0.5 --output=@" + shellQuote(out));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  kiln::NpyArray sum = loadNpy(out);
  ASSERT_EQ(sum.shape, (std::vector<int64_t>{3, 4}));
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(floats(sum)[i], (i + 1) + 0.5f) << i; // a + b, b broadcast 0.5
  // Batches that differ: ADD names itself and the dimension.
  EXPECT_TRUE(kilnFailsCleanly("compile " + shellQuote(model) + " --fix-shape=a=3x4 --fix-shape=b=2x4 -o " +
                                   shellQuote(tmp.file("x.kiln")),
                               {"operator #0 (ADD)", "dimension 0: 3 vs 2"}));
}

TEST(ShapeFix, SizeAnOperatorRejectsNamesTheOperator) {
  TempDir tmp;
  std::string audio = tmp.file("audio.tflite"), image = tmp.file("image.tflite");
  ASSERT_TRUE(writeAudioModel(audio));
  ASSERT_TRUE(writeImageModel(image));
  // 1000 samples cannot fill a [-1, 2000] frame.
  EXPECT_TRUE(kilnFailsCleanly("compile " + shellQuote(audio) + " --fix-shape=audio=1x1000",
                               {"operator #2 (RESHAPE)", "[1, 1000]", "multiple of 2000"}));
  // A 2-row image under a 3x3 VALID kernel has no output.
  EXPECT_TRUE(kilnFailsCleanly("compile " + shellQuote(image) + " --fix-shape=image=1x2x5x1",
                               {"operator #0 (CONV_2D)", "height 2", "VALID"}));
  for (const std::string &cmd : {"compile " + shellQuote(audio) + " --fix-shape=audio=1x1000",
                                  "compile " + shellQuote(image) + " --fix-shape=image=1x2x5x1"}) {
    CommandResult r = runCommand(kilnBinary() + " " + cmd);
    EXPECT_EQ(r.output.find("corrupted"), std::string::npos) << r.output;
  }
}

TEST(ShapeFix, ImageWithTwoDynamicSpatialDimensions) {
  TempDir tmp;
  std::string image = tmp.file("image.tflite"), out = tmp.file("conv.npy");
  ASSERT_TRUE(writeImageModel(image));
  CommandResult r = runCommand(kilnBinary() + " run " + shellQuote(image) +
                               " --fix-shape=image=1x4x5x1 --input=1x4x5x1xf32=1 --output=@" + shellQuote(out));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  kiln::NpyArray conv = loadNpy(out);
  // VALID 3x3: 4 - 2 = 2 rows, 5 - 2 = 3 columns; 9 ones * 1 + 0.5 and
  // 9 ones * 0.5 - 1.
  ASSERT_EQ(conv.shape, (std::vector<int64_t>{1, 2, 3, 2}));
  for (int p = 0; p < 6; ++p) {
    EXPECT_FLOAT_EQ(floats(conv)[2 * p], 9.5f) << p;
    EXPECT_FLOAT_EQ(floats(conv)[2 * p + 1], 3.5f) << p;
  }
}

// A rank-4 by rank-2 BATCH_MATMUL under two open dimensions: the product
// keeps its batch and row dimensions apart ([2,1,5,3], as TFLite computes;
// it once came out as [1,10,3], which the open shape could not resolve).
TEST(ShapeFix, BatchMatMulKeepsBroadcastBatchDimensions) {
  TempDir tmp;
  std::string model = tmp.file("frames.tflite"), out = tmp.file("mel.npy");
  ASSERT_TRUE(writeFramesModel(model));
  std::string in = writeRamp(tmp, "frames.npy", {2, 1, 5, 4});
  CommandResult r = runCommand(kilnBinary() + " run " + shellQuote(model) +
                               " --fix-shape=frames=2x1x5x4 --input=@" + shellQuote(in) +
                               " --output=@" + shellQuote(out));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  kiln::NpyArray mel = loadNpy(out);
  ASSERT_EQ(mel.shape, (std::vector<int64_t>{2, 1, 5, 3}));
  // mel[b,0,f,n] = sum_k x[b,0,f,k] * (k + 1) * (n + 1), x flat k % 10 / 10.
  for (int row = 0; row < 10; ++row)
    for (int n = 0; n < 3; ++n) {
      double want = 0;
      for (int k = 0; k < 4; ++k)
        want += static_cast<double>((row * 4 + k) % 10) * 0.1 * (k + 1) * (n + 1);
      EXPECT_NEAR(floats(mel)[row * 3 + n], want, 1e-5 * (1 + want)) << row << "," << n;
    }
}

// The suggestion of the "dynamic dimension" error compiles: the recorded
// shape (1 for each dynamic dimension; 1 also where `shape` records -1)
// where it does, else the first size the model mentions that works (audio:
// 1x1 fails at the RESHAPE to [-1,2000], 2 and 3 as well, 2000 fills one
// frame; image: 1x1x1x1 is smaller than the 3x3 VALID filter). A recorded
// shape that compiles is no error (RecordedShapeCompilesWithOneWarning), so
// the pair is here with no recorded batch (shape [-1,4]).
TEST(ShapeFix, SuggestedShapeCompiles) {
  TempDir tmp;
  struct Case {
    std::string file;
    bool (*write)(const std::string &);
    std::vector<std::string> want;
  };
  std::vector<Case> cases = {
      {"audio.tflite", writeAudioModel, {"--fix-shape=audio=1x2000"}},
      {"pair.tflite", writeUnrecordedPairModel, {"--fix-shape=a=1x4", "--fix-shape=b=1x4"}},
      {"image.tflite", writeImageModel, {"--fix-shape=image=1x3x3x1"}}};
  for (const Case &c : cases) {
    std::string model = tmp.file(c.file);
    ASSERT_TRUE(c.write(model));
    CommandResult failed = runCommand(kilnBinary() + " compile " + shellQuote(model) + " -o " +
                                      shellQuote(tmp.file("m.kiln")));
    ASSERT_EQ(failed.exitCode, 1) << failed.output;
    EXPECT_NE(failed.output.find("Kiln compiles static shapes only"), std::string::npos) << failed.output;
    std::vector<std::string> fixes = suggestedFixes(failed.output);
    EXPECT_EQ(fixes, c.want) << failed.output;
    std::string flags;
    for (const std::string &f : fixes)
      flags += " " + shellQuote(f);
    CommandResult ok = runCommand(kilnBinary() + " compile " + shellQuote(model) + flags + " -o " +
                                  shellQuote(tmp.file("m.kiln")));
    EXPECT_EQ(ok.exitCode, 0) << c.file << ": " << ok.output;
  }
  // Two dynamic dimensions are both named.
  CommandResult r = runCommand(kilnBinary() + " compile " + shellQuote(tmp.file("audio.tflite")));
  EXPECT_NE(r.output.find("has dynamic dimensions 0 and 1 (shape signature [-1,-1])"), std::string::npos)
      << r.output;
}

// A dynamic input whose `shape` records a size (TFLite's converter writes
// batch -1 as recorded 1) compiles at the recorded shape, as TFLite runs
// it, with one warning naming --fix-shape for another size; a --fix-shape
// of every dynamic input leaves no warning.
TEST(ShapeFix, RecordedShapeCompilesWithOneWarning) {
  TempDir tmp;
  std::string model = tmp.file("pair.tflite");
  ASSERT_TRUE(writePairModel(model));
  std::string a = writeRamp(tmp, "a.npy", {1, 4}), sum = tmp.file("sum.npy");
  CommandResult r =
      runCommand(kilnBinary() + " run " + shellQuote(model) + " --input=@" + shellQuote(a) +
                 " --input=1x4xf32=10,20,30,40 --output=@" + shellQuote(sum));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  std::regex warning("kiln: warning: ");
  EXPECT_EQ(std::distance(std::sregex_iterator(r.output.begin(), r.output.end(), warning),
                          std::sregex_iterator()),
            1)
      << r.output;
  for (const char *part : {"input 'a' (input 0) has a dynamic dimension 0 (shape signature "
                           "[-1,4]): compiled at its recorded shape 1x4, "
                           "as TFLite runs it; for another size give --fix-shape=a=Nx4",
                           "input 'b' (input 1)", "--fix-shape=b=Nx4"})
    EXPECT_NE(r.output.find(part), std::string::npos) << part << "\n" << r.output;
  // sum = ramp (0, 0.1, 0.2, 0.3) + (10, 20, 30, 40).
  kiln::NpyArray s = loadNpy(sum);
  ASSERT_EQ(s.shape, (std::vector<int64_t>{1, 4}));
  const double want[4] = {10, 20.1, 30.2, 40.3};
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(floats(s)[i], want[i], 1e-5) << i;
  // Both inputs fixed: no warning; one fixed: the warning names the other.
  r = runCommand(kilnBinary() + " compile " + shellQuote(model) +
                 " --fix-shape=a=3x4 --fix-shape=b=3x4 -o " + shellQuote(tmp.file("m.kiln")));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
  r = runCommand(kilnBinary() + " compile " + shellQuote(model) + " --fix-shape=a=1x4 -o " +
                 shellQuote(tmp.file("m.kiln")));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(r.output.find("input 'a'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("input 'b' (input 1) has a dynamic dimension 0"), std::string::npos)
      << r.output;
  // The artifact's signature is the recorded shape.
  r = runCommand(kilnBinary() + " inspect " + shellQuote(tmp.file("m.kiln")));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("input 1   'b' 1x4xf32, 16 bytes"), std::string::npos) << r.output;
  // No recorded size (shape [-1,4]): still the error with a suggestion.
  ASSERT_TRUE(writeUnrecordedPairModel(model));
  r = runCommand(kilnBinary() + " compile " + shellQuote(model) + " -o " +
                 shellQuote(tmp.file("m.kiln")));
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("Kiln compiles static shapes only"), std::string::npos) << r.output;
}

} // namespace
