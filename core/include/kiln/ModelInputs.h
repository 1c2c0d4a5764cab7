//===- kiln/ModelInputs.h - A model's inputs as data -----------*- C++ -*-===//
//
// What a model file declares about its inputs, read without compiling it:
// each input's name, element type and shape with its dynamic dimensions
// marked (-1), for TFLite (`shape_signature`), ONNX (symbolic dimensions
// such as "batch", kept by name) and TOSA .mlir (@main's static arguments).
// The CLI (`--fix-shape`, `kiln inspect`), the workbench (Tune's input
// shapes, the Diagnostics fix button) and the Python package read these
// structs; checkShapeFixes is the one check of a --fix-shape against them,
// checkValueFixes the one check of a --fix-value.
//
// An import that stops at inputs whose dynamic dimensions no --fix-shape
// sized returns an UnfixedInputError: its message is the text users read,
// and it carries the inputs with the shapes Kiln checked compile.
//
// Plain data: no MLIR in this header.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_MODELINPUTS_H
#define KILN_MODELINPUTS_H

#include "kiln/Compiler.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// One model input as the model file declares it.
struct ModelInput {
  std::string name;
  /// Position among the model's inputs (the index --fix-shape accepts).
  int index = 0;
  /// NumPy-style element type name: "float32", "int32", "int64", "bool",
  /// ... ("type N" for a code Kiln does not know).
  std::string elementType;
  /// One entry per dimension: its size, or -1 where it is dynamic (TFLite
  /// -1 in shape_signature, an ONNX symbolic or unknown dimension).
  std::vector<int64_t> shape;
  /// Same length as `shape`: the ONNX symbol of a dynamic dimension
  /// ("batch", "N"), "" for static dimensions and unnamed dynamic ones (all
  /// of a TFLite or .mlir model's).
  std::vector<std::string> dimNames;
  /// False when the file gives no shape at all (an ONNX input without one;
  /// `shape` is then empty and must be given whole by --fix-shape).
  bool hasShape = true;

  /// True if some dimension is -1 (or the shape is unknown).
  bool isDynamic() const;
  /// "[batch,3,224,224]": sizes, and each dynamic dimension's symbol or
  /// "?"; "[?]" ... for an unknown shape is "unknown".
  std::string shapeText() const;
};

/// Reads the inputs of the model file at `path` (.tflite, .onnx, TOSA
/// .mlir; picked as importModelFile picks, by contents and extension),
/// without importing it. Errors are one line naming the file: unreadable,
/// not a model, a .kiln artifact (which has a static signature: see
/// `kiln inspect`), or the reader's own error. `signature` (--signature)
/// picks a TFLite model's SignatureDef: its inputs, named and ordered as the
/// signature lists them ("" = subgraph 0's inputs with their tensors'
/// names); an unknown key is one error listing the
/// model's signatures, and a signature for an ONNX or .mlir model is one
/// error.
llvm::Expected<std::vector<ModelInput>> readModelInputs(const std::string &path,
                                                        const std::string &signature = "");

/// One entry point of a TFLite model (a SignatureDef of schema v3).
struct ModelSignature {
  /// The signature_key (`--signature=KEY`).
  std::string key;
  /// The subgraph it runs.
  int subgraph = 0;
  /// Its inputs' and outputs' names, in the signature's order (the order
  /// of the compiled artifact's inputs and outputs).
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  /// True for the one `--signature` compiles (none without it: subgraph 0
  /// is compiled with its tensors' names).
  bool compiled = false;
};

/// The SignatureDefs of the model at `path`, in file order, the one
/// `signature` picks marked compiled; none for a TFLite model without
/// signatures and for ONNX and .mlir models. Errors as readModelInputs'.
llvm::Expected<std::vector<ModelSignature>> readModelSignatures(const std::string &path,
                                                                const std::string &signature = "");

/// The one error for --signature on a model that is not TFLite
/// ("m.onnx: --signature is for TFLite models ...").
std::string signatureFormatError(llvm::StringRef filename, bool isONNX);

/// `kiln inspect MODEL`'s rows for the signatures, one per signature:
/// "signature 'mul' (subgraph 1): inputs ('x', 'y') -> outputs ('z')
/// [compiled]", then, when none is compiled, "signature none given:
/// subgraph 0 compiled, with its tensors' names ...". Empty for none.
std::string formatModelSignatures(const std::vector<ModelSignature> &signatures);

/// The same as `kiln inspect MODEL --json`'s "signatures": [{"key",
/// "subgraph", "inputs": [...], "outputs": [...], "compiled"}].
llvm::json::Array modelSignaturesJson(const std::vector<ModelSignature> &signatures);

/// The files a model at `path` reads besides itself: an ONNX model's
/// external-data files (each resolved against the model's folder); none for
/// TFLite and .mlir models or a file that does not read. Commands never
/// write over them (writeFilesAtomically's `reads`).
std::vector<std::string> modelDataFiles(const std::string &path);

/// Checks `fixes` against `inputs` (the one check of --fix-shape, used by
/// every import): each fix names an input (by name, or index as decimal
/// text), gives its full rank, sizes above zero, and keeps each static
/// dimension's size; one input is not fixed twice with different shapes.
/// Errors name the input and `filename` is their prefix ("model.onnx: ").
/// A fix of an input with no dynamic dimension changes nothing: a sentence
/// saying so is appended to `warnings` (when given).
llvm::Error checkShapeFixes(const std::vector<ModelInput> &inputs, const std::vector<ShapeFix> &fixes,
                            const std::string &filename, std::vector<std::string> *warnings = nullptr);

/// Checks `values` against `inputs` (the one check of --fix-value, used by
/// every import) and resolves each to the input it fixes: each names an
/// input (by name, or index as decimal text), at most once; the input's
/// element type is a number type Kiln fixes (float32, int8, uint8, int16,
/// uint16, int32, uint32, int64, bool); its shape is static,
/// or given whole by a --fix-shape of the same input (`shapes`, checked by
/// checkShapeFixes); the value has one element per element of that shape;
/// each element suits the type (a whole number for integer types, within
/// their range, 0 or 1 (false, true) for bool, within float32's range for
/// float32). Fixing every input is allowed: the artifact then takes no
/// input. Errors name the input, `filename` is their prefix
/// ("model.onnx: "); an unknown input lists the model's inputs. Returns the
/// fixed inputs in the model's input order.
llvm::Expected<std::vector<FixedInput>> checkValueFixes(const std::vector<ModelInput> &inputs,
                                                        const std::vector<ValueFix> &values,
                                                        const std::vector<ShapeFix> &shapes,
                                                        const std::string &filename);

/// `kiln inspect`'s rows for the fixed inputs, one per input: "fixed
/// 'sr' int64 [] = 16000 (--fix-value; not an input of the artifact)".
std::string formatFixedInputs(const std::vector<FixedInput> &fixed);

/// The fixed inputs as JSON ("fixed_values" of `kiln inspect --json`):
/// [{"name", "element_type", "shape", "values": [...]}].
llvm::json::Array fixedInputsJson(const std::vector<FixedInput> &fixed);

/// `kiln inspect MODEL`'s rows for the importer's control-flow decisions,
/// one per If/Loop/Scan: "control  node #2 If \"If_0\" (opset 18):
/// then_branch taken: the condition 'c' is true when ...". Empty for none.
std::string formatControlFlow(const std::vector<ControlFlowDecision> &decisions);

/// The decisions as JSON ("control_flow" of `kiln inspect --json`):
/// [{"node", "op_type", "decision", "reason"}].
llvm::json::Array controlFlowJson(const std::vector<ControlFlowDecision> &decisions);

/// The input a ShapeFix's `input` names (name or decimal index), or nullptr.
const ModelInput *findModelInput(const std::vector<ModelInput> &inputs, const std::string &nameOrIndex);

/// "1x3x224x224" (the --fix-shape form of a shape).
std::string fixShapeText(const std::vector<int64_t> &shape);

/// `kiln inspect MODEL`'s rows for the inputs the model declares, one per
/// input: "model input 0 'x' float32 [batch,3,224,224]: dimension 0
/// ('batch') is dynamic", "model input 1 'y' float32 [1,4]".
std::string formatModelInputs(const std::vector<ModelInput> &inputs);

/// The same as `kiln inspect MODEL --json`'s "model_inputs": one object per
/// input, {"name", "index", "element_type", "shape" (-1 = dynamic),
/// "dim_names" ("" for none), "dynamic"}; "shape": null when unknown.
llvm::json::Value modelInputsJson(const std::vector<ModelInput> &inputs);

/// An input whose dynamic dimensions no --fix-shape sized, with the static
/// shape Kiln suggests for it.
struct UnfixedInput {
  ModelInput input;
  /// A full static shape with which the model imported (Kiln tried it), or
  /// empty if no tried size did.
  std::vector<int64_t> suggestion;
};

/// The error of an import stopped by unfixed dynamic inputs. `message()`
/// is the one line users read (with the --fix-shape suggestion); `inputs`
/// carries the same as data, in input order.
class UnfixedInputError : public llvm::ErrorInfo<UnfixedInputError> {
public:
  static char ID;
  UnfixedInputError(std::string message, std::vector<UnfixedInput> inputs)
      : text(std::move(message)), inputs(std::move(inputs)) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

  std::string text;
  std::vector<UnfixedInput> inputs;
};

/// If `error` is an UnfixedInputError, its inputs; empty otherwise. The
/// error stays as it was (still to be handled by the caller).
std::vector<UnfixedInput> unfixedInputsOf(llvm::Error &error);

} // namespace kiln

#endif // KILN_MODELINPUTS_H
