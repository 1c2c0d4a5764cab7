//===- Compile.cpp - kiln compile -----------------------------------------===//
//
// kiln compile MODEL [-o OUT.kiln] [--emit=STAGE] [--project=P] [build flags]
//
//===----------------------------------------------------------------------===//
#include "Kiln.h"

#include "kiln/AtomicWrite.h"
#include "kiln/Compiler.h"
#include "kiln/Export.h"
#include "kiln/Options.h"

#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace kiln::cli {

int runCompile() {
  // Copied first: compiling resets llvm::cl occurrences (see runRun).
  std::string model = compileModel;
  const std::string output = compileOutput;
  const std::string emitText = emit;
  const std::string dot = dumpGraph, csv = dumpSchedule;
  const std::string project = projectFile;
  if (model.empty() == project.empty())
    return usage("kiln compile takes a model file or --project=FILE.kilnproj (one of them)");
  auto recipe = recipeOfFlags();
  if (!recipe)
    return fail(recipe.takeError());
  if (!project.empty()) {
    if (recipeFlagsGiven())
      return projectFlagsError(project);
    auto loaded = loadProjectFlag(project, model);
    if (!loaded)
      return fail(loaded.takeError());
    *recipe = loaded->recipe;
  }
  const std::vector<std::string> reads = filesRead(model);
  warnUnusedSettings(*recipe);
  auto options = compileOptionsOf(*recipe);
  if (!options)
    return fail(options.takeError());
  if (!emitText.empty()) {
    for (const auto &[flag, value] :
         {std::pair{"--dump-dispatch-graph", dot}, std::pair{"--dump-schedule", csv}})
      if (!value.empty())
        warn(llvm::Twine(flag) + " has no effect with --emit (no plan is made); drop one of them");
    // On a terminal, elide big constants; a file gets them all, so it
    // compiles again (`kiln compile --emit=tosa -o m.mlir; kiln compile m.mlir`).
    options->elideConstants = output.empty() || output == "-";
    kiln::EmitStage stage;
    if (!kiln::parseEmitStage(emitText, stage))
      return usage("--emit='" + emitText +
                   "' is not a stage; use tosa, linalg, dispatches, buffers, llvm-ir or asm");
    auto text = kiln::emitStage(model, stage, *options);
    if (!text)
      return fail(text.takeError());
    if (output.empty() || output == "-") {
      llvm::outs() << *text;
      return 0;
    }
    if (llvm::Error err = kiln::writeFileAtomically(output, *text, reads))
      return fail(std::move(err));
    return 0;
  }
  if (options->format == kiln::OutputFormat::CModule) {
    if (output.empty())
      return usage("--output-format=c-module writes several files: give the folder with -o DIR");
    auto result = kiln::compile(model, *options);
    if (!result)
      return fail(result.takeError());
    printWarnings(result->warnings);
    kiln::ExportBundle bundle;
    bundle.files = result->files;
    std::vector<std::string> texts;
    if (llvm::Error err = kiln::writeExportBundle(bundle, output,
                                                  dumpFiles(*result->plan, dot, csv, texts), reads))
      return fail(std::move(err));
    llvm::outs() << "wrote " << output << "/{";
    for (size_t i = 0; i < result->files.size(); ++i)
      llvm::outs() << (i ? "," : "") << result->files[i].name;
    llvm::outs() << "} (" << result->triple << ", code " << result->codeBytes << " bytes, weights "
                 << result->constantBytes << " bytes, arena " << result->arenaBytes << " bytes)\n";
    return 0;
  }
  std::string out = output;
  if (out.empty()) {
    llvm::SmallString<256> path(model);
    llvm::sys::path::replace_extension(path, "kiln");
    out = path.str().str();
  }
  auto result = kiln::compile(model, *options);
  if (!result)
    return fail(result.takeError());
  printWarnings(result->warnings);
  std::vector<std::string> texts;
  std::vector<kiln::OutputFile> files = dumpFiles(*result->plan, dot, csv, texts);
  const std::vector<uint8_t> &artifact = result->artifact;
  files.insert(files.begin(), {out, [&artifact](llvm::raw_ostream &os) {
                                 os.write(reinterpret_cast<const char *>(artifact.data()),
                                          artifact.size());
                               }});
  if (llvm::Error err = kiln::writeFilesAtomically(files, reads))
    return fail(std::move(err));
  llvm::outs() << "wrote " << out << " (" << result->artifact.size() << " bytes, "
               << counted(result->plan->dispatches.size(), "dispatch", "dispatches") << ", "
               << counted(result->plan->schedule.waves, "wave", "waves") << ", arena "
               << result->plan->memory.arenaBytes << " bytes)\n";
  return 0;
}

} // namespace kiln::cli
