//===- McuMemoryTest.cpp - Memory on microcontrollers, per dispatch -------===//
//
// `kiln inspect MODEL --target=thumbv7em-none-eabihf` plans and compiles the
// model as the C module it would export and prints the target, flash, RAM
// and each dispatch's stack frame, arena share and weights; `kiln export`
// records the same per dispatch. --ram-budget / --flash-budget warn (exit 0)
// when exceeded. Values are checked against independent reads: the kernels
// object's .stack_sizes through llvm-readelf, and the plan's bindings
// (`kiln inspect --json`) with a byte map of the arena.
//
//===----------------------------------------------------------------------===//
#include "RealModels.h"
#include "TestSupport.h"

#include "kiln/Export.h"

#include "llvm/Support/JSON.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>

using namespace kiln::test;

namespace {

const char *kCortexM4 = "--target=thumbv7em-none-eabihf";

std::string kiln(const std::string &args) { return kilnBinary() + " " + args; }

std::string model(const std::string &name) { return shellQuote(realModelPath(name)); }

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

llvm::json::Value parseJson(const std::string &text) {
  auto parsed = llvm::json::parse(text);
  EXPECT_TRUE(static_cast<bool>(parsed)) << llvm::toString(parsed.takeError());
  return parsed ? std::move(*parsed) : llvm::json::Value(nullptr);
}

/// The number after `label` in `text` ("RAM 123 bytes" -> 123), -1 if absent.
int64_t numberAfter(const std::string &text, const std::string &label) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(label + " (\\d+)")))
    return -1;
  return std::stoll(m[1]);
}

/// "  main_dispatch_N  stack S  arena A  weights W" lines of kiln's output:
/// dispatch name -> {stack (-1 for "-", -2 for "dynamic"), arena, weights}.
std::map<std::string, std::array<int64_t, 3>> dispatchMemoryLines(const std::string &text) {
  std::map<std::string, std::array<int64_t, 3>> rows;
  std::regex line(
      R"(\n  (main_dispatch_\d+) +stack +(-|dynamic|\d+) +arena +(\d+) +weights +(\d+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line);
       it != std::sregex_iterator(); ++it)
    rows[(*it)[1]] = {(*it)[2] == "-"         ? -1
                      : (*it)[2] == "dynamic" ? -2
                                              : std::stoll((*it)[2]),
                      std::stoll((*it)[3]), std::stoll((*it)[4])};
  return rows;
}

/// `command` with only its standard error captured (stdout discarded).
std::string stderrOf(const std::string &command) {
  return "{ " + command + " 2>&1 >/dev/null; }";
}

bool haveTool(const std::string &tool) {
  return runCommand("command -v " + tool + " >/dev/null 2>&1").exitCode == 0;
}

TEST(McuMemory, BudgetTextParsesWithBinarySuffixes) {
  EXPECT_EQ(*kiln::parseBudgetBytes("--ram-budget", "262144"), 262144);
  EXPECT_EQ(*kiln::parseBudgetBytes("--ram-budget", "256K"), 256 * 1024);
  EXPECT_EQ(*kiln::parseBudgetBytes("--ram-budget", "256KiB"), 256 * 1024);
  EXPECT_EQ(*kiln::parseBudgetBytes("--flash-budget", "2M"), 2 * 1048576);
  EXPECT_EQ(*kiln::parseBudgetBytes("--flash-budget", "2MiB"), 2 * 1048576);
  for (const char *bad : {"12Q", "", "K", "-5", "1.5M", "0", "1 K", "9223372036854775807K"}) {
    auto parsed = kiln::parseBudgetBytes("--ram-budget", bad);
    ASSERT_FALSE(static_cast<bool>(parsed)) << bad;
    std::string message = llvm::toString(parsed.takeError());
    EXPECT_NE(message.find(std::string("--ram-budget='") + bad + "'"), std::string::npos)
        << message;
  }
}

TEST(McuMemory, BudgetVerdictsNameTheExcess) {
  kiln::ExportFootprint fp;
  fp.ramBytes = 3 * 1048576 / 2; // 1.5 MiB
  fp.flashBytes = 1000;
  auto checks = kiln::checkBudget(fp, {256 * 1024, 2000});
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_TRUE(checks[0].exceeded);
  EXPECT_EQ(checks[0].message, "RAM 1.5 MiB exceeds the budget 256 KiB by 1.2 MiB");
  EXPECT_FALSE(checks[1].exceeded);
  EXPECT_EQ(checks[1].message, "flash 1000 bytes is within the budget 2.0 KiB (1000 bytes left)");
  EXPECT_TRUE(kiln::checkBudget(fp, {}).empty());
}

TEST(McuMemory, InspectBareMetalPrintsTargetFlashRamAndStackPerDispatch) {
  CommandResult r = runCommand(kiln("inspect " + model("alexa") + " " + kCortexM4));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("target thumbv7em-none-eabihf: thumbv7em-none-unknown-eabihf, cpu "
                          "cortex-m4, features "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find(", as c-module\n"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("use --output-format"), std::string::npos) << r.output;
  int64_t flash = numberAfter(r.output, "\nflash"), code = numberAfter(r.output, "code"),
          weights = numberAfter(r.output, "weights"), ram = numberAfter(r.output, "RAM"),
          arena = numberAfter(r.output, "\narena"), io = numberAfter(r.output, "I/O"),
          stack = numberAfter(r.output, "kernel stack");
  ASSERT_GT(flash, 0) << r.output;
  EXPECT_EQ(flash, code + weights) << r.output;
  // The arena line of the plan, the I/O of the seeded inputs and reference
  // outputs, and the largest per-dispatch frame add up to RAM.
  int64_t ioBytes = 0;
  for (const auto &arrays : {realModelInputs("alexa"), realModelReference("alexa")})
    for (const kiln::NpyArray &a : arrays)
      ioBytes += static_cast<int64_t>(a.data.size());
  EXPECT_EQ(io, ioBytes);
  auto rows = dispatchMemoryLines(r.output);
  ASSERT_FALSE(rows.empty()) << r.output;
  EXPECT_EQ(static_cast<int64_t>(rows.size()), numberAfter(r.output, "tflite:")) << r.output;
  int64_t largest = 0;
  for (const auto &[name, row] : rows) {
    EXPECT_GT(row[0], 0) << name;
    largest = std::max(largest, row[0]);
  }
  EXPECT_EQ(stack, largest);
  EXPECT_EQ(ram, arena + ioBytes + largest) << r.output;
}

TEST(McuMemory, InspectHostedTargetSaysStackNeedsCodeGeneration) {
  CommandResult r = runCommand(kiln("inspect " + model("alexa")));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("flash and kernel stack frames need code generation"),
            std::string::npos)
      << r.output;
  auto rows = dispatchMemoryLines(r.output);
  ASSERT_FALSE(rows.empty()) << r.output;
  for (const auto &[name, row] : rows)
    EXPECT_EQ(row[0], -1) << name;
}

/// BlazeFace's Cortex-M4 C module: each dispatch's stack frame equals
/// llvm-readelf's .stack_sizes entry of its entry point, the footprint's
/// kernel stack is the largest, and arena shares and weights equal a byte
/// map of the bindings in the plan.
TEST(McuMemory, ExportStackArenaAndWeightsPerDispatchMatchIndependentReads) {
  TempDir dir;
  CommandResult r = runCommand(kiln("export " + model("blazeface") + " " + kCortexM4 +
                                    " --output-format=c-module -o " +
                                    shellQuote(dir.file("out"))));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  llvm::json::Value manifestValue = parseJson(readText(dir.file("out/manifest.json")));
  const llvm::json::Object &manifest = *manifestValue.getAsObject();
  const llvm::json::Array &dispatches = *manifest.getArray("dispatches");
  int64_t kernelStack = *manifest.getObject("memory")->getInteger("stack_bytes");
  // Deduplicated dispatches share their entry point's frame; the largest
  // is the footprint's kernel stack. The Cortex-M tiles keep it small
  // (30208 bytes with the 64 KiB application-core budget). A kernel with
  // stack of run-time size would have no frame (null, dynamic_stack); tile
  // temporaries get static frames bounded over the workgroup grid, so
  // BlazeFace has none (its PAD kernels' windows were such before).
  int64_t largest = 0;
  std::map<std::string, int64_t> byEntry;
  for (const llvm::json::Value &v : dispatches) {
    const llvm::json::Object &d = *v.getAsObject();
    int64_t frame = d.getInteger("stack_bytes").value_or(-2);
    EXPECT_EQ(frame == -2, *d.getBoolean("dynamic_stack")) << d.getString("name")->str();
    EXPECT_FALSE(*d.getBoolean("dynamic_stack")) << d.getString("name")->str();
    std::string entry = d.getString("entry_point")->str();
    auto [it, inserted] = byEntry.emplace(entry, frame);
    EXPECT_EQ(it->second, frame) << entry;
    largest = std::max(largest, frame);
  }
  EXPECT_EQ(largest, kernelStack);
  EXPECT_LE(kernelStack, 8192);
  EXPECT_LT(byEntry.size(), dispatches.size()); // BlazeFace repeats blocks

  if (haveTool("llvm-readelf")) {
    CommandResult readelf =
        runCommand("llvm-readelf --stack-sizes " + shellQuote(dir.file("out/blazeface_kernels.o")));
    ASSERT_EQ(readelf.exitCode, 0) << readelf.output;
    std::map<std::string, int64_t> frames;
    std::regex row(R"(\n\s+(\d+)\s+blazeface_(main_dispatch_\d+))");
    for (auto it = std::sregex_iterator(readelf.output.begin(), readelf.output.end(), row);
         it != std::sregex_iterator(); ++it)
      frames[(*it)[2]] = std::stoll((*it)[1]);
    for (const auto &[entry, frame] : byEntry)
      if (frame == -2)
        EXPECT_EQ(frames.count(entry), 0u) << entry;
      else
        EXPECT_EQ(frames[entry], frame) << entry;
    EXPECT_GT(frames.size(), byEntry.size() / 2) << readelf.output;
  }

  // The plan's bindings, byte by byte.
  CommandResult json = runCommand(kiln("inspect " + model("blazeface") + " " + kCortexM4 +
                                       " --json 2>/dev/null"));
  ASSERT_EQ(json.exitCode, 0);
  llvm::json::Value planValue = parseJson(json.output);
  const llvm::json::Object &plan = *planValue.getAsObject();
  const llvm::json::Array &buffers = *plan.getObject("memory")->getArray("buffers");
  std::map<int64_t, std::array<int64_t, 2>> arenaShare; // dispatch -> {arena, weights}
  for (const llvm::json::Value &cv : *plan.getObject("schedule")->getArray("commands")) {
    const llvm::json::Object &c = *cv.getAsObject();
    if (c.getString("kind")->str() != "dispatch")
      continue;
    std::set<int64_t> arenaBytes;
    std::set<std::pair<int64_t, int64_t>> weightBytes; // (constant, byte)
    for (const llvm::json::Value &bv : *c.getArray("bindings")) {
      const llvm::json::Object &b = *bv.getAsObject();
      const llvm::json::Object &buffer = *buffers[*b.getInteger("buffer")].getAsObject();
      int64_t from = *b.getInteger("offset"), length = *b.getInteger("length");
      std::string kind = buffer.getString("kind")->str();
      for (int64_t i = from; i < from + length; ++i) {
        if (kind == "transient")
          arenaBytes.insert(*buffer.getInteger("offset") + i);
        else if (kind == "constant")
          weightBytes.insert({*buffer.getInteger("index"), i});
      }
    }
    arenaShare[*c.getInteger("dispatch")] = {static_cast<int64_t>(arenaBytes.size()),
                                             static_cast<int64_t>(weightBytes.size())};
  }
  for (const llvm::json::Value &v : dispatches) {
    const llvm::json::Object &d = *v.getAsObject();
    int64_t id = *d.getInteger("id");
    EXPECT_EQ(*d.getInteger("arena_bytes"), arenaShare[id][0]) << id;
    EXPECT_EQ(*d.getInteger("weight_bytes"), arenaShare[id][1]) << id;
  }
  // kiln export prints the same rows.
  auto rows = dispatchMemoryLines(r.output);
  EXPECT_EQ(rows.size(), dispatches.size()) << r.output;
  for (const llvm::json::Value &v : dispatches) {
    const llvm::json::Object &d = *v.getAsObject();
    auto row = rows[d.getString("name")->str()];
    EXPECT_EQ(row[0], d.getInteger("stack_bytes").value_or(-2));
    EXPECT_EQ(row[1], *d.getInteger("arena_bytes"));
    EXPECT_EQ(row[2], *d.getInteger("weight_bytes"));
  }
  std::string report = readText(dir.file("out/report.md"));
  EXPECT_NE(report.find("| stack bytes | arena bytes | weight bytes |"), std::string::npos);
}

/// int8 models on the Cortex-M4. Their kernels keep an i32 accumulator tile
/// per int8 output tile on the stack; the 4 KiB workgroup budget
/// (kMicrocontrollerWorkgroupBytes) counts those 4-byte accumulators, so no
/// accumulator temporary exceeds 4096 bytes (--emit=buffers' memref.alloca
/// of i32), and every kernel's frame is recorded (no stack of run-time size:
/// static temporaries sit in the kernel's entry block) and stays within
/// twice the budget (as BlazeFace's above): the accumulators, plus the
/// padded input window a depthwise tile also keeps (each bounded by the
/// budget, not their sum: person_detect's 24x24x32 depthwise keeps 3072
/// bytes of accumulators and a 2496-byte window) and spills. Before: frames
/// of 9344 to 18816 bytes, and 14 of person_detect's depthwise kernels
/// without a recorded frame.
TEST(McuMemory, Int8KernelFramesStayWithinTheTileBudget) {
  const int64_t budget = 4096;
  for (std::string name : {"person_detect", "micro_speech_quantized"}) {
    std::string path =
        shellQuote(std::string(KILN_TEST_DATA_DIR) + "/models/int8/" + name + ".tflite");
    TempDir dir;
    CommandResult r = runCommand(kiln("export " + path + " " + kCortexM4 +
                                      " --output-format=c-module -o " +
                                      shellQuote(dir.file("out"))));
    ASSERT_EQ(r.exitCode, 0) << r.output;
    llvm::json::Value manifestValue = parseJson(readText(dir.file("out/manifest.json")));
    const llvm::json::Object &manifest = *manifestValue.getAsObject();
    int64_t largest = 0;
    for (const llvm::json::Value &v : *manifest.getArray("dispatches")) {
      const llvm::json::Object &d = *v.getAsObject();
      std::string id = name + " " + d.getString("name")->str();
      EXPECT_FALSE(*d.getBoolean("dynamic_stack")) << id;
      int64_t frame = d.getInteger("stack_bytes").value_or(-1);
      EXPECT_GE(frame, 0) << id;
      EXPECT_LE(frame, 2 * budget) << id;
      largest = std::max(largest, frame);
    }
    EXPECT_EQ(largest, *manifest.getObject("memory")->getInteger("stack_bytes")) << name;

    CommandResult buffers = runCommand(kiln("compile " + path + " " + kCortexM4 +
                                            " --output-format=c-module --emit=buffers"));
    ASSERT_EQ(buffers.exitCode, 0) << name;
    std::regex i32Alloca(R"(memref\.alloca\(\) \{alignment = \d+ : i64\} : memref<([0-9x]+)xi32>)");
    int accumulators = 0;
    const std::string &ir = buffers.output;
    for (auto it = std::sregex_iterator(ir.begin(), ir.end(), i32Alloca);
         it != std::sregex_iterator(); ++it) {
      int64_t bytes = 4;
      std::stringstream dims((*it)[1].str());
      for (std::string dim; std::getline(dims, dim, 'x');)
        bytes *= std::stoll(dim);
      EXPECT_LE(bytes, budget) << name << ": " << (*it)[0].str();
      ++accumulators;
    }
    EXPECT_GT(accumulators, 0) << name;
  }
}

TEST(McuMemory, ExceededBudgetsWarnOnStderrAndExitZero) {
  TempDir dir;
  std::string args = "export " + model("alexa") + " " + kCortexM4 +
                     " --output-format=c-module --ram-budget=1K --flash-budget=2KiB -o " +
                     shellQuote(dir.file("out"));
  CommandResult stderrOnly = runCommand(stderrOf(kiln(args)));
  ASSERT_EQ(stderrOnly.exitCode, 0) << stderrOnly.output;
  EXPECT_NE(stderrOnly.output.find("kiln: warning: RAM "), std::string::npos)
      << stderrOnly.output;
  EXPECT_NE(stderrOnly.output.find(" exceeds the budget 1 KiB by "), std::string::npos)
      << stderrOnly.output;
  EXPECT_NE(stderrOnly.output.find("kiln: warning: flash "), std::string::npos)
      << stderrOnly.output;
  EXPECT_EQ(stderrOnly.output.find("error"), std::string::npos) << stderrOnly.output;
  llvm::json::Value manifestValue = parseJson(readText(dir.file("out/manifest.json")));
  const llvm::json::Object &manifest = *manifestValue.getAsObject();
  const llvm::json::Array &budgets = *manifest.getArray("budgets");
  ASSERT_EQ(budgets.size(), 2u);
  const llvm::json::Object &ram = *budgets[0].getAsObject();
  EXPECT_EQ(ram.getString("memory")->str(), "ram");
  EXPECT_EQ(*ram.getInteger("budget_bytes"), 1024);
  EXPECT_EQ(*ram.getInteger("bytes"), *manifest.getObject("memory")->getInteger("ram_bytes"));
  EXPECT_EQ(*ram.getBoolean("exceeded"), true);
  EXPECT_EQ(*budgets[1].getAsObject()->getInteger("budget_bytes"), 2048);
  EXPECT_EQ(*budgets[1].getAsObject()->getBoolean("exceeded"), true);
  // The command that repeats the build carries the budgets.
  EXPECT_NE(manifest.getString("command")->str().find("--ram-budget=1024 --flash-budget=2048"),
            std::string::npos);
  EXPECT_NE(readText(dir.file("out/report.md")).find("| RAM | "), std::string::npos);

  // inspect: the same warning, for a bare-metal and for a hosted target.
  for (std::string target : {std::string(kCortexM4), std::string("")}) {
    CommandResult inspect = runCommand(
        stderrOf(kiln("inspect " + model("alexa") + " " + target + " --ram-budget=1K")));
    EXPECT_EQ(inspect.exitCode, 0) << inspect.output;
    EXPECT_NE(inspect.output.find("kiln: warning: RAM "), std::string::npos) << inspect.output;
  }
}

TEST(McuMemory, BudgetsWithinLimitsDoNotWarn) {
  TempDir dir;
  CommandResult r = runCommand(kiln("export " + model("alexa") + " " + kCortexM4 +
                                    " --output-format=c-module --ram-budget=512M "
                                    "--flash-budget=1024MiB -o " + shellQuote(dir.file("out"))));
  ASSERT_EQ(r.exitCode, 0) << r.output;
  EXPECT_EQ(r.output.find("warning"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("budget: RAM "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("is within the budget 512 MiB"), std::string::npos) << r.output;
  llvm::json::Value manifestValue = parseJson(readText(dir.file("out/manifest.json")));
  for (const llvm::json::Value &b : *manifestValue.getAsObject()->getArray("budgets"))
    EXPECT_EQ(*b.getAsObject()->getBoolean("exceeded"), false);
  CommandResult inspect = runCommand(kiln("inspect " + model("alexa") + " " + kCortexM4 +
                                          " --ram-budget=512M --flash-budget=1024MiB"));
  EXPECT_EQ(inspect.exitCode, 0) << inspect.output;
  EXPECT_EQ(inspect.output.find("warning"), std::string::npos) << inspect.output;
  EXPECT_NE(inspect.output.find("budget: flash "), std::string::npos) << inspect.output;
}

TEST(McuMemory, BadBudgetTextIsOneErrorNamingTheFlag) {
  TempDir dir;
  for (std::string args :
       {"export " + model("alexa") + " " + kCortexM4 +
            " --output-format=c-module --ram-budget=12Q -o " + shellQuote(dir.file("out")),
        "inspect " + model("alexa") + " " + kCortexM4 + " --ram-budget=12Q"}) {
    CommandResult r = runCommand(kiln(args));
    EXPECT_EQ(r.exitCode, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("kiln: error: --ram-budget='12Q' is not a byte count"),
              std::string::npos)
        << r.output;
    size_t errors = 0;
    for (size_t p = r.output.find("error:"); p != std::string::npos;
         p = r.output.find("error:", p + 1))
      ++errors;
    EXPECT_EQ(errors, 1u) << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("out")));
}

} // namespace
