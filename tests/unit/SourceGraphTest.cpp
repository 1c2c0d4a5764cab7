//===- SourceGraphTest.cpp - kiln::readSourceGraph and the dispatch map ---===//
//
// The source graphs of two small models against values read independently:
//   - tests/data/ops/chain_conv_pad_maxpool_reshape_fc_softmax/model.tflite
//     as `flatc --json --strict-json --defaults-json core/schema/tflite.fbs
//     -- model.tflite` prints it (operators, builtin_options, tensor shapes,
//     buffer lengths);
//   - tests/data/onnx/source_graph/long_names.onnx as /usr/bin/python3's
//     onnx 1.12 reads it (onnx.load; helper.get_attribute_value;
//     numpy_helper.to_array(init).nbytes).
//
//===----------------------------------------------------------------------===//
#include "kiln/SourceGraph.h"
#include "kiln/Compiler.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

namespace {

const std::string kChain =
    KILN_TEST_DATA_DIR "/ops/chain_conv_pad_maxpool_reshape_fc_softmax/model.tflite";
const std::string kLongNames = KILN_TEST_DATA_DIR "/onnx/source_graph/long_names.onnx";

kiln::SourceGraph readOrFail(const std::string &path) {
  auto graph = kiln::readSourceGraph(path);
  if (!graph) {
    ADD_FAILURE() << llvm::toString(graph.takeError());
    return {};
  }
  return std::move(*graph);
}

std::string attribute(const kiln::SourceOperator &op, const std::string &name) {
  for (const kiln::SourceAttribute &a : op.attributes)
    if (a.name == name)
      return a.value;
  return "(missing)";
}

const kiln::SourceTensor *tensorNamed(const kiln::SourceGraph &g, const std::string &name) {
  for (const kiln::SourceTensor &t : g.tensors)
    if (t.name == name)
      return &t;
  return nullptr;
}

TEST(SourceGraph, TfliteOperatorsAttributesAndWeights) {
  kiln::SourceGraph g = readOrFail(kChain);
  EXPECT_EQ(g.format, "tflite");
  // flatc: six operators, 13 tensors, inputs [0], outputs [12].
  ASSERT_EQ(g.operators.size(), 6u);
  ASSERT_EQ(g.tensors.size(), 13u);
  const char *types[] = {"CONV_2D", "PAD", "MAX_POOL_2D", "RESHAPE", "FULLY_CONNECTED", "SOFTMAX"};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(g.operators[i].index, int64_t(i));
    EXPECT_EQ(g.operators[i].type, types[i]);
    EXPECT_EQ(g.operators[i].planName, types[i]);
  }
  EXPECT_EQ(g.inputs, std::vector<int>{0});
  EXPECT_EQ(g.outputs, std::vector<int>{12});
  // flatc --defaults-json: CONV_2D {padding: SAME, stride_w: 1, stride_h: 1,
  // fused_activation_function: RELU, dilation_w_factor: 1}; SAME is the
  // schema default (0), so it shows only with defaults written.
  const kiln::SourceOperator &conv = g.operators[0];
  EXPECT_EQ(attribute(conv, "padding"), "SAME");
  EXPECT_EQ(attribute(conv, "stride_w"), "1");
  EXPECT_EQ(attribute(conv, "fused_activation_function"), "RELU");
  EXPECT_EQ(attribute(conv, "dilation_h_factor"), "1");
  // MAX_POOL_2D {padding: VALID, stride_w: 2, filter_width: 2}.
  EXPECT_EQ(attribute(g.operators[2], "padding"), "VALID");
  EXPECT_EQ(attribute(g.operators[2], "stride_w"), "2");
  EXPECT_EQ(attribute(g.operators[2], "filter_height"), "2");
  // RESHAPE {new_shape: [1, -1]}.
  EXPECT_EQ(attribute(g.operators[3], "new_shape"), "[ 1, -1 ]");
  // CONV_2D inputs [0, 1, 2] -> [3]; tensor 1 "filter" [4, 3, 3, 3] with a
  // 432-byte buffer (4*3*3*3 float32), "bias" 16 bytes.
  EXPECT_EQ(conv.inputs, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(conv.outputs, std::vector<int>{3});
  EXPECT_EQ(conv.name, "conv_2d");
  const kiln::SourceTensor &filter = g.tensors[1];
  EXPECT_EQ(filter.name, "filter");
  EXPECT_TRUE(filter.isConstant);
  EXPECT_EQ(filter.bytes, 432);
  EXPECT_EQ(filter.shape, (std::vector<int64_t>{4, 3, 3, 3}));
  EXPECT_EQ(filter.elementType, "float32");
  EXPECT_EQ(filter.producer, -1);
  // "weights" [10, 100]: 4000 bytes; the activations have no data.
  ASSERT_NE(tensorNamed(g, "weights"), nullptr);
  EXPECT_EQ(tensorNamed(g, "weights")->bytes, 4000);
  EXPECT_FALSE(g.tensors[0].isConstant);
  EXPECT_EQ(g.tensors[0].bytes, 0);
  EXPECT_EQ(kiln::sourceShapeText(g.tensors[0]), "1x8x8x3");
  EXPECT_EQ(g.tensors[3].producer, 0);
  EXPECT_EQ(g.tensors[12].producer, 5);
  EXPECT_FALSE(g.tensors[3].quantization.has_value()); // a float model
}

TEST(SourceGraph, OnnxNodesAttributesAndInitializers) {
  kiln::SourceGraph g = readOrFail(kLongNames);
  EXPECT_EQ(g.format, "onnx");
  // onnx.load: 3 nodes Conv, Relu, Conv; node 0's attributes kernel_shape
  // [3, 3], pads [1, 1, 1, 1], strides [2, 2].
  ASSERT_EQ(g.operators.size(), 3u);
  EXPECT_EQ(g.operators[0].type, "Conv");
  EXPECT_EQ(g.operators[1].type, "Relu");
  EXPECT_EQ(g.operators[2].type, "Conv");
  EXPECT_EQ(g.operators[2].index, 2);
  EXPECT_EQ(g.operators[0].name, "/model/backbone/stage_3/block_2/depthwise_expand/Conv");
  EXPECT_EQ(g.operators[0].planName,
            "Conv \"/model/backbone/stage_3/block_2/depthwise_expand/Conv\"");
  EXPECT_EQ(attribute(g.operators[0], "strides"), "[2, 2]");
  EXPECT_EQ(attribute(g.operators[0], "pads"), "[1, 1, 1, 1]");
  EXPECT_EQ(attribute(g.operators[2], "kernel_shape"), "[1, 1]");
  // numpy_helper: w_expand 864 bytes [8, 3, 3, 3], b_expand 32, w_project 128.
  const kiln::SourceTensor *w = tensorNamed(g, "w_expand");
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(w->isConstant);
  EXPECT_EQ(w->bytes, 864);
  EXPECT_EQ(w->shape, (std::vector<int64_t>{8, 3, 3, 3}));
  EXPECT_EQ(tensorNamed(g, "b_expand")->bytes, 32);
  EXPECT_EQ(tensorNamed(g, "w_project")->bytes, 128);
  // Shape inference: a 3x3 stride-2 pad-1 Conv of 16x16 gives 8x8.
  const kiln::SourceTensor *expanded = tensorNamed(g, "expanded");
  ASSERT_NE(expanded, nullptr);
  EXPECT_EQ(kiln::sourceShapeText(*expanded), "1x8x8x8");
  EXPECT_FALSE(expanded->isConstant);
  EXPECT_EQ(expanded->producer, 0);
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.tensors[g.inputs[0]].name, "x");
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.tensors[g.outputs[0]].name, "y");
}

/// Every (dispatch, operator) pair of the plan is in both directions of the
/// map, nothing else is, and each operator the plan names exists in the
/// source graph under the same name.
void checkMap(const std::string &path) {
  auto plan = kiln::planModel(path, kiln::CompileOptions{});
  ASSERT_TRUE(bool(plan)) << llvm::toString(plan.takeError());
  kiln::SourceGraph g = readOrFail(path);
  kiln::SourceDispatchMap map = kiln::sourceDispatchMap(**plan);
  std::set<std::pair<int64_t, int64_t>> pairs, fromOps, fromDispatches;
  for (const kiln::Dispatch &d : (*plan)->dispatches)
    for (const kiln::SourceOp &op : d.ops) {
      pairs.insert({d.id, op.sourceIndex});
      const kiln::SourceOperator *s = g.findOperator(op.sourceIndex);
      ASSERT_NE(s, nullptr) << kiln::sourceOpText(op);
      EXPECT_EQ(s->planName, op.name);
    }
  for (const auto &[op, ds] : map.dispatchesOfOperator)
    for (int64_t d : ds)
      fromOps.insert({d, op});
  for (const auto &[d, ops] : map.operatorsOfDispatch)
    for (int64_t op : ops)
      fromDispatches.insert({d, op});
  EXPECT_EQ(fromOps, pairs);
  EXPECT_EQ(fromDispatches, pairs);
  EXPECT_TRUE(map.dispatchesOf(1000000).empty());
}

TEST(SourceGraph, DispatchMapTflite) {
  checkMap(kChain);
  // The SOFTMAX (#5) is split into several dispatches (maximum,
  // exponentials, sum, quotient: kiln/Plan.h, Dispatch::outputTensor).
  auto plan = kiln::planModel(kChain, kiln::CompileOptions{});
  ASSERT_TRUE(bool(plan));
  kiln::SourceDispatchMap map = kiln::sourceDispatchMap(**plan);
  EXPECT_GE(map.dispatchesOf(5).size(), 2u);
  EXPECT_FALSE(map.dispatchesOf(0).empty()); // the CONV_2D computes
}

TEST(SourceGraph, DispatchMapOnnx) { checkMap(kLongNames); }

TEST(SourceGraph, MlirIsAnEmptyGraphWithANote) {
  std::string path = KILN_TEST_DATA_DIR "/mlir";
  std::error_code ec;
  std::string file;
  for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec; it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".mlir")) {
      file = it->path();
      break;
    }
  ASSERT_FALSE(file.empty());
  kiln::SourceGraph g = readOrFail(file);
  EXPECT_EQ(g.format, "mlir");
  EXPECT_TRUE(g.operators.empty());
  EXPECT_NE(g.note.find("dispatch graph"), std::string::npos);
}

TEST(SourceGraph, UnreadableFilesAreOneError) {
  auto missing = kiln::readSourceGraph("/nonexistent/model.tflite");
  ASSERT_FALSE(bool(missing));
  std::string text = llvm::toString(missing.takeError());
  EXPECT_NE(text.find("/nonexistent/model.tflite: cannot read"), std::string::npos) << text;
  auto truncated = kiln::readSourceGraph(KILN_TEST_DATA_DIR "/bad/truncated.tflite");
  ASSERT_FALSE(bool(truncated));
  text = llvm::toString(truncated.takeError());
  EXPECT_NE(text.find("truncated.tflite: the TFLite flatbuffer is truncated or corrupted"),
            std::string::npos)
      << text;
  auto garbled = kiln::readSourceGraph(KILN_TEST_DATA_DIR "/onnx/garbled.onnx");
  ASSERT_FALSE(bool(garbled));
  text = llvm::toString(garbled.takeError());
  EXPECT_EQ(text.rfind("garbled.onnx: ", 0), 0u) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
}

} // namespace
