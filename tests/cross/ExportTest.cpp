//===- ExportTest.cpp - kiln export bundles and target errors -------------===//
//
// `kiln export` writes the artifact or C module, manifest.json and
// report.md; two exports with the same options are byte-identical, the
// manifest's command repeats the build, and its numbers agree with the
// files and with independently computed sizes. Bad targets, formats and
// folders fail with one clear message.
//
//===----------------------------------------------------------------------===//
#include "RealModels.h"
#include "TestSupport.h"

#include "kiln/Artifact.h"
#include "kiln/Export.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SHA256.h"

#include <filesystem>
#include <fstream>
#include <iterator>

using namespace kiln::test;
namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::string kiln(const std::string &args) { return kilnBinary() + " " + args; }

/// Every regular file of `dir` by name.
std::map<std::string, std::vector<uint8_t>> filesOf(const std::string &dir) {
  std::map<std::string, std::vector<uint8_t>> files;
  for (const auto &entry : fs::directory_iterator(dir))
    files[entry.path().filename().string()] = readBytes(entry.path().string());
  return files;
}

llvm::json::Object manifestOf(const std::string &dir) {
  std::vector<uint8_t> bytes = readBytes(dir + "/manifest.json");
  auto parsed = llvm::json::parse(llvm::StringRef(reinterpret_cast<const char *>(bytes.data()),
                                                  bytes.size()));
  EXPECT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  if (!parsed || !parsed->getAsObject())
    return {};
  return *parsed->getAsObject();
}

int64_t totalBytes(const std::vector<kiln::NpyArray> &arrays) {
  int64_t n = 0;
  for (const kiln::NpyArray &a : arrays)
    n += static_cast<int64_t>(a.data.size());
  return n;
}

/// Exports `model` twice with `flags`; checks identical bundles and a
/// manifest that agrees with the files. Returns the manifest.
llvm::json::Object exportTwice(const std::string &name, const std::string &flags) {
  TempDir a, b;
  std::string model = shellQuote(realModelPath(name));
  std::string fix = name == "embedding" ? " --fix-shape=0=1x76x32x1" : "";
  CommandResult first = runCommand(kiln("export " + model + fix + " " + flags + " -o " +
                                        shellQuote(a.file("bundle"))));
  EXPECT_EQ(first.exitCode, 0) << first.output;
  CommandResult second = runCommand(kiln("export " + model + fix + " " + flags + " -o " +
                                         shellQuote(b.file("bundle"))));
  EXPECT_EQ(second.exitCode, 0) << second.output;
  auto filesA = filesOf(a.file("bundle")), filesB = filesOf(b.file("bundle"));
  EXPECT_EQ(filesA.size(), filesB.size());
  for (const auto &[file, bytes] : filesA)
    EXPECT_TRUE(filesB.count(file) && filesB[file] == bytes) << file << " differs";

  llvm::json::Object manifest = manifestOf(a.file("bundle"));
  // Every listed file exists with the listed size and SHA-256; the bundle
  // holds nothing else but the manifest and the report.
  const llvm::json::Array *files = manifest.getArray("files");
  EXPECT_NE(files, nullptr);
  size_t listed = 0;
  for (const llvm::json::Value &v : files ? *files : llvm::json::Array()) {
    const llvm::json::Object *f = v.getAsObject();
    std::string file = f->getString("name")->str();
    ++listed;
    EXPECT_TRUE(filesA.count(file)) << file;
    EXPECT_EQ(*f->getInteger("bytes"), static_cast<int64_t>(filesA[file].size())) << file;
    EXPECT_EQ(f->getString("sha256")->str(),
              llvm::toHex(llvm::SHA256::hash(filesA[file]), /*LowerCase=*/true))
        << file;
  }
  EXPECT_EQ(listed + 2, filesA.size());
  EXPECT_TRUE(filesA.count("report.md"));

  // RAM = arena + the model's I/O (from the seeded inputs and reference
  // outputs); flash = code + weights + metadata.
  const llvm::json::Object *memory = manifest.getObject("memory");
  EXPECT_NE(memory, nullptr);
  if (memory) {
    int64_t io = totalBytes(realModelInputs(name)) + totalBytes(realModelReference(name));
    EXPECT_EQ(*memory->getInteger("io_bytes"), io);
    int64_t stack = memory->getInteger("stack_bytes").value_or(0);
    EXPECT_EQ(*memory->getInteger("ram_bytes"), *memory->getInteger("arena_bytes") + io + stack);
    EXPECT_EQ(*memory->getInteger("flash_bytes"), *memory->getInteger("code_bytes") +
                                                      *memory->getInteger("constants_bytes") +
                                                      *memory->getInteger("metadata_bytes"));
    EXPECT_GE(*memory->getInteger("arena_bytes"), *memory->getInteger("lower_bound_bytes"));
  }
  // The recorded command keeps the model's path as given; from the folder
  // it was given in, it runs as written and writes the default folder
  // beside the model (as `kiln compile sub/m.tflite` writes sub/m.kiln).
  std::string command = manifest.getString("command")->str();
  {
    TempDir here;
    fs::create_directories(here.file("sub"));
    fs::copy_file(realModelPath(name), here.file("sub/" + name + ".tflite"));
    std::string options = command.substr(command.find(' ', std::string("kiln export ").size()));
    auto exportHere = [&](const std::string &args) {
      return runCommand("cd " + shellQuote(here.path()) + " && " + kilnBinary() + " " + args);
    };
    CommandResult first = exportHere("export sub/" + name + ".tflite" + options);
    EXPECT_EQ(first.exitCode, 0) << first.output;
    std::vector<std::string> folders;
    for (const auto &entry : fs::directory_iterator(here.file("sub")))
      if (entry.is_directory())
        folders.push_back(entry.path().string());
    EXPECT_EQ(folders.size(), 1u) << first.output;
    if (folders.size() != 1)
      return manifest;
    auto filesHere = filesOf(folders[0]);
    std::string repeat = manifestOf(folders[0]).getString("command")->str();
    EXPECT_EQ(repeat.rfind("kiln export sub/" + name + ".tflite ", 0), 0u) << repeat;
    // Every file but the manifest and the report (which record the path in
    // the repeat command) is the bundle exported from the model's own path.
    for (const auto &[file, bytes] : filesA)
      if (file != "manifest.json" && file != "report.md")
        EXPECT_TRUE(filesHere.count(file) && filesHere[file] == bytes) << file;
    fs::remove_all(folders[0]);
    CommandResult again = exportHere(repeat.substr(std::string("kiln ").size()));
    EXPECT_EQ(again.exitCode, 0) << repeat << "\n" << again.output;
    EXPECT_EQ(filesOf(folders[0]), filesHere) << repeat;
  }
  // With -o, it repeats the build byte for byte anywhere.
  std::string args = command.substr(command.find(' ', std::string("kiln export ").size()));
  TempDir c;
  CommandResult again = runCommand(
      "umask 022; " + kiln("export " + model + args + " -o " + shellQuote(c.file("bundle"))));
  EXPECT_EQ(again.exitCode, 0) << command << "\n" << again.output;
  // The folder is made as mkdir -p makes it: readable by all under umask
  // 022 (it was 0750).
  EXPECT_EQ(fs::status(c.file("bundle")).permissions(), fs::perms(0755));
  auto filesC = filesOf(c.file("bundle"));
  for (const auto &[file, bytes] : filesA)
    EXPECT_TRUE(filesC.count(file) && filesC[file] == bytes) << file << " differs after '"
                                                             << command << "'";
  return manifest;
}

TEST(Export, ArtifactBundleIsReproducibleAndAddsUp) {
  ASSERT_TRUE(fs::exists(realModelPath("blazeface"))) << missingModelHint(realModelPath("blazeface"));
  llvm::json::Object manifest =
      exportTwice("blazeface", "--target=aarch64-linux-gnu --profile=stripped");
  EXPECT_EQ(manifest.getObject("target")->getString("triple")->str(),
            "aarch64-unknown-linux-gnu");
  EXPECT_EQ(manifest.getString("profile")->str(), "stripped");
  // A .kiln sits whole in flash: flash == the file's bytes, and the
  // manifest's sections add up to it.
  const llvm::json::Object *memory = manifest.getObject("memory");
  const llvm::json::Object *sections = manifest.getObject("sections");
  ASSERT_TRUE(memory && sections);
  EXPECT_EQ(*memory->getInteger("flash_bytes"), *sections->getInteger("file_bytes"));
  int64_t sum = *sections->getInteger("overhead_bytes");
  for (const auto &[section, bytes] : *sections->getObject("sections"))
    sum += *bytes.getAsInteger();
  EXPECT_EQ(sum, *sections->getInteger("file_bytes"));
  EXPECT_EQ(*sections->getObject("sections")->getInteger("reflection"), 0);
  EXPECT_EQ(memory->get("stack_bytes")->kind(), llvm::json::Value::Null);
  EXPECT_EQ(manifest.getArray("dispatches")->size(),
            static_cast<size_t>(*manifest.getObject("schedule")->getInteger("dispatch_commands")));
}

TEST(Export, CortexMCModuleBundleIsReproducible) {
  ASSERT_TRUE(fs::exists(realModelPath("alexa"))) << missingModelHint(realModelPath("alexa"));
  llvm::json::Object manifest = exportTwice(
      "alexa", "--target=thumbv7em-none-eabihf --profile=stripped --output-format=c-module");
  EXPECT_EQ(manifest.getString("output_format")->str(), "c-module");
  // The kernels' largest frame is recorded (a C module must budget stack);
  // the wake-word head's kernels keep their tiles in registers and small
  // spill slots, far below 64 KiB.
  auto stack = manifest.getObject("memory")->getInteger("stack_bytes");
  ASSERT_TRUE(stack.has_value());
  EXPECT_GT(*stack, 0);
  EXPECT_LT(*stack, 65536);
  EXPECT_EQ(manifest.getObject("target")->getString("cpu")->str(), "cortex-m4");
  // The wake-word head's weights: FC 1536x128 + bias 128, FC 128x128 + bias
  // 128, FC 128x1 (its one-element bias is folded into the kernel as an
  // immediate), f32.
  const int64_t weights = (1536 * 128 + 128 + 128 * 128 + 128 + 128) * 4;
  // The C array pads each constant to 64 bytes: 5 constants, the last
  // unpadded, so at most 4 x 63 bytes over the weights.
  int64_t constants = *manifest.getObject("memory")->getInteger("constants_bytes");
  EXPECT_GE(constants, weights);
  EXPECT_LE(constants, weights + 4 * 63);
  EXPECT_EQ(constants % 4, 0);
}

/// Runs kiln with `args`; expects one error line, every needle, and exit
/// status 2 for a flag value of the wrong form (usage), 1 otherwise.
void expectCleanError(const std::string &args, std::initializer_list<const char *> needles,
                      int status = 1) {
  CommandResult r = runCommand(kiln(args));
  EXPECT_EQ(r.exitCode, status) << r.output;
  for (const char *needle : needles)
    EXPECT_NE(r.output.find(needle), std::string::npos)
        << "missing '" << needle << "' in:\n" << r.output;
  size_t count = 0;
  for (size_t p = r.output.find("error:"); p != std::string::npos; p = r.output.find("error:", p + 1))
    ++count;
  EXPECT_EQ(count, 1u) << r.output;
  for (const char *bad : {"Stack dump", "PLEASE submit", "LLVM ERROR"})
    EXPECT_EQ(r.output.find(bad), std::string::npos) << r.output;
}

TEST(Export, BadTargetsFormatsAndFoldersFailClearly) {
  std::string model = shellQuote(realModelPath("alexa"));
  TempDir dir;
  expectCleanError("compile " + model + " --target=sparc-sun-solaris -o " + dir.file("x.kiln"),
                   {"sparc-sun-solaris", "not a supported target", "aarch64-linux-gnu"}, 2);
  expectCleanError("export " + model + " --target=avr -o " + shellQuote(dir.file("b")),
                   {"'avr'", "not a supported target", "thumbv7em-none-eabihf"}, 2);
  expectCleanError("compile " + model + " --target=thumbv7em-none-eabihf -o " + dir.file("x.kiln"),
                   {"bare metal", "--output-format=c-module"});
  expectCleanError("compile " + model + " --output-format=zip -o " + dir.file("x"),
                   {"'zip'", "kiln, c-module"}, 2);
  expectCleanError("compile " + model + " --output-format=c-module", {"-o DIR"}, 2);
  // A --module-name of the wrong form is a usage error (status 2).
  expectCleanError("compile " + model + " --output-format=c-module --module-name=9lives -o " +
                       dir.file("m"),
                   {"9lives", "not a C identifier"}, 2);
  for (const char *reserved : {"stdint", "int", "main"})
    expectCleanError("compile " + model + " --output-format=c-module --module-name=" + reserved +
                         " -o " + dir.file("m"),
                     {"C keyword or standard header name"}, 2);
  expectCleanError("compile " + model + " --output-format=c-module --module-name=" +
                       std::string(101, 'a') + " -o " + dir.file("m"),
                   {"101 characters; at most 100"}, 2);
  expectCleanError("compile " + model + " --target=thumbv7em-none-eabihf --target-cpu=cortex-m0 "
                                        "--output-format=c-module -o " + dir.file("m"),
                   {"'cortex-m0' has no floating-point unit", "hard-float"});
  expectCleanError("compile " + model + " --target=thumbv7em-none-eabihf --target-cpu=bogus "
                                        "--output-format=c-module -o " + dir.file("m"),
                   {"unknown CPU 'bogus'", "cortex-m7"});
  EXPECT_FALSE(fs::exists(dir.file("m")));
  // A failed C module write leaves nothing behind: alexa.c is a folder.
  fs::create_directories(dir.file("half/alexa.c"));
  expectCleanError("compile " + model + " --output-format=c-module -o " + dir.file("half"),
                   {"alexa.c", "cannot write"});
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.file("half")), fs::directory_iterator()), 1);
  expectCleanError("compile " + model + " --target-triple=x86_64-linux-gnu --target=host -o " +
                       dir.file("x.kiln"),
                   {"--target and --target-triple"}, 2);
  expectCleanError("compile " + model + " --target=aarch64-linux-gnu --target-cpu=pentium4 -o " +
                       dir.file("x.kiln"),
                   {"unknown CPU 'pentium4'"});
  // Features of another architecture, or none at all, on every target
  // (AArch64 used to accept any name and let LLVM warn on every thread).
  for (const char *target : {"aarch64-linux-gnu", "riscv64-linux-gnu", "x86_64-linux-gnu"})
    expectCleanError(std::string("compile ") + model + " --target=" + target +
                         " --target-cpu-features=+bogus -o " + dir.file("x.kiln"),
                     {"unknown CPU feature 'bogus'"});
  expectCleanError("compile " + model + " --target=aarch64-linux-gnu --target-cpu-features=+avx2 -o " +
                       dir.file("x.kiln"),
                   {"unknown CPU feature 'avx2'", "aarch64"});
  // An export folder that cannot be created: under a regular file.
  std::ofstream(dir.file("plain")) << "x";
  expectCleanError("export " + model + " --target=host -o " + shellQuote(dir.file("plain/b")),
                   {"plain/b", "cannot create the folder"});
  EXPECT_FALSE(fs::exists(dir.file("x.kiln")));
}

// A folder holding another model's bundle is refused and left as it was
// (blazeface.onnx and blazeface.tflite share a default folder); a second
// export of the same model replaces the bundle whole: the earlier kit's
// files go, a file the user edited or added stays.
TEST(Export, AnotherModelsBundleIsNeverReplaced) {
  // Two models of one name have default folders of their own (as their
  // projects, MODEL.EXT.kilnproj).
  kiln::ExportRequest onnx, tflite;
  onnx.model = "sub/m.onnx";
  tflite.model = "sub/m.tflite";
  EXPECT_EQ(kiln::defaultExportDir(onnx), "sub/m-onnx-host-default");
  EXPECT_EQ(kiln::defaultExportDir(tflite), "sub/m-tflite-host-default");
  TempDir dir;
  const std::string out = dir.file("bundle");
  const std::string alexa = shellQuote(realModelPath("alexa"));
  CommandResult first = runCommand(kiln("export " + alexa + " --kit -o " + shellQuote(out)));
  ASSERT_EQ(first.exitCode, 0) << first.output;
  auto before = filesOf(out);
  ASSERT_TRUE(before.count("Makefile") && before.count("main.c") && before.count("alexa.kiln"));

  CommandResult other = runCommand(
      kiln("export " + shellQuote(realModelPath("blazeface")) + " -o " + shellQuote(out)));
  EXPECT_EQ(other.exitCode, 1) << other.output;
  for (const char *part :
       {"holds the export of alexa.tflite", "blazeface.tflite", "another folder"})
    EXPECT_NE(other.output.find(part), std::string::npos) << other.output;
  EXPECT_TRUE(filesOf(out) == before); // untouched

  // The user edits main.c and adds a file; the same model without the kit.
  { std::ofstream(out + "/main.c", std::ios::app) << "/* mine */\n"; }
  { std::ofstream(out + "/notes.txt") << "mine\n"; }
  CommandResult again = runCommand(kiln("export " + alexa + " -o " + shellQuote(out)));
  ASSERT_EQ(again.exitCode, 0) << again.output;
  auto after = filesOf(out);
  EXPECT_FALSE(after.count("Makefile")); // the earlier kit's, as written
  EXPECT_FALSE(after.count("kit_buffers.c"));
  EXPECT_TRUE(after.count("main.c"));    // edited: kept
  EXPECT_TRUE(after.count("notes.txt")); // not the bundle's: kept
  EXPECT_FALSE(manifestOf(out).getObject("kit"));
  for (const char *name : {"alexa.kiln", "manifest.json", "report.md"})
    EXPECT_TRUE(after.count(name)) << name;
}

} // namespace
