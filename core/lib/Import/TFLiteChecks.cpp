//===- TFLiteChecks.cpp - TFLite model checks -------------------------------===//
//
// What a TFLite file must satisfy before Kiln builds any TOSA from it:
// tensor indices and buffers in range, affine quantization well formed,
// every operator known and of supported element types, shapes non-negative
// and non-empty; and after import, every recorded shape equal to the one
// TOSA infers. Each failure is one error naming the operator or tensor.
//
//===----------------------------------------------------------------------===//
#include "TFLiteModelImporter.h"

#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kiln::tfl {

llvm::Error ModelImporter::checkRecordedShapes(func::FuncOp func) {
  std::string problem;
  func.walk([&](InferShapedTypeOpInterface infer) {
    if (!problem.empty())
      return;
    Operation *op = infer.getOperation();
    llvm::SmallVector<ShapedTypeComponents> inferred;
    if (failed(infer.inferReturnTypeComponents(op->getContext(), std::nullopt, op->getOperands(),
                                               op->getAttrDictionary(), op->getRegions(),
                                               inferred)))
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
                (tensor.empty() ? "" : " output '" + tensor + "'") + ": the model records shape " +
                shapeString(actual.getShape()) + " but the operands give " +
                shapeString(inferredShape) +
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
  std::string what = "tensor '" + tensorName(t, index) + "' (index " + std::to_string(index) +
                     ", " + typeName(type) + ")";
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
                  (q->scale()->size() > 1 ? " at channel " + std::to_string(c) : std::string()) +
                  "; scales must be positive and finite");
    tq.scales.push_back(s);
  }
  size_t zpCount = q->zero_point() ? q->zero_point()->size() : 0;
  if (zpCount != tq.scales.size())
    return fail(what + " has " + std::to_string(tq.scales.size()) + " scales but " +
                std::to_string(zpCount) + " zero points; the counts must match");
  int64_t lo = type == schema::TensorType::INT8 ? -128 : 0;
  int64_t hi = type == schema::TensorType::INT8 ? 127 : 255;
  for (size_t c = 0; c < tq.scales.size(); ++c) {
    int64_t zp = zpCount ? q->zero_point()->Get(c) : 0;
    if (zp < lo || zp > hi)
      return fail(what + " has zero point " + std::to_string(zp) + "; " + typeName(type) +
                  " zero points lie in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
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
      return fail(what + " has quantized_dimension " + std::to_string(dim) + " but rank " +
                  std::to_string(rank));
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
/// (16x8 models; SVDF's int16 weights_time and activation_state, inputs 2
/// and 4, are the integer SVDF's own types and exempt) and hybrid operators
/// (float activations with int8 weights, dequantized inside the kernel) are
/// refused, naming the operator and its types (the recurrent operators
/// refuse them in their converter).
llvm::Error ModelImporter::checkOperatorTypes() {
  if (!graph->operators())
    return llvm::Error::success();
  int index = 0;
  for (const schema::Operator *op : *graph->operators()) {
    BuiltinOperator code = effectiveCode(model->operator_codes()->Get(op->opcode_index()));
    std::string types;
    bool int16 = false, floatActivation = false, int8Weight = false;
    bool signedInt8 = false, unsignedInt8 = false;
    bool svdf = code == BuiltinOperator::SVDF;
    auto scan = [&](const flatbuffers::Vector<int32_t> *list, bool inputs) {
      if (!list)
        return;
      for (int position = 0; position < static_cast<int>(list->size()); ++position) {
        int32_t i = list->Get(position);
        if (i < 0)
          continue;
        const schema::Tensor *t = tensor(i);
        schema::TensorType type = t->type();
        types += (types.empty() || types.back() == ' ' ? "" : ", ") + typeName(type);
        bool svdfInt16 = svdf && inputs && (position == 2 || position == 4);
        int16 |= type == schema::TensorType::INT16 && !svdfInt16;
        signedInt8 |= type == schema::TensorType::INT8;
        unsignedInt8 |= type == schema::TensorType::UINT8;
        bool constant = !constantData(i).empty();
        floatActivation |= inputs && !constant && type == schema::TensorType::FLOAT32;
        int8Weight |= inputs && constant &&
                      (type == schema::TensorType::INT8 || type == schema::TensorType::UINT8);
      }
    };
    scan(op->inputs(), true);
    types += " -> ";
    scan(op->outputs(), false);
    std::string where = "operator #" + std::to_string(index) + " (" +
                        schema::EnumNameBuiltinOperator(code) + ", " + types + ")";
    // The recurrent converters refuse their int8 (int16 cell state) and
    // hybrid forms themselves, naming the operator (convertsIntegerForms).
    bool ownTypes = convertsIntegerForms(code);
    if (int16 && !ownTypes)
      return fail(where + " computes on INT16 tensors: 16-bit activations "
                          "(16x8 quantization) are not supported; Kiln compiles "
                          "float32, int8 and uint8 models");
    if (signedInt8 && unsignedInt8 && code != BuiltinOperator::QUANTIZE)
      return fail(where + " mixes INT8 and UINT8 tensors; TFLite's kernels take "
                          "one of them per operator (QUANTIZE converts between them)");
    if (floatActivation && int8Weight && code != BuiltinOperator::DEQUANTIZE && !ownTypes)
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
    if (!op || !model->operator_codes() || op->opcode_index() >= model->operator_codes()->size())
      return fail("operator #" + llvm::Twine(index) + " has an invalid operator code index");
    const schema::OperatorCode *code = model->operator_codes()->Get(op->opcode_index());
    if (!code)
      return fail("operator #" + llvm::Twine(index) + " has a missing operator code");
    BuiltinOperator builtin = effectiveCode(code);
    int numTensors = graph->tensors() ? graph->tensors()->size() : 0;
    auto checkIndices = [&](const flatbuffers::Vector<int32_t> *list, const char *what,
                            bool optionalAllowed) -> llvm::Error {
      if (!list)
        return llvm::Error::success();
      for (int32_t t : *list)
        if (t >= numTensors || t < (optionalAllowed ? -1 : 0))
          return fail("operator #" + llvm::Twine(index) + " " + what + " tensor index " +
                      llvm::Twine(t) + ", the subgraph has " + llvm::Twine(numTensors) +
                      " tensors (the file is corrupted)");
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
               (code->custom_code() ? code->custom_code()->str() : std::string("?")) +
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
/// zero-size tensors; TFLite runs them as empty tensors; operator
/// intermediates are exempt); every element
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
  // Operator intermediates (the integer LSTM's gate scratch tensors, often
  // of shape [0]) are declarations for TFLite's kernels that no converter
  // reads: they need no size.
  std::vector<bool> intermediate(n, false);
  if (graph->operators())
    for (const schema::Operator *op : *graph->operators())
      if (op->intermediates())
        for (int32_t t : *op->intermediates())
          if (t >= 0 && t < n && role[t].empty())
            intermediate[t] = true;
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
                      (dims == &shape ? "shape " : "shape signature ") + shapeString(*dims) +
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
    if (intermediate[i] || (role[i].empty() && t->type() != schema::TensorType::FLOAT32 &&
                            t->type() != schema::TensorType::FLOAT16))
      continue;
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] == 0 && !(d < signature.size() && signature[d] == -1))
        return fail(who + " has shape " + shapeString(shape) + ": dimension " + llvm::Twine(d) +
                    " is 0. Kiln does not compile zero-size tensors "
                    "(TensorFlow Lite runs them as empty tensors); remove the "
                    "empty branch from the model or give the dimension a size");
  }
  return llvm::Error::success();
}

} // namespace kiln::tfl
