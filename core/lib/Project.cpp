//===- Project.cpp - .kilnproj project files ------------------------------===//
#include "kiln/Project.h"
#include "kiln/AtomicWrite.h"
#include "kiln/Error.h"
#include "kiln/ReadFile.h"

#include "Support/Message.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

std::string projectPathFor(const std::string &modelPath) { return modelPath + ".kilnproj"; }

std::string projectPathToRead(const std::string &modelPath) {
  std::string path = projectPathFor(modelPath);
  if (llvm::sys::fs::exists(path))
    return path;
  llvm::SmallString<256> older(modelPath);
  llvm::sys::path::replace_extension(older, "kilnproj");
  if (older.str() == modelPath || !llvm::sys::fs::exists(older))
    return path;
  auto project = loadProject(older.str().str());
  if (!project) {
    llvm::consumeError(project.takeError()); // not necessarily this model's
    return path;
  }
  if (llvm::sys::path::filename(project->model) != llvm::sys::path::filename(modelPath))
    return path;
  return older.str().str();
}

llvm::Expected<Project> loadProject(const std::string &path) {
  auto buffer = readRegularFile(path, "a .kilnproj project file");
  if (!buffer)
    return buffer.takeError();
  return parseProject((*buffer)->getBuffer(), path);
}

/// The keys of the "export" object: recipe keys the export may set, then
/// its own.
static const std::vector<std::string> kExportRecipeKeys = {"target", "target_cpu", "target_cpu_features",
                                                           "profile", "output_format"};
static const std::vector<std::string> kExportBudgetKeys = {"ram_budget_bytes", "flash_budget_bytes",
                                                           "kit"};

/// Reads the "export" object of a project (`value`); `path` names the file
/// in errors. Each recipe key is checked by the recipe's own reader.
static llvm::Expected<ExportSettings> parseExportSettings(const llvm::json::Value &value,
                                                          const std::string &path) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return makeError(path + ": \"export\" must be an object (the export's target, profile, "
                            "output_format and budgets)");
  llvm::json::Object recipeKeys;
  ExportSettings settings;
  for (const auto &[key, v] : *object) {
    const std::string name = key.str();
    if (llvm::is_contained(kExportRecipeKeys, name)) {
      recipeKeys[name] = v;
      continue;
    }
    if (name == "kit") {
      std::optional<bool> kit = v.getAsBoolean();
      if (!kit)
        return makeError(path + ": \"export.kit\" must be true or false (add a firmware kit)");
      settings.kit = *kit;
      continue;
    }
    int64_t *budget = name == "ram_budget_bytes"     ? &settings.budget.ramBytes
                      : name == "flash_budget_bytes" ? &settings.budget.flashBytes
                                                     : nullptr;
    if (!budget)
      return makeError(path + ": unknown key 'export." + quoteInput(name) + "' (known: " +
                       llvm::join(kExportRecipeKeys, ", ") + ", " + llvm::join(kExportBudgetKeys, ", ") + ")");
    std::optional<int64_t> bytes = jsonInteger(v);
    if (!bytes || *bytes < 1)
      return makeError(path + ": \"export." + name + "\" must be a whole number of bytes >= 1");
    *budget = *bytes;
  }
  auto recipe = recipeFromJson(recipeKeys, path + ": in \"export\"");
  if (!recipe)
    return recipe.takeError();
  if (!recipeKeys.get("target") && (recipeKeys.get("target_cpu") || recipeKeys.get("target_cpu_features")))
    return makeError(path + ": \"export.target_cpu\" and \"export.target_cpu_features\" need "
                            "\"export.target\" (without it the export uses the working build's target)");
  if (recipeKeys.get("target")) {
    settings.target = recipe->target;
    settings.targetCpu = recipe->targetCpu;
    settings.targetFeatures = recipe->targetFeatures;
  }
  if (recipeKeys.get("profile"))
    settings.profile = recipe->profile;
  if (recipeKeys.get("output_format"))
    settings.format = recipe->format;
  return settings;
}

/// The "export" object of `settings` (unset keys omitted; empty when none
/// is set).
static llvm::json::Object exportSettingsToJson(const ExportSettings &settings) {
  llvm::json::Object object;
  if (!settings.target.empty()) {
    object["target"] = settings.target;
    if (!settings.targetCpu.empty())
      object["target_cpu"] = settings.targetCpu;
    if (!settings.targetFeatures.empty())
      object["target_cpu_features"] = settings.targetFeatures;
  }
  if (!settings.profile.empty())
    object["profile"] = settings.profile;
  if (settings.format)
    object["output_format"] = toString(*settings.format);
  if (settings.budget.ramBytes > 0)
    object["ram_budget_bytes"] = settings.budget.ramBytes;
  if (settings.budget.flashBytes > 0)
    object["flash_budget_bytes"] = settings.budget.flashBytes;
  if (settings.kit)
    object["kit"] = true;
  return object;
}

BuildRecipe exportRecipe(const Project &project) {
  BuildRecipe recipe = project.recipe;
  const ExportSettings &e = project.exportSettings;
  if (!e.target.empty()) {
    recipe.target = e.target;
    recipe.targetCpu = e.targetCpu;
    recipe.targetFeatures = e.targetFeatures;
  }
  if (!e.profile.empty()) {
    recipe.profile = e.profile;
    recipe.debugSymbols.reset();
    recipe.reflection.reset();
  }
  if (e.format)
    recipe.format = *e.format;
  return recipe;
}

ExportRequest projectExportRequest(const Project &project, const std::string &projectPath) {
  ExportRequest request;
  request.model = projectModelPath(project, projectPath);
  request.recipe = exportRecipe(project);
  request.budget = project.exportSettings.budget;
  request.kit.enabled = project.exportSettings.kit;
  return request;
}

llvm::Expected<Project> parseProject(llvm::StringRef text, const std::string &path) {
  auto parsed = llvm::json::parse(text);
  if (!parsed)
    return makeError(path + ": not a Kiln project (invalid JSON: " +
                     llvm::toString(parsed.takeError()) + ")");
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root || !root->get("kiln_project"))
    return makeError(path + ": not a Kiln project (expected a JSON object with "
                            "\"kiln_project\": 1)");
  auto version = jsonInteger(*root->get("kiln_project"));
  if (!version || *version != 1)
    return makeError(path + ": project format version " +
                     (version ? std::to_string(*version) : std::string("?")) +
                     "; this Kiln reads version 1");
  // The build settings are the recipe's keys; the project adds three.
  std::vector<std::string> others;
  auto recipe = recipeFromJson(*root, path, &others);
  if (!recipe)
    return recipe.takeError();
  Project p;
  p.recipe = std::move(*recipe);
  for (const std::string &key : others) {
    std::string *out = key == "model" ? &p.model : key == "export_dir" ? &p.exportDir : nullptr;
    if (key == "kiln_project")
      continue;
    if (key == "export") {
      auto settings = parseExportSettings(*root->get(key), path);
      if (!settings)
        return settings.takeError();
      p.exportSettings = std::move(*settings);
      continue;
    }
    if (!out) {
      std::string known = "kiln_project, model, export_dir, export";
      for (const std::string &k : recipeJsonKeys())
        known += ", " + k;
      return makeError(path + ": unknown key '" + quoteInput(key) + "' (known: " + known + ")");
    }
    std::optional<llvm::StringRef> value = root->get(key)->getAsString();
    if (!value)
      return makeError(path + ": \"" + key + "\" must be a string");
    *out = value->str();
  }
  if (p.model.empty())
    return makeError(path + ": \"model\" is missing (the model file, relative to the project)");
  return p;
}

std::string projectToJson(const Project &p) {
  llvm::json::Object root = recipeToJson(p.recipe);
  root["kiln_project"] = 1;
  root["model"] = p.model;
  if (!p.exportDir.empty())
    root["export_dir"] = p.exportDir;
  if (llvm::json::Object e = exportSettingsToJson(p.exportSettings); !e.empty())
    root["export"] = std::move(e);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return os.str();
}

llvm::Error saveProject(const Project &project, const std::string &path) {
  return writeFileAtomically(path, projectToJson(project));
}

llvm::Expected<std::string> setAsideProject(const std::string &path, const std::string &suffix) {
  for (int n = 1; n < 1000; ++n) {
    std::string aside = path + "." + suffix + (n == 1 ? "" : "-" + std::to_string(n));
    if (llvm::sys::fs::exists(aside))
      continue;
    if (std::error_code ec = llvm::sys::fs::rename(path, aside))
      return makeError(path + ": cannot set the " + suffix + " project aside: " + ec.message());
    return aside;
  }
  return makeError(path + ": cannot set the " + suffix + " project aside: too many earlier copies");
}

static std::string resolve(const std::string &file, const std::string &projectPath) {
  if (file.empty() || llvm::sys::path::is_absolute(file))
    return file;
  llvm::SmallString<256> path(llvm::sys::path::parent_path(projectPath));
  llvm::sys::path::append(path, file);
  return path.str().str();
}

std::string projectModelPath(const Project &project, const std::string &projectPath) {
  return resolve(project.model, projectPath);
}

std::string projectExportDir(const Project &project, const std::string &projectPath) {
  return resolve(project.exportDir, projectPath);
}

} // namespace kiln
