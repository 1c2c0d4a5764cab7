//===- Recipe.cpp - The settings of one build, in one place ---------------===//
//
// Each setting has one rule, written once as a "reason" (a phrase naming
// the offending value, empty when the value is fine). The three ways in
// put their own prefix before it:
//   setRecipeOption (text)    --tile='3=1,a': 'a' is not a tile size (...)
//   recipeFromJson (JSON)     m.kilnproj: "tiles.3": '-4' is not a tile size (...)
//   validateRecipe (fields)   --tile='3=1,-4': '-4' is not a tile size (...)
//
//===----------------------------------------------------------------------===//
#include "kiln/Recipe.h"
#include "kiln/Error.h"
#include "kiln/ReadFile.h"

#include "Artifact/CModuleWriter.h"
#include "Support/Message.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace kiln {

const std::vector<std::string> &recipeKeys() {
  static const std::vector<std::string> keys = {
      "target",     "target-cpu",    "target-cpu-features", "profile",      "debug-symbols",
      "reflection", "output-format", "module-name",         "tile",         "fusion",
      "no-fusion",  "fix-shape",     "fix-value",           "check-bounds", "signature"};
  return keys;
}

const std::vector<std::string> &recipeJsonKeys() {
  static const std::vector<std::string> keys = {
      "target",     "target_cpu",    "target_cpu_features", "profile",      "debug_symbols",
      "reflection", "output_format", "module_name",         "tiles",        "fusion",
      "no_fusion",  "fixed_shapes",  "fixed_values",        "check_bounds", "signature"};
  return keys;
}

// --- The rule of each setting ----------------------------------------------

/// `text` quoted for a message: 'text', one line.
static std::string quoted(llvm::StringRef text) { return "'" + quoteInput(text) + "'"; }

static std::string joined(const std::vector<int64_t> &values, const char *separator) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? separator : "") + std::to_string(values[i]);
  return text;
}

static std::string targetReason(llvm::StringRef name) {
  std::vector<std::string> known = knownTargets();
  if (std::find(known.begin(), known.end(), name) != known.end())
    return "";
  return quoted(name) + " is not a supported target (" + llvm::join(known, ", ") + ")";
}

static std::string profileReason(llvm::StringRef name) {
  if (name == "default" || name == "stripped")
    return "";
  return quoted(name) + " is not a profile (default, stripped)";
}

static std::string formatReason(llvm::StringRef text) {
  return quoted(text) + " is not a format (kiln, c-module)";
}

/// A signature_key: any text but an empty one given explicitly is refused
/// (which signatures the model has is the importer's check, tfliteEntry).
static std::string signatureReason(const std::string &key, bool given) {
  if (given && key.empty())
    return "'' is not a signature key (a TFLite signature_key; `kiln inspect MODEL` lists them)";
  if (key.find_first_of("\n\r") != std::string::npos)
    return quoted(key) + " is not a signature key (one line)";
  return "";
}

/// Empty names are fine (the name comes from the model's file name).
static std::string moduleNameReason(const std::string &name) {
  if (name.empty())
    return "";
  std::string why = moduleNameProblem(name);
  return why.empty() ? "" : quoted(name) + " " + why;
}

static const char *kDispatchIdRule =
    "is not a dispatch id (a whole number >= 0, from `kiln inspect`)";
static const char *kTileSizeRule = "is not a tile size (a whole number >= 0)";
static const char *kDimensionRule = "is not a positive dimension";

static std::string dispatchIdReason(int64_t id) {
  return id >= 0 ? "" : quoted(std::to_string(id)) + " " + kDispatchIdRule;
}

static std::string tileSizesReason(const std::vector<int64_t> &sizes) {
  if (sizes.empty())
    return "no tile sizes (one per loop of the dispatch's tiled op, 0 = whole loop)";
  for (int64_t v : sizes)
    if (v < 0)
      return quoted(std::to_string(v)) + " " + kTileSizeRule;
  return "";
}

/// A full static shape: positive dimensions, at most 2^31 elements (every
/// byte count the compiler derives from shapes stays far from overflow).
static std::string shapeReason(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return "no dimensions (the input's whole shape, e.g. 1x76x32x1)";
  for (int64_t v : shape)
    if (v <= 0)
      return quoted(std::to_string(v)) + " " + kDimensionRule;
  int64_t elements = 1;
  for (int64_t v : shape) {
    if (v > (int64_t(1) << 31) / elements)
      return "more than 2^31 elements; inputs are limited to 2147483648 elements";
    elements *= v;
  }
  return "";
}

// --- Fixed values ----------------------------------------------------------

static const char *kNumberRule =
    "is not a number (VALUE is a number such as 16000, 0.5 or true, or several "
    "separated by ',', e.g. 1,2,3 or [1,2,3])";

/// A real with an integral value that int64 holds becomes a whole number,
/// so that every way in (text, JSON) gives the same FixedNumber.
static FixedNumber normalNumber(double v) {
  if (std::trunc(v) == v && v >= -9223372036854775808.0 && v < 9223372036854775808.0)
    return int64_t(v);
  return v;
}

/// One element's text: a whole number, a finite real, true or false.
static std::optional<FixedNumber> parseNumber(llvm::StringRef text) {
  if (text == "true")
    return FixedNumber(int64_t(1));
  if (text == "false")
    return FixedNumber(int64_t(0));
  int64_t i;
  if (!text.getAsInteger(10, i))
    return FixedNumber(i);
  // getAsDouble takes what strtod takes; hex floats, inf and nan are not
  // numbers here (a fixed value is written in decimal and finite).
  double d;
  if (text.empty() || text.find_first_not_of("0123456789+-.eE") != llvm::StringRef::npos ||
      text.getAsDouble(d) || !std::isfinite(d))
    return std::nullopt;
  return normalNumber(d);
}

/// A fixed value's element count: 1 to kMaxFixedValueElements.
static std::string valueReason(const std::vector<FixedNumber> &values) {
  if (values.empty())
    return "no value (a number such as 16000, or several separated by ',')";
  if (values.size() > kMaxFixedValueElements)
    return std::to_string(values.size()) + " elements; a fixed value has at most " +
           std::to_string(kMaxFixedValueElements);
  for (const FixedNumber &v : values)
    if (const double *d = std::get_if<double>(&v); d && !std::isfinite(*d))
      return "a value that is not finite; fixed values are finite numbers";
  return "";
}

llvm::Expected<std::vector<FixedNumber>> parseFixValue(llvm::StringRef text) {
  llvm::StringRef body = text.trim();
  if (body.starts_with("[") != body.ends_with("]") || (body.starts_with("[") && body.size() < 2))
    return makeError(quoted(text) + " has unbalanced [ ] (write 1,2,3 or [1,2,3])");
  if (body.starts_with("["))
    body = body.drop_front().drop_back().trim();
  if (body.empty())
    return makeError(valueReason({}));
  llvm::SmallVector<llvm::StringRef> parts;
  body.split(parts, ',');
  if (parts.size() > kMaxFixedValueElements)
    return makeError(std::to_string(parts.size()) + " elements; a fixed value has at most " +
                     std::to_string(kMaxFixedValueElements));
  std::vector<FixedNumber> values;
  for (llvm::StringRef part : parts) {
    std::optional<FixedNumber> v = parseNumber(part.trim());
    if (!v)
      return makeError(quoted(part.trim()) + " " + kNumberRule);
    values.push_back(*v);
  }
  return values;
}

std::string fixValueText(const std::vector<FixedNumber> &values) {
  std::string text;
  for (const FixedNumber &v : values) {
    if (!text.empty())
      text += ",";
    if (const int64_t *i = std::get_if<int64_t>(&v)) {
      text += std::to_string(*i);
      continue;
    }
    char buffer[64];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, std::get<double>(v));
    text.append(buffer, ec == std::errc() ? end : buffer);
  }
  return text;
}

static std::optional<bool> parseBool(llvm::StringRef text) {
  if (text == "true" || text == "1")
    return true;
  if (text == "false" || text == "0")
    return false;
  return std::nullopt;
}

char SettingError::ID = 0;

void SettingError::log(llvm::raw_ostream &os) const { os << commandLine; }

std::error_code SettingError::convertToErrorCode() const { return llvm::inconvertibleErrorCode(); }

/// A refused setting `key`: the command line's sentence and the same fact
/// without flag syntax (SettingError).
static llvm::Error settingError(llvm::StringRef key, const llvm::Twine &commandLine,
                                const llvm::Twine &detail) {
  return llvm::make_error<SettingError>(key.str(), commandLine.str(), detail.str());
}

std::string settingDisplayName(llvm::StringRef key) {
  static const std::pair<const char *, const char *> names[] = {
      {"target", "Target"},
      {"target-cpu", "CPU"},
      {"target-cpu-features", "CPU features"},
      {"profile", "Profile"},
      {"debug-symbols", "Debug symbols"},
      {"reflection", "Reflection data"},
      {"fusion", "Fusion"},
      {"check-bounds", "Bounds checks"},
      {"output-format", "Output format"},
      {"module-name", "Module name"},
      {"no-fusion", "No fusion for dispatch"},
      {"tile", "Tile sizes"},
      {"fix-shape", "Input shape"},
      {"fix-value", "Input value"},
      {"signature", "Signature"},
  };
  for (const auto &[k, name] : names)
    if (key == k)
      return name;
  return key.str();
}

std::string settingErrorText(llvm::Error error) {
  std::string text;
  llvm::handleAllErrors(
      std::move(error),
      [&](const SettingError &e) { text = settingDisplayName(e.key) + ": " + e.detail; },
      [&](const llvm::ErrorInfoBase &e) { text = e.message(); });
  return text;
}

llvm::Expected<std::vector<int64_t>> parseTileSizes(llvm::StringRef text) {
  if (text.trim().empty())
    return makeError("no sizes (one per loop, 0 = the whole loop)");
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ',');
  std::vector<int64_t> sizes;
  for (llvm::StringRef part : parts) {
    int64_t v;
    if (part.trim().getAsInteger(10, v) || v < 0)
      return makeError(quoted(part.trim()) + " " + kTileSizeRule);
    sizes.push_back(v);
  }
  return sizes;
}

static void addNoFusion(BuildRecipe &recipe, int64_t id) {
  auto at = std::lower_bound(recipe.noFusion.begin(), recipe.noFusion.end(), id);
  if (at == recipe.noFusion.end() || *at != id)
    recipe.noFusion.insert(at, id);
}

llvm::Error applyProfile(llvm::StringRef profile, CompileOptions &options) {
  if (std::string why = profileReason(profile); !why.empty())
    return settingError("profile", "--profile=" + why, why);
  options.debugSymbols = profile == "default";
  options.reflection = profile == "default";
  return llvm::Error::success();
}

bool recipeIsBareMetal(const BuildRecipe &recipe) {
  const DeviceTarget *target = findDeviceTarget(recipe.target);
  return target && target->bareMetal;
}

// --- Text (the command line) -----------------------------------------------

/// "--tile=ID=S0,S1,...": adds or replaces one dispatch's sizes.
static llvm::Error setTile(BuildRecipe &recipe, llvm::StringRef text) {
  auto bad = [&](const llvm::Twine &why) {
    return settingError("tile", "--tile=" + quoted(text) + ": " + why, quoted(text) + ": " + why);
  };
  auto [idText, sizesText] = text.split('=');
  int64_t id;
  if (idText.trim().getAsInteger(10, id) || id < 0 || sizesText.trim().empty())
    return bad("expected DISPATCH=SIZES, e.g. 3=1,8,0,0 (dispatch id from `kiln inspect`, "
               "one size per loop, 0 = whole loop)");
  auto sizes = parseTileSizes(sizesText);
  if (!sizes)
    return bad(llvm::toString(sizes.takeError()));
  recipe.tiles[id] = std::move(*sizes);
  return llvm::Error::success();
}

/// "--fix-shape=INPUT=D0xD1x...": adds one input's shape (the last '='
/// separates the input, which may be a name holding '=').
static llvm::Error setFixShape(BuildRecipe &recipe, llvm::StringRef text) {
  auto bad = [&](const llvm::Twine &why) {
    return settingError("fix-shape", "--fix-shape=" + quoted(text) + ": " + why,
                        quoted(text) + ": " + why);
  };
  size_t eq = text.rfind('=');
  if (eq == llvm::StringRef::npos || eq == 0)
    return bad("expected INPUT=DIMS, e.g. input_1=1x76x32x1 (INPUT is a name or an index)");
  std::string input = text.take_front(eq).str();
  llvm::SmallVector<llvm::StringRef> dims;
  text.drop_front(eq + 1).split(dims, 'x');
  std::vector<int64_t> shape;
  for (llvm::StringRef d : dims) {
    int64_t v;
    if (d.getAsInteger(10, v) || v <= 0)
      return bad(quoted(d) + " " + kDimensionRule + " (dims are written 1x76x32x1)");
    shape.push_back(v);
  }
  if (std::string why = shapeReason(shape); !why.empty())
    return bad(why);
  if (recipe.fixedShapes.count(input))
    return settingError(
        "fix-shape",
        "--fix-shape fixes input " + quoted(input) + " twice; give one shape per input",
        "input " + quoted(input) + " has a shape already; give one shape per input");
  recipe.fixedShapes[input] = std::move(shape);
  return llvm::Error::success();
}

/// "--fix-value=INPUT=VALUE": adds one input's value (the last '='
/// separates the input, which may be a name holding '=').
static llvm::Error setFixValue(BuildRecipe &recipe, llvm::StringRef text) {
  auto bad = [&](const llvm::Twine &why) {
    return settingError("fix-value", "--fix-value=" + quoted(text) + ": " + why,
                        quoted(text) + ": " + why);
  };
  size_t eq = text.rfind('=');
  if (eq == llvm::StringRef::npos || eq == 0)
    return bad("expected INPUT=VALUE, e.g. sr=16000 or x=1,2,3 (INPUT is a name or an index)");
  std::string input = text.take_front(eq).str();
  auto values = parseFixValue(text.drop_front(eq + 1));
  if (!values)
    return bad(llvm::toString(values.takeError()));
  if (recipe.fixedValues.count(input))
    return settingError(
        "fix-value",
        "--fix-value fixes input " + quoted(input) + " twice; give one value per input",
        "input " + quoted(input) + " has a value already; give one value per input");
  recipe.fixedValues[input] = std::move(*values);
  return llvm::Error::success();
}

/// A setting whose value is one word (every key but tile, fix-shape and
/// fix-value).
static llvm::Error setScalar(BuildRecipe &recipe, llvm::StringRef key, llvm::StringRef value) {
  auto check = [&](const std::string &why) {
    return why.empty() ? llvm::Error::success() : settingError(key, "--" + key + "=" + why, why);
  };
  if (key == "target") {
    if (llvm::Error err = check(targetReason(value)))
      return err;
    recipe.target = value.str();
  } else if (key == "target-cpu") {
    recipe.targetCpu = value.str();
  } else if (key == "target-cpu-features") {
    recipe.targetFeatures = value.str();
  } else if (key == "profile") {
    if (llvm::Error err = check(profileReason(value)))
      return err;
    recipe.profile = value.str();
  } else if (key == "debug-symbols" || key == "reflection" || key == "fusion" ||
             key == "check-bounds") {
    std::optional<bool> on = parseBool(value);
    if (!on)
      return check(quoted(value) + " is not true or false");
    if (key == "fusion")
      recipe.fusion = *on;
    else if (key == "check-bounds")
      recipe.checkBounds = *on;
    else
      (key == "reflection" ? recipe.reflection : recipe.debugSymbols) = *on;
  } else if (key == "output-format") {
    if (!parseOutputFormat(value.str(), recipe.format))
      return check(formatReason(value));
  } else if (key == "module-name") {
    if (llvm::Error err = check(moduleNameReason(value.str())))
      return err;
    recipe.moduleName = value.str();
  } else if (key == "signature") {
    if (llvm::Error err = check(signatureReason(value.str(), /*given=*/true)))
      return err;
    recipe.signature = value.str();
  } else if (key == "no-fusion") {
    int64_t id;
    if (value.trim().getAsInteger(10, id) || id < 0)
      return check(quoted(value) + " " + kDispatchIdRule);
    addNoFusion(recipe, id);
  } else {
    return makeError("'" + quoteInput(key) + "' is not a build setting (" +
                     llvm::join(recipeKeys(), ", ") + ")");
  }
  return llvm::Error::success();
}

llvm::Error setRecipeOption(BuildRecipe &recipe, llvm::StringRef key, llvm::StringRef value) {
  if (key == "tile")
    return setTile(recipe, value);
  if (key == "fix-shape")
    return setFixShape(recipe, value);
  if (key == "fix-value")
    return setFixValue(recipe, value);
  return setScalar(recipe, key, value);
}

// --- The fields together ---------------------------------------------------

llvm::Error validateRecipe(const BuildRecipe &recipe) {
  // `value` is the setting's text before the reason ("'3=1,a': "), empty
  // when the reason names the value itself.
  auto check = [](llvm::StringRef key, const std::string &value, const std::string &why) {
    return why.empty() ? llvm::Error::success()
                       : settingError(key, "--" + key + "=" + value + why, value + why);
  };
  if (llvm::Error err = check("target", "", targetReason(recipe.target)))
    return err;
  if (llvm::Error err = check("profile", "", profileReason(recipe.profile)))
    return err;
  if (llvm::Error err = check("module-name", "", moduleNameReason(recipe.moduleName)))
    return err;
  if (llvm::Error err = check("signature", "", signatureReason(recipe.signature, false)))
    return err;
  for (const auto &[id, sizes] : recipe.tiles) {
    std::string why = dispatchIdReason(id);
    if (why.empty())
      why = tileSizesReason(sizes);
    if (llvm::Error err =
            check("tile", quoted(std::to_string(id) + "=" + joined(sizes, ",")) + ": ", why))
      return err;
  }
  for (int64_t id : recipe.noFusion)
    if (llvm::Error err = check("no-fusion", "", dispatchIdReason(id)))
      return err;
  for (const auto &[input, shape] : recipe.fixedShapes) {
    std::string why = input.empty() ? "no input name (a name or an index)" : shapeReason(shape);
    if (llvm::Error err = check("fix-shape", quoted(input + "=" + joined(shape, "x")) + ": ", why))
      return err;
  }
  for (const auto &[input, values] : recipe.fixedValues) {
    std::string why = input.empty() ? "no input name (a name or an index)" : valueReason(values);
    if (llvm::Error err =
            check("fix-value", quoted(input + "=" + fixValueText(values)) + ": ", why))
      return err;
  }
  if (recipe.checkBounds && recipe.format == OutputFormat::CModule)
    return settingError(
        "check-bounds",
        "--check-bounds builds a .kiln artifact (the runtime reports a "
        "refused access); C modules are not supported",
        "bounds-checked kernels need the .kiln artifact format (the runtime reports "
        "a refused access); C modules are not supported");
  if (recipe.format == OutputFormat::Artifact && recipeIsBareMetal(recipe))
    return settingError("target",
                        "--target=" + recipe.target +
                            " is bare metal: nothing there loads a .kiln artifact's shared object; "
                            "use --output-format=c-module",
                        recipe.target + " is bare metal: nothing there loads a .kiln artifact; "
                                        "choose the static C module format");
  return llvm::Error::success();
}

llvm::Expected<CompileOptions> recipeCompileOptions(const BuildRecipe &recipe) {
  if (llvm::Error err = validateRecipe(recipe))
    return std::move(err);
  CompileOptions options;
  // An explicit CPU and features win over the target's defaults
  // (applyTarget keeps both).
  options.target.cpu = recipe.targetCpu.empty() ? "generic" : recipe.targetCpu;
  options.target.features = recipe.targetFeatures;
  llvm::cantFail(applyTarget(recipe.target, options.target));
  llvm::cantFail(applyProfile(recipe.profile, options));
  if (recipe.debugSymbols)
    options.debugSymbols = *recipe.debugSymbols;
  if (recipe.reflection)
    options.reflection = *recipe.reflection;
  options.format = recipe.format;
  options.moduleName = recipe.moduleName;
  options.signature = recipe.signature;
  options.fusion = recipe.fusion;
  options.checkBounds = recipe.checkBounds;
  options.noFusion = recipe.noFusion;
  for (const auto &[id, sizes] : recipe.tiles)
    options.tileSizes.push_back({id, sizes});
  for (const auto &[input, shape] : recipe.fixedShapes)
    options.fixedShapes.push_back({input, shape});
  for (const auto &[input, values] : recipe.fixedValues)
    options.fixedValues.push_back({input, values});
  return options;
}

llvm::Error checkTileSizes(int64_t dispatchId, const std::vector<int64_t> &sizes,
                           const std::vector<int64_t> &loopRanges,
                           const std::vector<std::string> &loopKinds) {
  const std::string who = "dispatch " + std::to_string(dispatchId);
  if (sizes.size() != loopRanges.size())
    return makeError(who + " has " + std::to_string(loopRanges.size()) + " loops; " +
                     std::to_string(sizes.size()) +
                     " tile sizes given (one per loop, 0 = whole loop)");
  int split = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t t = sizes[i], range = loopRanges[i];
    const std::string loop = std::to_string(i);
    if (t < 0)
      return makeError(who + ": tile size " + std::to_string(t) + " for loop " + loop +
                       " is negative (0 = the whole loop)");
    if (t != 0 && i < loopKinds.size() && loopKinds[i] == "reduction")
      return makeError(who + ": loop " + loop +
                       " is a reduction and cannot be split across workgroups (use tile size 0)");
    if (t > range)
      return makeError(who + ": tile size " + std::to_string(t) + " for loop " + loop +
                       " exceeds the loop's range " + std::to_string(range) + " (use " +
                       std::to_string(range) + " or 0 for the whole loop)");
    if (t != 0 && t < range)
      ++split;
  }
  if (split > 3)
    return makeError(who + ": " + std::to_string(split) +
                     " loops split; at most 3 map to workgroups (x, y, z)");
  return llvm::Error::success();
}

// --- JSON ------------------------------------------------------------------

llvm::json::Object recipeToJson(const BuildRecipe &recipe) {
  const BuildRecipe defaults;
  llvm::json::Object json;
  if (recipe.target != defaults.target)
    json["target"] = recipe.target;
  if (!recipe.targetCpu.empty())
    json["target_cpu"] = recipe.targetCpu;
  if (!recipe.targetFeatures.empty())
    json["target_cpu_features"] = recipe.targetFeatures;
  if (recipe.profile != defaults.profile)
    json["profile"] = recipe.profile;
  if (recipe.debugSymbols)
    json["debug_symbols"] = *recipe.debugSymbols;
  if (recipe.reflection)
    json["reflection"] = *recipe.reflection;
  if (recipe.format != defaults.format)
    json["output_format"] = toString(recipe.format);
  if (!recipe.moduleName.empty())
    json["module_name"] = recipe.moduleName;
  if (!recipe.tiles.empty()) {
    llvm::json::Object tiles;
    for (const auto &[id, sizes] : recipe.tiles)
      tiles[std::to_string(id)] = llvm::json::Array(sizes);
    json["tiles"] = std::move(tiles);
  }
  if (!recipe.fusion)
    json["fusion"] = false;
  if (recipe.checkBounds)
    json["check_bounds"] = true;
  if (!recipe.signature.empty())
    json["signature"] = recipe.signature;
  if (!recipe.noFusion.empty())
    json["no_fusion"] = llvm::json::Array(recipe.noFusion);
  if (!recipe.fixedShapes.empty()) {
    llvm::json::Object shapes;
    for (const auto &[input, shape] : recipe.fixedShapes)
      shapes[input] = llvm::json::Array(shape);
    json["fixed_shapes"] = std::move(shapes);
  }
  if (!recipe.fixedValues.empty()) {
    // One element as a bare number ("sr": 16000), more as an array.
    auto number = [](const FixedNumber &v) -> llvm::json::Value {
      if (const int64_t *i = std::get_if<int64_t>(&v))
        return *i;
      return std::get<double>(v);
    };
    llvm::json::Object values;
    for (const auto &[input, elements] : recipe.fixedValues) {
      if (elements.size() == 1) {
        values[input] = number(elements.front());
        continue;
      }
      llvm::json::Array array;
      for (const FixedNumber &v : elements)
        array.push_back(number(v));
      values[input] = std::move(array);
    }
    json["fixed_values"] = std::move(values);
  }
  return json;
}

namespace {

/// Reads one JSON object's recipe keys; errors name `where` and the key.
class JsonReader {
public:
  JsonReader(BuildRecipe &recipe, const std::string &where) : recipe(recipe), where(where) {}

  /// Reads `value` of recipe key `key`; false (with nothing read) for a
  /// key that is not a recipe key.
  llvm::Expected<bool> read(llvm::StringRef key, const llvm::json::Value &value);

private:
  llvm::Error fail(llvm::StringRef key, const llvm::Twine &what) {
    return makeError(where + ": \"" + quoteInput(key) + "\"" + what);
  }
  /// `why` (a reason naming the value) as the error of `key`, if any.
  llvm::Error reason(llvm::StringRef key, const std::string &why) {
    return why.empty() ? llvm::Error::success() : fail(key, ": " + why);
  }
  llvm::Error string(llvm::StringRef key, const llvm::json::Value &value, std::string &out);
  llvm::Error integers(llvm::StringRef key, const llvm::json::Value &value,
                       std::vector<int64_t> &out);
  llvm::Error tiles(const llvm::json::Value &value);
  llvm::Error shapes(const llvm::json::Value &value);
  llvm::Error values(const llvm::json::Value &value);

  BuildRecipe &recipe;
  const std::string &where;
};

llvm::Error JsonReader::string(llvm::StringRef key, const llvm::json::Value &value,
                               std::string &out) {
  std::optional<llvm::StringRef> text = value.getAsString();
  if (!text)
    return fail(key, " must be a string");
  out = text->str();
  return llvm::Error::success();
}

llvm::Error JsonReader::integers(llvm::StringRef key, const llvm::json::Value &value,
                                 std::vector<int64_t> &out) {
  const llvm::json::Array *array = value.getAsArray();
  if (!array)
    return fail(key, " must be an array of whole numbers");
  for (const llvm::json::Value &v : *array) {
    std::optional<int64_t> i = jsonInteger(v);
    if (!i)
      return fail(key, " must be an array of whole numbers");
    out.push_back(*i);
  }
  return llvm::Error::success();
}

llvm::Error JsonReader::tiles(const llvm::json::Value &value) {
  const llvm::json::Object *map = value.getAsObject();
  if (!map)
    return fail("tiles", " must map dispatch ids to arrays of tile sizes");
  for (const auto &[idText, sizesValue] : *map) {
    int64_t id;
    if (llvm::StringRef(idText).getAsInteger(10, id) || id < 0)
      return fail("tiles", ": " + quoted(idText) + " " + kDispatchIdRule);
    std::string key = "tiles." + idText.str();
    std::vector<int64_t> sizes;
    if (llvm::Error err = integers(key, sizesValue, sizes))
      return err;
    if (llvm::Error err = reason(key, tileSizesReason(sizes)))
      return err;
    recipe.tiles[id] = std::move(sizes);
  }
  return llvm::Error::success();
}

llvm::Error JsonReader::shapes(const llvm::json::Value &value) {
  const llvm::json::Object *map = value.getAsObject();
  if (!map)
    return fail("fixed_shapes", " must map input names or indices to shapes");
  for (const auto &[input, shapeValue] : *map) {
    if (input.str().empty())
      return fail("fixed_shapes", " has an empty input name (a name or an index)");
    std::string key = "fixed_shapes." + input.str();
    std::vector<int64_t> shape;
    if (llvm::Error err = integers(key, shapeValue, shape))
      return err;
    if (llvm::Error err = reason(key, shapeReason(shape)))
      return err;
    recipe.fixedShapes[input.str()] = std::move(shape);
  }
  return llvm::Error::success();
}

llvm::Error JsonReader::values(const llvm::json::Value &value) {
  const llvm::json::Object *map = value.getAsObject();
  if (!map)
    return fail("fixed_values", " must map input names or indices to values");
  for (const auto &[input, v] : *map) {
    if (input.str().empty())
      return fail("fixed_values", " has an empty input name (a name or an index)");
    std::string key = "fixed_values." + input.str();
    // A number, true/false, or an array of them.
    auto element = [](const llvm::json::Value &e) -> std::optional<FixedNumber> {
      if (std::optional<bool> b = e.getAsBoolean())
        return FixedNumber(int64_t(*b));
      if (std::optional<int64_t> i = e.getAsInteger())
        return FixedNumber(*i);
      if (std::optional<double> d = e.getAsNumber(); d && std::isfinite(*d))
        return normalNumber(*d);
      return std::nullopt;
    };
    std::vector<FixedNumber> elements;
    if (const llvm::json::Array *array = v.getAsArray()) {
      for (const llvm::json::Value &e : *array) {
        std::optional<FixedNumber> n = element(e);
        if (!n)
          return fail(key, " must be a number, true, false or an array of them");
        elements.push_back(*n);
      }
    } else if (std::optional<FixedNumber> n = element(v)) {
      elements.push_back(*n);
    } else {
      return fail(key, " must be a number, true, false or an array of them");
    }
    if (llvm::Error err = reason(key, valueReason(elements)))
      return err;
    recipe.fixedValues[input.str()] = std::move(elements);
  }
  return llvm::Error::success();
}

llvm::Expected<bool> JsonReader::read(llvm::StringRef key, const llvm::json::Value &value) {
  auto done = [](llvm::Error err) -> llvm::Expected<bool> {
    if (err)
      return std::move(err);
    return true;
  };
  if (key == "target_cpu")
    return done(string(key, value, recipe.targetCpu));
  if (key == "target_cpu_features")
    return done(string(key, value, recipe.targetFeatures));
  if (key == "tiles")
    return done(tiles(value));
  if (key == "fixed_shapes")
    return done(shapes(value));
  if (key == "fixed_values")
    return done(values(value));
  if (key == "signature") {
    if (llvm::Error err = string(key, value, recipe.signature))
      return std::move(err);
    return done(reason(key, signatureReason(recipe.signature, /*given=*/true)));
  }
  if (key == "target" || key == "profile" || key == "module_name" || key == "output_format") {
    std::string text;
    if (llvm::Error err = string(key, value, text))
      return std::move(err);
    if (key == "output_format")
      return done(parseOutputFormat(text, recipe.format) ? llvm::Error::success()
                                                         : reason(key, formatReason(text)));
    std::string why = key == "target"    ? targetReason(text)
                      : key == "profile" ? profileReason(text)
                                         : moduleNameReason(text);
    if (llvm::Error err = reason(key, why))
      return std::move(err);
    (key == "target"    ? recipe.target
     : key == "profile" ? recipe.profile
                        : recipe.moduleName) = text;
    return true;
  }
  if (key == "debug_symbols" || key == "reflection" || key == "fusion" ||
      key == "check_bounds") {
    std::optional<bool> on = value.getAsBoolean();
    if (key == "fusion" || key == "check_bounds") {
      if (!on)
        return fail(key, " must be true or false");
      (key == "fusion" ? recipe.fusion : recipe.checkBounds) = *on;
    } else {
      if (!on && !value.getAsNull())
        return fail(key, " must be true, false or null (the profile decides)");
      (key == "reflection" ? recipe.reflection : recipe.debugSymbols) = on;
    }
    return true;
  }
  if (key == "no_fusion") {
    std::vector<int64_t> ids;
    if (llvm::Error err = integers(key, value, ids))
      return std::move(err);
    for (int64_t id : ids) {
      if (llvm::Error err = reason(key, dispatchIdReason(id)))
        return std::move(err);
      addNoFusion(recipe, id);
    }
    return true;
  }
  return false;
}

} // namespace

llvm::Expected<BuildRecipe> recipeFromJson(const llvm::json::Object &object,
                                           const std::string &where,
                                           std::vector<std::string> *unknownKeys) {
  BuildRecipe recipe;
  JsonReader reader(recipe, where);
  // Keys in sorted order, so the first error is the same on every run.
  std::vector<std::string> keys;
  for (const auto &entry : object)
    keys.push_back(entry.first.str());
  std::sort(keys.begin(), keys.end());
  for (const std::string &key : keys) {
    auto known = reader.read(key, *object.get(key));
    if (!known)
      return known.takeError();
    if (!*known && unknownKeys)
      unknownKeys->push_back(key);
  }
  return recipe;
}

llvm::Expected<BuildRecipe> parseRecipe(llvm::StringRef text, const std::string &where) {
  auto parsed = llvm::json::parse(text);
  if (!parsed)
    return makeError(where + ": not valid JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root)
    return makeError(where + ": expected a JSON object of build settings (" +
                     llvm::join(recipeJsonKeys(), ", ") + ")");
  std::vector<std::string> unknown;
  auto recipe = recipeFromJson(*root, where, &unknown);
  if (!recipe)
    return recipe.takeError();
  if (!unknown.empty())
    return makeError(where + ": unknown key '" + quoteInput(unknown.front()) +
                     "' (known: " + llvm::join(recipeJsonKeys(), ", ") + ")");
  return recipe;
}

llvm::Expected<BuildRecipe> loadRecipe(const std::string &path) {
  auto buffer = readRegularFile(path, "a tuning JSON file");
  if (!buffer)
    return buffer.takeError();
  return parseRecipe((*buffer)->getBuffer(), path);
}

// --- The command line ------------------------------------------------------

std::vector<std::string> recipeCommandLine(const BuildRecipe &recipe) {
  const BuildRecipe defaults;
  std::vector<std::string> flags;
  auto add = [&](const char *key, const std::string &value) {
    flags.push_back(std::string("--") + key + "=" + value);
  };
  auto boolean = [](bool on) { return std::string(on ? "true" : "false"); };
  if (recipe.target != defaults.target)
    add("target", recipe.target);
  if (!recipe.targetCpu.empty())
    add("target-cpu", recipe.targetCpu);
  if (!recipe.targetFeatures.empty())
    add("target-cpu-features", recipe.targetFeatures);
  if (recipe.profile != defaults.profile)
    add("profile", recipe.profile);
  if (recipe.debugSymbols)
    add("debug-symbols", boolean(*recipe.debugSymbols));
  if (recipe.reflection)
    add("reflection", boolean(*recipe.reflection));
  if (recipe.format != defaults.format)
    add("output-format", toString(recipe.format));
  if (!recipe.moduleName.empty())
    add("module-name", recipe.moduleName);
  for (const auto &[id, sizes] : recipe.tiles)
    add("tile", std::to_string(id) + "=" + joined(sizes, ","));
  if (!recipe.fusion)
    add("fusion", "false");
  if (recipe.checkBounds)
    add("check-bounds", "true");
  if (!recipe.signature.empty())
    add("signature", recipe.signature);
  for (int64_t id : recipe.noFusion)
    add("no-fusion", std::to_string(id));
  for (const auto &[input, shape] : recipe.fixedShapes)
    add("fix-shape", input + "=" + joined(shape, "x"));
  for (const auto &[input, values] : recipe.fixedValues)
    add("fix-value", input + "=" + fixValueText(values));
  return flags;
}

} // namespace kiln
