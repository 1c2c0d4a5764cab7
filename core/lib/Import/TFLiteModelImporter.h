//===- TFLiteModelImporter.h - One TFLite model being imported -*- C++ -*-===//
//
// The state of one TFLite import (ModelImporter), shared by the files of
// the TFLite front end:
//   TFLiteImporter.cpp       importTFLite, ModelImporter::run and its phases
//                            (file, signature, operators, results), constants
//   TFLiteChecks.cpp         the model checks run before any TOSA is built
//                            (tensors, quantization, operators, shapes) and
//                            the recorded-shape check after
//   TFLiteOpContext.cpp      OpContext: what a converter reads and binds
//   TFLiteSparsity.cpp       sparse constants densified before conversion,
//                            DENSIFY
//   TFLiteDynamicInputs.cpp  the error for dynamic inputs without
//                            --fix-shape, with sizes that compile
// Converters never see this class; they use OpContext (TFLiteConverter.h).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_TFLITEMODELIMPORTER_H
#define KILN_CORE_IMPORT_TFLITEMODELIMPORTER_H

#include "Import.h"
#include "TFLiteConverter.h"
#include "TFLiteModel.h"
#include "TFLiteQuant.h"

#include "kiln/Error.h"
#include "kiln/ModelInputs.h"
#include "kiln/Options.h"
#include "kiln/TensorTypes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kiln::tfl {

using mlir::DenseElementsAttr;
using mlir::Location;
using mlir::MLIRContext;
using mlir::ModuleOp;
using mlir::OpBuilder;
using mlir::OwningOpRef;
using mlir::RankedTensorType;
using mlir::ShapedType;
using mlir::Type;
using mlir::Value;
namespace func = mlir::func;
namespace tosa = mlir::tosa;

/// The tensor's name, or "tensorN" for an unnamed tensor `index`.
std::string tensorName(const schema::Tensor *t, int index);

/// IEEE 754 binary16 -> binary32 (exact; subnormals, infinities, NaN kept).
float halfToFloat(uint16_t h);

/// "ABS, ADD, ..." (sorted names of the operators in `table`).
std::string operatorList(const ConverterTable &table);

/// Converts one TFLite model into `module`.
class ModelImporter {
public:
  ModelImporter(MLIRContext &context, llvm::ArrayRef<uint8_t> bytes, llvm::StringRef filename,
                const std::vector<ShapeFix> &fixes, llvm::StringRef signature = "")
      : context(context), bytes(bytes), filename(filename.str()), fixes(fixes),
        signatureName(signature.str()), builder(&context) {}

  llvm::Expected<OwningOpRef<ModuleOp>> run();

  // Used by OpContext.
  MLIRContext &context;
  llvm::ArrayRef<uint8_t> bytes;
  std::string filename;
  const std::vector<ShapeFix> &fixes;
  /// --signature: the SignatureDef compiled ("" = the first, or subgraph 0).
  std::string signatureName;
  /// The entry point compiled (readModel): its subgraph, and its inputs and
  /// outputs named and ordered as the signature lists them.
  TFLiteEntry entry;
  OpBuilder builder;
  const schema::Model *model = nullptr;
  const schema::SubGraph *graph = nullptr;
  std::vector<Value> values;
  /// Integer tensors an operator folded at import (SHAPE, BROADCAST_ARGS:
  /// shapes are static), by tensor index; OpContext::isConstant and
  /// constantInts read them as if the model stored them.
  std::map<int, std::vector<int64_t>> foldedInts;
  /// Affine quantization of each tensor (int8, uint8 and quantized int32
  /// tensors), checked by checkQuantization.
  std::vector<std::optional<TensorQuant>> quant;
  std::string error;

  const schema::Tensor *tensor(int index) const {
    if (index < 0 || !graph->tensors() || index >= static_cast<int>(graph->tensors()->size()))
      return nullptr;
    return graph->tensors()->Get(index);
  }

  /// Dense bytes of each sparse constant (and DENSIFY output) of the
  /// model, by tensor (TFLiteSparsity.cpp); constantData reads them in
  /// place of the stored ones.
  std::map<const schema::Tensor *, std::vector<uint8_t>> densified;
  /// One warning per densified tensor: its stored and dense sizes.
  std::vector<std::string> densifyNotes;

  /// Constant data of tensor `index`, or an empty ref if it has none (a
  /// sparse constant's dense bytes once densifySparseTensors ran).
  llvm::ArrayRef<uint8_t> constantData(int index) const {
    const schema::Tensor *t = tensor(index);
    if (auto dense = densified.find(t); t && dense != densified.end())
      return dense->second;
    if (!t || t->buffer() == 0 || !model->buffers() || t->buffer() >= model->buffers()->size())
      return {};
    const schema::Buffer *b = model->buffers()->Get(t->buffer());
    if (!b)
      return {};
    if (b->data() && b->data()->size())
      return {b->data()->data(), b->data()->size()};
    // Models over 2 GB keep data after the flatbuffer (offset/size).
    if (b->offset() > 1 && b->size() && b->offset() + b->size() <= bytes.size())
      return bytes.slice(b->offset(), b->size());
    return {};
  }

  /// Static shape of tensor `index` as the model records it (`shape`; TFLite
  /// writes 1 for each dynamic dimension there).
  std::vector<int64_t> shapeOf(int index) const {
    std::vector<int64_t> shape;
    if (const schema::Tensor *t = tensor(index))
      if (t->shape())
        shape.assign(t->shape()->begin(), t->shape()->end());
    return shape;
  }

  /// The shape an operator must give tensor `index`: the recorded shape,
  /// except that once --fix-shape gave dynamic input dimensions their sizes,
  /// every -1 of the tensor's `shape_signature` is left open
  /// (ShapedType::kDynamic) for shape inference to fill from the operands.
  std::vector<int64_t> declaredShape(int index) const {
    std::vector<int64_t> shape = shapeOf(index);
    const schema::Tensor *t = tensor(index);
    if (propagating && t && t->shape_signature() && t->shape_signature()->size() == shape.size())
      for (size_t d = 0; d < shape.size(); ++d)
        if (t->shape_signature()->Get(d) < 0)
          shape[d] = ShapedType::kDynamic;
    return shape;
  }

  /// Shape of tensor `index` as computed so far: its SSA value's shape once
  /// an operator (or the signature) bound it, else the recorded shape.
  std::vector<int64_t> currentShape(int index) const {
    if (index >= 0 && index < static_cast<int>(values.size()) && values[index])
      if (auto type = values[index].getType().dyn_cast<RankedTensorType>())
        return {type.getShape().begin(), type.getShape().end()};
    return shapeOf(index);
  }

  /// True once --fix-shape sized a dynamic input dimension: the shapes of
  /// tensors with -1 in their signature are then inferred operator by
  /// operator instead of read from the file.
  bool propagating = false;

  /// The call being converted in place (an IF branch, a WHILE condition or
  /// body, a CALL_ONCE initializer; TFLiteControlFlowOps.cpp): empty `text`
  /// in subgraph 0. Operators converted inside it are named "<OP> in
  /// <text>" at `index`, the operator of subgraph 0 that the call started
  /// from, so plans, errors and the source graph point at a node the user
  /// sees; `depth` counts nested calls.
  struct CallSite {
    std::string text;
    int index = -1;
    int depth = 0;
  };
  CallSite call;
  /// Index of `graph` among the model's subgraphs.
  int subgraphIndex = 0;
  /// What each IF, WHILE and CALL_ONCE became, in conversion order
  /// (CompileResult::controlFlow; recorded in kControlFlowAttr).
  std::vector<ControlFlowDecision> controlFlow;

  /// Converts subgraph `index` in place, its inputs bound to `args`
  /// (`known[k]`: arg k's integer or bool elements when computed at import,
  /// as foldedInts holds them), and returns its outputs, with the known
  /// elements of each in `knownOut`. The caller's graph, values, folded
  /// integers and quantization are restored afterwards. Errors (without
  /// the file name): no such subgraph, calls nested past 16, arguments
  /// whose count, element type or shape differ from the subgraph's inputs,
  /// and the subgraph's own checks and operators.
  llvm::Expected<std::vector<Value>>
  inlineSubgraph(int index, llvm::ArrayRef<Value> args,
                 const std::vector<std::optional<std::vector<int64_t>>> &known,
                 std::vector<std::optional<std::vector<int64_t>>> &knownOut, const CallSite &site);
  /// The most calls (IF, WHILE, CALL_ONCE) nested in one another.
  static constexpr int kMaxCallDepth = 16;
  /// The elements of tensor `index` of `graph` when known at import: an
  /// INT32, INT64 or BOOL constant (bools as 0/1), or a tensor an operator
  /// folded (foldedInts); nothing otherwise.
  std::optional<std::vector<int64_t>> knownInts(int index) const;
  /// "subgraph 2 'body'".
  std::string subgraphName(int index) const;

  /// A variable the model carries from one invocation to the next
  /// (TFLiteStateOps.cpp): a resource variable (VAR_HANDLE) or a variable
  /// tensor (`is_variable`: the state of LSTM, RNN and SVDF). A variable
  /// read before it is assigned becomes an argument of @main marked
  /// kStateAttr, and one assigned too a result of the same name; one never
  /// assigned is its initial value, one never read needs no state.
  struct StateVariable {
    /// "tensor 12 of subgraph 0" or "resource 'container/name'".
    std::string key;
    /// Shown to users (the tensor's or resource's name).
    std::string name;
    /// The value after load and after a reset (TFLite: 0, or the zero
    /// point of an int8 variable tensor; a resource: what CALL_ONCE's
    /// initializer assigns).
    DenseElementsAttr initial;
    /// @main's argument holding the value at the start of an invocation
    /// (null until the first read before an assignment).
    mlir::BlockArgument argument;
    /// The value at this point of the invocation (null before any use).
    Value current;
    bool assigned = false;
    /// A resource read before anything (CALL_ONCE) gave it a value: it
    /// starts at 0, which TFLite refuses (finishState warns).
    bool uninitialized = false;
  };
  /// One warning per variable read uninitialized (finishState).
  std::vector<std::string> stateNotes;
  std::vector<StateVariable> state;
  /// The variable (key, name) each VAR_HANDLE output names, by (subgraph,
  /// tensor index).
  std::map<std::pair<int, int>, std::pair<std::string, std::string>> resources;
  /// True while CALL_ONCE's initializer is converted: ASSIGN_VARIABLE then
  /// sets a variable's initial value.
  bool initializing = false;
  /// @main, once createMain made it.
  func::FuncOp mainFunc;
  /// The id (index into `state`) of variable `key`, declared with `name`
  /// and `initial` on first use (a later call returns the same id and
  /// keeps the first initial value).
  size_t declareState(const std::string &key, const std::string &name, DenseElementsAttr initial);
  /// Variable `id`'s value at this point of the invocation.
  Value readState(size_t id);
  /// Makes `value` (of the variable's type) variable `id`'s value from here
  /// on and at the end of the invocation.
  void assignState(size_t id, Value value);
  /// The state variable of tensor `index` of `graph` (which must be a
  /// variable tensor of type FLOAT32, INT8, INT16 or INT32), declared with
  /// TFLite's initial value; errors name the tensor and the supported types.
  llvm::Expected<size_t> variableTensorState(int index);

  /// A model input with dynamic dimensions that no --fix-shape sizes.
  struct UnfixedInput {
    int position;
    std::string name;
    std::vector<int64_t> shape, signature;
  };
  std::vector<UnfixedInput> unfixed;
  /// True when run() failed because of `unfixed` alone.
  bool stoppedAtUnfixed = false;

  Value materializeConstant(int index, Location loc);

  /// The element type Kiln computes a model input/output of TFLite type
  /// `type` in (uint8 as i8, see TFLiteQuant.h); null if unsupported.
  Type ioElementType(schema::TensorType type) {
    switch (type) {
    case schema::TensorType::FLOAT32:
      return builder.getF32Type();
    case schema::TensorType::INT32:
      return builder.getI32Type();
    case schema::TensorType::INT8:
    case schema::TensorType::UINT8:
      return builder.getIntegerType(8);
    case schema::TensorType::BOOL:
      return builder.getI1Type();
    default:
      return {};
    }
  }

  /// `value` (i8) with bit 7 flipped: uint8 q <-> int8 q - 128.
  Value flipSignBit(Value value, Location loc) {
    auto type = value.getType().cast<RankedTensorType>();
    llvm::SmallVector<int64_t> ones(type.getRank(), 1);
    auto maskType = RankedTensorType::get(ones, type.getElementType());
    auto mask = builder.create<tosa::ConstOp>(
        loc, maskType, DenseElementsAttr::get(maskType, llvm::ArrayRef<int8_t>{int8_t(-128)}));
    return builder.create<tosa::BitwiseXorOp>(loc, type, value, mask).getResult();
  }

  static BuiltinOperator effectiveCode(const schema::OperatorCode *code) {
    int deprecated = code->deprecated_builtin_code();
    int builtin = static_cast<int>(code->builtin_code());
    return static_cast<BuiltinOperator>(std::max(deprecated, builtin));
  }

private:
  llvm::Error fail(const llvm::Twine &message) { return makeError(filename + ": " + message); }
  /// The function type @main takes: one tensor type per model input (the
  /// --fix-shape sizes applied) and output (as recorded).
  struct Signature {
    llvm::SmallVector<Type> inputs, outputs;
  };

  // The phases of run(), in order (TFLiteImporter.cpp).
  /// Verifies the flatbuffer and selects the one subgraph (`model`, `graph`).
  llvm::Error readModel();
  /// The checks of TFLiteChecks.cpp, then one empty SSA slot per tensor.
  llvm::Error checkModel();
  /// @main's input and output types; stops at inputs left dynamic (`unfixed`).
  llvm::Error declareSignature(Signature &signature);
  /// @main with its argument and result names and element-type attributes,
  /// the builder inside its entry block and the inputs bound to `values`.
  func::FuncOp createMain(const Signature &signature, Location loc);
  /// Each operator through its converter, in the order the model lists them
  /// (TFLite keeps them in a valid execution order).
  llvm::Error convertOperators();
  /// The return of @main and its final type (results as computed).
  llvm::Error returnOutputs(func::FuncOp func, const Signature &signature, Location loc);
  /// The state variables at the end of @main's body (TFLiteStateOps.cpp):
  /// an argument never assigned becomes the variable's initial value and
  /// is erased; each variable read and assigned has its final value
  /// appended to `results`.
  void finishState(func::FuncOp func, llvm::SmallVectorImpl<Value> &results);
  /// After @main's final type is set: kStateAttr on the state arguments and
  /// the last results (`modelOutputs` results come first), and the module's
  /// kStateVariablesAttr.
  void markState(func::FuncOp func, size_t modelOutputs);
  /// MLIR's verifier; a failure is a Kiln bug, reported in one line.
  llvm::Error verifyModule(ModuleOp module);
  /// The kiln.quantization attribute (TFLiteQuant.h) for the plan.
  void recordQuantization(ModuleOp module);

  // The checks (TFLiteChecks.cpp).
  llvm::Error checkTensors();
  llvm::Error checkQuantization(int index);
  llvm::Error checkOperators();
  llvm::Error checkOperatorTypes();
  llvm::Error checkShapes();
  /// Densifies every sparse constant of `graph` (SparsityParameters) into
  /// `densified`, with a note in `densifyNotes`, and makes each DENSIFY
  /// output its input's dense constant (TFLiteSparsity.cpp). Errors name
  /// the tensor and the bad field, level, index or segment.
  llvm::Error densifySparseTensors();
  llvm::Error checkRecordedShapes(func::FuncOp func);
  llvm::Expected<std::vector<int64_t>> inputShape(int position, int index, const std::string &name);
};

/// The --fix-shape that sizes each of `failed.unfixed` at its recorded
/// shape (the tensor's `shape`, which TFLite's interpreter allocates),
/// or nothing when some input records no size in a dynamic dimension (-1
/// or 0 in `shape`).
std::optional<std::vector<ShapeFix>> recordedShapeFixes(const ModelImporter &failed);

/// The one warning of a model compiled at its recorded shapes: each input
/// of `failed.unfixed` with its dynamic dimensions, the shape used and the
/// --fix-shape that gives another ("--fix-shape=x=Nx4").
std::string recordedShapeWarning(const ModelImporter &failed);

/// The error for the model inputs `failed.unfixed` (dynamic dimensions, no
/// --fix-shape): an UnfixedInputError whose message suggests sizes that
/// import (each one tried here) and whose data lists each input with its
/// suggestion (kiln/ModelInputs.h).
llvm::Error unfixedInputError(MLIRContext &context, llvm::ArrayRef<uint8_t> bytes,
                              llvm::StringRef filename, const std::vector<ShapeFix> &fixes,
                              const ModelImporter &failed);

} // namespace kiln::tfl

#endif
