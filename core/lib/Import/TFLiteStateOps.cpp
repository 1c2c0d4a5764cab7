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

using namespace mlir;

namespace kiln::tfl {

/// Until the schedule carries state (persistent arena, runtime reset), a
/// variable reads its initial value in every invocation and assignments
/// are dropped: right for one invocation after load.
static constexpr bool kCarryState = false;

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
  Block &body = mainFunc.getBody().front();
  var.argument = body.addArgument(var.initial.getType(), mainFunc.getLoc());
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

} // namespace kiln::tfl
