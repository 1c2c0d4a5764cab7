//===- Import.h - Model importers ------------------------------*- C++ -*-===//
//
// Importers turn a model file into an MLIR module in Kiln's input form:
//   module attributes {kiln.source = "model.tflite"} {
//     func.func @main(%x: tensor<1x16x96xf32> {kiln.name = "input"})
//         -> (tensor<1x1xf32> {kiln.name = "output"}) { ... TOSA ... }
//   }
// One func.func named `main`, static tensor types only, weights as
// tosa.const, the model's input and output names in `kiln.name` argument and
// result attributes. Internal to core.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_IMPORT_H
#define KILN_CORE_IMPORT_IMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {

struct ShapeFix;
struct ControlFlowDecision;
struct ValueFix;
struct FixedInput;

/// Attribute naming a model input (argument) or output (result).
inline constexpr const char *kNameAttr = "kiln.name";

/// Attribute of a model input or output whose element type on the wire
/// differs from the one Kiln computes in: "u8" on an i8 argument/result
/// means the caller passes uint8 (a quantized uint8 TFLite tensor, computed
/// as int8 q - 128; see Import/TFLiteQuant.h).
inline constexpr const char *kElementTypeAttr = "kiln.element_type";

/// Argument and result attribute of @main marking persistent state (TFLite
/// resource variables, the variable tensors of LSTM and SVDF): the
/// argument carries a variable's value at the start of an invocation and
/// the result with the same name its value at the end, which the next
/// invocation's argument receives. Neither is a model input or output; the
/// plan keeps the variable in the arena's persistent region
/// (CompilationPlan::state). The value is the variable's name.
inline constexpr const char *kStateAttr = "kiln.state";

/// Module attribute listing the state variables in argument order: an
/// array of {name, initial} dictionaries, `initial` the DenseElementsAttr
/// every variable holds after load and after kiln_module_reset_state.
inline constexpr const char *kStateVariablesAttr = "kiln.state_variables";

/// Reads `path` and picks the importer from its contents and name: TFLite
/// flatbuffer (file identifier "TFL3"), ONNX ModelProto ('.onnx') or MLIR
/// text/bytecode in the TOSA dialect. A file whose contents contradict its
/// extension (a TFLite file named '.onnx') is refused with what it is.
/// `values` (--fix-value; ONNX models only, a TFLite or .mlir model is one
/// error) are checked against the model's inputs (checkValueFixes) and
/// become constants of the graph; the module then carries them in its
/// kFixedInputsAttr. `signature` (--signature; TFLite models only, an ONNX
/// or .mlir model is one error) picks the SignatureDef compiled
/// (importTFLite). Errors name the file and what is supported.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importModelFile(mlir::MLIRContext &context, llvm::StringRef path,
                const std::vector<ShapeFix> &fixes, const std::vector<ValueFix> &values = {},
                const std::string &signature = "");

/// Module attribute listing the inputs fixed to values (--fix-value): an
/// array of {name, element_type, shape, value} dictionaries, `value` the
/// fixValueText form. The compiler moves it into the artifact's io section.
inline constexpr const char *kFixedInputsAttr = "kiln.fixed_inputs";

/// Module attribute listing the ONNX importer's control-flow decisions: an
/// array of {node, op_type, decision, reason} dictionaries
/// (ControlFlowDecision), moved into CompileResult::controlFlow.
inline constexpr const char *kControlFlowAttr = "kiln.control_flow";

/// Adds `warnings` to the module's "kiln.warnings" (which the compiler moves
/// into CompileResult::warnings and the tools print), each sentence once.
void addWarnings(mlir::ModuleOp module, const std::vector<std::string> &warnings);

/// Records `decisions` in the module's kControlFlowAttr (nothing when
/// empty); controlFlowOf reads them back.
void setControlFlow(mlir::ModuleOp module, const std::vector<ControlFlowDecision> &decisions);

/// The decisions a module's kControlFlowAttr lists (none without it).
std::vector<ControlFlowDecision> controlFlowOf(mlir::ModuleOp module);

/// The fixed inputs a module's kFixedInputsAttr lists (none without it).
std::vector<FixedInput> fixedInputsOf(mlir::ModuleOp module);

/// Imports a TFLite flatbuffer (schema: core/schema/tflite.fbs): the
/// subgraph of the SignatureDef keyed `signature`, its inputs and outputs
/// named and ordered as the signature's TensorMaps list them (as TFLite's
/// SignatureRunner exposes them); "" = subgraph 0 with its tensors' names
/// (tfl::tfliteEntry); with the subgraphs its IF, WHILE and CALL_ONCE operators call converted
/// in place (TFLiteControlFlowOps.cpp; each decision in kControlFlowAttr).
/// `filename` is only used in messages. Errors: not a TFLite file, fails flatbuffers
/// verification, quantized or non-float tensors on the
/// compute path, dynamic dimensions that record no size, unsupported or
/// custom operators (named with their index, with the list of supported
/// ones). `fixes` (checked beforehand by checkModelShapeFixes, as
/// importModelFile does) gives static shapes to inputs with dynamic
/// dimensions; an input left unfixed whose `shape` records a size in each
/// dynamic dimension (Keras' batch -1, recorded 1) compiles at that shape,
/// as TFLite runs it, with one warning in "kiln.warnings" naming
/// --fix-shape.
///
/// Locations: every op carries NameLoc("<OPERATOR>#<index>",
/// NameLoc(<first output tensor name>, FileLineColLoc(<file>, <index>, 0))),
/// e.g. "CONV_2D#12", so later phases can name the source operator.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importTFLite(mlir::MLIRContext &context, llvm::ArrayRef<uint8_t> bytes, llvm::StringRef filename,
             const std::vector<ShapeFix> &fixes, const std::string &signature = "");

/// Imports an ONNX ModelProto (IR version <= 8, default-domain opsets 7 to
/// 17; read, checked and shape-inferred with libonnx 1.12, see ONNXModel.h).
/// `filename` is used in messages and locations; external data files are
/// read from `directory`. `fixes` (checked beforehand by checkModelShapeFixes)
/// set inputs' symbolic dimensions (by input
/// name or index); `values` (resolved by checkValueFixes) turn inputs into
/// initializers before libonnx's shape inference, so that Ifs on them fold. Errors: not an ONNX
/// model, versions or domains Kiln does not read, unsupported nodes (named with their name, op
/// type, index and opset, followed by the supported list), symbolic dimensions left unfixed (with a
/// --fix-shape suggestion), shapes that depend on run-time values.
///
/// Locations: NameLoc("Conv \"conv1\"#12", NameLoc(<first output name>,
/// FileLineColLoc(<file>, <node index>, 0))).
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importONNX(mlir::MLIRContext &context, llvm::ArrayRef<uint8_t> bytes, llvm::StringRef filename,
           llvm::StringRef directory, const std::vector<ShapeFix> &fixes,
           const std::vector<FixedInput> &values = {});

/// Checks `fixes` and `values` against the inputs the TFLite (or, with
/// `isONNX`, ONNX) model in `bytes` declares (kiln/ModelInputs.h
/// checkShapeFixes, checkValueFixes); a fix of a static input adds its
/// sentence to `warnings`, and the fixed inputs are set in `fixed`. A file
/// whose inputs do not read passes (its importer says what is wrong). In
/// ModelInputs.cpp.
llvm::Error checkModelShapeFixes(llvm::ArrayRef<uint8_t> bytes, llvm::StringRef name,
                                 llvm::StringRef directory, bool isONNX,
                                 const std::vector<ShapeFix> &fixes,
                                 const std::vector<ValueFix> &values,
                                 std::vector<std::string> &warnings, std::vector<FixedInput> &fixed,
                                 const std::string &signature = "");

/// "[1,100000,100000,8]": a shape for messages.
std::string shapeString(llvm::ArrayRef<int64_t> shape);

/// Finds the source operator ("RESIZE_BILINEAR#0") and tensor name in an
/// importer location (see importTFLite); leaves either empty if absent.
void describeLocation(mlir::Location loc, std::string &op, std::string &tensor);

/// Bytes of a tensor of `shape` with `elementBytes`-byte elements, or
/// nullopt if a dimension is negative (dynamic) or the product overflows
/// int64 (llvm::checkedMul).
std::optional<int64_t> tensorBytes(llvm::ArrayRef<int64_t> shape, int64_t elementBytes);

/// The default limit on one buffer (a tensor, or the arena): 2^31 - 1 bytes
/// on targets with 32-bit pointers (the largest object, PTRDIFF_MAX), 4 GiB
/// on 64-bit targets (far above what an edge model needs; the
/// --max-buffer-bytes option raises it, as IREE's
/// --iree-stream-resource-max-allocation-size does).
int64_t defaultMaxBufferBytes(unsigned pointerBits);

/// Checks every tensor of `module` (arguments and results of every op) has
/// a byte size that fits in int64 and in `maxBytes`. The error names the
/// file, the tensor and its operator (from the importer's locations), the
/// shape, element type and byte size, and the limit (`limitSource` says
/// where it comes from, e.g. "x86_64, --max-buffer-bytes").
llvm::Error checkTensorSizes(mlir::ModuleOp module, int64_t maxBytes,
                             llvm::StringRef filename, llvm::StringRef limitSource);

/// Parses a TOSA-dialect MLIR module and checks it is in Kiln's input form.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importTosaMLIR(mlir::MLIRContext &context, llvm::StringRef text,
               llvm::StringRef filename);

} // namespace kiln

#endif
