//===- Export.cpp - kiln export -------------------------------------------===//
//
// kiln export MODEL --target=T [--profile=P] [--output-format=kiln|c-module]
//             [--kit [--kit-input=FILE.npy ...]] -o DIR
//
//===----------------------------------------------------------------------===//
#include "Kiln.h"

#include "kiln/Export.h"
#include "kiln/Project.h"
#include "kiln/Recipe.h"
#include "kiln/Targets.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace kiln::cli {

/// Builds and writes the bundle of `request` into `dir`.
static int exportRequest(const kiln::ExportRequest &request, const std::string &dir) {
  const std::vector<std::string> exportReads = filesRead(request.model);
  auto bundle = kiln::buildExportBundle(request);
  if (!bundle)
    return fail(bundle.takeError());
  printWarnings(bundle->warnings);
  if (llvm::Error err = kiln::writeExportBundle(*bundle, dir, {}, exportReads))
    return fail(std::move(err));
  llvm::outs() << "exported " << request.model << " for " << request.recipe.target << " to " << dir
               << ": ";
  for (size_t i = 0; i < bundle->files.size(); ++i)
    llvm::outs() << (i ? ", " : "") << bundle->files[i].name;
  llvm::outs() << "\n" << footprintText(bundle->footprint) << "\n";
  printDispatchMemory(bundle->footprint.dispatches);
  reportBudgets(bundle->budgetChecks);
  return 0;
}

int runExport() {
  // Copied first: compiling resets llvm::cl occurrences (see runRun).
  kiln::ExportRequest request;
  request.model = exportModel;
  std::string dir = exportOutput;
  const std::string project = projectFile;
  auto budget = memoryBudget();
  if (!budget)
    return fail(budget.takeError());
  request.budget = *budget;
  auto bufferBytes = maxBufferBytesFlag();
  if (!bufferBytes)
    return fail(bufferBytes.takeError());
  request.maxBufferBytes = *bufferBytes;
  const bool kitGiven = kitFlag;
  auto kit = kitRequestOfFlags(kitGiven);
  if (!kit)
    return fail(kit.takeError());
  if (request.model.empty() == project.empty())
    return usage("kiln export takes a model file or --project=FILE.kilnproj (one of them)");
  if (!project.empty()) {
    if (recipeFlagsGiven())
      return projectFlagsError(project);
    auto loaded = loadProjectFlag(project, request.model);
    if (!loaded)
      return fail(loaded.takeError());
    // What the workbench's Export dialog exported: the working recipe with
    // the export's settings; budget flags given here win.
    kiln::ExportRequest exported = kiln::projectExportRequest(*loaded, project);
    if (llvm::Error err = kiln::validateRecipe(exported.recipe))
      return fail(project + ": export settings: " + llvm::toString(std::move(err)));
    request.recipe = exported.recipe;
    if (!ramBudget.getNumOccurrences())
      request.budget.ramBytes = exported.budget.ramBytes;
    if (!flashBudget.getNumOccurrences())
      request.budget.flashBytes = exported.budget.flashBytes;
    kit->enabled = kit->enabled || exported.kit.enabled;
    if (dir.empty())
      dir = kiln::projectExportDir(*loaded, project);
    if (dir.empty())
      return fail(project + " names no export folder (\"export_dir\"); give -o DIR");
  } else {
    if (!targetTriple.empty())
      return fail("kiln export takes a named --target (" + llvm::join(kiln::knownTargets(), ", ") +
                  "), not --target-triple");
    auto recipe = recipeOfFlags();
    if (!recipe)
      return fail(recipe.takeError());
    request.recipe = *recipe;
  }
  request.kit = std::move(*kit);
  warnUnusedSettings(request.recipe);
  return exportRequest(request, dir.empty() ? kiln::defaultExportDir(request) : dir);
}

} // namespace kiln::cli
