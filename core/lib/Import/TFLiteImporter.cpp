//===- TFLiteImporter.cpp - TFLite flatbuffer -> TOSA ---------------------===//
//
// Reads a TFLite model (schema: core/schema/tflite.fbs, Kiln's subset of the
// TensorFlow Lite schema v3) after flatbuffers verification and emits one
// func.func @main in the TOSA dialect (see Import.h for the form).
//
//===----------------------------------------------------------------------===//
#include "Import.h"
#include "TFLiteConverter.h"
#include "TFLiteQuant.h"

#include "kiln/ModelInputs.h"
#include "kiln/Options.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>

using namespace mlir;

namespace kiln {

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 message.str());
}

namespace tfl {

size_t tensorTypeSize(schema::TensorType type) {
  switch (type) {
  case schema::TensorType::FLOAT32:
  case schema::TensorType::INT32:
  case schema::TensorType::UINT32:
    return 4;
  case schema::TensorType::FLOAT16:
  case schema::TensorType::INT16:
  case schema::TensorType::UINT16:
    return 2;
  case schema::TensorType::INT64:
  case schema::TensorType::UINT64:
  case schema::TensorType::FLOAT64:
    return 8;
  case schema::TensorType::INT8:
  case schema::TensorType::UINT8:
  case schema::TensorType::BOOL:
    return 1;
  default:
    return 0;
  }
}

/// "ABS, ADD, ..." (sorted names of the operators in `table`).
static std::string operatorList(const ConverterTable &table) {
  std::vector<std::string> names;
  for (const auto &entry : table)
    names.push_back(schema::EnumNameBuiltinOperator(entry.first));
  std::sort(names.begin(), names.end());
  std::string list;
  for (const std::string &n : names)
    list += (list.empty() ? "" : ", ") + n;
  return list;
}

/// "operator #3 (LOG_SOFTMAX) on int8 tensors is not supported; int8
/// operators: ADD, ..."
static std::string unsupportedQuantized(const OpContext &ctx,
                                        const ConverterTable &integer) {
  std::string list = operatorList(integer);
  return "operator #" + std::to_string(ctx.index()) + " (" + ctx.name() +
         ") on int8/uint8 tensors is not supported; int8 operators: " + list;
}

const ConverterTable &quantizedConverters() {
  static const ConverterTable table = [] {
    ConverterTable t;
    registerQuantizedOps(t);
    return t;
  }();
  return table;
}

const ConverterTable &converters() {
  static const ConverterTable table = [] {
    ConverterTable t;
    registerConvOps(t);
    registerElementwiseOps(t);
    registerShapeOps(t);
    registerReductionOps(t);
    return t;
  }();
  return table;
}

/// IEEE 754 binary16 -> binary32.
static float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else { // subnormal: renormalize
      exponent = 127 - 15 + 1;
      while (!(mantissa & 0x400u)) {
        mantissa <<= 1;
        --exponent;
      }
      mantissa &= 0x3ffu;
      bits = sign | (exponent << 23) | (mantissa << 13);
    }
  } else if (exponent == 31) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}


static std::string tensorName(const schema::Tensor *t, int index) {
  if (t && t->name() && t->name()->size())
    return t->name()->str();
  return "tensor" + std::to_string(index);
}

/// Converts one TFLite model into `module`.
class ModelImporter {
public:
  ModelImporter(MLIRContext &context, llvm::ArrayRef<uint8_t> bytes,
                llvm::StringRef filename, const std::vector<ShapeFix> &fixes)
      : context(context), bytes(bytes), filename(filename.str()),
        fixes(fixes), builder(&context) {}

  llvm::Expected<OwningOpRef<ModuleOp>> run();

  // Used by OpContext.
  MLIRContext &context;
  llvm::ArrayRef<uint8_t> bytes;
  std::string filename;
  const std::vector<ShapeFix> &fixes;
  OpBuilder builder;
  const schema::Model *model = nullptr;
  const schema::SubGraph *graph = nullptr;
  std::vector<Value> values;
  /// Affine quantization of each tensor (int8, uint8 and quantized int32
  /// tensors), checked by checkQuantization.
  std::vector<std::optional<TensorQuant>> quant;
  std::string error;

  const schema::Tensor *tensor(int index) const {
    if (index < 0 || !graph->tensors() ||
        index >= static_cast<int>(graph->tensors()->size()))
      return nullptr;
    return graph->tensors()->Get(index);
  }

  /// Constant data of tensor `index`, or an empty ref if it has none.
  llvm::ArrayRef<uint8_t> constantData(int index) const {
    const schema::Tensor *t = tensor(index);
    if (!t || t->buffer() == 0 || !model->buffers() ||
        t->buffer() >= model->buffers()->size())
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
    if (propagating && t && t->shape_signature() &&
        t->shape_signature()->size() == shape.size())
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
        loc, maskType,
        DenseElementsAttr::get(maskType, llvm::ArrayRef<int8_t>{int8_t(-128)}));
    return builder.create<tosa::BitwiseXorOp>(loc, type, value, mask).getResult();
  }

  static BuiltinOperator effectiveCode(const schema::OperatorCode *code) {
    int deprecated = code->deprecated_builtin_code();
    int builtin = static_cast<int>(code->builtin_code());
    return static_cast<BuiltinOperator>(std::max(deprecated, builtin));
  }

private:
  llvm::Error fail(const llvm::Twine &message) {
    return makeError(filename + ": " + message);
  }
  llvm::Error checkTensors();
  llvm::Error checkQuantization(int index);
  llvm::Error checkOperators();
  llvm::Error checkOperatorTypes();
  llvm::Error checkShapes();
  llvm::Error checkRecordedShapes(func::FuncOp func);
  llvm::Expected<std::vector<int64_t>> inputShape(int position, int index);
};


llvm::Error ModelImporter::checkRecordedShapes(func::FuncOp func) {
  std::string problem;
  func.walk([&](InferShapedTypeOpInterface infer) {
    if (!problem.empty())
      return;
    Operation *op = infer.getOperation();
    llvm::SmallVector<ShapedTypeComponents> inferred;
    if (failed(infer.inferReturnTypeComponents(
            op->getContext(), std::nullopt, op->getOperands(),
            op->getAttrDictionary(), op->getRegions(), inferred)))
      return;
    for (auto [result, components] : llvm::zip(op->getResults(), inferred)) {
      auto actual = result.getType().dyn_cast<RankedTensorType>();
      if (!actual || !components.hasRank())
        continue;
      llvm::ArrayRef<int64_t> dims = components.getDims();
      bool mismatch = static_cast<int64_t>(dims.size()) != actual.getRank();
      for (size_t d = 0; !mismatch && d < dims.size(); ++d)
        mismatch = !ShapedType::isDynamic(dims[d]) && dims[d] != actual.getDimSize(d);
      if (!mismatch)
        continue;
      std::string opName, tensor;
      describeLocation(op->getLoc(), opName, tensor);
      llvm::SmallVector<int64_t> inferredShape(dims.begin(), dims.end());
      problem = (opName.empty() ? std::string("an operator") : "operator " + opName) +
                (tensor.empty() ? "" : " output '" + tensor + "'") +
                ": the model records shape " + shapeString(actual.getShape()) +
                " but the operands give " + shapeString(inferredShape) +
                (propagating ? " with the --fix-shape sizes (the model declares "
                               "this shape static, so it cannot take these sizes)"
                             : " (the file is corrupted or inconsistent)");
      return;
    }
  });
  if (!problem.empty())
    return fail(problem);
  return llvm::Error::success();
}

Value ModelImporter::materializeConstant(int index, Location loc) {
  const schema::Tensor *t = tensor(index);
  llvm::ArrayRef<uint8_t> data = constantData(index);
  std::vector<int64_t> shape = shapeOf(index);
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d; // checkShapes() bounded the product
  // The buffer must hold every element (a damaged file may be shorter).
  size_t elementBytes = tensorTypeSize(t->type());
  if (count < 0 || elementBytes == 0 ||
      data.size() / elementBytes < static_cast<uint64_t>(count))
    return {};
  DenseElementsAttr attr;
  switch (t->type()) {
  case schema::TensorType::FLOAT32:
  case schema::TensorType::FLOAT16: {
    std::vector<float> v(count);
    for (int64_t i = 0; i < count; ++i) {
      if (t->type() == schema::TensorType::FLOAT32) {
        std::memcpy(&v[i], data.data() + 4 * i, 4);
      } else {
        uint16_t h;
        std::memcpy(&h, data.data() + 2 * i, 2);
        v[i] = halfToFloat(h);
      }
    }
    auto type = RankedTensorType::get(shape, builder.getF32Type());
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<float>(v));
    break;
  }
  case schema::TensorType::INT32: {
    std::vector<int32_t> v(count);
    std::memcpy(v.data(), data.data(), 4 * count);
    auto type = RankedTensorType::get(shape, builder.getI32Type());
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<int32_t>(v));
    break;
  }
  case schema::TensorType::INT8:
  case schema::TensorType::UINT8: {
    // uint8 data is stored as int8 (q - 128), as its zero point is.
    std::vector<int8_t> v(count);
    int flip = t->type() == schema::TensorType::UINT8 ? 0x80 : 0;
    for (int64_t i = 0; i < count; ++i)
      v[i] = static_cast<int8_t>(data[i] ^ flip);
    auto type = RankedTensorType::get(shape, builder.getIntegerType(8));
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<int8_t>(v));
    break;
  }
  case schema::TensorType::INT64: {
    // TOSA computes in i32; shape-like int64 constants fit.
    std::vector<int32_t> v(count);
    for (int64_t i = 0; i < count; ++i) {
      int64_t x;
      std::memcpy(&x, data.data() + 8 * i, 8);
      v[i] = static_cast<int32_t>(x);
    }
    auto type = RankedTensorType::get(shape, builder.getI32Type());
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<int32_t>(v));
    break;
  }
  default:
    return {};
  }
  return builder.create<tosa::ConstOp>(loc, attr.getType(), attr).getResult();
}

/// "INT8" for a TFLite element type.
static std::string typeName(schema::TensorType type) {
  const char *name = schema::EnumNameTensorType(type);
  return name && *name ? name : "type " + std::to_string(static_cast<int>(type));
}

llvm::Error ModelImporter::checkTensors() {
  int n = graph->tensors() ? graph->tensors()->size() : 0;
  quant.assign(n, std::nullopt);
  for (int i = 0; i < n; ++i) {
    const schema::Tensor *t = graph->tensors()->Get(i);
    if (!t)
      return fail("tensor " + llvm::Twine(i) + " is missing");
    if (llvm::Error err = checkQuantization(i))
      return err;
  }
  return llvm::Error::success();
}

llvm::Error ModelImporter::checkQuantization(int index) {
  const schema::Tensor *t = graph->tensors()->Get(index);
  schema::TensorType type = t->type();
  const schema::QuantizationParameters *q = t->quantization();
  bool hasScale = q && q->scale() && q->scale()->size() > 0;
  bool int8 = type == schema::TensorType::INT8 || type == schema::TensorType::UINT8;
  std::string what = "tensor '" + tensorName(t, index) + "' (index " +
                     std::to_string(index) + ", " + typeName(type) + ")";
  if (int8 && !hasScale)
    return fail(what + " has no quantization scale; Kiln compiles int8/uint8 "
                "tensors with affine quantization (scale and zero point)");
  // Float tensors' min/max and int32 (bias) tensors' scales are not used by
  // TFLite's kernels (a bias is read as input scale x weight scale); Kiln
  // ignores them too, as TensorFlow Lite Micro does (person_detect.tflite's
  // biases carry a quantized_dimension their rank does not have).
  if (!hasScale || !int8)
    return llvm::Error::success();
  if (q->details_type() != schema::QuantizationDetails::NONE)
    return fail(what + " uses custom quantization details; Kiln supports "
                "affine quantization (scale, zero point) only");
  TensorQuant tq;
  tq.fromUint8 = type == schema::TensorType::UINT8;
  for (size_t c = 0; c < q->scale()->size(); ++c) {
    float s = q->scale()->Get(c);
    if (!(s > 0.0f) || !std::isfinite(s))
      return fail(what + " has quantization scale " + shortNumber(s) +
                  (q->scale()->size() > 1 ? " at channel " + std::to_string(c)
                                          : std::string()) +
                  "; scales must be positive and finite");
    tq.scales.push_back(s);
  }
  size_t zpCount = q->zero_point() ? q->zero_point()->size() : 0;
  if (zpCount != tq.scales.size())
    return fail(what + " has " + std::to_string(tq.scales.size()) +
                " scales but " + std::to_string(zpCount) +
                " zero points; the counts must match");
  int64_t lo = type == schema::TensorType::INT8 ? -128 : 0;
  int64_t hi = type == schema::TensorType::INT8 ? 127 : 255;
  for (size_t c = 0; c < tq.scales.size(); ++c) {
    int64_t zp = zpCount ? q->zero_point()->Get(c) : 0;
    if (zp < lo || zp > hi)
      return fail(what + " has zero point " + std::to_string(zp) +
                  "; " + typeName(type) + " zero points lie in [" +
                  std::to_string(lo) + ", " + std::to_string(hi) + "]");
    tq.zeroPoints.push_back(static_cast<int32_t>(tq.fromUint8 ? zp - 128 : zp));
  }
  if (tq.scales.size() > 1 && constantData(index).empty())
    return fail(what + " is an activation with " + std::to_string(tq.scales.size()) +
                " per-channel scales; TFLite quantizes activations per tensor "
                "(per-channel scales are for int8 weights)");
  if (tq.scales.size() > 1 && tq.fromUint8)
    return fail(what + " has " + std::to_string(tq.scales.size()) +
                " per-channel scales; per-channel quantization is for INT8 "
                "weights only (UINT8 tensors take one scale)");
  if (tq.scales.size() > 1) {
    // Per-channel: one scale per index of quantized_dimension. (A single
    // scale with any quantized_dimension is per-tensor, as TensorFlow Lite
    // Micro reads it; person_detect.tflite has such tensors.)
    int dim = q->quantized_dimension();
    int rank = t->shape() ? t->shape()->size() : 0;
    if (dim < 0 || dim >= rank)
      return fail(what + " has quantized_dimension " + std::to_string(dim) +
                  " but rank " + std::to_string(rank));
    int64_t channels = t->shape()->Get(dim);
    if (channels != static_cast<int64_t>(tq.scales.size()))
      return fail(what + " has " + std::to_string(tq.scales.size()) +
                  " per-channel scales but its dimension " + std::to_string(dim) +
                  " (quantized_dimension) has " + std::to_string(channels) +
                  " channels; the counts must match");
    tq.dimension = dim;
  }
  quant[index] = std::move(tq);
  return llvm::Error::success();
}

/// Operator-level type rules of quantized models: 16-bit activations
/// (16x8 models) and hybrid operators (float activations with int8
/// weights, dequantized inside the kernel) are refused, naming the operator
/// and its types.
llvm::Error ModelImporter::checkOperatorTypes() {
  if (!graph->operators())
    return llvm::Error::success();
  int index = 0;
  for (const schema::Operator *op : *graph->operators()) {
    BuiltinOperator code =
        effectiveCode(model->operator_codes()->Get(op->opcode_index()));
    std::string types;
    bool int16 = false, floatActivation = false, int8Weight = false;
    bool signedInt8 = false, unsignedInt8 = false;
    int sparse = -1;
    auto scan = [&](const flatbuffers::Vector<int32_t> *list, bool inputs) {
      if (!list)
        return;
      for (int32_t i : *list) {
        if (i < 0)
          continue;
        const schema::Tensor *t = tensor(i);
        schema::TensorType type = t->type();
        types += (types.empty() || types.back() == ' ' ? "" : ", ") + typeName(type);
        int16 |= type == schema::TensorType::INT16;
        signedInt8 |= type == schema::TensorType::INT8;
        unsignedInt8 |= type == schema::TensorType::UINT8;
        if (t->sparsity() && sparse < 0)
          sparse = i;
        bool constant = !constantData(i).empty();
        floatActivation |= inputs && !constant && type == schema::TensorType::FLOAT32;
        int8Weight |= inputs && constant &&
                      (type == schema::TensorType::INT8 ||
                       type == schema::TensorType::UINT8);
      }
    };
    scan(op->inputs(), true);
    types += " -> ";
    scan(op->outputs(), false);
    std::string where = "operator #" + std::to_string(index) + " (" +
                        schema::EnumNameBuiltinOperator(code) + ", " + types + ")";
    if (sparse >= 0)
      return fail(where + " takes the sparse tensor '" +
                  tensorName(tensor(sparse), sparse) +
                  "': sparse tensors are not supported; convert the model "
                  "without sparsity (dense weights)");
    if (int16)
      return fail(where + " computes on INT16 tensors: 16-bit activations "
                  "(16x8 quantization) are not supported; Kiln compiles "
                  "float32, int8 and uint8 models");
    if (signedInt8 && unsignedInt8 && code != BuiltinOperator::QUANTIZE)
      return fail(where + " mixes INT8 and UINT8 tensors; TFLite's kernels take "
                  "one of them per operator (QUANTIZE converts between them)");
    if (floatActivation && int8Weight && code != BuiltinOperator::DEQUANTIZE)
      return fail(where + " is a hybrid operator (float32 activations with "
                  "int8 weights): not supported; quantize the model fully "
                  "(int8) or keep float32 weights");
    ++index;
  }
  return llvm::Error::success();
}

llvm::Error ModelImporter::checkOperators() {
  const auto &table = converters();
  if (!graph->operators())
    return llvm::Error::success();
  int index = 0;
  for (const schema::Operator *op : *graph->operators()) {
    if (!op || !model->operator_codes() ||
        op->opcode_index() >= model->operator_codes()->size())
      return fail("operator #" + llvm::Twine(index) +
                  " has an invalid operator code index");
    const schema::OperatorCode *code =
        model->operator_codes()->Get(op->opcode_index());
    if (!code)
      return fail("operator #" + llvm::Twine(index) +
                  " has a missing operator code");
    BuiltinOperator builtin = effectiveCode(code);
    int numTensors = graph->tensors() ? graph->tensors()->size() : 0;
    auto checkIndices = [&](const flatbuffers::Vector<int32_t> *list,
                            const char *what, bool optionalAllowed) -> llvm::Error {
      if (!list)
        return llvm::Error::success();
      for (int32_t t : *list)
        if (t >= numTensors || t < (optionalAllowed ? -1 : 0))
          return fail("operator #" + llvm::Twine(index) + " " + what +
                      " tensor index " + llvm::Twine(t) + ", the subgraph has " +
                      llvm::Twine(numTensors) + " tensors (the file is corrupted)");
      return llvm::Error::success();
    };
    if (llvm::Error err = checkIndices(op->inputs(), "refers to input", true))
      return err;
    if (llvm::Error err = checkIndices(op->outputs(), "refers to output", false))
      return err;
    if (builtin == BuiltinOperator::CUSTOM ||
        (!table.count(builtin) && !quantizedConverters().count(builtin))) {
      std::string what;
      if (builtin == BuiltinOperator::CUSTOM)
        what = "is the custom operator '" +
               (code->custom_code() ? code->custom_code()->str()
                                    : std::string("?")) +
               "'; custom operators are not supported";
      else {
        const char *name = schema::EnumNameBuiltinOperator(builtin);
        what = std::string("is ") + (name && *name ? name : "an unknown builtin") +
               " (builtin code " + std::to_string(static_cast<int>(builtin)) +
               "), which Kiln does not support";
      }
      return fail("operator #" + llvm::Twine(index) + " " + what +
                  ". Supported float32 builtin operators: " + operatorList(table) +
                  "; int8/uint8: " + operatorList(quantizedConverters()));
    }
    ++index;
  }
  return llvm::Error::success();
}

/// Shapes as recorded in the file, before anything multiplies them: every
/// dimension is a size (>= 0), or -1 in a shape_signature (dynamic); no
/// tensor the graph takes, computes or holds as float data is empty (Kiln does not compile
/// zero-size tensors; TFLite runs them as empty tensors); every element
/// count fits in 64 bits.
llvm::Error ModelImporter::checkShapes() {
  int n = graph->tensors()->size();
  std::vector<std::string> role(n);
  for (int position = 0; position < static_cast<int>(graph->inputs()->size()); ++position) {
    int index = graph->inputs()->Get(position);
    if (index >= 0 && index < n)
      role[index] = "model input " + std::to_string(position);
  }
  for (int position = 0; position < static_cast<int>(graph->outputs()->size()); ++position) {
    int index = graph->outputs()->Get(position);
    if (index >= 0 && index < n && role[index].empty())
      role[index] = "model output " + std::to_string(position);
  }
  if (graph->operators()) {
    int opIndex = 0;
    for (const schema::Operator *op : *graph->operators()) {
      const char *name = schema::EnumNameBuiltinOperator(
          effectiveCode(model->operator_codes()->Get(op->opcode_index())));
      if (op->outputs())
        for (int32_t t : *op->outputs())
          role[t] = "output of operator #" + std::to_string(opIndex) + " " + name;
      ++opIndex;
    }
  }
  for (int i = 0; i < n; ++i) {
    const schema::Tensor *t = graph->tensors()->Get(i);
    std::vector<int64_t> shape, signature;
    if (t->shape())
      shape.assign(t->shape()->begin(), t->shape()->end());
    if (t->shape_signature())
      signature.assign(t->shape_signature()->begin(), t->shape_signature()->end());
    std::string who = "tensor '" + tensorName(t, i) + "' (" +
                      (role[i].empty() ? "index " + std::to_string(i) : role[i]) + ")";
    for (const auto *dims : {&shape, &signature})
      for (size_t d = 0; d < dims->size(); ++d)
        if ((*dims)[d] < -1)
          return fail(who + " has an invalid dimension " + llvm::Twine(d) + " = " +
                      llvm::Twine((*dims)[d]) + " in its " +
                      (dims == &shape ? "shape " : "shape signature ") +
                      shapeString(*dims) +
                      "; dimensions are sizes (>= 0), and -1 marks a dynamic "
                      "dimension in a shape signature");
    std::vector<int64_t> sizes = shape;
    for (int64_t &d : sizes)
      d = std::max<int64_t>(d, 1);
    if (!tensorBytes(sizes, 1))
      return fail(who + " has shape " + shapeString(shape) +
                  ": its element count overflows 64 bits");
    // Empty integer constants are legitimate operands (an empty axes list,
    // the new shape of a scalar); empty float data is not.
    if (role[i].empty() && t->type() != schema::TensorType::FLOAT32 &&
        t->type() != schema::TensorType::FLOAT16)
      continue;
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] == 0 && !(d < signature.size() && signature[d] == -1))
        return fail(who + " has shape " + shapeString(shape) + ": dimension " +
                    llvm::Twine(d) +
                    " is 0. Kiln does not compile zero-size tensors "
                    "(TensorFlow Lite runs them as empty tensors); remove the "
                    "empty branch from the model or give the dimension a size");
  }
  return llvm::Error::success();
}

/// "dimension 0" / "dimensions 0 and 1" / "dimensions 0, 1 and 3".
static std::string dimensionList(llvm::ArrayRef<int64_t> dims) {
  std::string s = dims.size() == 1 ? "a dynamic dimension " : "dynamic dimensions ";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i == 0 ? "" : i + 1 == dims.size() ? " and " : ", ") + std::to_string(dims[i]);
  return s;
}

/// "1x16000".
static std::string dimsText(llvm::ArrayRef<int64_t> dims) {
  std::string s;
  for (size_t d = 0; d < dims.size(); ++d)
    s += (d ? "x" : "") + std::to_string(dims[d]);
  return s;
}

/// The static shape of model input `position` (tensor `index`): the recorded
/// one, or the --fix-shape for it (already checked by checkShapeFixes),
/// which gives every dynamic dimension its own size. An input with dynamic
/// dimensions and no fix is recorded in `unfixed` (importTFLite then
/// suggests sizes that compile).
llvm::Expected<std::vector<int64_t>> ModelImporter::inputShape(int position,
                                                               int index) {
  const schema::Tensor *t = tensor(index);
  std::vector<int64_t> shape = shapeOf(index);
  std::string name = tensorName(t, index);
  std::vector<int64_t> signature = shape;
  if (t->shape_signature() && t->shape_signature()->size() == shape.size())
    signature.assign(t->shape_signature()->begin(),
                     t->shape_signature()->end());
  const ShapeFix *fix = nullptr;
  for (const ShapeFix &f : fixes)
    if (f.input == name || f.input == std::to_string(position))
      fix = &f;
  bool dynamic = false;
  for (size_t d = 0; d < signature.size(); ++d)
    dynamic |= signature[d] == -1 || shape[d] == -1;
  if (!fix) {
    if (dynamic)
      unfixed.push_back({position, name, shape, signature});
    for (int64_t &d : shape)
      d = std::max<int64_t>(d, 1);
    return shape;
  }
  // checkShapeFixes (importModelFile) has checked the fix: same rank, each
  // dimension positive, static dimensions unchanged, not given twice.
  // Each dynamic dimension takes its own size; the graph's other dynamic
  // dimensions follow by shape inference.
  for (size_t d = 0; d < signature.size(); ++d)
    if (signature[d] < 0)
      propagating = true;
  return fix->shape;
}

llvm::Expected<OwningOpRef<ModuleOp>> ModelImporter::run() {
  if (bytes.empty())
    return fail("the file is empty (0 bytes); expected a TFLite, ONNX or TOSA .mlir model");
  if (bytes.size() < 8 ||
      !flatbuffers::BufferHasIdentifier(bytes.data(), schema::ModelIdentifier()))
    return fail("not a TFLite model: the flatbuffer file identifier 'TFL3' is "
                "missing (supported inputs: .tflite, .onnx, TOSA .mlir)");
  flatbuffers::Verifier verifier(bytes.data(), bytes.size(),
                                 /*max_depth=*/128, /*max_tables=*/10000000);
  if (!schema::VerifyModelBuffer(verifier))
    return fail("the TFLite flatbuffer is truncated or corrupted (" +
                llvm::Twine(bytes.size()) +
                " bytes; flatbuffers verification failed)");
  model = schema::GetModel(bytes.data());
  if (!model->subgraphs() || model->subgraphs()->size() == 0)
    return fail("the model has no subgraph");
  if (model->subgraphs()->size() != 1)
    return fail("the model has " + llvm::Twine(model->subgraphs()->size()) +
                " subgraphs; Kiln compiles single-subgraph models (control "
                "flow such as WHILE/IF and multi-signature models are not "
                "supported)");
  graph = model->subgraphs()->Get(0);
  if (!graph->inputs() || !graph->outputs() || !graph->tensors())
    return fail("the subgraph has no inputs, outputs or tensors");
  if (llvm::Error err = checkTensors())
    return std::move(err);
  if (llvm::Error err = checkOperators())
    return std::move(err);
  if (llvm::Error err = checkOperatorTypes())
    return std::move(err);
  if (llvm::Error err = checkShapes())
    return std::move(err);

  int numTensors = graph->tensors()->size();
  values.assign(numTensors, Value());
  Location fileLoc = FileLineColLoc::get(&context, filename, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  (*module)->setAttr("kiln.source", builder.getStringAttr(filename));

  // Signature.
  llvm::SmallVector<Type> inputTypes, outputTypes;
  for (int position = 0; position < static_cast<int>(graph->inputs()->size());
       ++position) {
    int index = graph->inputs()->Get(position);
    const schema::Tensor *t = tensor(index);
    if (!t)
      return fail("model input " + llvm::Twine(position) +
                  " refers to a missing tensor");
    Type element = ioElementType(t->type());
    if (!element || t->type() == schema::TensorType::BOOL)
      return fail("input '" + tensorName(t, index) + "' has element type " +
                  schema::EnumNameTensorType(t->type()) +
                  "; supported input types: FLOAT32, INT32, INT8, UINT8");
    auto shape = inputShape(position, index);
    if (!shape)
      return shape.takeError();
    inputTypes.push_back(RankedTensorType::get(*shape, element));
  }
  // importTFLite turns this into the message with sizes that compile.
  if (!unfixed.empty()) {
    stoppedAtUnfixed = true;
    return fail("input '" + unfixed.front().name + "' has dynamic dimensions");
  }
  for (int position = 0; position < static_cast<int>(graph->outputs()->size());
       ++position) {
    int index = graph->outputs()->Get(position);
    const schema::Tensor *t = tensor(index);
    if (!t)
      return fail("model output " + llvm::Twine(position) +
                  " refers to a missing tensor");
    Type element = ioElementType(t->type());
    if (!element || t->type() == schema::TensorType::INT32 ||
        t->type() == schema::TensorType::BOOL)
      return fail("output '" + tensorName(t, index) + "' has element type " +
                  schema::EnumNameTensorType(t->type()) +
                  "; supported output types: FLOAT32, INT8, UINT8");
    outputTypes.push_back(RankedTensorType::get(shapeOf(index), element));
  }

  builder.setInsertionPointToEnd(module->getBody());
  auto func = builder.create<func::FuncOp>(
      fileLoc, "main", builder.getFunctionType(inputTypes, outputTypes));
  for (int position = 0; position < static_cast<int>(inputTypes.size());
       ++position) {
    int index = graph->inputs()->Get(position);
    func.setArgAttr(position, kNameAttr,
                    builder.getStringAttr(tensorName(tensor(index), index)));
    if (tensor(index)->type() == schema::TensorType::UINT8)
      func.setArgAttr(position, kElementTypeAttr, builder.getStringAttr("u8"));
  }
  for (int position = 0; position < static_cast<int>(outputTypes.size());
       ++position) {
    int index = graph->outputs()->Get(position);
    func.setResultAttr(position, kNameAttr,
                       builder.getStringAttr(tensorName(tensor(index), index)));
    if (tensor(index)->type() == schema::TensorType::UINT8)
      func.setResultAttr(position, kElementTypeAttr, builder.getStringAttr("u8"));
  }
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  for (int position = 0; position < static_cast<int>(inputTypes.size());
       ++position) {
    int index = graph->inputs()->Get(position);
    Value arg = body->getArgument(position);
    // A uint8 input is computed as int8: q - 128 is q with bit 7 flipped.
    values[index] = tensor(index)->type() == schema::TensorType::UINT8
                        ? flipSignBit(arg, fileLoc)
                        : arg;
  }

  // Operators, in the order the model lists them (TFLite keeps them in a
  // valid execution order).
  const auto &table = converters();
  if (graph->operators()) {
    int index = 0;
    for (const schema::Operator *op : *graph->operators()) {
      BuiltinOperator code =
          effectiveCode(model->operator_codes()->Get(op->opcode_index()));
      OpContext ctx(*this, op, index, code);
      auto floatIt = table.find(code);
      ConverterFn convert = floatIt == table.end() ? nullptr : floatIt->second;
      if (ctx.isQuantized() || !convert) {
        const ConverterTable &integer = quantizedConverters();
        auto it = integer.find(code);
        if (it == integer.end())
          return fail(unsupportedQuantized(ctx, integer));
        convert = it->second;
      }
      if (failed(convert(ctx)))
        return fail(error.empty() ? "operator #" + std::to_string(index) +
                                        " could not be converted"
                                  : error);
      ++index;
    }
  }

  llvm::SmallVector<Value> results;
  for (int position = 0; position < static_cast<int>(outputTypes.size());
       ++position) {
    int index = graph->outputs()->Get(position);
    Value v = values[index];
    if (!v && !constantData(index).empty())
      v = materializeConstant(index, fileLoc);
    if (!v)
      return fail("output '" + tensorName(tensor(index), index) +
                  "' is never computed by any operator");
    if (tensor(index)->type() == schema::TensorType::UINT8)
      v = flipSignBit(v, fileLoc);
    results.push_back(v);
  }
  builder.create<func::ReturnOp>(fileLoc, results);
  // The results' types are the computed ones (inferred once --fix-shape
  // sized a dynamic dimension).
  func.setType(builder.getFunctionType(inputTypes, ValueRange(results).getTypes()));

  // Every shape the model records must be the one TOSA computes from the
  // operands; a corrupted or inconsistent file is caught here, naming the
  // operator, instead of crashing a later phase.
  if (llvm::Error err = checkRecordedShapes(func))
    return std::move(err);

  // The converters build well-formed TOSA; a verifier failure here is a Kiln
  // bug, reported with the first diagnostic rather than an IR dump.
  std::string firstError;
  {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      if (firstError.empty()) {
        llvm::raw_string_ostream os(firstError);
        os << diag.str();
        if (auto name = diag.getLocation().dyn_cast<NameLoc>())
          os << " (producing '" << name.getName().getValue() << "')";
      }
      return success();
    });
    if (failed(verify(*module)))
      return fail("internal error: the imported TOSA does not verify: " +
                  firstError);
  }
  // Each quantized tensor's scales and zero points, for the plan; 8-bit
  // constants (weights) with the indices of the operators that read them.
  setQuantizationAttribute(
      *module, quant, [&](int i) { return tensorName(tensor(i), i); },
      [&](int i) { return !constantData(i).empty(); },
      [&](int i) {
        std::vector<int64_t> readers;
        schema::TensorType type = tensor(i)->type();
        if (constantData(i).empty() || !graph->operators() ||
            (type != schema::TensorType::INT8 && type != schema::TensorType::UINT8))
          return readers;
        for (unsigned index = 0; index < graph->operators()->size(); ++index)
          if (const schema::Operator *op = graph->operators()->Get(index);
              op->inputs() && llvm::is_contained(*op->inputs(), i))
            readers.push_back(index);
        return readers;
      });
  return std::move(module);
}

// --- OpContext ------------------------------------------------------------

static Location opLocation(ModelImporter &importer, const schema::Operator *op,
                           int index) {
  MLIRContext *ctx = &importer.context;
  // NameLoc("CONV_2D#12", NameLoc(<first output tensor>, file:12:0)): the
  // operator type and index, its output tensor, the file.
  std::string name;
  if (op->outputs() && op->outputs()->size())
    name = tensorName(importer.tensor(op->outputs()->Get(0)),
                      op->outputs()->Get(0));
  const schema::OperatorCode *code =
      importer.model->operator_codes()->Get(op->opcode_index());
  std::string opName = schema::EnumNameBuiltinOperator(
      ModelImporter::effectiveCode(code));
  Location file = FileLineColLoc::get(ctx, importer.filename, index, 0);
  Location tensor = NameLoc::get(StringAttr::get(ctx, name), file);
  return NameLoc::get(StringAttr::get(ctx, opName + "#" + std::to_string(index)),
                      tensor);
}

OpContext::OpContext(ModelImporter &importer, const schema::Operator *op,
                     int index, BuiltinOperator code)
    : TosaBuilder(importer.builder, opLocation(importer, op, index)), importer(importer), op(op),
      opIndex(index), opCode(code) {}

MLIRContext *OpContext::context() { return &importer.context; }
const char *OpContext::name() const {
  return schema::EnumNameBuiltinOperator(opCode);
}

int OpContext::numInputs() const {
  return op->inputs() ? op->inputs()->size() : 0;
}
int OpContext::numOutputs() const {
  return op->outputs() ? op->outputs()->size() : 0;
}
bool OpContext::hasInput(int i) const {
  return i >= 0 && i < numInputs() && op->inputs()->Get(i) >= 0;
}
const schema::Tensor *OpContext::inputTensor(int i) const {
  return hasInput(i) ? importer.tensor(op->inputs()->Get(i)) : nullptr;
}
const schema::Tensor *OpContext::outputTensor(int i) const {
  return i >= 0 && i < numOutputs() ? importer.tensor(op->outputs()->Get(i))
                                    : nullptr;
}
bool OpContext::isConstant(int i) const {
  return hasInput(i) && !importer.constantData(op->inputs()->Get(i)).empty();
}

std::vector<int64_t> OpContext::inputShape(int i) const {
  return hasInput(i) ? importer.currentShape(op->inputs()->Get(i))
                     : std::vector<int64_t>();
}
std::vector<int64_t> OpContext::outputShape(int i) const {
  return i < numOutputs() ? importer.declaredShape(op->outputs()->Get(i))
                          : std::vector<int64_t>();
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
    return t && (t->type() == schema::TensorType::INT8 ||
                 t->type() == schema::TensorType::UINT8);
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
  if (failed(infer.inferReturnTypeComponents(
          created->getContext(), created->getLoc(), created->getOperands(),
          created->getAttrDictionary(), created->getRegions(), inferred)) ||
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
  if (t && (t->type() == schema::TensorType::INT32 ||
            t->type() == schema::TensorType::INT64))
    element = importer.builder.getI32Type();
  else if (t && t->type() == schema::TensorType::BOOL)
    element = importer.builder.getI1Type();
  else if (t && (t->type() == schema::TensorType::INT8 ||
                 t->type() == schema::TensorType::UINT8))
    element = importer.builder.getIntegerType(8);
  return RankedTensorType::get(outputShape(i), element);
}

LogicalResult OpContext::fail(const llvm::Twine &message) {
  if (importer.error.empty())
    importer.error = ("operator #" + llvm::Twine(opIndex) + " (" + name() +
                      "): " + message)
                         .str();
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
  llvm::ArrayRef<uint8_t> data = importer.constantData(index);
  if (data.empty())
    return fail("input " + llvm::Twine(i) + " ('" + tensorName(t, index) +
                "') is used before any operator computes it");
  int64_t count = 1;
  for (int64_t d : importer.shapeOf(index))
    count *= d;
  size_t elementSize = tensorTypeSize(t->type());
  if (elementSize == 0 ||
      (t->type() != schema::TensorType::FLOAT32 &&
       t->type() != schema::TensorType::FLOAT16 &&
       t->type() != schema::TensorType::INT32 &&
       t->type() != schema::TensorType::INT64 &&
       t->type() != schema::TensorType::INT8 &&
       t->type() != schema::TensorType::UINT8))
    return fail("constant '" + tensorName(t, index) + "' has element type " +
                schema::EnumNameTensorType(t->type()) +
                "; supported: FLOAT32, FLOAT16, INT32, INT64, INT8, UINT8");
  if (data.size() != elementSize * count)
    return fail("constant '" + tensorName(t, index) + "' holds " +
                llvm::Twine(data.size()) + " bytes, its shape " +
                shapeString(importer.shapeOf(index)) + " needs " +
                llvm::Twine(elementSize * count));
  v = importer.materializeConstant(index, location);
  return v;
}

FailureOr<std::vector<int64_t>> OpContext::constantInts(int i) {
  if (!isConstant(i))
    return fail("input " + llvm::Twine(i) +
                " must be a constant tensor (computed shapes are not supported)");
  const schema::Tensor *t = inputTensor(i);
  llvm::ArrayRef<uint8_t> data = importer.constantData(op->inputs()->Get(i));
  std::vector<int64_t> out;
  if (t->type() == schema::TensorType::INT32) {
    for (size_t k = 0; k + 4 <= data.size(); k += 4) {
      int32_t x;
      std::memcpy(&x, data.data() + k, 4);
      out.push_back(x);
    }
  } else if (t->type() == schema::TensorType::INT64) {
    for (size_t k = 0; k + 8 <= data.size(); k += 8) {
      int64_t x;
      std::memcpy(&x, data.data() + k, 8);
      out.push_back(x);
    }
  } else {
    return fail("input " + llvm::Twine(i) + " must be INT32 or INT64, not " +
                schema::EnumNameTensorType(t->type()));
  }
  return out;
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
static RankedTensorType resolveOpen(RankedTensorType declared,
                                    RankedTensorType actual) {
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
                "shape signature " + signatureString(declared.getShape()) + ")");
  if (!declared.hasStaticShape()) {
    RankedTensorType resolved = resolveOpen(declared, actual);
    if (!resolved)
      return fail("with the --fix-shape sizes it computes " +
                  shapeString(actual.getShape()) + " for output '" + tensor +
                  "', which does not fit its shape signature " +
                  signatureString(declared.getShape()));
    declared = resolved;
  }
  if (actual != declared) {
    if (actual.getElementType() != declared.getElementType() ||
        actual.getNumElements() != declared.getNumElements())
      return fail(std::string(importer.propagating ? "with the --fix-shape sizes it " : "") +
                  "computes " + shapeString(actual.getShape()) +
                  " for output '" + tensor + "', the model declares " +
                  (importer.propagating ? "the static shape " : "") +
                  shapeString(declared.getShape()));
    value = reshape(value, declared.getShape());
  }
  importer.values[op->outputs()->Get(i)] = value;
  return success();
}

FailureOr<Value> OpContext::applyActivation(Value value,
                                            schema::ActivationFunctionType act) {
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
    return fail(std::string("fused activation ") +
                schema::EnumNameActivationFunctionType(act) +
                " is not supported (supported: NONE, RELU, RELU_N1_TO_1, "
                "RELU6, TANH)");
  }
}

} // namespace tfl

namespace tfl {

/// Sizes worth trying for dynamic dimensions: every positive dimension the
/// model mentions (tensor shapes and signatures, RESHAPE new shapes), small
/// ones first, at most `limit`.
static std::vector<int64_t> candidateSizes(const ModelImporter &m, size_t limit) {
  std::set<int64_t> sizes;
  auto add = [&](int64_t d) {
    if (d > 1 && d <= (int64_t(1) << 24))
      sizes.insert(d);
  };
  for (const schema::Tensor *t : *m.graph->tensors()) {
    for (const auto *dims : {t->shape(), t->shape_signature()})
      if (dims)
        for (int32_t d : *dims)
          add(d);
  }
  if (m.graph->operators())
    for (const schema::Operator *op : *m.graph->operators())
      if (const auto *o = op->builtin_options_as<schema::ReshapeOptions>())
        if (o->new_shape())
          for (int32_t d : *o->new_shape())
            add(d);
  std::vector<int64_t> out(sizes.begin(), sizes.end());
  if (out.size() > limit)
    out.resize(limit);
  return out;
}

/// The error for model inputs with dynamic dimensions and no --fix-shape,
/// with sizes that import (tried here, so the suggestion always works): the
/// recorded shape first (TFLite records 1 for a dynamic dimension), then
/// each size the model mentions for every dynamic dimension but a leading
/// batch dimension, which keeps its recorded size.
static llvm::Error unfixedInputError(MLIRContext &context, llvm::ArrayRef<uint8_t> bytes,
                                     llvm::StringRef filename,
                                     const std::vector<ShapeFix> &fixes,
                                     const ModelImporter &failed) {
  const auto &unfixed = failed.unfixed;
  auto trial = [&](int64_t size) {
    std::vector<ShapeFix> all = fixes;
    for (const auto &in : unfixed) {
      ShapeFix fix{in.name, {}};
      for (size_t d = 0; d < in.signature.size(); ++d) {
        int64_t recorded = std::max<int64_t>(in.shape[d], 1);
        bool open = in.signature[d] < 0 || in.shape[d] < 0;
        bool batch = d == 0 && in.signature.size() > 1;
        fix.shape.push_back(open && size > 0 && !batch ? size : recorded);
      }
      all.push_back(fix);
    }
    return all;
  };
  std::vector<int64_t> sizes = {0}; // 0: the recorded shape
  for (int64_t c : candidateSizes(failed, 16))
    sizes.push_back(c);
  std::optional<std::vector<ShapeFix>> works;
  std::string recordedError;
  for (int64_t size : sizes) {
    std::vector<ShapeFix> all = trial(size);
    ModelImporter attempt(context, bytes, filename, all);
    auto module = attempt.run();
    if (module) {
      works = std::vector<ShapeFix>(all.end() - unfixed.size(), all.end());
      break;
    }
    std::string message = llvm::toString(module.takeError());
    if (size == 0)
      recordedError = llvm::StringRef(message).drop_front(filename.size() + 2).str();
  }
  const auto &first = unfixed.front();
  llvm::SmallVector<int64_t> open;
  for (size_t d = 0; d < first.signature.size(); ++d)
    if (first.signature[d] < 0 || first.shape[d] < 0)
      open.push_back(d);
  std::string message = filename.str() + ": input '" + first.name + "' (input " +
                        std::to_string(first.position) + ") has " + dimensionList(open) +
                        " (shape signature " + shapeString(first.signature) +
                        "); Kiln compiles static shapes only: ";
  // The same as data (kiln/ModelInputs.h): each unfixed input, its suggestion.
  std::vector<UnfixedInput> data;
  for (size_t i = 0; i < unfixed.size(); ++i) {
    const auto &in = unfixed[i];
    UnfixedInput u;
    u.input.name = in.name;
    u.input.index = in.position;
    const schema::Tensor *t = failed.tensor(failed.graph->inputs()->Get(in.position));
    u.input.elementType = llvm::StringRef(schema::EnumNameTensorType(t->type())).lower();
    for (size_t d = 0; d < in.signature.size(); ++d)
      u.input.shape.push_back(in.signature[d] < 0 || in.shape[d] < 0 ? -1 : in.signature[d]);
    u.input.dimNames.assign(u.input.shape.size(), "");
    if (works)
      u.suggestion = (*works)[i].shape;
    data.push_back(std::move(u));
  }
  if (!works)
    return llvm::make_error<UnfixedInputError>(
        message + "give each dynamic dimension a size with --fix-shape "
                  "(the recorded shape " + dimsText(trial(0)[fixes.size()].shape) +
                  " does not compile: " + recordedError + ")",
        std::move(data));
  message += "fix it with --fix-shape=" + first.name + "=" + dimsText(works->front().shape);
  for (size_t i = 1; i < works->size(); ++i)
    message += std::string(i == 1 ? " and" : ",") + " input '" + (*works)[i].input +
               "' with --fix-shape=" + (*works)[i].input + "=" + dimsText((*works)[i].shape);
  return llvm::make_error<UnfixedInputError>(message, std::move(data));
}

} // namespace tfl

llvm::Expected<OwningOpRef<ModuleOp>>
importTFLite(MLIRContext &context, llvm::ArrayRef<uint8_t> bytes,
             llvm::StringRef filename, const std::vector<ShapeFix> &fixes) {
  tfl::ModelImporter importer(context, bytes, filename, fixes);
  auto module = importer.run();
  if (module || !importer.stoppedAtUnfixed)
    return module;
  llvm::consumeError(module.takeError());
  return tfl::unfixedInputError(context, bytes, filename, fixes, importer);
}

} // namespace kiln
