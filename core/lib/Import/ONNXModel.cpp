//===- ONNXModel.cpp - Read an ONNX model with libonnx --------------------===//
//
// The one translation unit that includes protobuf and libonnx headers. It is
// built with RTTI (libonnx's headers need it) and catches every exception
// libonnx throws (checker::ValidationError, InferenceError, protobuf's), so
// none crosses into the rest of core.
//
//===----------------------------------------------------------------------===//
#include "ONNXModel.h"
#include "Support/Message.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace kiln::onnx {

std::string dataTypeName(int32_t type) {
  switch (type) {
  case kFloat: return "float32";
  case kUInt8: return "uint8";
  case kInt8: return "int8";
  case kUInt16: return "uint16";
  case kInt16: return "int16";
  case kInt32: return "int32";
  case kInt64: return "int64";
  case kString: return "string";
  case kBool: return "bool";
  case kFloat16: return "float16";
  case kDouble: return "float64";
  case kUInt32: return "uint32";
  case kUInt64: return "uint64";
  case kBFloat16: return "bfloat16";
  default: return "type " + std::to_string(type);
  }
}

bool isFloatType(int32_t type) {
  return type == kFloat || type == kFloat16 || type == kDouble || type == kBFloat16;
}

int64_t Tensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

const Attribute *Node::attribute(const std::string &name) const {
  for (const Attribute &a : attributes)
    if (a.name == name)
      return &a;
  return nullptr;
}

namespace {

/// IEEE 754 binary16 bits -> float.
float halfToFloat(uint16_t h) {
  int sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float value;
  if (exponent == 0)
    value = std::ldexp(float(mantissa), -24);
  else if (exponent == 31)
    value = mantissa ? std::numeric_limits<float>::quiet_NaN()
                     : std::numeric_limits<float>::infinity();
  else
    value = std::ldexp(float(mantissa | 0x400), exponent - 25);
  return sign ? -value : value;
}

float bfloat16ToFloat(uint16_t b) {
  uint32_t bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Bytes per element of `raw_data` for a numeric type, 0 if not numeric.
size_t rawElementBytes(int32_t type) {
  switch (type) {
  case kBool: case kUInt8: case kInt8: return 1;
  case kUInt16: case kInt16: case kFloat16: case kBFloat16: return 2;
  case kFloat: case kInt32: case kUInt32: return 4;
  case kInt64: case kDouble: case kUInt64: return 8;
  default: return 0;
  }
}

template <typename T> T loadLE(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T)); // x86-64, aarch64 and riscv64 hosts are little endian
  return v;
}

/// Appends element `i` of little-endian `raw` of `type` to `out`.
void appendRaw(const char *p, int32_t type, Tensor &out) {
  switch (type) {
  case kFloat: out.floats.push_back(loadLE<float>(p)); break;
  case kDouble: out.floats.push_back(float(loadLE<double>(p))); break;
  case kFloat16: out.floats.push_back(halfToFloat(loadLE<uint16_t>(p))); break;
  case kBFloat16: out.floats.push_back(bfloat16ToFloat(loadLE<uint16_t>(p))); break;
  case kBool: out.ints.push_back(*p ? 1 : 0); break;
  case kUInt8: out.ints.push_back(loadLE<uint8_t>(p)); break;
  case kInt8: out.ints.push_back(loadLE<int8_t>(p)); break;
  case kUInt16: out.ints.push_back(loadLE<uint16_t>(p)); break;
  case kInt16: out.ints.push_back(loadLE<int16_t>(p)); break;
  case kInt32: out.ints.push_back(loadLE<int32_t>(p)); break;
  case kUInt32: out.ints.push_back(loadLE<uint32_t>(p)); break;
  case kInt64: out.ints.push_back(loadLE<int64_t>(p)); break;
  case kUInt64: out.ints.push_back(int64_t(loadLE<uint64_t>(p))); break;
  }
}

/// Reads an external-data tensor's bytes from beside the model.
bool readExternal(const ::onnx::TensorProto &proto, const std::string &directory,
                  std::string &bytes, std::string &error) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &entry : proto.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset")
      offset = std::strtoll(entry.value().c_str(), nullptr, 10);
    else if (entry.key() == "length")
      length = std::strtoll(entry.value().c_str(), nullptr, 10);
  }
  if (location.empty() || location[0] == '/' || location.find("..") != std::string::npos) {
    error = "initializer '" + proto.name() + "' has external data at '" + location +
            "'; Kiln reads external data only from files beside the model";
    return false;
  }
  std::string path = (directory.empty() ? std::string(".") : directory) + "/" + location;
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "initializer '" + proto.name() + "': cannot read its external data file '" +
            path + "'";
    return false;
  }
  std::stringstream all;
  all << file.rdbuf();
  std::string content = all.str();
  if (offset < 0 || offset > int64_t(content.size()) ||
      (length >= 0 && offset + length > int64_t(content.size()))) {
    error = "initializer '" + proto.name() + "': external data range [" +
            std::to_string(offset) + ", +" + std::to_string(length) + ") is outside '" +
            path + "' (" + std::to_string(content.size()) + " bytes)";
    return false;
  }
  bytes = content.substr(size_t(offset), length < 0 ? std::string::npos : size_t(length));
  return true;
}

/// TensorProto -> Tensor (typed fields or raw_data, or external data).
bool convertTensor(const ::onnx::TensorProto &proto, const std::string &directory,
                   Tensor &out, std::string &error) {
  out.name = proto.name();
  out.dataType = proto.data_type();
  out.dims.assign(proto.dims().begin(), proto.dims().end());
  size_t elementBytes = rawElementBytes(out.dataType);
  if (!elementBytes) {
    error = "tensor '" + proto.name() + "' has element type " + dataTypeName(out.dataType) +
            "; Kiln reads numeric and bool tensors";
    return false;
  }
  int64_t n = 1;
  for (int64_t d : out.dims) {
    if (d < 0 || (d && n > std::numeric_limits<int64_t>::max() / d)) {
      error = "tensor '" + proto.name() + "' has an invalid shape";
      return false;
    }
    n *= d;
  }
  std::string external;
  const std::string *raw = nullptr;
  if (proto.data_location() == ::onnx::TensorProto::EXTERNAL) {
    if (!readExternal(proto, directory, external, error))
      return false;
    raw = &external;
  } else if (proto.has_raw_data()) {
    raw = &proto.raw_data();
  }
  if (raw) {
    if (raw->size() != size_t(n) * elementBytes) {
      error = "tensor '" + proto.name() + "' holds " + std::to_string(raw->size()) +
              " bytes of data for " + std::to_string(n) + " elements of " +
              dataTypeName(out.dataType);
      return false;
    }
    for (int64_t i = 0; i < n; ++i)
      appendRaw(raw->data() + i * elementBytes, out.dataType, out);
    return true;
  }
  switch (out.dataType) {
  case kFloat: out.floats.assign(proto.float_data().begin(), proto.float_data().end()); break;
  case kDouble:
    for (double d : proto.double_data())
      out.floats.push_back(float(d));
    break;
  case kFloat16:
    for (int32_t v : proto.int32_data())
      out.floats.push_back(halfToFloat(uint16_t(v)));
    break;
  case kBFloat16:
    for (int32_t v : proto.int32_data())
      out.floats.push_back(bfloat16ToFloat(uint16_t(v)));
    break;
  case kInt64: out.ints.assign(proto.int64_data().begin(), proto.int64_data().end()); break;
  case kUInt32: case kUInt64:
    for (uint64_t v : proto.uint64_data())
      out.ints.push_back(int64_t(v));
    break;
  default:
    out.ints.assign(proto.int32_data().begin(), proto.int32_data().end());
    if (out.dataType == kBool)
      for (int64_t &v : out.ints)
        v = v ? 1 : 0;
  }
  size_t have = out.isFloat() ? out.floats.size() : out.ints.size();
  if (have != size_t(n)) {
    error = "tensor '" + proto.name() + "' holds " + std::to_string(have) +
            " elements for shape of " + std::to_string(n);
    return false;
  }
  return true;
}

ValueInfo convertValueInfo(const ::onnx::ValueInfoProto &proto) {
  ValueInfo info;
  info.name = proto.name();
  if (!proto.type().has_tensor_type())
    return info;
  const auto &tensor = proto.type().tensor_type();
  info.elementType = tensor.elem_type();
  if (!tensor.has_shape())
    return info;
  info.hasShape = true;
  for (const auto &dim : tensor.shape().dim()) {
    bool known = dim.has_dim_value() && dim.dim_value() >= 0;
    info.dims.push_back(known ? dim.dim_value() : -1);
    info.dimParams.push_back(dim.has_dim_param() ? dim.dim_param() : "");
  }
  return info;
}

bool convertNodes(const ::onnx::GraphProto &graph, const std::string &directory,
                  std::vector<Node> &nodes, std::string &error);

bool convertAttribute(const ::onnx::AttributeProto &proto, const std::string &directory,
                      Attribute &out, std::string &error) {
  using A = ::onnx::AttributeProto;
  out.name = proto.name();
  switch (proto.type()) {
  case A::FLOAT: out.kind = Attribute::Float; out.f = proto.f(); break;
  case A::INT: out.kind = Attribute::Int; out.i = proto.i(); break;
  case A::STRING: out.kind = Attribute::String; out.s = proto.s(); break;
  case A::TENSOR:
    out.kind = Attribute::TensorValue;
    out.t = std::make_shared<Tensor>();
    if (!convertTensor(proto.t(), directory, *out.t, error))
      return false;
    break;
  case A::GRAPH: {
    out.kind = Attribute::Graph;
    auto graph = std::make_shared<onnx::Graph>();
    for (const auto &input : proto.g().input())
      graph->inputs.push_back(input.name());
    for (const auto &output : proto.g().output())
      graph->outputs.push_back(output.name());
    for (const auto &init : proto.g().initializer())
      if (!convertTensor(init, directory, graph->initializers[init.name()], error))
        return false;
    if (!convertNodes(proto.g(), directory, graph->nodes, error))
      return false;
    out.g = std::move(graph);
    break;
  }
  case A::FLOATS:
    out.kind = Attribute::Floats;
    out.floats.assign(proto.floats().begin(), proto.floats().end());
    break;
  case A::INTS:
    out.kind = Attribute::Ints;
    out.ints.assign(proto.ints().begin(), proto.ints().end());
    break;
  case A::STRINGS:
    out.kind = Attribute::Strings;
    out.strings.assign(proto.strings().begin(), proto.strings().end());
    break;
  default: out.kind = Attribute::Other;
  }
  return true;
}

bool isDefaultDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx";
}

/// Checks versions and domains before anything else runs on the model.
bool checkVersions(const ::onnx::ModelProto &proto, int64_t &opset, std::string &error) {
  if (proto.ir_version() > kMaxIrVersion) {
    error = "IR version " + std::to_string(proto.ir_version()) +
            "; Kiln reads ONNX IR versions up to " + std::to_string(kMaxIrVersion) + " (ONNX 1.16)";
    return false;
  }
  opset = -1;
  for (const auto &entry : proto.opset_import())
    if (isDefaultDomain(entry.domain()))
      opset = entry.version();
  if (opset < 0) {
    std::string domains;
    for (const auto &entry : proto.opset_import())
      domains += (domains.empty() ? "'" : ", '") + entry.domain() + "'";
    error = "no opset of the default ONNX domain is imported" +
            (domains.empty() ? std::string() : " (only " + domains + ")") +
            "; Kiln reads operators of the default ONNX domain only";
    return false;
  }
  if (opset > kMaxOpset || opset < 1) {
    error = "opset " + std::to_string(opset) + " of the default domain; Kiln reads opsets " +
            std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) +
            " (older ones through the ONNX version converter)";
    return false;
  }
  int index = 0;
  for (const auto &node : proto.graph().node()) {
    if (!isDefaultDomain(node.domain())) {
      error = "node #" + std::to_string(index) + " " + node.op_type() + " \"" + node.name() +
              "\" is in domain '" + node.domain() +
              "'; Kiln reads operators of the default ONNX domain only";
      return false;
    }
    ++index;
  }
  return true;
}

/// "node #3 Conv \"conv1\"" for messages; a node inside a subgraph (an If
/// or Loop body) is named with its path: "node #2 If \"branch\"
/// then_branch node #0 Conv \"\"". Call only once checkNames passed.
std::string nodeLabel(const std::string &path, int index, const ::onnx::NodeProto &node) {
  return path + "node #" + std::to_string(index) + " " + node.op_type() + " \"" + node.name() +
         "\"";
}

/// Calls visit(label, node) for every node of `graph` and of the subgraphs
/// in its nodes' GRAPH/GRAPHS attributes (If, Loop, Scan bodies), which
/// libonnx's checker and shape inference also walk. Nesting is bounded by
/// protobuf's parse recursion limit (100 messages, about 33 graph levels).
/// Stops at the first visit that returns false.
template <typename Visit>
bool forEachNode(const ::onnx::GraphProto &graph, const std::string &path, Visit &&visit) {
  int index = 0;
  for (const auto &node : graph.node()) {
    if (!visit(path, index, node))
      return false;
    for (const auto &attr : node.attribute()) {
      std::string inner = nodeLabel(path, index, node) + " " + attr.name() + " ";
      if (attr.has_g() && !forEachNode(attr.g(), inner, visit))
        return false;
      for (const auto &g : attr.graphs())
        if (!forEachNode(g, inner, visit))
          return false;
    }
    ++index;
  }
  return true;
}

/// The first control byte (below 0x20, or 0x7f) in `text`, or -1.
int controlByte(const std::string &text) {
  for (unsigned char c : text)
    if (c < 0x20 || c == 0x7f)
      return c;
  return -1;
}

/// Refuses a name with a control byte; `what` says which name it is.
bool checkName(const std::string &text, const std::string &what, std::string &error) {
  int c = controlByte(text);
  if (c < 0)
    return true;
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02x", c);
  error = what + " '" + quoteInput(text) + "' holds the control character " + hex +
          "; Kiln reads names and string attributes without control characters";
  return false;
}

bool checkValueNames(const ::onnx::GraphProto &graph, const std::string &path,
                     std::string &error) {
  auto all = [&](const auto &list, const char *what) {
    int k = 0;
    for (const auto &item : list)
      if (!checkName(item.name(), path + what + " " + std::to_string(k++), error))
        return false;
    return true;
  };
  return checkName(graph.name(), path + "graph name", error) &&
         all(graph.input(), "graph input") && all(graph.output(), "graph output") &&
         all(graph.initializer(), "initializer") && all(graph.value_info(), "value_info");
}

/// Refuses control characters in every name, op type, domain and string
/// attribute (value names, node names, attribute names, subgraphs too): the
/// importer's and the checker's errors quote them, and every error is one
/// line. No exporter writes such names; before this check a newline in a
/// graph output's name split "graph output '...' is not computed by any
/// node" over two lines (onnx_import fuzzer).
bool checkNames(const ::onnx::ModelProto &proto, std::string &error) {
  for (const auto &entry : proto.opset_import())
    if (!checkName(entry.domain(), "opset_import domain", error))
      return false;
  if (!checkValueNames(proto.graph(), "", error))
    return false;
  return forEachNode(proto.graph(), "", [&](const std::string &path, int index,
                                            const ::onnx::NodeProto &node) {
    std::string where = path + "node #" + std::to_string(index);
    if (!checkName(node.op_type(), where + " op type", error) ||
        !checkName(node.name(), where + " name", error) ||
        !checkName(node.domain(), where + " domain", error))
      return false;
    where = nodeLabel(path, index, node);
    for (int k = 0; k < node.input_size(); ++k)
      if (!checkName(node.input(k), where + " input " + std::to_string(k), error))
        return false;
    for (int k = 0; k < node.output_size(); ++k)
      if (!checkName(node.output(k), where + " output " + std::to_string(k), error))
        return false;
    for (const auto &attr : node.attribute()) {
      if (!checkName(attr.name(), where + " attribute name", error) ||
          !checkName(attr.s(), where + " attribute '" + attr.name() + "'", error))
        return false;
      for (const auto &s : attr.strings())
        if (!checkName(s, where + " attribute '" + attr.name() + "'", error))
          return false;
      if (attr.has_g() && !checkValueNames(attr.g(), where + " " + attr.name() + " ", error))
        return false;
      for (const auto &g : attr.graphs())
        if (!checkValueNames(g, where + " " + attr.name() + " ", error))
          return false;
    }
    return true;
  });
}

/// Refuses attribute values libonnx's shape inference divides by or loops
/// over without checking (a zero stride raises SIGFPE in
/// convPoolShapeInference): window attributes must be positive. Subgraph
/// nodes too: shape inference walks If/Loop bodies.
bool checkWindowAttributes(const ::onnx::ModelProto &proto, std::string &error) {
  return forEachNode(proto.graph(), "", [&](const std::string &path, int index,
                                            const ::onnx::NodeProto &node) {
    for (const auto &attr : node.attribute()) {
      const std::string &name = attr.name();
      bool window = name == "strides" || name == "dilations" || name == "kernel_shape";
      bool scalar = name == "group" || name == "blocksize";
      bool bad = false;
      if (window)
        for (int64_t v : attr.ints())
          bad |= v <= 0;
      if (scalar && attr.type() == ::onnx::AttributeProto::INT)
        bad = attr.i() <= 0;
      if (bad) {
        error = nodeLabel(path, index, node) + ": attribute '" + name + "' must be positive";
        return false;
      }
    }
    return true;
  });
}

/// Whether every output of `graph` (and of its subgraphs, recursively) is a
/// value defined in it or an enclosing scope (`scope`: names visible from
/// outside). libonnx's checker does not check graph outputs, and its IR
/// import (onnx::ImportModelProto, run by the version converter) registers
/// an undefined output as a null value: a SEGV in graphProtoToGraph
/// (onnx_import fuzzer, opsets 2 and 5).
bool checkOutputsDefined(const ::onnx::GraphProto &graph, const std::string &path,
                         std::set<std::string> scope, std::string &error) {
  for (const auto &input : graph.input())
    scope.insert(input.name());
  for (const auto &init : graph.initializer())
    scope.insert(init.name());
  for (const auto &node : graph.node())
    for (const auto &output : node.output())
      scope.insert(output);
  int index = 0;
  for (const auto &node : graph.node()) {
    for (const auto &attr : node.attribute()) {
      std::string inner = nodeLabel(path, index, node) + " " + attr.name() + " ";
      if (attr.has_g() && !checkOutputsDefined(attr.g(), inner, scope, error))
        return false;
      for (const auto &g : attr.graphs())
        if (!checkOutputsDefined(g, inner, scope, error))
          return false;
    }
    ++index;
  }
  for (const auto &output : graph.output())
    if (!scope.count(output.name())) {
      error = path + "graph output '" + output.name() + "' is not computed by any node";
      return false;
    }
  return true;
}

/// Brings a model of opset 1-6 to kMinOpset with libonnx's version
/// converter (onnx/version_converter: per-operator adapters, e.g. the legacy
/// `broadcast` attribute of binary ops), so converters see one semantics.
bool upgradeOpset(::onnx::ModelProto &proto, int64_t &opset, std::string &error) {
  try {
    proto = ::onnx::version_conversion::ConvertVersion(proto, int(kMinOpset));
  } catch (const std::exception &e) {
    std::string what = e.what();
    if (size_t nl = what.find('\n'); nl != std::string::npos)
      what.resize(nl);
    // libonnx's assertions read "file:line: function: Assertion `cond`
    // failed: reason"; the reason is what a user can act on.
    if (size_t at = what.find("` failed: "); at != std::string::npos)
      what = what.substr(at + 10);
    error = "opset " + std::to_string(opset) + " of the default domain: the ONNX version "
            "converter cannot bring it to opset " + std::to_string(kMinOpset) + " (" + what +
            "); Kiln reads opsets " + std::to_string(kMinOpset) + " to " +
            std::to_string(kMaxOpset);
    return false;
  }
  opset = kMinOpset;
  return true;
}

/// A checker exception's text as one line: libonnx quotes nodes as protobuf
/// text over several lines ("input 'y' of node: \nname:  OpType: Relu\n is
/// not output of any previous nodes."), so runs of whitespace become one
/// space; other control bytes are escaped and the text is cut at 400
/// characters.
std::string checkerMessage(const std::string &what) {
  std::string line;
  for (char c : what) {
    bool space = c == ' ' || c == '\n' || c == '\r' || c == '\t';
    if (!space)
      line += c;
    else if (!line.empty() && line.back() != ' ')
      line += ' ';
  }
  while (!line.empty() && line.back() == ' ')
    line.pop_back();
  if (controlByte(line) >= 0)
    return quoteInput(line, 400);
  return line.size() > 400 ? line.substr(0, 400) + "..." : line;
}

/// The default-domain operator versions after opset 17 (onnx's Changelog,
/// opsets 18 to 21), which libonnx 1.12 does not know: the operators whose
/// schema changed (attributes, inputs or only types) and the new ones.
const std::map<std::string, std::vector<int>> &newerVersions() {
  static const std::map<std::string, std::vector<int>> versions = {{"AffineGrid", {20}},
                                                                   {"AveragePool", {19}},
                                                                   {"BitwiseAnd", {18}},
                                                                   {"BitwiseNot", {18}},
                                                                   {"BitwiseOr", {18}},
                                                                   {"BitwiseXor", {18}},
                                                                   {"Cast", {19, 21}},
                                                                   {"CastLike", {19, 21}},
                                                                   {"CenterCropPad", {18}},
                                                                   {"Col2Im", {18}},
                                                                   {"Constant", {19, 21}},
                                                                   {"ConstantOfShape", {20, 21}},
                                                                   {"DFT", {20}},
                                                                   {"DeformConv", {19}},
                                                                   {"DequantizeLinear", {19, 21}},
                                                                   {"Equal", {19}},
                                                                   {"Flatten", {21}},
                                                                   {"Gelu", {20}},
                                                                   {"GridSample", {20}},
                                                                   {"GroupNormalization", {18, 21}},
                                                                   {"Identity", {19, 21}},
                                                                   {"If", {19, 21}},
                                                                   {"ImageDecoder", {20}},
                                                                   {"IsInf", {20}},
                                                                   {"IsNaN", {20}},
                                                                   {"Loop", {19, 21}},
                                                                   {"LpPool", {18}},
                                                                   {"Mish", {18}},
                                                                   {"OptionalGetElement", {18}},
                                                                   {"OptionalHasElement", {18}},
                                                                   {"Pad", {18, 19, 21}},
                                                                   {"QLinearMatMul", {21}},
                                                                   {"QuantizeLinear", {19, 21}},
                                                                   {"ReduceL1", {18}},
                                                                   {"ReduceL2", {18}},
                                                                   {"ReduceLogSum", {18}},
                                                                   {"ReduceLogSumExp", {18}},
                                                                   {"ReduceMax", {18, 20}},
                                                                   {"ReduceMean", {18}},
                                                                   {"ReduceMin", {18, 20}},
                                                                   {"ReduceProd", {18}},
                                                                   {"ReduceSumSquare", {18}},
                                                                   {"RegexFullMatch", {20}},
                                                                   {"Reshape", {19, 21}},
                                                                   {"Resize", {18, 19}},
                                                                   {"Scan", {19, 21}},
                                                                   {"ScatterElements", {18}},
                                                                   {"ScatterND", {18}},
                                                                   {"Shape", {19, 21}},
                                                                   {"Size", {19, 21}},
                                                                   {"Split", {18}},
                                                                   {"Squeeze", {21}},
                                                                   {"StringConcat", {20}},
                                                                   {"StringSplit", {20}},
                                                                   {"Transpose", {21}},
                                                                   {"Unsqueeze", {21}}};
  return versions;
}

} // namespace

bool newerThanLibonnx(const std::string &opType, int64_t opset) {
  if (opset <= kLibonnxOpset)
    return false;
  auto it = newerVersions().find(opType);
  if (it == newerVersions().end())
    return false;
  for (int version : it->second)
    if (version <= opset)
      return true;
  return false;
}

namespace {

/// The checker's graph check for an opset above libonnx's: what
/// check_graph checks (initializers, every node against its schema, with
/// the names defined before it in scope for its subgraphs), except that the
/// nodes newerThanLibonnx() are left to Kiln's converters, which check
/// their inputs and attributes themselves. A node holding subgraphs (If,
/// Loop, Scan) is checked with its subgraphs emptied, and the subgraphs are
/// walked here, since check_node would walk them with the opset-17
/// check_graph and refuse the newer nodes inside them.
void checkNewerGraph(const ::onnx::GraphProto &graph, const ::onnx::checker::CheckerContext &ctx,
                     int64_t opset, const ::onnx::checker::LexicalScopeContext *parent) {
  static const ::onnx::checker::LexicalScopeContext root;
  ::onnx::checker::LexicalScopeContext lex(parent ? *parent : root);
  for (const auto &value : graph.input())
    lex.add(value.name());
  for (const auto &tensor : graph.initializer()) {
    ::onnx::checker::check_tensor(tensor, ctx);
    lex.add(tensor.name());
  }
  int index = -1;
  for (const auto &node : graph.node()) {
    ++index;
    bool holdsGraphs = false;
    for (const auto &attr : node.attribute())
      holdsGraphs |= attr.has_g() || attr.graphs_size() > 0;
    // The checker's messages name a node by its (often empty) name only.
    auto check = [&](const ::onnx::NodeProto &checked) {
      try {
        ::onnx::checker::check_node(checked, ctx, lex);
      } catch (const std::exception &e) {
        throw std::runtime_error(
            "node #" + std::to_string(index) + " " + node.op_type() +
            (node.name().empty() ? "" : " \"" + quoteInput(node.name(), 80) + "\"") + ": " +
            e.what());
      }
    };
    if (isDefaultDomain(node.domain()) && newerThanLibonnx(node.op_type(), opset)) {
      // Left to Kiln's converter.
    } else if (!holdsGraphs) {
      check(node);
    } else {
      ::onnx::NodeProto shell = node;
      for (auto &attr : *shell.mutable_attribute()) {
        auto empty = [](::onnx::GraphProto &g) {
          std::string name = g.name();
          g.Clear();
          g.set_name(name);
        };
        if (attr.has_g())
          empty(*attr.mutable_g());
        for (auto &g : *attr.mutable_graphs())
          empty(g);
      }
      check(shell);
    }
    for (const auto &attr : node.attribute()) {
      if (attr.has_g())
        checkNewerGraph(attr.g(), ctx, opset, &lex);
      for (const auto &g : attr.graphs())
        checkNewerGraph(g, ctx, opset, &lex);
    }
    for (const auto &output : node.output())
      if (!output.empty())
        lex.add(output);
  }
}

/// Input and output counts {min in, max in, min out, max out} (ONNX
/// Operators.md, opsets 18 to 21) of the operators newerThanLibonnx that
/// Kiln imports or that other operators of theirs share: what check_node
/// would check from the schema.
bool newerArity(const std::string &op, std::array<int, 4> &arity) {
  static const std::map<std::string, std::array<int, 4>> table = {
      {"AffineGrid", {2, 2, 1, 1}},
      {"AveragePool", {1, 1, 1, 1}},
      {"BitwiseAnd", {2, 2, 1, 1}},
      {"BitwiseNot", {1, 1, 1, 1}},
      {"BitwiseOr", {2, 2, 1, 1}},
      {"BitwiseXor", {2, 2, 1, 1}},
      {"Cast", {1, 1, 1, 1}},
      {"CastLike", {2, 2, 1, 1}},
      {"CenterCropPad", {2, 2, 1, 1}},
      {"Col2Im", {3, 3, 1, 1}},
      {"Constant", {0, 0, 1, 1}},
      {"ConstantOfShape", {1, 1, 1, 1}},
      {"DeformConv", {3, 5, 1, 1}},
      {"Equal", {2, 2, 1, 1}},
      {"Flatten", {1, 1, 1, 1}},
      {"Gelu", {1, 1, 1, 1}},
      {"GroupNormalization", {3, 3, 1, 1}},
      {"Identity", {1, 1, 1, 1}},
      {"IsInf", {1, 1, 1, 1}},
      {"LpPool", {1, 1, 1, 1}},
      {"IsNaN", {1, 1, 1, 1}},
      {"Mish", {1, 1, 1, 1}},
      {"Pad", {2, 4, 1, 1}},
      {"ReduceL1", {1, 2, 1, 1}},
      {"ReduceL2", {1, 2, 1, 1}},
      {"ReduceLogSum", {1, 2, 1, 1}},
      {"ReduceLogSumExp", {1, 2, 1, 1}},
      {"ReduceMax", {1, 2, 1, 1}},
      {"ReduceMean", {1, 2, 1, 1}},
      {"ReduceMin", {1, 2, 1, 1}},
      {"ReduceProd", {1, 2, 1, 1}},
      {"ReduceSumSquare", {1, 2, 1, 1}},
      {"Reshape", {2, 2, 1, 1}},
      {"Resize", {1, 4, 1, 1}},
      {"Shape", {1, 1, 1, 1}},
      {"Size", {1, 1, 1, 1}},
      {"Split", {1, 2, 1, 1 << 30}},
      {"Squeeze", {1, 2, 1, 1}},
      {"Transpose", {1, 1, 1, 1}},
      {"Unsqueeze", {2, 2, 1, 1}}};
  auto it = table.find(op);
  if (it == table.end())
    return false;
  arity = it->second;
  return true;
}

/// The input and output counts of the nodes libonnx's checker skips
/// (newerArity), as one line naming the node.
bool checkNewerArity(const ::onnx::ModelProto &proto, int64_t opset, std::string &error) {
  return forEachNode(
      proto.graph(), "", [&](const std::string &path, int index, const ::onnx::NodeProto &node) {
        std::array<int, 4> a;
        if (!isDefaultDomain(node.domain()) || !newerThanLibonnx(node.op_type(), opset) ||
            !newerArity(node.op_type(), a))
          return true;
        auto range = [](int lo, int hi) {
          return hi == lo ? std::to_string(lo)
                          : std::to_string(lo) +
                                (hi >= (1 << 30) ? " or more" : " to " + std::to_string(hi));
        };
        if (node.input_size() < a[0] || node.input_size() > a[1])
          error = nodeLabel(path, index, node) + " (opset " + std::to_string(opset) + ") takes " +
                  range(a[0], a[1]) + " inputs; it has " + std::to_string(node.input_size());
        else if (node.output_size() < a[2] || node.output_size() > a[3])
          error = nodeLabel(path, index, node) + " (opset " + std::to_string(opset) + ") has " +
                  range(a[2], a[3]) + " outputs; it has " + std::to_string(node.output_size());
        return error.empty();
      });
}

/// After check_graph threw `what`: the first node of `graph` (top level)
/// that check_node refuses with the message `what` begins with, as "node #K OP
/// \"NAME\"", or "" when none does (the graph's own fields were refused).
/// libonnx's messages name a node by its often empty name only ("Node ()
/// has input size 1").
std::string refusedNode(const ::onnx::GraphProto &graph, const ::onnx::checker::CheckerContext &ctx,
                        const std::string &what) {
  ::onnx::checker::LexicalScopeContext lex;
  for (const auto &value : graph.input())
    lex.add(value.name());
  for (const auto &tensor : graph.initializer())
    lex.add(tensor.name());
  for (int k = 0; k < graph.node_size(); ++k) {
    const auto &node = graph.node(k);
    try {
      ::onnx::checker::check_node(node, ctx, lex);
    } catch (const std::exception &e) {
      // check_graph adds context after the node's own message.
      if (what.rfind(e.what(), 0) != 0)
        return ""; // another node's or the graph's problem comes first
      return "node #" + std::to_string(k) + " " + node.op_type() +
             (node.name().empty() ? "" : " \"" + quoteInput(node.name(), 80) + "\"");
    }
    for (const auto &output : node.output())
      if (!output.empty())
        lex.add(output);
  }
  return "";
}

/// libonnx's checker on the graph (check_graph up to opset kLibonnxOpset,
/// checkNewerGraph above). The checker looks for external-data files in
/// the model's folder (Kiln then reads them itself in convertTensor).
bool runChecker(const ::onnx::ModelProto &proto, const std::string &directory, int64_t opset,
                std::string &error) {
  try {
    ::onnx::checker::CheckerContext ctx;
    ctx.set_model_dir(directory.empty() ? std::string(".") : directory);
    // libonnx 1.12 refuses IR versions above its own 8; IR 9 and 10 add
    // no field that Kiln reads (float8/int4 types are refused as types).
    ctx.set_ir_version(int(std::min<int64_t>(proto.ir_version(), kLibonnxIrVersion)));
    std::unordered_map<std::string, int> opsets;
    for (const auto &entry : proto.opset_import())
      opsets[entry.domain()] = int(entry.version());
    ctx.set_opset_imports(opsets);
    ctx.set_schema_registry(::onnx::OpSchemaRegistry::Instance());
    if (opset <= kLibonnxOpset) {
      ::onnx::checker::LexicalScopeContext lex;
      try {
        ::onnx::checker::check_graph(proto.graph(), ctx, lex);
      } catch (const std::exception &e) {
        std::string node = refusedNode(proto.graph(), ctx, e.what());
        error = "the ONNX checker refuses " + (node.empty() ? std::string("the model") : node) +
                ": " + checkerMessage(e.what());
        return false;
      }
    } else {
      if (!checkNewerArity(proto, opset, error))
        return false;
      checkNewerGraph(proto.graph(), ctx, opset, nullptr);
    }
  } catch (const std::exception &e) {
    error = "the ONNX checker refuses the model: " + checkerMessage(e.what());
    return false;
  }
  return true;
}

/// Shape-inference guards: checks that libonnx 1.12's inference function
/// of an operator lacks, run just before it with the same context. They
/// throw InferenceError (as fail_shape_inference does), which InferShapes records
/// and passes over like its own errors; the importer then names the node.
using InferenceGuard = void (*)(::onnx::InferenceContext &);

/// LayerNormalization (opset 17): 1.12 writes the Mean/InvStdDev shapes at
/// dimension `axis` without checking it lies in [-rank, rank-1] (a rank-0 X
/// or axis=7 on a rank-2 X is a SEGV in libonnx, onnx_import fuzzer).
void guardLayerNormalization(::onnx::InferenceContext &ctx) {
  if (ctx.getNumInputs() < 1 || !::onnx::hasInputShape(ctx, 0))
    return;
  int64_t rank = ctx.getInputType(0)->tensor_type().shape().dim_size();
  const auto *attr = ctx.getAttribute("axis");
  int64_t axis = attr ? attr->i() : -1;
  if (rank < 1 || axis < -rank || axis >= rank)
    throw ::onnx::InferenceError(::onnx::MakeString(
        "[ShapeInferenceError] axis ", axis, " is outside the rank-", rank, " input"));
}

/// Windowed operators (Conv, ConvTranspose, ConvInteger, QLinearConv and
/// the pools): 1.12's convPoolShapeInference and convTransposeShapeInference
/// index the weight's dimensions and the INTS attributes by the input's
/// spatial rank unchecked (a rank-2 ConvTranspose weight under a rank-4 X is
/// a SEGV, onnx_import fuzzer). Required here: an input of rank 3 or more,
/// a weight of the input's rank, kernel_shape / strides / dilations /
/// output_padding with one value per spatial dimension, pads with two, and
/// output_shape with one per spatial dimension (or per dimension).
void guardWindowOp(::onnx::InferenceContext &ctx, int weightInput) {
  if (ctx.getNumInputs() < 1 || !::onnx::hasInputShape(ctx, 0))
    return;
  const int64_t rank = ctx.getInputType(0)->tensor_type().shape().dim_size();
  if (rank < 3)
    throw ::onnx::InferenceError(::onnx::MakeString(
        "[ShapeInferenceError] input 0 has rank ", rank, "; windowed operators take rank 3 or more"));
  const int64_t spatial = rank - 2;
  if (weightInput >= 0 && int64_t(ctx.getNumInputs()) > weightInput &&
      ::onnx::hasInputShape(ctx, weightInput)) {
    int64_t weightRank = ctx.getInputType(weightInput)->tensor_type().shape().dim_size();
    if (weightRank != rank)
      throw ::onnx::InferenceError(::onnx::MakeString(
          "[ShapeInferenceError] the weight (input ", weightInput, ") has rank ", weightRank,
          "; the rank-", rank, " input needs a weight of rank ", rank));
  }
  auto expect = [&](const char *name, std::initializer_list<int64_t> sizes) {
    const auto *attr = ctx.getAttribute(name);
    if (!attr)
      return;
    int64_t n = attr->ints_size();
    for (int64_t want : sizes)
      if (n == want)
        return;
    throw ::onnx::InferenceError(::onnx::MakeString(
        "[ShapeInferenceError] attribute ", name, " has ", n, " values; the ", spatial,
        "-D input needs ", *sizes.begin()));
  };
  expect("kernel_shape", {spatial});
  expect("strides", {spatial});
  expect("dilations", {spatial});
  expect("output_padding", {spatial});
  expect("pads", {2 * spatial});
  expect("output_shape", {spatial, rank});
}

InferenceGuard inferenceGuard(const std::string &opType) {
  if (opType == "LayerNormalization")
    return guardLayerNormalization;
  if (opType == "Conv" || opType == "ConvTranspose" || opType == "ConvInteger")
    return [](::onnx::InferenceContext &ctx) { guardWindowOp(ctx, 1); };
  if (opType == "QLinearConv")
    return [](::onnx::InferenceContext &ctx) { guardWindowOp(ctx, 3); };
  if (opType == "MaxPool" || opType == "AveragePool" || opType == "LpPool")
    return [](::onnx::InferenceContext &ctx) { guardWindowOp(ctx, -1); };
  return nullptr;
}

/// libonnx's schema registry, except that operators with an inference
/// guard get a copy of their schema whose inference function runs the
/// guard first. Copies are made once per schema and kept for the process.
class GuardedSchemaRegistry final : public ::onnx::ISchemaRegistry {
public:
  const ::onnx::OpSchema *GetSchema(const std::string &key, const int maxInclusiveVersion,
                                    const std::string &domain) const override {
    // An operator whose version in force is newer than libonnx's has no
    // schema here: its older schema's inference would write wrong shapes
    // (ReduceMean-13 reduces every axis when opset 18 gives them as input 1).
    if (isDefaultDomain(domain) && newerThanLibonnx(key, maxInclusiveVersion))
      return nullptr;
    const ::onnx::OpSchema *schema =
        ::onnx::OpSchemaRegistry::Instance()->GetSchema(key, maxInclusiveVersion, domain);
    InferenceGuard guard = inferenceGuard(key);
    if (!schema || !guard || !schema->has_type_and_shape_inference_function())
      return schema;
    std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<::onnx::OpSchema> &copy = guarded[schema];
    if (!copy) {
      copy = std::make_unique<::onnx::OpSchema>(*schema);
      ::onnx::InferenceFunction original = schema->GetTypeAndShapeInferenceFunction();
      copy->TypeAndShapeInferenceFunction([guard, original](::onnx::InferenceContext &ctx) {
        guard(ctx);
        original(ctx);
      });
    }
    return copy.get();
  }

  static const GuardedSchemaRegistry &instance() {
    static const GuardedSchemaRegistry registry;
    return registry;
  }

private:
  mutable std::mutex mutex;
  mutable std::map<const ::onnx::OpSchema *, std::unique_ptr<::onnx::OpSchema>> guarded;
};

/// libonnx's shape inference through GuardedSchemaRegistry, which first
/// checks what the unhardened inference functions read. A failure is
/// ignored: the importer computes every shape itself and names the node
/// whose shape it cannot determine.
void inferShapes(::onnx::ModelProto &proto) {
  try {
    ::onnx::ShapeInferenceOptions options(/*check_type=*/false, /*error_mode=*/0,
                                          /*data_prop=*/true);
    ::onnx::shape_inference::InferShapes(proto, &GuardedSchemaRegistry::instance(), options);
  } catch (const std::exception &) {
  }
}

/// Sets the fixed inputs' dimensions in the graph's input types (the fixes
/// are checked by kiln::checkShapeFixes before import).
void applyShapes(::onnx::ModelProto &proto, const std::vector<InputShape> &shapes) {
  std::set<std::string> initializerNames;
  for (const auto &init : proto.graph().initializer())
    initializerNames.insert(init.name());
  std::vector<::onnx::ValueInfoProto *> inputs;
  for (auto &input : *proto.mutable_graph()->mutable_input())
    if (!initializerNames.count(input.name()))
      inputs.push_back(&input);
  for (const InputShape &fix : shapes) {
    ::onnx::ValueInfoProto *target = nullptr;
    for (auto *input : inputs)
      if (input->name() == fix.input)
        target = input;
    if (!target && !fix.input.empty() &&
        fix.input.find_first_not_of("0123456789") == std::string::npos) {
      size_t index = std::strtoul(fix.input.c_str(), nullptr, 10);
      if (index < inputs.size())
        target = inputs[index];
    }
    if (!target)
      continue;
    auto *shape = target->mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t d : fix.shape)
      shape->add_dim()->set_dim_value(d);
  }
}

/// Makes each fixed input an initializer holding its value (see
/// readONNXModel); the values were checked against the inputs by
/// kiln::checkValueFixes.
void applyValues(::onnx::ModelProto &proto, const std::vector<Tensor> &values) {
  ::onnx::GraphProto &graph = *proto.mutable_graph();
  for (const Tensor &value : values) {
    ::onnx::TensorProto &init = *graph.add_initializer();
    init.set_name(value.name);
    init.set_data_type(value.dataType);
    for (int64_t d : value.dims)
      init.add_dims(d);
    switch (value.dataType) {
    case kFloat:
      for (float f : value.floats)
        init.add_float_data(f);
      break;
    case kInt64:
      for (int64_t v : value.ints)
        init.add_int64_data(v);
      break;
    case kUInt32:
    case kUInt64:
      for (int64_t v : value.ints)
        init.add_uint64_data(uint64_t(v));
      break;
    default: // int8, uint8, int16, uint16, int32, bool: int32_data
      for (int64_t v : value.ints)
        init.add_int32_data(int32_t(v));
      break;
    }
    auto *inputs = graph.mutable_input();
    for (int k = 0; k < inputs->size(); ++k) {
      if (inputs->Get(k).name() != value.name)
        continue;
      if (proto.ir_version() >= 4) {
        inputs->DeleteSubrange(k, 1);
      } else {
        auto *shape = inputs->Mutable(k)->mutable_type()->mutable_tensor_type()->mutable_shape();
        shape->clear_dim();
        for (int64_t d : value.dims)
          shape->add_dim()->set_dim_value(d);
      }
      break;
    }
  }
}

bool convertGraph(const ::onnx::ModelProto &proto, const std::string &directory, Model &model,
                  std::string &error) {
  const ::onnx::GraphProto &graph = proto.graph();
  model.irVersion = proto.ir_version();
  model.producer = proto.producer_name() +
                   (proto.producer_version().empty() ? "" : " " + proto.producer_version());
  for (const auto &init : graph.initializer()) {
    Tensor tensor;
    if (!convertTensor(init, directory, tensor, error))
      return false;
    model.initializers[init.name()] = std::move(tensor);
  }
  for (const auto &input : graph.input()) {
    ValueInfo info = convertValueInfo(input);
    model.values[info.name] = info;
    if (!model.initializers.count(input.name()))
      model.inputs.push_back(info);
  }
  for (const auto &output : graph.output()) {
    ValueInfo info = convertValueInfo(output);
    model.values[info.name] = info;
    model.outputs.push_back(info);
  }
  for (const auto &value : graph.value_info())
    model.values[value.name()] = convertValueInfo(value);
  return convertNodes(graph, directory, model.nodes, error);
}

/// GraphProto.node -> Node, subgraphs included (convertAttribute).
bool convertNodes(const ::onnx::GraphProto &graph, const std::string &directory,
                  std::vector<Node> &nodes, std::string &error) {
  int index = 0;
  for (const auto &proto : graph.node()) {
    Node node;
    node.index = index++;
    node.name = proto.name();
    node.opType = proto.op_type();
    node.domain = proto.domain();
    node.inputs.assign(proto.input().begin(), proto.input().end());
    node.outputs.assign(proto.output().begin(), proto.output().end());
    for (const auto &attr : proto.attribute()) {
      Attribute a;
      if (!convertAttribute(attr, directory, a, error)) {
        error = "node #" + std::to_string(node.index) + " " + node.opType + ": " + error;
        return false;
      }
      node.attributes.push_back(std::move(a));
    }
    nodes.push_back(std::move(node));
  }
  return true;
}

} // namespace

std::optional<Model> readONNXModel(const uint8_t *data, size_t size, const std::string &directory,
                                   const std::vector<InputShape> &shapes, std::string &error,
                                   const std::vector<Tensor> &values) {
  try {
    ::onnx::ModelProto proto;
    if (size > size_t(std::numeric_limits<int>::max()) ||
        !proto.ParseFromArray(data, int(size))) {
      error = "not a valid ONNX model (the protobuf ModelProto does not parse: the file "
              "is truncated, garbled or of another format)";
      return std::nullopt;
    }
    if (!proto.has_graph() || (proto.graph().node_size() == 0 && proto.graph().output_size() == 0)) {
      error = "not a valid ONNX model (no graph: the file is empty or of another format)";
      return std::nullopt;
    }
    Model model;
    if (!checkNames(proto, error) || !checkVersions(proto, model.opset, error))
      return std::nullopt;
    if (!checkWindowAttributes(proto, error))
      return std::nullopt;
    applyShapes(proto, shapes);
    applyValues(proto, values);
    if (!runChecker(proto, directory, model.opset, error))
      return std::nullopt;
    if (model.opset < kMinOpset) {
      if (!checkOutputsDefined(proto.graph(), "", {}, error))
        return std::nullopt;
      // The converter's adapters read operand shapes (Add's legacy
      // broadcast needs both): pytorch-converted test_Softsign's constant
      // operand has none until inference runs.
      inferShapes(proto);
      if (!upgradeOpset(proto, model.opset, error))
        return std::nullopt;
    }
    inferShapes(proto);
    if (!convertGraph(proto, directory, model, error))
      return std::nullopt;
    return model;
  } catch (const std::exception &e) {
    error = std::string("cannot read the ONNX model: ") + e.what();
    return std::nullopt;
  }
}

std::vector<std::string> externalDataLocations(const uint8_t *data, size_t size) {
  std::vector<std::string> locations;
  try {
    ::onnx::ModelProto proto;
    if (size > size_t(std::numeric_limits<int>::max()) || !proto.ParseFromArray(data, int(size)))
      return locations;
    for (const auto &tensor : proto.graph().initializer())
      if (tensor.data_location() == ::onnx::TensorProto::EXTERNAL)
        for (const auto &entry : tensor.external_data())
          if (entry.key() == "location" &&
              std::find(locations.begin(), locations.end(), entry.value()) == locations.end())
            locations.push_back(entry.value());
  } catch (const std::exception &) {
  }
  return locations;
}

std::optional<Tensor> readTensorProto(const uint8_t *data, size_t size, std::string &error) {
  try {
    ::onnx::TensorProto proto;
    if (size > size_t(std::numeric_limits<int>::max()) || !proto.ParseFromArray(data, int(size))) {
      error = "not a serialized ONNX TensorProto";
      return std::nullopt;
    }
    Tensor tensor;
    if (!convertTensor(proto, "", tensor, error))
      return std::nullopt;
    return tensor;
  } catch (const std::exception &e) {
    error = std::string("cannot read the tensor: ") + e.what();
    return std::nullopt;
  }
}

} // namespace kiln::onnx
