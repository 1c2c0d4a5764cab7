//===- kiln/Recipe.h - The settings of one build, in one place -*- C++ -*-===//
//
// A build recipe is everything that decides what one build of a model
// produces: device target, CPU and features, profile and its overrides,
// output format and C module name, workgroup tiles, fusion switches,
// fixed input shapes and inputs fixed to values. The command line (`kiln
// compile|export|inspect` flags), `.kilnproj` projects, tuning files, the
// export manifest, the workbench and the Python package all hold a
// BuildRecipe and go through the functions below: one parser and one check
// per setting, one JSON form, one command line.
//
// Settings by key (the CLI flag names without "--"; JSON keys in
// parentheses where they differ):
//   target               a knownTargets() name                 ("target")
//   target-cpu           LLVM CPU name or "host"               ("target_cpu")
//   target-cpu-features  LLVM feature string or "host"         ("target_cpu_features")
//   profile              default | stripped                    ("profile")
//   debug-symbols        true | false (overrides the profile)  ("debug_symbols")
//   reflection           true | false (overrides the profile)  ("reflection")
//   output-format        kiln | c-module                       ("output_format")
//   module-name          C identifier                          ("module_name")
//   tile                 ID=S0,S1,... (repeatable)             ("tiles": {"ID": [S0, ...]})
//   fusion               true | false                          ("fusion")
//   no-fusion            ID (repeatable)                       ("no_fusion": [ID, ...])
//   fix-shape            INPUT=D0xD1x... (repeatable)          ("fixed_shapes":
//                                                          {"INPUT": [D0, ...]})
//   fix-value            INPUT=VALUE (repeatable)              ("fixed_values":
//                                                          {"INPUT": V or [V, ...]})
//                        VALUE: a number (16000, 0.5, true), or
//                        several separated by ',', with or
//                        without [ ] (1,2,3 or [1,2,3])
//   check-bounds         true | false (.kiln artifacts only)   ("check_bounds")
//   signature            a TFLite signature_key                ("signature")
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RECIPE_H
#define KILN_RECIPE_H

#include "kiln/Compiler.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace kiln {

/// The settings of one build (see the file comment). Default-constructed:
/// what `kiln compile MODEL` with no flags builds.
struct BuildRecipe {
  /// A knownTargets() name.
  std::string target = "host";
  /// LLVM CPU name, "host", or empty for the target's default.
  std::string targetCpu;
  /// LLVM feature string ("+avx2,+fma"), "host", or empty.
  std::string targetFeatures;
  /// "default" (debug symbols and reflection) or "stripped" (neither).
  std::string profile = "default";
  /// Explicit overrides of the profile; nullopt = the profile decides.
  std::optional<bool> debugSymbols;
  std::optional<bool> reflection;
  OutputFormat format = OutputFormat::Artifact;
  /// C module symbol prefix; empty = from the model's file name.
  std::string moduleName;
  /// Workgroup tile sizes per dispatch id, one per loop of its tiled op
  /// (0 = whole loop).
  std::map<int64_t, std::vector<int64_t>> tiles;
  bool fusion = true;
  /// Dispatch ids not to fuse into (sorted, unique).
  std::vector<int64_t> noFusion;
  /// Input (name, or index as decimal text) -> full static shape.
  std::map<std::string, std::vector<int64_t>> fixedShapes;
  /// Input (name, or index as decimal text) -> its value, every element
  /// in row-major order (element type and shape are the input's).
  std::map<std::string, std::vector<FixedNumber>> fixedValues;
  /// Bounds-checked kernels (CompileOptions::checkBounds).
  bool checkBounds = false;
  /// The TFLite SignatureDef compiled (CompileOptions::signature); empty =
  /// subgraph 0 with its tensors' names.
  std::string signature;

  bool operator==(const BuildRecipe &other) const = default;
};

/// Every setting key the recipe takes, in the file comment's order.
const std::vector<std::string> &recipeKeys();

/// The JSON key of each recipeKeys() entry, in the same order ("tiles",
/// "no_fusion", "fixed_shapes", "fixed_values", the rest with '_' for
/// '-').
const std::vector<std::string> &recipeJsonKeys();

/// A build setting refused by setRecipeOption, validateRecipe or
/// applyProfile, as data: the setting's key (a recipeKeys() name), the
/// command line's sentence (message(): "--tile='4=abc': 'abc' is not ...",
/// what `kiln` prints) and the same fact without flag syntax (`detail`:
/// "'4=abc': 'abc' is not ..."), which a GUI puts after the setting's
/// display name (settingDisplayName). llvm::toString() of one gives the
/// command line's sentence.
class SettingError : public llvm::ErrorInfo<SettingError> {
public:
  static char ID;
  SettingError(std::string key, std::string commandLine, std::string detail)
      : key(std::move(key)), commandLine(std::move(commandLine)), detail(std::move(detail)) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

  std::string key;
  std::string commandLine;
  std::string detail;
};

/// The name a GUI gives the setting `key` (a recipeKeys() name): "tile" is
/// "Tile sizes", "fix-shape" "Input shape", "reflection" "Reflection data"
/// ...; the key itself for one it does not know.
std::string settingDisplayName(llvm::StringRef key);

/// An error's one line as a GUI shows it: a SettingError as "Tile sizes
/// '4=abc': 'abc' is not a tile size ..." (settingDisplayName and its
/// detail, no flag names); any other error as llvm::toString gives it.
/// Consumes `error`.
std::string settingErrorText(llvm::Error error);

/// The one parser of a tile's sizes (the part of --tile=ID=SIZES after
/// the '='; a Tune cell of the workbench): whole numbers >= 0 separated by
/// ',' ("1,8,0,0"; 0 = the whole loop). Whether they suit the dispatch's
/// loops is checkTileSizes's job. Errors: one line without the flag,
/// naming the offending text ("'abc' is not a tile size ...", "no sizes").
llvm::Expected<std::vector<int64_t>> parseTileSizes(llvm::StringRef text);

/// Applies one setting given as text, as on the command line: `key` is a
/// recipeKeys() name, `value` its text ("tile" adds or replaces one
/// dispatch's sizes, "fix-shape" and "fix-value" add one input,
/// "no-fusion" adds one id;
/// the others replace the setting). Booleans are "true" or "false" (also
/// "1", "0"); "target-cpu" and "target-cpu-features" take any text, empty
/// = the target's default (LLVM checks the names when compiling). This is
/// the one parser of each setting: it checks the value's syntax and range
/// (a tile size is a whole number >= 0, a dispatch id too, a shape has
/// positive dimensions and at most 2^31 elements, a fixed value is 1 to
/// kMaxFixedValueElements finite numbers (parseFixValue), a target and a profile
/// are known, a module name is a C identifier, ...). Errors: one line
/// naming the flag (`--tile='3=a'`), the value and what is accepted (an
/// unknown key names the keys; a second shape for one input says so); the
/// recipe is unchanged.
llvm::Error setRecipeOption(BuildRecipe &recipe, llvm::StringRef key, llvm::StringRef value);

/// The most elements one --fix-value gives (the value is a small tensor:
/// a sample rate, a flag, a few sizes).
inline constexpr size_t kMaxFixedValueElements = 65536;

/// The one parser of a --fix-value VALUE (the part after INPUT=): one
/// number, or several separated by ',' with or without enclosing [ ]
/// ("16000", "1,2,3", "[0.5, -1e-3]"); spaces around numbers are allowed.
/// A number is a whole number (decimal, optional sign), a finite real
/// (0.5, -1e-3; one with an integral value is held as a whole number), or
/// true / false (1 / 0, for bool inputs). Whether the numbers suit the
/// input (its element type's range, its element count) is checked against
/// the model (kiln/ModelInputs.h checkValueFixes). Errors: one line
/// without the flag (the caller prefixes it), naming the offending text:
/// "'abc' is not a number (...)", "no value", more than
/// kMaxFixedValueElements elements.
llvm::Expected<std::vector<FixedNumber>> parseFixValue(llvm::StringRef text);

/// Checks every setting (the same rules as setRecipeOption, for fields set
/// directly) and the settings together: a bare-metal target (see
/// recipeIsBareMetal) needs the c-module format; a module name is a C
/// identifier (not starting with a digit or "__") of at most 100
/// characters that is not a C keyword, a standard header name or "main".
/// Errors: one line naming the setting as a flag and its value.
llvm::Error validateRecipe(const BuildRecipe &recipe);

/// True if the recipe's target is bare metal (no operating system, e.g.
/// thumbv7em-none-eabihf): such builds are static C modules only. False
/// for an unknown target.
bool recipeIsBareMetal(const BuildRecipe &recipe);

/// Sets `options.debugSymbols` and `options.reflection` as `profile` does
/// ("default": both kept; "stripped": both dropped), nothing else. The one
/// definition of the profiles (recipeCompileOptions applies it, then the
/// recipe's overrides). Errors: an unknown profile, naming --profile and
/// the value.
llvm::Error applyProfile(llvm::StringRef profile, CompileOptions &options);

/// The rule for one dispatch's tile sizes against its plan: `sizes` has
/// one entry per loop of the dispatch's tiled op (`loopRanges`, elements),
/// each 0 (whole loop) or in [1, range]; reduction loops (`loopKinds`
/// entry "reduction"; a missing entry is "parallel") are never tiled (0);
/// at most 3 loops are split (a size below the range), one per workgroup
/// grid axis x, y, z. A size equal to the range is the whole loop. The
/// tiler (kiln-tile-and-distribute) and the workbench's inline check both
/// call this. Errors: one line naming the dispatch ("dispatch 3"), the
/// loop and the rule, e.g. "dispatch 3: tile size 5 for loop 0 exceeds the
/// loop's range 4 (use 4 or 0 for the whole loop)".
llvm::Error checkTileSizes(int64_t dispatchId, const std::vector<int64_t> &sizes,
                           const std::vector<int64_t> &loopRanges,
                           const std::vector<std::string> &loopKinds);

/// Compile options for `recipe` (target resolved by applyTarget, an
/// explicit CPU and features kept; profile and overrides applied; format,
/// module name, tiles, fusion and shapes copied). Options the recipe does
/// not hold (--target-triple, --max-buffer-bytes, the optimization level)
/// keep their defaults. Errors as validateRecipe's.
llvm::Expected<CompileOptions> recipeCompileOptions(const BuildRecipe &recipe);

/// The recipe's JSON form: an object with the JSON keys of the file
/// comment; settings at their default value are omitted.
llvm::json::Object recipeToJson(const BuildRecipe &recipe);

/// Reads the recipe keys of `object` (other keys are left to the caller,
/// which names them in `unknownKeys` when it wants them refused). Each
/// value is checked by the rules of setRecipeOption. `where` names the
/// file in errors ("blazeface.kilnproj"). Errors: one line naming the
/// file, the key and what is expected, e.g. `m.kilnproj: "tiles.3": '-4'
/// is not a tile size (a whole number >= 0)`.
llvm::Expected<BuildRecipe> recipeFromJson(const llvm::json::Object &object,
                                           const std::string &where,
                                           std::vector<std::string> *unknownKeys = nullptr);

/// Parses `text`, a JSON object holding recipe keys only (a tuning file,
/// `kiln compile --tuning=FILE`; the manifest's "recipe" object is one).
/// `where` names the file in errors. Errors: invalid JSON, not an object,
/// an unknown key (naming the known ones), or recipeFromJson's.
llvm::Expected<BuildRecipe> parseRecipe(llvm::StringRef text, const std::string &where);

/// parseRecipe of the file at `path`. Errors also when it cannot be read.
llvm::Expected<BuildRecipe> loadRecipe(const std::string &path);

/// The command-line flags that repeat the recipe (`--target=...`, one
/// `--tile=` per dispatch, ...), settings at their default omitted, in
/// recipeKeys() order. Parsing them back with setRecipeOption gives the
/// same recipe.
std::vector<std::string> recipeCommandLine(const BuildRecipe &recipe);

} // namespace kiln

#endif
