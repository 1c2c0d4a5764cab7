//===- CortexMBoards.cpp - Kiln C modules on QEMU's Cortex-M boards -------===//
//
// See CortexMBoards.h.
//
//===----------------------------------------------------------------------===//
#include "CortexMBoards.h"

#include "TestSupport.h"

#include "kiln/Kit.h"

#include "llvm/Support/Error.h"

#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>

namespace kiln::test {

static CortexMBoard boardOf(const char *target) {
  const kiln::CortexMBoard *board = kiln::cortexMBoardOf(target);
  return board ? CortexMBoard{board->target, board->machine, board->cpuFlags}
               : CortexMBoard{target, "(no board)", ""};
}

CortexMBoard cortexM4Board() { return boardOf("thumbv7em-none-eabihf"); }

CortexMBoard cortexM0PlusBoard() { return boardOf("thumbv6m-none-eabi"); }

std::string cortexMKitDir() { return KILN_KITS_DIR "/cortexm"; }

std::string writeLinkerScript(const CortexMBoard &board, const std::string &dir) {
  const kiln::CortexMBoard *b = kiln::cortexMBoardOf(board.target);
  kiln::FirmwareLayout layout;
  layout.flashBytes = b ? b->flashBytes : 0;
  layout.ramBytes = b ? b->ramBytes : 0;
  layout.stackBytes = 256 * 1024;
  layout.title = "a Cortex-M test program for " + board.target;
  layout.flashMessage = "the test program does not fit in flash";
  layout.ramMessage = "the test program does not fit in RAM";
  const std::string path = dir + "/firmware.ld";
  std::ofstream(path) << (b ? kiln::firmwareLinkerScript(*b, layout) : "");
  return path;
}

void PrintTo(const CortexMBoard &board, std::ostream *os) {
  *os << board.target << " on " << board.machine;
}

static bool haveTool(const std::string &tool) {
  return runCommand("command -v " + shellQuote(tool) + " >/dev/null 2>&1").exitCode == 0;
}

std::string missingCortexMTools() {
  for (const char *tool : {"arm-none-eabi-gcc", "arm-none-eabi-size", "qemu-system-arm"})
    if (!haveTool(tool))
      return std::string("needs ") + tool +
             " (Debian packages gcc-arm-none-eabi libnewlib-arm-none-eabi "
             "binutils-arm-none-eabi qemu-system-arm; scripts/install-deps.sh installs them)";
  return "";
}

static void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

static std::vector<uint8_t> readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::string writeCModule(const std::string &model, const std::string &name,
                         const std::string &target, kiln::CompileOptions options,
                         const std::string &dir, kiln::CompileResult *compiled) {
  if (llvm::Error err = kiln::applyTarget(target, options.target))
    return llvm::toString(std::move(err));
  options.format = kiln::OutputFormat::CModule;
  options.moduleName = name;
  auto built = kiln::compile(model, options);
  if (!built)
    return llvm::toString(built.takeError());
  for (const kiln::GeneratedFile &f : built->files)
    writeBytes(dir + "/" + f.name, f.bytes);
  if (compiled)
    *compiled = std::move(*built);
  return "";
}

/// Writes the inputs, runs `command` in `dir`, reads the outputs.
static ModuleRun runProgram(const std::string &dir, const std::string &command,
                            const std::vector<std::vector<uint8_t>> &inputs,
                            const std::vector<size_t> &outputBytes) {
  ModuleRun run;
  for (size_t i = 0; i < inputs.size(); ++i)
    writeBytes(dir + "/input_" + std::to_string(i) + ".bin", inputs[i]);
  auto start = std::chrono::steady_clock::now();
  CommandResult ran = runCommand("cd " + shellQuote(dir) + " && " + command);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (ran.exitCode != 0) {
    run.error = command + " exited with " + std::to_string(ran.exitCode) + ":\n" + ran.output;
    return run;
  }
  for (size_t k = 0; k < outputBytes.size(); ++k) {
    run.outputs.push_back(readBytes(dir + "/output_" + std::to_string(k) + ".bin"));
    if (run.outputs.back().size() != outputBytes[k])
      run.error += "output " + std::to_string(k) + " has " +
                   std::to_string(run.outputs.back().size()) + " bytes, not " +
                   std::to_string(outputBytes[k]) + "\n";
  }
  return run;
}

/// The module's sources for a C compiler command line.
static std::string moduleSources(const std::string &dir, const std::string &name) {
  return shellQuote(dir + "/" + name + ".c") + " " + shellQuote(dir + "/" + name + "_constants.c") +
         " " + shellQuote(dir + "/" + name + "_kernels.o");
}

ModuleRun runOnBoard(const CortexMBoard &board, const std::string &dir, const std::string &name,
                     const std::vector<std::vector<uint8_t>> &inputs,
                     const std::vector<size_t> &outputBytes) {
  const std::string m = KILN_CROSS_DIR "/cortexm", kit = cortexMKitDir();
  std::string cc = "arm-none-eabi-gcc -O2 " + board.cpuFlags +
                   " -std=c11 -Wall -Wextra -Werror -nostartfiles -T " +
                   shellQuote(writeLinkerScript(board, dir)) +
                   " -Wl,--no-warn-execstack -DKILN_MODULE=" + name + " -I" + shellQuote(dir) +
                   " -I" + kit + " " + kit + "/startup.c " + m + "/module_main.c " +
                   moduleSources(dir, name) + " -lm -lc -lgcc -o " + shellQuote(dir + "/prog.elf");
  ModuleRun run;
  CommandResult built = runCommand(cc);
  if (built.exitCode != 0) {
    run.error = cc + "\n" + built.output;
    return run;
  }
  // Berkeley format: "text data bss dec hex filename" and one row.
  CommandResult size = runCommand("arm-none-eabi-size " + shellQuote(dir + "/prog.elf"));
  std::istringstream rows(size.output);
  std::string header;
  std::getline(rows, header);
  int64_t text = 0, data = 0, bss = 0;
  rows >> text >> data >> bss;
  // Semihosting files resolve against QEMU's working directory.
  run = runProgram(dir,
                   "timeout 300 qemu-system-arm -M " + board.machine +
                       " -nographic -monitor none -serial none "
                       "-semihosting-config enable=on,target=native -kernel prog.elf",
                   inputs, outputBytes);
  run.flashBytes = text + data;
  run.staticRamBytes = data + bss;
  return run;
}

ModuleRun runOnHost(const std::string &dir, const std::string &name,
                    const std::vector<std::vector<uint8_t>> &inputs,
                    const std::vector<size_t> &outputBytes) {
  std::string cc = "cc -O2 -std=c11 -Wall -Wextra -Werror -DKILN_MODULE=" + name + " -I" +
                   shellQuote(dir) + " " KILN_CROSS_DIR "/module_main.c " +
                   moduleSources(dir, name) + " -lm -o " + shellQuote(dir + "/prog");
  CommandResult built = runCommand(cc);
  if (built.exitCode != 0)
    return ModuleRun{cc + "\n" + built.output, {}, 0, 0, 0};
  std::string command = "./prog";
  for (size_t i = 0; i < inputs.size(); ++i)
    command += " input_" + std::to_string(i) + ".bin";
  for (size_t k = 0; k < outputBytes.size(); ++k)
    command += " output_" + std::to_string(k) + ".bin";
  return runProgram(dir, command, inputs, outputBytes);
}

} // namespace kiln::test
