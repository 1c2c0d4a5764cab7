//===- ONNXNodeTitle.h - How Kiln names an ONNX node -----------*- C++ -*-===//
//
// One function shared by the ONNX importer (its locations, hence the plan's
// SourceOp names) and the source graph (SourceGraph::planName), so the two
// always name a node alike. Defined in SourceGraph.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CORE_IMPORT_ONNXNODETITLE_H
#define KILN_CORE_IMPORT_ONNXNODETITLE_H

#include <string>

namespace kiln::onnx {

struct Node;

/// `Conv "conv1"`: the node's op type and, when it has one, its name in
/// double quotes with control characters as spaces (messages are one
/// line); the importer's locations append "#<node index>".
std::string nodeTitle(const Node &node);

} // namespace kiln::onnx

#endif
