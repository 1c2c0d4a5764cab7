//===- TFLiteStateOps.cpp - State carried across invocations ---------------===//
//
// TFLite keeps two kinds of state from one Invoke() to the next, both reset
// by the interpreter's ResetVariableTensors / reset_all_variables:
//   - variable tensors (Tensor.is_variable in schema v3): the activation and
//     cell state of UNIDIRECTIONAL_SEQUENCE_LSTM, ..._RNN and SVDF, which
//     the operator reads and overwrites in place; initialized to 0 (an int8
//     tensor to its zero point), as TFLite's and TFLite Micro's
//     ResetVariableTensor do;
//   - resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE),
//     usually given their first value by a CALL_ONCE initializer.
// Kiln's schedule is one pure function of its arguments, so a variable is
// threaded through @main: its value at the start of an invocation is an
// argument marked kStateAttr and its value at the end a result of the same
// name. The plan keeps both in one persistent region of the arena that the
// memory planner never reuses (Schedule/BuildPlan.cpp), the runtime fills it
// with the initial values at the first invocation after load or
// kiln_module_reset_state.
//
//===----------------------------------------------------------------------===//
#include "TFLiteModelImporter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace kiln::tfl {

/// Until the schedule carries state (persistent arena, runtime reset), a
/// variable reads its initial value in every invocation and assignments
/// are dropped: right for one invocation after load.
static constexpr bool kCarryState = true;

size_t ModelImporter::declareState(const std::string &key, const std::string &name,
                                   DenseElementsAttr initial) {
  for (size_t id = 0; id < state.size(); ++id)
    if (state[id].key == key)
      return id;
  StateVariable var;
  var.key = key;
  var.name = name;
  var.initial = initial;
  state.push_back(std::move(var));
  return state.size() - 1;
}

Value ModelImporter::readState(size_t id) {
  StateVariable &var = state[id];
  if (var.current)
    return var.current;
  // No value yet in this invocation (or on this path of a run-time IF): the
  // value it started with, one argument however many paths read it.
  if (!var.argument) {
    Block &body = mainFunc.getBody().front();
    var.argument = body.addArgument(var.initial.getType(), mainFunc.getLoc());
  }
  var.current = var.argument;
  return var.current;
}

void ModelImporter::assignState(size_t id, Value value) {
  state[id].current = value;
  state[id].assigned = true;
}

llvm::Expected<size_t> ModelImporter::variableTensorState(int index) {
  const schema::Tensor *t = tensor(index);
  std::string name = tensorName(t, index);
  std::string key =
      "tensor " + std::to_string(index) + " of subgraph " + std::to_string(subgraphIndex);
  Type element;
  int64_t zero = 0;
  switch (t->type()) {
  case schema::TensorType::FLOAT32:
    element = builder.getF32Type();
    break;
  case schema::TensorType::INT8:
    element = builder.getIntegerType(8);
    if (const auto &q = quant[index])
      zero = q->zeroPoint();
    break;
  case schema::TensorType::INT16:
    element = builder.getIntegerType(16);
    break;
  case schema::TensorType::INT32:
    element = builder.getI32Type();
    break;
  default:
    return makeError("variable tensor '" + name + "' has element type " +
                     schema::EnumNameTensorType(t->type()) +
                     "; Kiln carries FLOAT32, INT8, INT16 and INT32 state");
  }
  auto type = RankedTensorType::get(shapeOf(index), element);
  if (!type.hasStaticShape() || type.getNumElements() <= 0)
    return makeError("variable tensor '" + name + "' has shape " + shapeString(shapeOf(index)) +
                     "; state needs a static shape with at least one element");
  DenseElementsAttr initial =
      element.isF32() ? DenseElementsAttr::get(type, builder.getF32FloatAttr(0.0f))
                      : DenseElementsAttr::get(type, builder.getIntegerAttr(element, zero));
  return declareState(key, name, initial);
}

void ModelImporter::finishState(func::FuncOp func, llvm::SmallVectorImpl<Value> &results) {
  Block &body = func.getBody().front();
  for (StateVariable &var : state) {
    if (var.argument && var.uninitialized)
      stateNotes.push_back("variable '" + var.name +
                           "' is read before anything assigns it (no CALL_ONCE initializer "
                           "gives it a value): it starts at 0 after load and after "
                           "kiln_module_reset_state; TFLite refuses to read it");
    if (!var.argument)
      continue; // assigned before every read (or never read): no state
    if (var.assigned && kCarryState) {
      results.push_back(var.current);
      continue;
    }
    // Never assigned (or not carried yet): the variable is a constant.
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&body);
    Value constant =
        builder.create<tosa::ConstOp>(func.getLoc(), var.initial.getType(), var.initial);
    var.argument.replaceAllUsesWith(constant);
    body.eraseArgument(var.argument.getArgNumber());
    var.argument = {};
  }
}

void ModelImporter::markState(func::FuncOp func, size_t modelOutputs) {
  llvm::SmallVector<Attribute> variables;
  size_t result = modelOutputs;
  for (const StateVariable &var : state) {
    if (!var.argument)
      continue;
    func.setArgAttr(var.argument.getArgNumber(), kStateAttr, builder.getStringAttr(var.name));
    func.setResultAttr(result++, kStateAttr, builder.getStringAttr(var.name));
    NamedAttribute fields[] = {builder.getNamedAttr("name", builder.getStringAttr(var.name)),
                               builder.getNamedAttr("initial", var.initial)};
    variables.push_back(builder.getDictionaryAttr(fields));
  }
  if (!variables.empty())
    func->getParentOfType<ModuleOp>()->setAttr(kStateVariablesAttr,
                                               builder.getArrayAttr(variables));
}

// --- Resource variables ----------------------------------------------------

namespace {

/// The key and name of the variable a RESOURCE input `i` of `ctx` holds
/// (the VAR_HANDLE that produced it), or a failure naming the tensor.
FailureOr<std::pair<std::string, std::string>> resourceOf(OpContext &ctx, int i) {
  ModelImporter &m = ctx.owner();
  const schema::Tensor *t = ctx.inputTensor(i);
  if (!t || t->type() != schema::TensorType::RESOURCE)
    return ctx.fail("input " + llvm::Twine(i) +
                    " must be a RESOURCE tensor (a VAR_HANDLE's "
                    "output)");
  int index = ctx.inputIndex(i);
  auto it = m.resources.find({m.subgraphIndex, index});
  if (it == m.resources.end())
    return ctx.fail("reads resource '" + tensorName(t, index) +
                    "', which no VAR_HANDLE before it produced");
  return it->second;
}

/// VAR_HANDLE: names a variable (VarHandleOptions container/shared_name;
/// TFLite's resource_variable.cc keys variables by that pair). No value:
/// its RESOURCE output tells READ_VARIABLE and ASSIGN_VARIABLE which
/// variable they use.
LogicalResult convertVarHandle(OpContext &ctx) {
  const auto *o = ctx.options<schema::VarHandleOptions>();
  std::string container = o && o->container() ? o->container()->str() : "";
  std::string shared = o && o->shared_name() ? o->shared_name()->str() : "";
  if (ctx.numOutputs() != 1 || !ctx.outputTensor(0) ||
      ctx.outputTensor(0)->type() != schema::TensorType::RESOURCE)
    return ctx.fail("must give one RESOURCE output");
  std::string name = container.empty() ? shared : container + "/" + shared;
  if (name.empty())
    name = tensorName(ctx.outputTensor(0), ctx.outputIndex(0));
  ModelImporter &m = ctx.owner();
  m.resources[{m.subgraphIndex, ctx.outputIndex(0)}] = {"resource '" + name + "'", name};
  return success();
}

/// The value a variable starts from when nothing initializes it: zeros of
/// `type` (TFLite refuses to read such a variable; Kiln gives 0).
DenseElementsAttr zerosOf(RankedTensorType type, OpBuilder &b) {
  Type e = type.getElementType();
  if (e.isa<FloatType>())
    return DenseElementsAttr::get(type, b.getFloatAttr(e, 0.0));
  return DenseElementsAttr::get(type, b.getIntegerAttr(e, 0));
}

/// READ_VARIABLE: the variable's value at this point of the invocation.
LogicalResult convertReadVariable(OpContext &ctx) {
  auto resource = resourceOf(ctx, 0);
  if (failed(resource))
    return failure();
  ModelImporter &m = ctx.owner();
  RankedTensorType type = ctx.outputType(0);
  // A read whose recorded shape is dynamic takes the variable's own type.
  for (const ModelImporter::StateVariable &v : m.state)
    if (v.key == resource->first && !type.hasStaticShape())
      type = v.initial.getType().cast<RankedTensorType>();
  if (!type.hasStaticShape())
    return ctx.fail("reads variable '" + resource->second +
                    "' into a tensor of dynamic shape before anything gives the variable a "
                    "shape; Kiln's variables have static shapes (a CALL_ONCE initializer sets it)");
  size_t before = m.state.size();
  size_t id = m.declareState(resource->first, resource->second, zerosOf(type, ctx.builder()));
  if (m.state.size() > before && !m.initializing)
    m.state[id].uninitialized = true;
  if (m.state[id].initial.getType() != type)
    return ctx.fail("reads variable '" + resource->second + "' as " + typeText(type) +
                    ", but it holds " +
                    typeText(m.state[id].initial.getType().cast<RankedTensorType>()));
  return ctx.setOutput(0, m.readState(id));
}

/// ASSIGN_VARIABLE: the variable's new value. Inside CALL_ONCE's
/// initializer the value must be a constant: it becomes the value the
/// variable holds after load and after every reset.
LogicalResult convertAssignVariable(OpContext &ctx) {
  auto resource = resourceOf(ctx, 0);
  if (failed(resource))
    return failure();
  FailureOr<Value> value = ctx.input(1);
  if (failed(value))
    return failure();
  auto type = value->getType().cast<RankedTensorType>();
  ModelImporter &m = ctx.owner();
  if (m.initializing) {
    DenseElementsAttr constant;
    if (!matchPattern(*value, m_Constant(&constant)))
      return ctx.fail("initializes variable '" + resource->second +
                      "' with a computed value; Kiln takes initial values that are constants");
    size_t id = m.declareState(resource->first, resource->second, constant);
    m.state[id].initial = constant;
    m.state[id].uninitialized = false;
    return success();
  }
  size_t id = m.declareState(resource->first, resource->second, zerosOf(type, ctx.builder()));
  if (m.state[id].initial.getType() != type)
    return ctx.fail("assigns a " + typeText(type) + " to variable '" + resource->second +
                    "', which holds " +
                    typeText(m.state[id].initial.getType().cast<RankedTensorType>()));
  m.assignState(id, *value);
  return success();
}

} // namespace

void registerStateOps(ConverterTable &table) {
  table[BuiltinOperator::VAR_HANDLE] = convertVarHandle;
  table[BuiltinOperator::READ_VARIABLE] = convertReadVariable;
  table[BuiltinOperator::ASSIGN_VARIABLE] = convertAssignVariable;
}

} // namespace kiln::tfl
