//===- kiln/TensorTypes.h - Element types and I/O signatures ---*- C++ -*-===//
//
// How Kiln names a tensor's element type and shape: NumPy dtype
// descriptors ("<f4", "|i1"), the element type names the command line and
// MLIR use ("f32", "i8"), and one entry of a model's I/O signature. The
// compiler writes them into artifacts and results; kiln_host's .npy files
// and runs (kiln/Npy.h, kiln/Run.h) read them.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TENSORTYPES_H
#define KILN_TENSORTYPES_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/Options.h"

#include "llvm/ADT/StringRef.h"

namespace kiln {

/// The affine quantization of an integer input or output, as the TensorFlow
/// Lite schema's QuantizationParameters record it (and the artifact's
/// TensorDesc.quantization, runtime.h's kiln_tensor_info_t carry it):
/// real = scales[c] * (q - zeroPoints[c]). Empty for a float tensor.
struct IOQuantization {
  /// One (per tensor) or one per index of `dimension`; finite, positive.
  std::vector<float> scales;
  /// As many as `scales`, in the element type's range (i8 -128..127, u8
  /// 0..255).
  std::vector<int32_t> zeroPoints;
  /// The channel dimension of a per-channel quantization; -1 per tensor.
  int32_t dimension = -1;

  bool quantized() const { return !scales.empty(); }
};

/// "scale 0.00390625 zero point -128" (per tensor, %g), "per-channel: 8
/// scales, min 0.01 max 0.02, dimension 3", or "none".
std::string quantizationText(const IOQuantization &q);

/// Description of one model input or output, from the artifact.
struct IOInfo {
  std::string name;
  std::string dtype; ///< NumPy descriptor, e.g. "<f4"
  std::vector<int64_t> shape;
  /// Bytes (the runtime's byte_size: elements x element size).
  uint64_t byteSize = 0;
  /// Its quantization (format 1.2 artifacts; a compiled TFLite model's
  /// quantized I/O); empty for float tensors and older artifacts.
  IOQuantization quantization;
};

/// What the ONNX importer did with one control-flow node (If, Loop, Scan),
/// in graph order, nested nodes included: `kiln inspect MODEL` lists them
/// under "control flow" ("control_flow" in its JSON). Compile-time only: the
/// artifact does not record them.
struct ControlFlowDecision {
  /// The node as errors name it: "node #2 If \"If_0\"", prefixed by the
  /// enclosing nodes' branches for a nested one.
  std::string node;
  /// "If", "Loop" or "Scan".
  std::string opType;
  /// "then_branch taken", "else_branch taken", "both branches, selected at
  /// run time", "unrolled N iterations".
  std::string decision;
  /// Why: "condition 'c' is true when the model is compiled (from input
  /// 'sr', fixed to a value)", ...
  std::string reason;
};

/// A model input fixed to a value at compile time (`--fix-value`): a
/// constant of the build, not an input of its signature. What the artifact
/// records (its io section) and `kiln inspect` lists under "fixed".
struct FixedInput {
  /// The input's name in the model.
  std::string name;
  /// NumPy-style element type name of the model's input: "int64",
  /// "float32", "bool", ...
  std::string elementType;
  /// The input's static shape (empty for a scalar).
  std::vector<int64_t> shape;
  /// Every element, row-major (product(shape) of them).
  std::vector<FixedNumber> values;
};

/// Bytes per element of a dtype descriptor, 0 if unsupported.
size_t npyDtypeSize(const std::string &dtype);

/// True for the integer dtype descriptors npyDtypeSize knows: |i1 |u1 |b1
/// <i2 <u2 <i4 <u4 <i8 <u8.
bool isIntegerDtype(const std::string &dtype);

/// The element type name Kiln's command line and MLIR use for a dtype
/// descriptor: <f4 -> f32, <f2 -> f16, <i4 -> i32, <i8 -> i64, |i1 -> i8,
/// |u1 -> u8, |b1 -> i1, <f8 -> f64 (a NumPy default no model takes); the
/// descriptor itself when it has no name.
std::string elementTypeName(const std::string &dtype);

/// The dtype descriptor of an element type name (elementTypeName's
/// inverse); "" when `name` is none of f32 f16 i32 i64 i8 u8 i1 f64.
std::string dtypeOfElementType(llvm::StringRef name);

/// Shape and element type as the command line writes them: "1x16x96xf32"
/// ("f32" for a 0-d array).
std::string tensorTypeText(const std::vector<int64_t> &shape, const std::string &dtype);

} // namespace kiln

#endif // KILN_TENSORTYPES_H
