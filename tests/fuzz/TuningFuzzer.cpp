//===- TuningFuzzer.cpp - Fuzz target: tuning JSON files ------------------===//
//
// Bytes -> kiln::parseRecipe (core/lib/Recipe.cpp; what `kiln compile
// --tuning=FILE` reads). Invariants: errors are one line; what is accepted
// passes validateRecipe's per-setting rules (dispatch ids and tile sizes
// >= 0, positive dimensions) and survives recipeToJson -> recipeFromJson
// and recipeCommandLine -> setRecipeOption unchanged.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "kiln/Recipe.h"

using kiln::fuzz::fuzzCheck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  auto recipe = kiln::parseRecipe(text, "tuning.json");
  if (!recipe) {
    kiln::fuzz::expectOneLineError(recipe.takeError(), "parseRecipe", text);
    return 0;
  }
  for (int64_t id : recipe->noFusion)
    fuzzCheck(id >= 0, "accepted a negative no_fusion id");
  for (const auto &[id, sizes] : recipe->tiles) {
    fuzzCheck(id >= 0, "accepted a negative dispatch id");
    for (int64_t s : sizes)
      fuzzCheck(s >= 0, "accepted a negative tile size");
  }
  for (const auto &[input, shape] : recipe->fixedShapes)
    for (int64_t d : shape)
      fuzzCheck(d > 0, "accepted a dimension that is not positive");
  auto again = kiln::recipeFromJson(kiln::recipeToJson(*recipe), "again.json");
  fuzzCheck(static_cast<bool>(again), "recipeToJson output does not parse back");
  fuzzCheck(*again == *recipe, "recipeToJson -> recipeFromJson changed the recipe");
  kiln::BuildRecipe parsed;
  for (const std::string &flag : kiln::recipeCommandLine(*recipe)) {
    auto [key, value] = llvm::StringRef(flag).drop_front(2).split('=');
    llvm::Error err = kiln::setRecipeOption(parsed, key, value);
    fuzzCheck(!err, "recipeCommandLine output does not parse back");
    llvm::consumeError(std::move(err));
  }
  fuzzCheck(parsed == *recipe, "recipeCommandLine -> setRecipeOption changed the recipe");
  // The combination check may refuse (a bare-metal target as .kiln); it
  // must say so in one line.
  if (llvm::Error err = kiln::validateRecipe(*recipe))
    kiln::fuzz::expectOneLineError(std::move(err), "validateRecipe", text);
  return 0;
}
