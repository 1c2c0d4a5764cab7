//===- Project.cpp - .kilnproj project files ------------------------------===//
#include "kiln/Project.h"

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

/// Reads an array of non-negative integers; `what` names it in errors.
static llvm::Error readSizes(const llvm::json::Value &value, const std::string &file,
                             const std::string &what, bool positive,
                             std::vector<int64_t> &out) {
  const llvm::json::Array *a = value.getAsArray();
  if (!a)
    return makeError(file + ": \"" + what + "\" must be an array of whole numbers");
  for (const llvm::json::Value &v : *a) {
    auto i = jsonInteger(v);
    if (!i || *i < 0 || (positive && *i == 0))
      return makeError(file + ": \"" + what + "\" holds a value that is not " +
                       (positive ? "a positive dimension" : "a whole number >= 0"));
    out.push_back(*i);
  }
  return llvm::Error::success();
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
  Project p;
  auto str = [&](const llvm::json::Value &v, const std::string &key,
                 std::string &out) -> llvm::Error {
    auto s = v.getAsString();
    if (!s)
      return makeError(path + ": \"" + key + "\" must be a string");
    out = s->str();
    return llvm::Error::success();
  };
  for (const auto &[keyRef, value] : *root) {
    std::string key = keyRef.str();
    llvm::Error err = llvm::Error::success();
    if (key == "kiln_project") {
      auto v = jsonInteger(value);
      if (!v || *v != 1)
        err = makeError(path + ": project format version " +
                        (v ? std::to_string(*v) : std::string("?")) +
                        "; this Kiln reads version 1");
    } else if (key == "model") {
      err = str(value, key, p.model);
    } else if (key == "target") {
      err = str(value, key, p.target);
    } else if (key == "target_cpu") {
      err = str(value, key, p.targetCpu);
    } else if (key == "target_cpu_features") {
      err = str(value, key, p.targetFeatures);
    } else if (key == "profile") {
      err = str(value, key, p.profile);
    } else if (key == "export_dir") {
      err = str(value, key, p.exportDir);
    } else if (key == "output_format") {
      std::string text;
      err = str(value, key, text);
      if (!err && !parseOutputFormat(text, p.format))
        err = makeError(path + ": \"output_format\" is '" + quoteInput(text) +
                        "'; expected kiln or c-module");
    } else if (key == "fusion") {
      auto b = value.getAsBoolean();
      if (!b)
        err = makeError(path + ": \"fusion\" must be true or false");
      else
        p.fusion = *b;
    } else if (key == "no_fusion") {
      err = readSizes(value, path, key, false, p.noFusion);
    } else if (key == "tiles" || key == "fixed_shapes") {
      const llvm::json::Object *map = value.getAsObject();
      if (!map) {
        err = makeError(path + ": \"" + key + "\" must be an object");
      } else {
        for (const auto &[entryKey, sizes] : *map) {
          std::vector<int64_t> v;
          if ((err = readSizes(sizes, path, key + "." + quoteInput(entryKey),
                               key == "fixed_shapes", v)))
            break;
          if (key == "fixed_shapes") {
            p.fixedShapes[entryKey.str()] = v;
          } else {
            int64_t id;
            if (llvm::StringRef(entryKey).getAsInteger(10, id) || id < 0) {
              err = makeError(path + ": tiles key '" + quoteInput(entryKey) +
                              "' is not a dispatch id");
              break;
            }
            p.tiles[id] = v;
          }
        }
      }
    } else {
      err = makeError(path + ": unknown key '" + quoteInput(key) +
                      "' (known: kiln_project, model, target, target_cpu, "
                      "target_cpu_features, profile, output_format, fusion, "
                      "no_fusion, tiles, fixed_shapes, export_dir)");
    }
    if (err)
      return std::move(err);
  }
  if (p.model.empty())
    return makeError(path + ": \"model\" is missing (the model file, relative to the project)");
  return p;
}

std::string projectToJson(const Project &p) {
  llvm::json::Object root;
  root["kiln_project"] = 1;
  root["model"] = p.model;
  root["target"] = p.target;
  root["target_cpu"] = p.targetCpu;
  root["target_cpu_features"] = p.targetFeatures;
  root["profile"] = p.profile;
  root["output_format"] = toString(p.format);
  root["fusion"] = p.fusion;
  llvm::json::Array noFusion;
  for (int64_t id : p.noFusion)
    noFusion.push_back(id);
  root["no_fusion"] = std::move(noFusion);
  llvm::json::Object tiles, shapes;
  for (const auto &[id, sizes] : p.tiles)
    tiles[std::to_string(id)] = llvm::json::Array(sizes);
  for (const auto &[input, shape] : p.fixedShapes)
    shapes[input] = llvm::json::Array(shape);
  root["tiles"] = std::move(tiles);
  root["fixed_shapes"] = std::move(shapes);
  root["export_dir"] = p.exportDir;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return os.str();
}

llvm::Error saveProject(const Project &project, const std::string &path) {
  std::string text = projectToJson(project);
  std::string temp = path + ".tmp";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(temp, ec, llvm::sys::fs::OF_None);
    if (ec)
      return makeError(path + ": cannot save the project: " + ec.message());
    os << text;
    os.close();
    if (os.has_error()) {
      std::string message = os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(temp);
      return makeError(path + ": cannot save the project: " + message);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
    llvm::sys::fs::remove(temp);
    return makeError(path + ": cannot save the project: " + ec.message());
  }
  return llvm::Error::success();
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

llvm::Expected<CompileOptions> projectCompileOptions(const Project &project) {
  CompileOptions options;
  options.target.cpu = project.targetCpu.empty() ? "generic" : project.targetCpu;
  options.target.features = project.targetFeatures;
  if (llvm::Error err = applyTarget(project.target, options.target))
    return std::move(err);
  if (llvm::Error err = applyProfile(project.profile, options))
    return std::move(err);
  options.format = project.format;
  options.fusion = project.fusion;
  options.noFusion = project.noFusion;
  for (const auto &[id, sizes] : project.tiles)
    options.tileSizes.push_back({id, sizes});
  for (const auto &[input, shape] : project.fixedShapes)
    options.fixedShapes.push_back({input, shape});
  return options;
}

} // namespace kiln
