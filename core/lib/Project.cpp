//===- Project.cpp - .kilnproj project files ------------------------------===//
#include "kiln/Project.h"
#include "kiln/AtomicWrite.h"

#include "Support/Message.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

std::string projectPathFor(const std::string &modelPath) {
  llvm::SmallString<256> path(modelPath);
  llvm::sys::path::replace_extension(path, "kilnproj");
  return path.str().str();
}

llvm::Expected<Project> loadProject(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return makeError(path + ": cannot read: " + buffer.getError().message());
  return parseProject((*buffer)->getBuffer(), path);
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
    if (!out) {
      std::string known = "kiln_project, model, export_dir";
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
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return os.str();
}

llvm::Error saveProject(const Project &project, const std::string &path) {
  return writeFileAtomically(path, projectToJson(project));
}

llvm::Expected<std::string> setAsideProject(const std::string &path) {
  for (int n = 1; n < 1000; ++n) {
    std::string aside = path + ".unreadable" + (n == 1 ? "" : "-" + std::to_string(n));
    if (llvm::sys::fs::exists(aside))
      continue;
    if (std::error_code ec = llvm::sys::fs::rename(path, aside))
      return makeError(path + ": cannot set the unreadable project aside: " + ec.message());
    return aside;
  }
  return makeError(path + ": cannot set the unreadable project aside: too many earlier copies");
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
