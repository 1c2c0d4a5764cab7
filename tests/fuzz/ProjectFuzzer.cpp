//===- ProjectFuzzer.cpp - Fuzz target: .kilnproj project files -----------===//
//
// Bytes -> kiln::parseProject (core/lib/Project.cpp; what the workbench and
// `kiln compile --project=` read) -> recipeCompileOptions. Invariants:
// errors are one line; a parsed project survives projectToJson ->
// parseProject unchanged.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "kiln/Project.h"

using kiln::fuzz::fuzzCheck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  auto project = kiln::parseProject(text, "model.kilnproj");
  if (!project) {
    kiln::fuzz::expectOneLineError(project.takeError(), "parseProject", text);
    return 0;
  }
  auto again = kiln::parseProject(kiln::projectToJson(*project), "again.kilnproj");
  fuzzCheck(static_cast<bool>(again), "projectToJson output does not parse back");
  fuzzCheck(*again == *project, "projectToJson -> parseProject changed the project");
  auto options = kiln::recipeCompileOptions(project->recipe);
  if (!options)
    kiln::fuzz::expectOneLineError(options.takeError(), "recipeCompileOptions", text);
  return 0;
}
