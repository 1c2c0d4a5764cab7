//===- TFLiteOpContext.cpp - What a TFLite converter sees -------------------===//
//
// OpContext: one operator of the model being converted, its inputs as SSA
// values or constant data, its output types, and setOutput, which checks
// a computed type against the one the model records.
//
//===----------------------------------------------------------------------===//
#include "TFLiteModelImporter.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace kiln::tfl {

// --- OpContext ------------------------------------------------------------

static Location opLocation(ModelImporter &importer, const schema::Operator *op, int index) {
  MLIRContext *ctx = &importer.context;
  // NameLoc("CONV_2D#12", NameLoc(<first output tensor>, file:12:0)): the
  // operator type and index, its output tensor, the file.
  std::string name;
  if (op->outputs() && op->outputs()->size())
    name = tensorName(importer.tensor(op->outputs()->Get(0)), op->outputs()->Get(0));
  const schema::OperatorCode *code = importer.model->operator_codes()->Get(op->opcode_index());
  std::string opName = schema::EnumNameBuiltinOperator(ModelImporter::effectiveCode(code));
  // Inside an inlined call: "ADD in WHILE#3 body (iteration 2)#3", at the
  // index of the subgraph-0 operator the call started from.
  if (!importer.call.text.empty()) {
    opName += " in " + importer.call.text;
    index = importer.call.index;
  }
  Location file = FileLineColLoc::get(ctx, importer.filename, index, 0);
  Location tensor = NameLoc::get(StringAttr::get(ctx, name), file);
  return NameLoc::get(StringAttr::get(ctx, opName + "#" + std::to_string(index)), tensor);
}

OpContext::OpContext(ModelImporter &importer, const schema::Operator *op, int index,
                     BuiltinOperator code)
    : TosaBuilder(importer.builder, opLocation(importer, op, index)), importer(importer), op(op),
      opIndex(index), opCode(code) {}

MLIRContext *OpContext::context() { return &importer.context; }
const char *OpContext::name() const { return schema::EnumNameBuiltinOperator(opCode); }

int OpContext::numInputs() const { return op->inputs() ? op->inputs()->size() : 0; }
int OpContext::numOutputs() const { return op->outputs() ? op->outputs()->size() : 0; }
bool OpContext::hasInput(int i) const {
  return i >= 0 && i < numInputs() && op->inputs()->Get(i) >= 0;
}
const schema::Tensor *OpContext::inputTensor(int i) const {
  return hasInput(i) ? importer.tensor(op->inputs()->Get(i)) : nullptr;
}
const schema::Tensor *OpContext::outputTensor(int i) const {
  return i >= 0 && i < numOutputs() ? importer.tensor(op->outputs()->Get(i)) : nullptr;
}
bool OpContext::isConstant(int i) const {
  return hasInput(i) && (!importer.constantData(op->inputs()->Get(i)).empty() ||
                         importer.foldedInts.count(op->inputs()->Get(i)));
}

std::vector<int64_t> OpContext::inputShape(int i) const {
  return hasInput(i) ? importer.currentShape(op->inputs()->Get(i)) : std::vector<int64_t>();
}
std::vector<int64_t> OpContext::outputShape(int i) const {
  return i < numOutputs() ? importer.declaredShape(op->outputs()->Get(i)) : std::vector<int64_t>();
}
bool OpContext::propagating() const { return importer.propagating; }

const TensorQuant *OpContext::inputQuant(int i) const {
  if (!hasInput(i))
    return nullptr;
  const auto &q = importer.quant[op->inputs()->Get(i)];
  return q ? &*q : nullptr;
}

const TensorQuant *OpContext::outputQuant(int i) const {
  if (i >= numOutputs())
    return nullptr;
  const auto &q = importer.quant[op->outputs()->Get(i)];
  return q ? &*q : nullptr;
}

bool OpContext::isQuantized() const {
  auto int8 = [&](const schema::Tensor *t) {
    return t && (t->type() == schema::TensorType::INT8 || t->type() == schema::TensorType::UINT8);
  };
  for (int i = 0; i < numInputs(); ++i)
    if (hasInput(i) && int8(inputTensor(i)))
      return true;
  for (int i = 0; i < numOutputs(); ++i)
    if (int8(outputTensor(i)))
      return true;
  return false;
}

Value OpContext::inferDynamicDims(Operation *created) {
  Value result = created->getResult(0);
  auto type = result.getType().dyn_cast<RankedTensorType>();
  auto infer = dyn_cast<InferShapedTypeOpInterface>(created);
  if (!type || type.hasStaticShape() || !infer)
    return result;
  llvm::SmallVector<ShapedTypeComponents> inferred;
  if (failed(infer.inferReturnTypeComponents(created->getContext(), created->getLoc(),
                                             created->getOperands(), created->getAttrDictionary(),
                                             created->getRegions(), inferred)) ||
      inferred.empty() || !inferred.front().hasRank() ||
      inferred.front().getDims().size() != type.getShape().size())
    return result;
  llvm::SmallVector<int64_t> shape(type.getShape());
  for (size_t d = 0; d < shape.size(); ++d)
    if (ShapedType::isDynamic(shape[d]))
      shape[d] = inferred.front().getDims()[d];
  result.setType(RankedTensorType::get(shape, type.getElementType()));
  return result;
}

RankedTensorType OpContext::outputType(int i) const {
  const schema::Tensor *t = outputTensor(i);
  Type element = importer.builder.getF32Type();
  if (t && (t->type() == schema::TensorType::INT32 || t->type() == schema::TensorType::INT64))
    element = importer.builder.getI32Type();
  else if (t && t->type() == schema::TensorType::BOOL)
    element = importer.builder.getI1Type();
  else if (t && (t->type() == schema::TensorType::INT8 || t->type() == schema::TensorType::UINT8))
    element = importer.builder.getIntegerType(8);
  return RankedTensorType::get(outputShape(i), element);
}

LogicalResult OpContext::fail(const llvm::Twine &message) {
  if (importer.error.empty())
    importer.error = ("operator #" + llvm::Twine(opIndex) + " (" + name() + "): " + message).str();
  return failure();
}

FailureOr<Value> OpContext::input(int i) {
  if (!hasInput(i))
    return fail("input " + llvm::Twine(i) + " is missing");
  int index = op->inputs()->Get(i);
  Value &v = importer.values[index];
  if (v)
    return v;
  const schema::Tensor *t = importer.tensor(index);
  if (t->is_variable()) {
    // The state the previous invocation left (TFLiteStateOps.cpp).
    llvm::Expected<size_t> id = importer.variableTensorState(index);
    if (!id)
      return fail(llvm::toString(id.takeError()));
    v = importer.readState(*id);
    return v;
  }
  llvm::ArrayRef<uint8_t> data = importer.constantData(index);
  if (data.empty())
    return fail("input " + llvm::Twine(i) + " ('" + tensorName(t, index) +
                "') is used before any operator computes it");
  int64_t count = 1;
  for (int64_t d : importer.shapeOf(index))
    count *= d;
  size_t elementSize = tensorTypeSize(t->type());
  if (elementSize == 0 ||
      (t->type() != schema::TensorType::FLOAT32 && t->type() != schema::TensorType::FLOAT16 &&
       t->type() != schema::TensorType::INT32 && t->type() != schema::TensorType::INT64 &&
       t->type() != schema::TensorType::INT8 && t->type() != schema::TensorType::UINT8 &&
       t->type() != schema::TensorType::BOOL && t->type() != schema::TensorType::INT16))
    return fail("constant '" + tensorName(t, index) + "' has element type " +
                schema::EnumNameTensorType(t->type()) +
                "; supported: FLOAT32, FLOAT16, INT32, INT64, INT8, UINT8, INT16, BOOL");
  if (data.size() != elementSize * count)
    return fail("constant '" + tensorName(t, index) + "' holds " + llvm::Twine(data.size()) +
                " bytes, its shape " + shapeString(importer.shapeOf(index)) + " needs " +
                llvm::Twine(elementSize * count));
  v = importer.materializeConstant(index, location);
  return v;
}

bool OpContext::isVariable(int i) const {
  const schema::Tensor *t = inputTensor(i);
  return t && t->is_variable();
}

LogicalResult OpContext::assignVariable(int i, Value value) {
  if (!isVariable(i))
    return fail("input " + llvm::Twine(i) + " is not a variable tensor");
  int index = op->inputs()->Get(i);
  llvm::Expected<size_t> id = importer.variableTensorState(index);
  if (!id)
    return fail(llvm::toString(id.takeError()));
  if (value.getType() != importer.state[*id].initial.getType())
    return fail("computes state of another type for variable tensor '" + importer.state[*id].name +
                "'");
  importer.assignState(*id, value);
  importer.values[index] = value;
  return success();
}

FailureOr<std::vector<int64_t>> OpContext::constantInts(int i) {
  if (!isConstant(i))
    return fail("input " + llvm::Twine(i) +
                " must be a constant tensor (computed shapes are not supported)");
  const schema::Tensor *t = inputTensor(i);
  bool folded = importer.foldedInts.count(op->inputs()->Get(i));
  if (!folded && t->type() != schema::TensorType::INT32 && t->type() != schema::TensorType::INT64)
    return fail("input " + llvm::Twine(i) + " must be INT32 or INT64, not " +
                schema::EnumNameTensorType(t->type()));
  return *knownInts(i);
}

std::optional<std::vector<int64_t>> OpContext::knownInts(int i) const {
  if (!hasInput(i))
    return std::nullopt;
  return importer.knownInts(op->inputs()->Get(i));
}

LogicalResult OpContext::setKnownOutput(int i, llvm::ArrayRef<int64_t> values) {
  const schema::Tensor *t = outputTensor(i);
  if (t && t->type() == schema::TensorType::BOOL) {
    std::vector<int64_t> shape = outputShape(i);
    auto type = RankedTensorType::get(shape, builder().getI1Type());
    if (!type.hasStaticShape() || type.getNumElements() != static_cast<int64_t>(values.size()))
      return fail("computes " + llvm::Twine(values.size()) + " values for output '" +
                  tensorName(t, op->outputs()->Get(i)) + "', which records shape " +
                  shapeString(shape));
    llvm::SmallVector<bool> flags;
    for (int64_t v : values)
      flags.push_back(v != 0);
    importer.foldedInts[op->outputs()->Get(i)] = values.vec();
    return setOutput(
        i, builder().create<tosa::ConstOp>(loc(), type, DenseElementsAttr::get(type, flags)));
  }
  return setConstantOutput(i, values);
}

FailureOr<std::vector<float>> OpContext::constantFloats(int i) {
  if (!isConstant(i))
    return fail("input " + llvm::Twine(i) + " must be a constant tensor");
  const schema::Tensor *t = inputTensor(i);
  llvm::ArrayRef<uint8_t> data = importer.constantData(op->inputs()->Get(i));
  std::vector<float> out;
  if (t->type() == schema::TensorType::FLOAT32) {
    out.resize(data.size() / 4);
    if (!out.empty()) // memcpy to an empty vector's null data() is undefined
      std::memcpy(out.data(), data.data(), out.size() * 4);
  } else if (t->type() == schema::TensorType::FLOAT16) {
    for (size_t k = 0; k + 2 <= data.size(); k += 2) {
      uint16_t h;
      std::memcpy(&h, data.data() + k, 2);
      out.push_back(halfToFloat(h));
    }
  } else {
    return fail("input " + llvm::Twine(i) + " must be FLOAT32 or FLOAT16");
  }
  return out;
}

/// `shape` with open (dynamic) dimensions written -1, as in a TFLite
/// shape signature.
static std::string signatureString(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> dims(shape);
  for (int64_t &d : dims)
    if (ShapedType::isDynamic(d))
      d = -1;
  return shapeString(dims);
}

/// The static type output `i` takes for a computed `actual` type when the
/// declared one leaves the signature's -1 dimensions open: `actual` if it
/// matches the static dimensions, else the declared shape with its single
/// open dimension sized by element count; a null type if neither fits.
static RankedTensorType resolveOpen(RankedTensorType declared, RankedTensorType actual) {
  llvm::ArrayRef<int64_t> want = declared.getShape();
  bool fits = want.size() == actual.getShape().size();
  for (size_t d = 0; fits && d < want.size(); ++d)
    fits = ShapedType::isDynamic(want[d]) || want[d] == actual.getDimSize(d);
  if (fits)
    return RankedTensorType::get(actual.getShape(), declared.getElementType());
  int open = -1, opens = 0;
  int64_t known = 1;
  for (size_t d = 0; d < want.size(); ++d) {
    if (ShapedType::isDynamic(want[d])) {
      open = static_cast<int>(d);
      ++opens;
    } else {
      known *= want[d];
    }
  }
  if (opens != 1 || known <= 0 || actual.getNumElements() % known != 0)
    return {};
  llvm::SmallVector<int64_t> shape(want);
  shape[open] = actual.getNumElements() / known;
  return RankedTensorType::get(shape, declared.getElementType());
}

LogicalResult OpContext::setOutput(int i, Value value) {
  if (i >= numOutputs())
    return fail("has no output " + llvm::Twine(i));
  RankedTensorType declared = outputType(i);
  auto actual = value.getType().dyn_cast<RankedTensorType>();
  if (!actual)
    return fail("internal error: output " + llvm::Twine(i) + " is unranked");
  std::string tensor = tensorName(outputTensor(i), op->outputs()->Get(i));
  if (!actual.hasStaticShape())
    return fail("the shape of output '" + tensor +
                "' cannot be inferred from the --fix-shape sizes (it has "
                "shape signature " +
                signatureString(declared.getShape()) + ")");
  if (!declared.hasStaticShape()) {
    RankedTensorType resolved = resolveOpen(declared, actual);
    if (!resolved)
      return fail("with the --fix-shape sizes it computes " + shapeString(actual.getShape()) +
                  " for output '" + tensor + "', which does not fit its shape signature " +
                  signatureString(declared.getShape()));
    declared = resolved;
  }
  if (actual != declared) {
    if (actual.getElementType() != declared.getElementType() ||
        actual.getNumElements() != declared.getNumElements())
      return fail(std::string(importer.propagating ? "with the --fix-shape sizes it " : "") +
                  "computes " + shapeString(actual.getShape()) + " for output '" + tensor +
                  "', the model declares " + (importer.propagating ? "the static shape " : "") +
                  shapeString(declared.getShape()));
    value = reshape(value, declared.getShape());
  }
  importer.values[op->outputs()->Get(i)] = value;
  return success();
}

LogicalResult OpContext::setConstantOutput(int i, llvm::ArrayRef<int64_t> values) {
  const schema::Tensor *t = outputTensor(i);
  if (!t || (t->type() != schema::TensorType::INT32 && t->type() != schema::TensorType::INT64))
    return fail("output " + llvm::Twine(i) + " must be an INT32 or INT64 tensor");
  std::vector<int64_t> shape = outputShape(i);
  int64_t count = 1;
  for (int64_t d : shape)
    count *= ShapedType::isDynamic(d) ? -1 : d;
  if (count != static_cast<int64_t>(values.size()))
    return fail("computes " + llvm::Twine(values.size()) + " values for output '" +
                tensorName(t, op->outputs()->Get(i)) + "', which records shape " +
                shapeString(shape));
  std::vector<int32_t> narrow;
  for (int64_t v : values) {
    if (v < INT32_MIN || v > INT32_MAX)
      return fail("value " + llvm::Twine(v) + " does not fit int32");
    narrow.push_back(static_cast<int32_t>(v));
  }
  importer.foldedInts[op->outputs()->Get(i)] = values.vec();
  return setOutput(i, constI32(shape, narrow));
}

FailureOr<Value> OpContext::applyActivation(Value value, schema::ActivationFunctionType act) {
  using A = schema::ActivationFunctionType;
  switch (act) {
  case A::NONE:
    return value;
  case A::RELU:
    return clamp(value, 0.0f, std::numeric_limits<float>::infinity()); // +inf stays +inf
  case A::RELU_N1_TO_1:
    return clamp(value, -1.0f, 1.0f);
  case A::RELU6:
    return clamp(value, 0.0f, 6.0f);
  case A::TANH:
    // TFLite's float kernels turn the fused activation into a clamp range
    // (CalculateActivationRange in tensorflow/lite/kernels/kernel_util.h),
    // which has no case for TANH: the interpreter applies nothing. Kiln
    // matches the interpreter, not the enum's name.
    return value;
  default:
    return fail(std::string("fused activation ") + schema::EnumNameActivationFunctionType(act) +
                " is not supported (supported: NONE, RELU, RELU_N1_TO_1, "
                "RELU6, TANH)");
  }
}

} // namespace kiln::tfl
