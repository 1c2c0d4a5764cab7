//===- CModuleWriter.h - Static C module output ----------------*- C++ -*-===//
//
// Writes a compiled model as a static C module (`--output-format=c-module`):
// the command list of an ArtifactSpec unrolled into straight-line C with
// fixed arena offsets, the weights as one aligned C array, and the kernels'
// relocatable object. No interpreter and no flatbuffer parsing remain: what
// the `.kiln` runtime decides at load time is decided here. Internal to core.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_ARTIFACT_CMODULEWRITER_H
#define KILN_CORE_ARTIFACT_CMODULEWRITER_H

#include "Artifact/ArtifactWriter.h"
#include "kiln/Options.h"

#include <string>
#include <vector>

namespace kiln {

struct CompilationPlan;

/// True if `name` is a valid C identifier that does not start with "__".
bool isCIdentifier(const std::string &name);

/// Longest module name accepted, characters (file names NAME_constants.c
/// must stay well under common 255-byte limits).
inline constexpr size_t kMaxModuleNameLength = 100;

/// True for C keywords, C standard header names ("stdint": NAME.h would
/// shadow <stdint.h>) and "main".
bool isReservedModuleName(const std::string &name);

/// Why `name` cannot name a C module, as one phrase following the quoted
/// name ("is not a C identifier (...)", "is a C keyword or standard header
/// name (...)", "is 101 characters; at most 100"); empty if it can. The
/// one rule for --module-name (the recipe's check and the compiler's).
std::string moduleNameProblem(const std::string &name);

/// Bytes of the NAME_constants array: each constant 64-byte aligned.
uint64_t cModuleConstantBytes(const ArtifactSpec &spec);

/// "blazeface.tflite" -> "blazeface"; non-identifier characters become '_',
/// a leading digit gets a "m_" prefix, a reserved name an "_model" suffix,
/// and names are cut to kMaxModuleNameLength.
std::string moduleNameFromPath(const std::string &path);

/// The C module of `spec` named `name` (a C identifier): NAME.h, NAME.c,
/// NAME_constants.c and NAME_kernels.o (`kernelObject`, whose entry points
/// are already renamed NAME_<entry point>). `plan` (may be null) adds each
/// command's source operators as comments. Constants are laid out in
/// declaration order, each 64-byte aligned, in one array NAME_constants.
std::vector<GeneratedFile> writeCModule(const ArtifactSpec &spec,
                                        const CompilationPlan *plan,
                                        const std::string &name,
                                        const std::vector<uint8_t> &kernelObject);

} // namespace kiln

#endif
