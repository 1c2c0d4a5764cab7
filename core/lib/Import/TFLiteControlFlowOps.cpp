//===- TFLiteControlFlowOps.cpp - IF, WHILE, CALL_ONCE; import-time folding -===//
//
// Kiln's artifacts are straight-line command lists, so TFLite's control flow
// is resolved while importing, as the ONNX importer resolves If and Loop
// (ONNXImporter.cpp, "Control flow"):
//   - IF whose condition is known at import (a constant, a folded SHAPE,
//     integer arithmetic on them: foldKnownOperator) is replaced by the
//     taken branch's operators, converted in place
//     (ModelImporter::inlineSubgraph). A condition computed at run time
//     converts both branches and selects each output with tosa.select
//     where the branches' outputs agree in type and shape: both branches
//     run on every invocation and the schedule stays static.
//   - WHILE is unrolled: the condition subgraph is converted with the loop
//     variables and must fold to a known bool at every iteration; while it
//     is true, the body is converted and its outputs become the next
//     iteration's variables. A condition that depends on input data is
//     refused (a static schedule cannot loop on data), as is a loop past
//     1024 iterations or 512 operations.
//   - CALL_ONCE converts its initialization subgraph in place. It takes and
//     gives no tensors; the constants its ASSIGN_VARIABLEs store become the
//     variables' initial values (TFLiteStateOps.cpp), and nothing else it
//     computes is observable, so it adds no dispatch.
//
// Semantics: TFLite's kernels tensorflow/lite/kernels/if.cc, while.cc and
// call_once.cc (one bool condition; WHILE's condition gets the loop
// variables, its body returns them; a subgraph's inputs take the operands
// in order).
//
//===----------------------------------------------------------------------===//
#include "TFLiteModelImporter.h"

using namespace mlir;

namespace kiln::tfl {
namespace {

/// The most iterations a WHILE is unrolled to (as ONNX Loop's kMaxUnroll).
constexpr int64_t kMaxUnroll = 1024;
/// The most operations (constants not counted) an unrolled WHILE may add:
/// later phases grow with the square of the kernel count (see
/// ONNXImporter.cpp's kMaxUnrolledOps).
constexpr size_t kMaxUnrolledOps = 512;
/// The most elements foldKnownOperator computes at import.
constexpr size_t kMaxFoldElements = 64;

using Known = std::vector<std::optional<std::vector<int64_t>>>;

/// Input values `first`.. of the operator and what is known of each.
FailureOr<std::vector<Value>> operandsFrom(OpContext &ctx, int first, Known &known) {
  std::vector<Value> out;
  for (int i = first; i < ctx.numInputs(); ++i) {
    auto v = ctx.input(i);
    if (failed(v))
      return failure();
    out.push_back(*v);
    known.push_back(ctx.knownInts(i));
  }
  return out;
}

/// "operator #3 (WHILE)", inside an enclosing call "... in IF#0 then".
std::string nodeName(OpContext &ctx) {
  const ModelImporter &m = ctx.owner();
  std::string node = "operator #" + std::to_string(ctx.index()) + " (" + ctx.name() + ")";
  return m.call.text.empty() ? node : node + " in " + m.call.text;
}

/// Converts subgraph `index` as the operator's `role` ("then", "body
/// (iteration 2)"); an error names the operator, the role and the subgraph.
FailureOr<std::vector<Value>> callSubgraph(OpContext &ctx, int index, const std::string &role,
                                           ArrayRef<Value> args, const Known &known,
                                           Known &knownOut) {
  ModelImporter &m = ctx.owner();
  ModelImporter::CallSite site;
  site.text = std::string(ctx.name()) + "#" + std::to_string(ctx.index()) + " " + role;
  if (!m.call.text.empty())
    site.text += " in " + m.call.text;
  site.index = m.call.text.empty() ? ctx.index() : m.call.index;
  site.depth = m.call.depth + 1;
  auto outs = m.inlineSubgraph(index, args, known, knownOut, site);
  if (outs)
    return std::move(*outs);
  std::string message = llvm::toString(outs.takeError());
  // Runaway nesting is said once, by the outermost operator, not once per
  // level.
  if (message.find(" nested calls (") != std::string::npos) {
    m.error = m.call.text.empty() ? nodeName(ctx) + ": " + message : message;
    return failure();
  }
  if (index <= 0 || index >= static_cast<int>(m.model->subgraphs()->size()))
    return ctx.fail("its " + role + " is " + message);
  return ctx.fail("in its " + role + " (" + m.subgraphName(index) + "): " + message);
}

/// Binds output `k` to `value`, as a known constant where `known` is.
LogicalResult bindOutput(OpContext &ctx, int k, Value value,
                         const std::optional<std::vector<int64_t>> &known) {
  return known ? ctx.setKnownOutput(k, *known) : ctx.setOutput(k, value);
}

void decide(OpContext &ctx, size_t at, std::string decision, std::string reason) {
  auto &list = ctx.owner().controlFlow;
  list.insert(
      list.begin() + std::min(at, list.size()),
      ControlFlowDecision{nodeName(ctx), ctx.name(), std::move(decision), std::move(reason)});
}

/// Operations added to `block` after its first `before`, constants aside.
size_t addedOps(Block *block, size_t before) {
  size_t n = 0, i = 0;
  for (Operation &op : *block)
    if (i++ >= before && !isa<tosa::ConstOp>(op))
      ++n;
  return n;
}

/// After both branches of a run-time IF: each state variable a branch
/// assigned (TFLiteStateOps.cpp) takes select(cond, then value, else value),
/// a branch that left it alone giving the value before the IF (`before`,
/// or the invocation's starting value). `afterThen` holds the values the
/// then branch left; the else branch's are the variables' current values.
LogicalResult selectBranchState(OpContext &ctx, Value cond, const std::vector<Value> &before,
                                const std::vector<Value> &afterThen) {
  ModelImporter &m = ctx.owner();
  for (size_t i = 0; i < m.state.size(); ++i) {
    Value start = i < before.size() ? before[i] : Value();
    Value thenValue = i < afterThen.size() ? afterThen[i] : start;
    Value elseValue = m.state[i].current;
    if (thenValue == elseValue)
      continue;
    if (!start && (!thenValue || !elseValue)) {
      m.state[i].current = Value();
      start = m.readState(i); // the invocation's starting value
    }
    thenValue = thenValue ? thenValue : start;
    elseValue = elseValue ? elseValue : start;
    auto type = thenValue.getType().cast<RankedTensorType>();
    if (type != elseValue.getType())
      return ctx.fail("its branches assign variable '" + m.state[i].name +
                      "' values of different types");
    Value c = ctx.reshape(cond, llvm::SmallVector<int64_t>(type.getRank(), 1));
    m.state[i].current = ctx.create<tosa::SelectOp>(type, c, thenValue, elseValue);
  }
  return success();
}

LogicalResult convertIf(OpContext &ctx) {
  const auto *o = ctx.options<schema::IfOptions>();
  if (!o)
    return ctx.fail("has no IfOptions (then and else subgraphs)");
  if (ctx.numInputs() < 1)
    return ctx.fail("has no condition input");
  RankedTensorType condType = ctx.inputType(0);
  if (!condType)
    return failure();
  if (!condType.getElementType().isInteger(1) || !condType.hasStaticShape() ||
      condType.getNumElements() != 1)
    return ctx.fail(
        "the condition must be one bool (TFLite's IF takes a bool tensor of one element)");
  Known known;
  auto args = operandsFrom(ctx, 1, known);
  if (failed(args))
    return failure();
  ModelImporter &m = ctx.owner();
  size_t at = m.controlFlow.size();
  std::string thenName = m.subgraphName(o->then_subgraph_index());
  std::string elseName = m.subgraphName(o->else_subgraph_index());
  if (auto cond = ctx.knownInts(0)) {
    bool taken = (*cond)[0] != 0;
    Known outKnown;
    auto outs = callSubgraph(ctx, taken ? o->then_subgraph_index() : o->else_subgraph_index(),
                             taken ? "then branch" : "else branch", *args, known, outKnown);
    if (failed(outs))
      return failure();
    if (static_cast<int>(outs->size()) != ctx.numOutputs())
      return ctx.fail("its taken branch gives " + llvm::Twine(outs->size()) +
                      " outputs for the operator's " + llvm::Twine(ctx.numOutputs()));
    decide(ctx, at,
           taken ? "then branch taken (" + thenName + ")" : "else branch taken (" + elseName + ")",
           std::string("the condition is ") + (taken ? "true" : "false") +
               " when the model is compiled");
    for (int k = 0; k < ctx.numOutputs(); ++k)
      if (failed(bindOutput(ctx, k, (*outs)[k], outKnown[k])))
        return failure();
    return success();
  }
  // Computed at run time: both branches, one select per output (and per
  // state variable a branch assigns).
  Known thenKnown, elseKnown;
  std::vector<Value> stateBefore;
  for (const ModelImporter::StateVariable &v : m.state)
    stateBefore.push_back(v.current);
  auto thenOuts =
      callSubgraph(ctx, o->then_subgraph_index(), "then branch", *args, known, thenKnown);
  if (failed(thenOuts))
    return failure();
  std::vector<Value> stateAfterThen;
  for (size_t i = 0; i < m.state.size(); ++i) {
    stateAfterThen.push_back(m.state[i].current);
    m.state[i].current = i < stateBefore.size() ? stateBefore[i] : Value();
  }
  auto elseOuts =
      callSubgraph(ctx, o->else_subgraph_index(), "else branch", *args, known, elseKnown);
  if (failed(elseOuts))
    return failure();
  if (static_cast<int>(thenOuts->size()) != ctx.numOutputs() ||
      static_cast<int>(elseOuts->size()) != ctx.numOutputs())
    return ctx.fail("its branches give " + llvm::Twine(thenOuts->size()) + " and " +
                    llvm::Twine(elseOuts->size()) + " outputs for the operator's " +
                    llvm::Twine(ctx.numOutputs()));
  auto cond = ctx.input(0);
  if (failed(cond))
    return failure();
  for (int k = 0; k < ctx.numOutputs(); ++k) {
    Value a = (*thenOuts)[k], b = (*elseOuts)[k];
    if (a.getType() != b.getType())
      return ctx.fail(
          "its condition is computed at run time and its branches give output " + llvm::Twine(k) +
          " different types or shapes (" +
          shapeString(a.getType().cast<RankedTensorType>().getShape()) + " and " +
          shapeString(b.getType().cast<RankedTensorType>().getShape()) +
          "); Kiln selects between the branches at run time only where they agree (a static "
          "schedule cannot branch on data)");
    auto type = a.getType().cast<RankedTensorType>();
    Value c = ctx.reshape(*cond, llvm::SmallVector<int64_t>(type.getRank(), 1));
    if (failed(ctx.setOutput(k, ctx.create<tosa::SelectOp>(type, c, a, b))))
      return failure();
  }
  if (failed(selectBranchState(ctx, *cond, stateBefore, stateAfterThen)))
    return failure();
  decide(ctx, at, "both branches, selected at run time",
         "the condition is computed at run time; the branches (" + thenName + ", " + elseName +
             ") give outputs of one type and shape, so both run and each output is selected");
  return success();
}

LogicalResult convertWhile(OpContext &ctx) {
  const auto *o = ctx.options<schema::WhileOptions>();
  if (!o)
    return ctx.fail("has no WhileOptions (condition and body subgraphs)");
  Known known;
  auto vars = operandsFrom(ctx, 0, known);
  if (failed(vars))
    return failure();
  if (static_cast<int>(vars->size()) != ctx.numOutputs())
    return ctx.fail("has " + llvm::Twine(vars->size()) + " loop variables but " +
                    llvm::Twine(ctx.numOutputs()) +
                    " outputs; WHILE gives each variable's final value");
  ModelImporter &m = ctx.owner();
  size_t at = m.controlFlow.size();
  std::string condName = m.subgraphName(o->cond_subgraph_index());
  Block *block = ctx.builder().getInsertionBlock();
  const size_t before = block->getOperations().size();
  int64_t ran = 0;
  for (;; ++ran) {
    std::string iteration = " (iteration " + std::to_string(ran) + ")";
    Known condKnown;
    auto cond = callSubgraph(ctx, o->cond_subgraph_index(), "condition" + iteration, *vars, known,
                             condKnown);
    if (failed(cond))
      return failure();
    if (cond->size() != 1)
      return ctx.fail("its condition (" + condName + ") gives " + llvm::Twine(cond->size()) +
                      " outputs; a WHILE condition gives one bool");
    if (auto type = (*cond)[0].getType().cast<RankedTensorType>();
        !type.getElementType().isInteger(1))
      return ctx.fail("its condition (" + condName + ") gives " +
                      (type.getElementType().isInteger(32) ? std::string("an int32")
                                                           : std::string("a non-bool")) +
                      " tensor; a WHILE condition gives one bool (TFLite's while.cc requires it)");
    if (!condKnown[0])
      return ctx.fail(
          "its condition (" + condName + ") depends on input data at iteration " +
          llvm::Twine(ran) +
          "; a static schedule cannot loop on data: Kiln unrolls a WHILE whose condition it "
          "computes from constants and fixed shapes (a loop counter, a SHAPE)");
    if (condKnown[0]->size() != 1)
      return ctx.fail("its condition (" + condName + ") gives " +
                      llvm::Twine(condKnown[0]->size()) +
                      " elements; a WHILE condition gives one bool");
    if ((*condKnown[0])[0] == 0)
      break;
    // Another iteration: within the limits?
    if (ran == kMaxUnroll)
      return ctx.fail("the loop runs past the " + llvm::Twine(kMaxUnroll) +
                      " iterations Kiln unrolls a WHILE to");
    if (size_t added = addedOps(block, before); added > kMaxUnrolledOps)
      return ctx.fail("unrolled, the loop passes " + llvm::Twine(kMaxUnrolledOps) +
                      " operations after " + llvm::Twine(ran) +
                      " iterations, the most Kiln adds for one WHILE (compile time grows with "
                      "the square of the kernel count)");
    Known bodyKnown;
    auto next =
        callSubgraph(ctx, o->body_subgraph_index(), "body" + iteration, *vars, known, bodyKnown);
    if (failed(next))
      return failure();
    if (next->size() != vars->size())
      return ctx.fail("its body (" + m.subgraphName(o->body_subgraph_index()) + ") gives " +
                      llvm::Twine(next->size()) + " outputs for " + llvm::Twine(vars->size()) +
                      " loop variables");
    for (size_t k = 0; k < vars->size(); ++k)
      if ((*next)[k].getType() != (*vars)[k].getType())
        return ctx.fail(
            "its body changes loop variable " + llvm::Twine(k) + " from " +
            shapeString((*vars)[k].getType().cast<RankedTensorType>().getShape()) + " to " +
            shapeString((*next)[k].getType().cast<RankedTensorType>().getShape()) +
            " (or its element type); Kiln unrolls loops whose variables keep their types");
    *vars = std::move(*next);
    known = std::move(bodyKnown);
  }
  decide(ctx, at, "unrolled " + std::to_string(ran) + (ran == 1 ? " iteration" : " iterations"),
         "the condition (" + condName + ") is known at every iteration when the model is compiled");
  for (int k = 0; k < ctx.numOutputs(); ++k)
    if (failed(bindOutput(ctx, k, (*vars)[k], known[k])))
      return failure();
  return success();
}

LogicalResult convertCallOnce(OpContext &ctx) {
  const auto *o = ctx.options<schema::CallOnceOptions>();
  if (!o)
    return ctx.fail("has no CallOnceOptions (the initialization subgraph)");
  if (ctx.numInputs() != 0 || ctx.numOutputs() != 0)
    return ctx.fail("takes " + llvm::Twine(ctx.numInputs()) + " inputs and gives " +
                    llvm::Twine(ctx.numOutputs()) + " outputs; CALL_ONCE takes and gives none");
  ModelImporter &m = ctx.owner();
  size_t at = m.controlFlow.size();
  Known knownOut;
  // Its ASSIGN_VARIABLEs give the variables their initial values
  // (TFLiteStateOps.cpp); nothing else it computes is observable.
  bool outer = m.initializing;
  m.initializing = true;
  auto outs = callSubgraph(ctx, o->init_subgraph_index(), "initialization", {}, {}, knownOut);
  m.initializing = outer;
  if (failed(outs))
    return failure();
  decide(ctx, at,
         "initialization converted in place (" + m.subgraphName(o->init_subgraph_index()) + ")",
         "TFLite runs it once before the first invocation; the values it assigns to variables are "
         "their initial values (set at load and by kiln_module_reset_state), and it gives no "
         "tensor the model reads, so it adds no dispatch");
  return success();
}

// --- Import-time folding of integer and bool operators ------------------------

/// The element of `v` at flat index `i` of a result of `count` elements:
/// `v` has `count` elements or one (a broadcast scalar).
int64_t at(const std::vector<int64_t> &v, size_t i) { return v.size() == 1 ? v[0] : v[i]; }

} // namespace

FailureOr<bool> foldKnownOperator(OpContext &ctx) {
  using B = BuiltinOperator;
  B code = ctx.code();
  bool binary = code == B::ADD || code == B::SUB || code == B::MUL || code == B::MAXIMUM ||
                code == B::MINIMUM || code == B::LESS || code == B::LESS_EQUAL ||
                code == B::GREATER || code == B::GREATER_EQUAL || code == B::EQUAL ||
                code == B::NOT_EQUAL || code == B::LOGICAL_AND || code == B::LOGICAL_OR;
  if ((!binary && code != B::LOGICAL_NOT) || ctx.numOutputs() != 1 ||
      ctx.numInputs() != (binary ? 2 : 1))
    return false;
  const schema::Tensor *out = ctx.outputTensor(0);
  if (!out || (out->type() != schema::TensorType::INT32 && out->type() != schema::TensorType::BOOL))
    return false;
  for (int i = 0; i < ctx.numInputs(); ++i)
    if (const schema::Tensor *t = ctx.inputTensor(i);
        !t || (t->type() != schema::TensorType::INT32 && t->type() != schema::TensorType::BOOL))
      return false;
  // A fused activation (ADD, SUB, MUL options) is left to the converters.
  if (const auto *add = ctx.options<schema::AddOptions>();
      add && add->fused_activation_function() != schema::ActivationFunctionType::NONE)
    return false;
  if (const auto *sub = ctx.options<schema::SubOptions>();
      sub && sub->fused_activation_function() != schema::ActivationFunctionType::NONE)
    return false;
  if (const auto *mul = ctx.options<schema::MulOptions>();
      mul && mul->fused_activation_function() != schema::ActivationFunctionType::NONE)
    return false;
  std::vector<std::vector<int64_t>> in;
  for (int i = 0; i < ctx.numInputs(); ++i) {
    auto known = ctx.knownInts(i);
    if (!known || known->empty() || known->size() > kMaxFoldElements)
      return false;
    in.push_back(std::move(*known));
  }
  // Same element counts, or one side a single element (the converters
  // check the shapes; anything else is theirs to convert or refuse).
  size_t count = in[0].size();
  if (binary) {
    count = std::max(in[0].size(), in[1].size());
    if ((in[0].size() != count && in[0].size() != 1) ||
        (in[1].size() != count && in[1].size() != 1))
      return false;
  }
  std::vector<int64_t> result(count);
  for (size_t i = 0; i < count; ++i) {
    int64_t a = at(in[0], i), b = binary ? at(in[1], i) : 0;
    int64_t r = 0;
    switch (code) {
    case B::ADD:
      r = int32_t(uint32_t(a) + uint32_t(b));
      break; // int32 wraps, as TFLite's kernel
    case B::SUB:
      r = int32_t(uint32_t(a) - uint32_t(b));
      break;
    case B::MUL:
      r = int32_t(uint32_t(a) * uint32_t(b));
      break;
    case B::MAXIMUM:
      r = std::max(a, b);
      break;
    case B::MINIMUM:
      r = std::min(a, b);
      break;
    case B::LESS:
      r = a < b;
      break;
    case B::LESS_EQUAL:
      r = a <= b;
      break;
    case B::GREATER:
      r = a > b;
      break;
    case B::GREATER_EQUAL:
      r = a >= b;
      break;
    case B::EQUAL:
      r = a == b;
      break;
    case B::NOT_EQUAL:
      r = a != b;
      break;
    case B::LOGICAL_AND:
      r = a && b;
      break;
    case B::LOGICAL_OR:
      r = a || b;
      break;
    case B::LOGICAL_NOT:
      r = !a;
      break;
    default:
      return false;
    }
    result[i] = r;
  }
  std::vector<int64_t> shape = ctx.outputShape(0);
  int64_t recorded = 1;
  for (int64_t d : shape)
    recorded *= d;
  if (recorded != static_cast<int64_t>(count))
    return false; // a broadcast to more elements: the converter's
  if (failed(ctx.setKnownOutput(0, result)))
    return failure();
  return true;
}

void registerControlFlowOps(ConverterTable &table) {
  table[BuiltinOperator::IF] = convertIf;
  table[BuiltinOperator::WHILE] = convertWhile;
  table[BuiltinOperator::CALL_ONCE] = convertCallOnce;
}

} // namespace kiln::tfl
