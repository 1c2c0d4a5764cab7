//===- MachineCode.h - LLVM IR, object code and linking --------*- C++ -*-===//
//
// Turns the LLVM-dialect module produced by buildLinalgToLLVMPipeline into
// native code: LLVM IR translation, the dispatch ABI wrapper, LLVM's -O
// pipeline, object/assembly emission through a TargetMachine, and an
// in-process LLD link into a position-independent ELF shared object, for
// every target LLVM builds (the device targets of kiln/Targets.h and any
// --target-triple). Internal to core.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_CODEGEN_MACHINECODE_H
#define KILN_CORE_CODEGEN_MACHINECODE_H

#include "kiln/Options.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Triple;
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kiln {

struct KernelTarget;

/// Creates a TargetMachine for `options` (host triple when empty; PIC
/// relocation model on hosted targets, static on bare metal). Errors name the unknown triple or CPU.
/// With `stackSizes`, objects get LLVM's .stack_sizes section (each
/// function's frame bytes; see largestStackFrame()).
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetOptions &options, unsigned optLevel, bool stackSizes = false);

/// A dispatch function to export: the kernel `name` takes `numBindings`
/// pointers then the workgroup id (x, y, z) as three i64.
struct KernelABI {
  std::string name;
  unsigned numBindings = 0;
  /// Binding positions that may share memory (in-place outputs); all other
  /// bindings are marked noalias.
  std::vector<int64_t> aliasedBindings;
  /// --check-bounds: each binding's extent (bytes, from its memref type)
  /// and the dispatch's label for the report; empty: no checks.
  std::vector<uint64_t> bindingBytes;
  std::string label;
};

/// The x86-64 features beyond the baseline (SSE2) that the runtime can
/// check on the CPU it runs on; requiredCpuFeatures() reports those `tm`
/// enables. Names are LLVM's (and GCC's __builtin_cpu_supports').
const std::vector<std::string> &checkableCpuFeatures();

/// The features of checkableCpuFeatures() that `tm`'s CPU and feature
/// string enable (empty for targets other than x86-64): recorded in the
/// artifact so the runtime refuses code its CPU cannot run.
std::vector<std::string> requiredCpuFeatures(const llvm::TargetMachine &tm);

/// Widest SIMD register of `tm`'s CPU and features, bytes: 64 with
/// AVX-512, 32 with AVX, else 16 (SSE, NEON, and a scalar fallback).
int64_t vectorBytesOf(const llvm::TargetMachine &tm);

/// The register file the kernels of `tm` use: x86 AVX-512 16 f32 lanes x
/// 32 registers, AVX 8 x 16, SSE 4 x 16; AArch64 NEON 4 x 32; targets
/// without a SIMD unit the kernels use (Cortex-M, RV64GC) 1 lane x 32 FP
/// registers. The workgroup budget is the DeviceTarget::workgroupBytes of
/// `tm`'s triple (kiln/Targets.h); a triple outside the table gets the
/// microcontroller budget on Arm M-profile, the hosted default elsewhere.
KernelTarget kernelTargetOf(const llvm::TargetMachine &tm);

/// Translates an LLVM-dialect module to LLVM IR and exports each kernel as
/// an entry point of the same name with the runtime's dispatch ABI
/// `void name(void **bindings, const uint32_t *workgroup_id)`; the kernel
/// body becomes internal (`name.impl`) and is inlined into the entry.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &context,
                  llvm::ArrayRef<KernelABI> kernels);

/// Runs LLVM's default per-module pipeline at `optLevel` (0..3) for `tm`.
void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm,
                    unsigned optLevel);

/// Emits `module` as an ELF relocatable object (asText=false) or as
/// assembly text (asText=true).
llvm::Expected<std::string> emitMachineCode(llvm::Module &module,
                                            llvm::TargetMachine &tm,
                                            bool asText);

/// Links relocatable objects into one position-independent ELF shared
/// object with LLD (in-process; calls are serialized). Unresolved libm
/// symbols stay imports resolved by the runtime's loader. `stripSymbols`
/// drops the symbol table (the exported entry points stay in .dynsym).
/// The symbol hash table is GNU-style (.gnu.hash) except for MIPS
/// (`triple`), whose ABI only has the System V .hash.
llvm::Expected<std::vector<uint8_t>>
linkSharedObject(llvm::ArrayRef<std::string> objects, const llvm::Triple &triple,
                 bool stripSymbols = false);

/// Links relocatable objects into one relocatable object (`ld.lld -r`), the
/// form a C module ships; one object is returned as it is.
llvm::Expected<std::vector<uint8_t>> linkRelocatable(llvm::ArrayRef<std::string> objects);

/// Parts the kernels of one build are compiled in (compileKernelObjects).
/// Fixed, not the machine's core count, so that every machine writes the
/// same artifact bytes.
constexpr unsigned kCodegenParts = 4;

/// Optimizes `module` (optimizeModule) and emits its kernels as ELF
/// relocatable objects, one per part: the entry points are split into at
/// most `parts` parts of about equal instruction count (each with the
/// internal functions it calls), and the parts are optimized and compiled
/// in parallel on up to the machine's hardware threads, each in its own
/// LLVMContext with a copy of `tm`. Kernels do not call each other, so each
/// kernel's code is what one module would give. The split depends only on
/// the module, so the objects are the same on every run and machine.
/// Errors name the LLVM failure.
llvm::Expected<std::vector<std::string>>
compileKernelObjects(std::unique_ptr<llvm::Module> module,
                     llvm::ArrayRef<std::string> entryPoints, llvm::TargetMachine &tm,
                     unsigned optLevel, unsigned parts);

/// The largest function frame recorded in the .stack_sizes section of the
/// ELF object `elf` (LLVM's format: per function, an address of the ELF
/// class's width then the frame size as ULEB128), bytes; -1 if there is no
/// such section.
int64_t largestStackFrame(llvm::ArrayRef<uint8_t> elf);

/// Each function's frame recorded in the .stack_sizes section of the ELF
/// relocatable object `elf` (a C module's kernels), bytes, by symbol name
/// (relocations resolved as llvm-readelf --stack-sizes does). Empty if
/// there is no such section.
std::map<std::string, int64_t> stackFrameSizes(llvm::ArrayRef<uint8_t> elf);

/// Bytes of the ELF sections of `elf` (object or shared object) that take
/// space in the loaded image (SHF_ALLOC and not SHT_NOBITS): code, read-only
/// data, initialized data. 0 if `elf` is not ELF.
int64_t loadableBytes(llvm::ArrayRef<uint8_t> elf);

} // namespace kiln

#endif
