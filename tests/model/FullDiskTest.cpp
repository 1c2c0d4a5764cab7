//===- FullDiskTest.cpp - Writes that never lose data ---------------------===//
//
// Every file `kiln` writes goes through the one atomic writer
// (kiln/AtomicWrite.h). On /dev/full (always "no space left") and on a
// 256 KiB tmpfs filled to the last byte: one error line naming the file and
// the OS's reason, exit status 1, the previous file intact, no temporary
// left, and no LLVM fatal error ("IO failure on output stream"). A failing
// --dump-* file stops the artifact from being written too.
//
// The tmpfs cases mount a file system, which needs root: run as another
// user they are skipped with that reason (README, "Tests"); the /dev/full
// cases always run.
//
//===----------------------------------------------------------------------===//
#include "TestSupport.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <unistd.h>

using namespace kiln::test;
namespace fs = std::filesystem;

namespace {

std::string model() {
  return std::string(KILN_TEST_DATA_DIR) + "/ops/conv_2d_tile_edges/model.tflite";
}

/// The model's one input, [1,9,7,5] f32, as a --input flag.
std::string input() { return "--input=1x9x7x5xf32=0.5"; }

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::set<std::string> namesIn(const std::string &dir) {
  std::set<std::string> names;
  for (const auto &entry : fs::directory_iterator(dir))
    names.insert(entry.path().filename().string());
  return names;
}

TEST(FullDisk, DevFullIsOneErrorNamingTheFile) {
  TempDir tmp;
  EXPECT_TRUE(kilnFailsCleanly("compile " + shellQuote(model()) + " -o /dev/full",
                               {"/dev/full: cannot write: No space left on device"}));
  EXPECT_TRUE(kilnFailsCleanly("run " + shellQuote(model()) + " " + input() + " --output=@/dev/full",
                               {"/dev/full: cannot write: No space left on device"}));
  // Standard output on /dev/full (stderr kept apart to be read).
  std::string err = tmp.file("stderr.txt");
  CommandResult r = runCommand("(" + kilnBinary() + " inspect " + shellQuote(model()) +
                               " > /dev/full 2> " + shellQuote(err) + ")");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  std::string said = readAll(err);
  EXPECT_EQ(said, "kiln: error: cannot write to standard output: No space left on device\n");
  fs::remove(err);
  // --help and --version print and exit inside llvm::cl: the same error.
  for (const char *flag : {"--help", "--version"}) {
    r = runCommand("(" + kilnBinary() + " " + flag + " > /dev/full 2> " + shellQuote(err) + ")");
    EXPECT_EQ(r.exitCode, 1) << flag;
    EXPECT_EQ(readAll(err), "kiln: error: cannot write to standard output: No space left on device\n")
        << flag;
    fs::remove(err);
  }
  // A dump that cannot be written: exit 1, and the artifact is not written.
  std::string out = tmp.file("x.kiln");
  EXPECT_TRUE(kilnFailsCleanly("compile " + shellQuote(model()) + " -o " + shellQuote(out) +
                                   " --dump-schedule=/dev/full",
                               {"/dev/full: cannot write: No space left on device"}));
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(namesIn(tmp.path()).empty());
}

// Outputs that would overwrite each other or the model: refused before
// anything is written, the model intact.
TEST(FullDisk, AnOutputNamedTwiceOrTheModelItselfIsRefused) {
  TempDir tmp;
  std::string copy = tmp.file("m.tflite");
  fs::copy_file(model(), copy);
  const std::string original = readAll(copy);
  EXPECT_TRUE(kilnFailsCleanly("compile " + shellQuote(copy) + " -o " + shellQuote(copy),
                               {"is an input of this command"}));
  EXPECT_EQ(readAll(copy), original);
  std::string out = tmp.file("x.kiln");
  EXPECT_TRUE(kilnFailsCleanly("compile " + shellQuote(copy) + " -o " + shellQuote(out) +
                                   " --dump-schedule=" + shellQuote(out),
                               {"named twice among the files to write"}));
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(kilnFailsCleanly("compile " + shellQuote(copy) + " -o " + shellQuote(out) +
                                   " --dump-schedule=" + shellQuote(tmp.file("d")) +
                                   " --dump-dispatch-graph=" + shellQuote(tmp.file("d")),
                               {"named twice among the files to write"}));
  EXPECT_EQ(namesIn(tmp.path()), (std::set<std::string>{"m.tflite"}));
}

// Every way an output could overwrite the model, an artifact or input a
// command reads, or another output (a new-user pass found each):
// refused in one line before anything is written, every file intact. Paths
// are compared resolved ("./x" and "x"), also before the file exists.
TEST(FullDisk, OutputsNeverOverwriteInputsOrEachOther) {
  TempDir tmp;
  const std::string m = tmp.file("m.tflite"), note = tmp.file("note.txt");
  fs::copy_file(model(), m);
  std::ofstream(note) << "the user's notes\n";
  const std::string original = readAll(m);
  const std::string artifact = tmp.file("m.kiln"), in = tmp.file("in.npy");
  ASSERT_EQ(runCommand(kilnBinary() + " compile " + shellQuote(m) + " -o " + shellQuote(artifact))
                .exitCode,
            0);
  kiln::NpyArray x; // the model's input, [1,9,7,5] f32 zeros
  x.shape = {1, 9, 7, 5};
  x.data.assign(9 * 7 * 5 * 4, 0);
  ASSERT_FALSE(static_cast<bool>(kiln::writeNpyFile(in, x)));
  const std::string artifactBytes = readAll(artifact), inBytes = readAll(in);
  const std::string q = shellQuote(m);
  struct Case {
    std::string args, needle;
  };
  const std::vector<Case> cases = {
      {"compile " + q + " -o " + shellQuote(tmp.file("x.kiln")) + " --dump-schedule=" + q,
       "is an input of this command"},
      {"inspect " + q + " --dump-dispatch-graph=" + q, "is an input of this command"},
      {"inspect " + shellQuote(artifact) + " --dump-schedule=" + shellQuote(artifact),
       "is an input of this command"},
      {"compile " + q + " --emit=tosa -o " + q, "is an input of this command"},
      {"compile " + q + " -o " + shellQuote(tmp.file("n.kiln")) + " --dump-schedule=" +
           shellQuote(tmp.path() + "/./n.kiln"),
       "named twice among the files to write"},
      {"run " + shellQuote(artifact) + " --input=@" + shellQuote(in) + " --output=@" +
           shellQuote(artifact),
       "is an input of this command"},
      {"run " + shellQuote(artifact) + " --input=@" + shellQuote(in) + " --output=@" +
           shellQuote(in),
       "is an input of this command"},
      {"run " + shellQuote(artifact) + " --input=@" + shellQuote(in) + " --trace=" + shellQuote(in),
       "is an input of this command"},
      {"run " + shellQuote(artifact) + " --input=@" + shellQuote(in) + " --output=@" +
           shellQuote(tmp.file("o.npy")) + " --trace=" + shellQuote(tmp.file("o.npy")),
       "named twice among the files to write"},
      {"export " + q + " -o " + shellQuote(note), "exists and is not a folder"},
      {"compile " + q + " --output-format=c-module -o " + q, "exists and is not a folder"},
  };
  for (const Case &c : cases) {
    EXPECT_TRUE(kilnFailsCleanly(c.args, {c.needle})) << c.args;
    EXPECT_EQ(readAll(m), original) << c.args;
    EXPECT_EQ(readAll(artifact), artifactBytes) << c.args;
    EXPECT_EQ(readAll(in), inBytes) << c.args;
    EXPECT_EQ(readAll(note), "the user's notes\n") << c.args;
  }
  EXPECT_EQ(namesIn(tmp.path()), (std::set<std::string>{"m.tflite", "m.kiln", "in.npy", "note.txt"}));
  // A --tuning file and an ONNX model's external data are inputs too.
  const std::string tuningFile = tmp.file("t.json");
  std::ofstream(tuningFile) << "{}\n";
  EXPECT_TRUE(kilnFailsCleanly("compile " + q + " --tuning=" + shellQuote(tuningFile) + " -o " +
                                   shellQuote(tuningFile),
                               {"is an input of this command"}));
  EXPECT_EQ(readAll(tuningFile), "{}\n");
  const std::string onnxDir = tmp.file("ext");
  fs::create_directory(onnxDir);
  const std::string data = std::string(KILN_TEST_DATA_DIR) + "/onnx/external/";
  fs::copy_file(data + "add_weights.onnx", onnxDir + "/add_weights.onnx");
  fs::copy_file(data + "add_weights.bin", onnxDir + "/add_weights.bin");
  const std::string weights = readAll(onnxDir + "/add_weights.bin");
  EXPECT_TRUE(kilnFailsCleanly("compile " + shellQuote(onnxDir + "/add_weights.onnx") + " -o " +
                                   shellQuote(onnxDir + "/./add_weights.bin"),
                               {"is an input of this command"}));
  EXPECT_EQ(readAll(onnxDir + "/add_weights.bin"), weights);
  // Devices are not read until memory runs out: one line.
  EXPECT_TRUE(kilnFailsCleanly("compile " + q + " --tuning=/dev/zero", {"not a regular file"}));
  EXPECT_TRUE(kilnFailsCleanly("inspect /dev/zero", {"not a regular file"}));
  // kiln run writes its outputs and trace as one group: a trace that cannot
  // be written leaves the earlier output file as it was.
  const std::string old = tmp.file("old.npy");
  std::ofstream(old) << "old";
  EXPECT_TRUE(kilnFailsCleanly("run " + shellQuote(artifact) + " --input=@" + shellQuote(in) +
                                   " --output=@" + shellQuote(old) + " --trace=/dev/full",
                               {"/dev/full: cannot write: No space left on device"}));
  EXPECT_EQ(readAll(old), "old");
}

/// A 256 KiB tmpfs mounted on a fresh folder for the test's life (root only).
class SmallDisk {
public:
  SmallDisk() {
    if (geteuid() != 0)
      return;
    CommandResult r = runCommand("mount -t tmpfs -o size=256k kiln-full-disk-test " +
                                 shellQuote(dir.path()) + " 2>&1");
    mounted = r.exitCode == 0;
    why = r.output;
  }
  ~SmallDisk() {
    if (mounted)
      runCommand("umount " + shellQuote(dir.path()));
  }
  /// Fills what is left with one file, `filler`.
  void fill() {
    runCommand("dd if=/dev/zero of=" + shellQuote(dir.file("filler")) +
               " bs=4k count=1000 2>/dev/null");
  }
  TempDir dir;
  bool mounted = false;
  std::string why = "not running as root (mounting a tmpfs needs it)";
};

TEST(FullDisk, FullFileSystemKeepsThePreviousArtifact) {
  SmallDisk disk;
  if (!disk.mounted)
    GTEST_SKIP() << "no small tmpfs: " << disk.why;
  std::string out = disk.dir.file("x.kiln");
  CommandResult first = runCommand(kilnBinary() + " compile " + shellQuote(model()) + " -o " +
                                   shellQuote(out));
  ASSERT_EQ(first.exitCode, 0) << first.output;
  const std::string good = readAll(out);
  ASSERT_FALSE(good.empty());
  disk.fill();
  // A stripped build has other bytes: it must not replace the good one.
  EXPECT_TRUE(kilnFailsCleanly("compile " + shellQuote(model()) + " --profile=stripped -o " +
                                   shellQuote(out),
                               {out + ": cannot write: No space left on device"}));
  EXPECT_EQ(readAll(out), good);
  EXPECT_EQ(namesIn(disk.dir.path()), (std::set<std::string>{"filler", "x.kiln"}));
  // A bundle: nothing of it lands, no temporary stays, no empty report.md.
  std::string bundle = disk.dir.file("bundle");
  CommandResult exported = runCommand(kilnBinary() + " export " + shellQuote(model()) +
                                      " -o " + shellQuote(bundle));
  EXPECT_EQ(exported.exitCode, 1) << exported.output;
  EXPECT_NE(exported.output.find("No space left on device"), std::string::npos)
      << exported.output;
  EXPECT_EQ(exported.output.find("LLVM"), std::string::npos) << exported.output;
  EXPECT_FALSE(fs::exists(bundle)) << "the failed export left its folder";
  // An .npy output.
  std::string npy = disk.dir.file("y.npy");
  EXPECT_TRUE(kilnFailsCleanly("run " + shellQuote(out) + " " + input() + " --output=@" + shellQuote(npy),
                               {npy + ": cannot write: No space left on device"}));
  EXPECT_FALSE(fs::exists(npy));
}

} // namespace
