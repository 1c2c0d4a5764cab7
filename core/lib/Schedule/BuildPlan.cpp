//===- BuildPlan.cpp - Schedule and memory plan from bufferized @main -----===//
#include "BuildPlan.h"

#include "kiln/Error.h"
#include "kiln/MemoryPlanner.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

using namespace mlir;

namespace kiln {

static int64_t bytesOf(MemRefType type) {
  return type.getNumElements() *
         std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
}

static std::string typeText(MemRefType type) {
  std::string s;
  for (int64_t d : type.getShape())
    s += std::to_string(d) + "x";
  llvm::raw_string_ostream os(s);
  type.getElementType().print(os);
  return os.str();
}

static func::FuncOp mainOf(ModuleOp module) {
  return module.lookupSymbol<func::FuncOp>("main");
}

/// Source and destination of a copy op in @main, if `op` is one.
static bool asCopy(Operation *op, Value &src, Value &dst) {
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    src = copy.getSource();
    dst = copy.getTarget();
    return true;
  }
  if (auto copy = dyn_cast<linalg::CopyOp>(op)) {
    if (!copy.hasBufferSemantics())
      return false;
    src = copy.getInputs()[0];
    dst = copy.getOutputs()[0];
    return true;
  }
  return false;
}

void coalesceOutputCopies(ModuleOp module) {
  func::FuncOp main = mainOf(module);
  if (!main)
    return;
  Block &body = main.getBody().front();
  llvm::SmallVector<Operation *> copies;
  for (Operation &op : body) {
    Value src, dst;
    if (asCopy(&op, src, dst) && dst.isa<BlockArgument>())
      copies.push_back(&op);
  }
  for (Operation *copy : copies) {
    Value src, dst;
    asCopy(copy, src, dst);
    if (!dst.hasOneUse())
      continue;
    Operation *view = src.getDefiningOp();
    auto alloc = dyn_cast_or_null<memref::AllocOp>(view);
    if (!alloc && view &&
        isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(view))
      alloc = view->getOperand(0).getDefiningOp<memref::AllocOp>();
    if (!alloc)
      continue;
    // The copy must be the last use of the buffer and of all its views.
    bool lastUse = true;
    std::function<void(Value)> check = [&](Value v) {
      for (Operation *user : v.getUsers()) {
        if (user == copy || isa<memref::DeallocOp>(user))
          continue;
        if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(user)) {
          check(user->getResult(0));
          continue;
        }
        if (!user->isBeforeInBlock(copy))
          lastUse = false;
      }
    };
    check(alloc.getResult());
    if (!lastUse)
      continue;
    OpBuilder b(&body, body.begin());
    Value replacement = dst;
    if (auto collapse = dyn_cast_or_null<memref::CollapseShapeOp>(view)) {
      replacement = b.create<memref::ExpandShapeOp>(
          alloc.getLoc(), alloc.getType(), dst, collapse.getReassociationIndices());
    } else if (auto expand = dyn_cast_or_null<memref::ExpandShapeOp>(view)) {
      replacement = b.create<memref::CollapseShapeOp>(
          alloc.getLoc(), alloc.getType(), dst, expand.getReassociationIndices());
    } else if (alloc.getType() != dst.getType()) {
      continue;
    }
    copy->erase();
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    alloc.getResult().replaceAllUsesWith(replacement);
    alloc->erase();
  }
}

namespace {

/// A command before wave assignment.
struct Logical {
  CommandKind kind;
  int64_t dispatch = -1;
  std::vector<BindingRef> bindings;
  uint32_t fillPattern = 0;
};

/// The 4-byte pattern of a fill of `value` (a 32-bit float or integer
/// constant, as linalg.fill in @main holds after kiln-materialize-outputs).
std::optional<uint32_t> fillPatternOf(Value value) {
  auto cst = value.getDefiningOp<arith::ConstantOp>();
  if (!cst)
    return std::nullopt;
  if (auto f = cst.getValue().dyn_cast<FloatAttr>())
    if (f.getType().getIntOrFloatBitWidth() == 32)
      return static_cast<uint32_t>(f.getValue().bitcastToAPInt().getZExtValue());
  if (auto i = cst.getValue().dyn_cast<IntegerAttr>())
    if (i.getType().getIntOrFloatBitWidth() == 32)
      return static_cast<uint32_t>(i.getValue().getZExtValue());
  return std::nullopt;
}

SourceOp parseSource(StringRef text) {
  SourceOp op;
  // At the last '#': an ONNX node name may hold '#' ("Conv \"a#1\"#12").
  auto [name, index] = text.rsplit('#');
  op.name = name.str();
  int64_t i;
  if (!index.getAsInteger(10, i))
    op.sourceIndex = i;
  return op;
}

std::vector<int64_t> i64Array(Operation *op, StringRef name) {
  std::vector<int64_t> out;
  if (auto array = op->getAttrOfType<ArrayAttr>(name))
    for (Attribute a : array)
      out.push_back(a.cast<IntegerAttr>().getInt());
  return out;
}

/// The source tensor `loc` names: the child of its (last) operator NameLoc
/// "CONV_2D#12", which the importers set to the operator's first output
/// tensor (TFLiteImporter.cpp opLocation). Empty if none.
std::string outputTensorOf(Location loc) {
  std::string tensor;
  if (auto name = loc.dyn_cast<NameLoc>()) {
    auto child = name.getChildLoc().dyn_cast<NameLoc>();
    if (name.getName().getValue().contains('#') && child &&
        !child.getName().getValue().contains('#'))
      return child.getName().str();
    return outputTensorOf(name.getChildLoc());
  }
  if (auto fused = loc.dyn_cast<FusedLoc>())
    for (Location l : fused.getLocations())
      if (std::string t = outputTensorOf(l); !t.empty())
        tensor = t;
  return tensor;
}

/// Per-channel weights as the plan keeps them (TensorQuantization::channels):
/// the channel count, the smallest and the largest scale with their zero
/// points.
void summarizeWeights(TensorQuantization &q) {
  if (!q.isWeights() || q.scales.size() <= 1)
    return;
  auto [lo, hi] = std::minmax_element(q.scales.begin(), q.scales.end());
  size_t loAt = lo - q.scales.begin(), hiAt = hi - q.scales.begin();
  q.channels = static_cast<int64_t>(q.scales.size());
  q.scales = {*lo, *hi};
  q.zeroPoints = {q.zeroPoints[loAt], q.zeroPoints[hiAt]};
}

/// The `readers` field of a `kiln.quantization` entry: absent (no readers),
/// or an array of operator indices (false if it is anything else).
bool readReaders(DictionaryAttr fields, std::vector<int64_t> &readers) {
  Attribute attr = fields.get("readers");
  if (!attr)
    return true;
  auto array = attr.dyn_cast<ArrayAttr>();
  if (!array)
    return false;
  for (Attribute a : array) {
    auto index = a.dyn_cast<IntegerAttr>();
    if (!index || index.getInt() < 0)
      return false;
    readers.push_back(index.getInt());
  }
  return true;
}

/// CompilationPlan::quantization from the importer's `kiln.quantization`
/// module attribute (TFLiteQuant.h: setQuantizationAttribute): activations
/// and weights (constants with readers; other constants, int32 biases, are
/// left out). A TOSA .mlir file may carry one too (`kiln compile
/// --emit=tosa` writes it); an entry of another form is an error naming it.
llvm::Expected<std::vector<TensorQuantization>> readQuantization(ModuleOp module) {
  std::vector<TensorQuantization> out;
  auto dict = module->getAttrOfType<DictionaryAttr>("kiln.quantization");
  if (!dict)
    return out;
  for (NamedAttribute entry : dict) {
    auto fields = entry.getValue().dyn_cast<DictionaryAttr>();
    auto scales = fields ? fields.getAs<ArrayAttr>("scales") : ArrayAttr();
    auto zeroPoints = fields ? fields.getAs<ArrayAttr>("zero_points") : ArrayAttr();
    auto dimension = fields ? fields.getAs<IntegerAttr>("dimension") : IntegerAttr();
    auto storage = fields ? fields.getAs<StringAttr>("storage") : StringAttr();
    auto constant = fields ? fields.getAs<BoolAttr>("constant") : BoolAttr();
    TensorQuantization q;
    bool ok = scales && zeroPoints && dimension && storage && constant &&
              scales.size() == zeroPoints.size() && !scales.empty() &&
              readReaders(fields, q.readers);
    for (size_t i = 0; ok && i < scales.size(); ++i) {
      auto scale = scales[i].dyn_cast<FloatAttr>();
      auto zeroPoint = zeroPoints[i].dyn_cast<IntegerAttr>();
      ok = scale && zeroPoint;
      if (ok) {
        q.scales.push_back(static_cast<float>(scale.getValueAsDouble()));
        q.zeroPoints.push_back(zeroPoint.getInt());
      }
    }
    if (!ok)
      return makeError("kiln.quantization entry '" + entry.getName().getValue() +
                       "' is malformed; expected {scales = [f32, ...], zero_points = "
                       "[i64, ...] (as many), dimension = i64, storage = \"i8\" or "
                       "\"u8\", constant = bool, readers = [i64, ...] (optional)}");
    if (!constant.getValue() && q.isWeights())
      return makeError("kiln.quantization entry '" + entry.getName().getValue() +
                       "' has readers but is not constant; only weights have readers");
    if (constant.getValue() && !q.isWeights())
      continue;
    q.tensor = entry.getName().str();
    q.dimension = dimension.getInt();
    q.storage = storage.str();
    summarizeWeights(q);
    out.push_back(std::move(q));
  }
  return out;
}

} // namespace

/// Output binding: slot K is the Output buffer of index K, written by the
/// commands that write it (checkPlan verifies they cover it exactly once).
static void bindOutputs(CompilationPlan &plan,
                        const std::vector<std::string> &outputNames) {
  for (size_t slot = 0; slot < outputNames.size(); ++slot) {
    OutputBinding binding;
    binding.slot = static_cast<int64_t>(slot);
    binding.name = outputNames[slot];
    for (const Buffer &buf : plan.memory.buffers)
      if (buf.kind == BufferKind::Output && buf.index == binding.slot) {
        binding.buffer = buf.id;
        binding.bytes = buf.bytes;
      }
    for (const Command &cmd : plan.schedule.commands)
      for (const BindingRef &b : cmd.bindings)
        if (b.write && b.buffer == binding.buffer && binding.buffer >= 0 &&
            (binding.writers.empty() || binding.writers.back() != cmd.index))
          binding.writers.push_back(cmd.index);
    plan.outputs.push_back(std::move(binding));
  }
}

/// Leaves Dispatch::outputTensor on the dispatch that completes the tensor:
/// of the dispatches an operator was split into (a SOFTMAX: maximum,
/// exponentials, sum, quotient), the last in plan order keeps the name. A
/// dispatch writing model output K whose location named no tensor (a uint8
/// output's sign flip carries the file's location) takes output K's name.
static void nameOutputTensors(CompilationPlan &plan) {
  std::set<std::string> seen;
  for (auto d = plan.dispatches.rbegin(); d != plan.dispatches.rend(); ++d)
    if (!d->outputTensor.empty() && !seen.insert(d->outputTensor).second)
      d->outputTensor.clear();
  for (const OutputBinding &o : plan.outputs)
    for (int64_t writer : o.writers) {
      const Command &cmd = plan.schedule.commands[writer];
      for (Dispatch &d : plan.dispatches)
        if (cmd.kind == CommandKind::Dispatch && d.id == cmd.dispatch &&
            d.outputTensor.empty() && !seen.count(o.name))
          d.outputTensor = o.name;
    }
}

namespace {

/// What the phases of buildPlan share: the plan as it grows, the commands
/// before wave assignment and what @main's walk learnt about dispatches.
struct PlanState {
  CompilationPlan plan;
  /// Buffer id and byte offset of every buffer-typed value of @main
  /// (arguments, allocations and views of them).
  llvm::DenseMap<Value, std::pair<int64_t, int64_t>> where;
  std::vector<Logical> logical;
  /// Per dispatch id, what the plan reports of it (plan order).
  std::map<int64_t, Dispatch> dispatchInfo;
  /// Per dispatch id: input binding positions that may share the output.
  std::map<int64_t, std::vector<int64_t>> inplaceInputs;
  /// Per buffer id, the first and last wave that binds it (-1: none).
  std::vector<int64_t> firstWave, lastWave;
  /// Per state variable: its State buffer and the buffer of its value at
  /// the end of the invocation.
  std::vector<int64_t> stateIn, stateOut;
};

/// The wave of every logical command (same index) and the wave count.
struct Waves {
  std::vector<int64_t> of;
  int64_t count = 0;
};

/// One buffer per @main argument, in argument order: `numInputs` inputs
/// (the last `numState` of them State buffers), then `numConstants`
/// constants, then `numOutputs` outputs and `numState` final state values
/// (transient buffers); each at offset 0 of its own id in `state.where`.
/// Errors on an argument that is not a memref.
llvm::Error bindArguments(func::FuncOp main, size_t numInputs, size_t numConstants,
                          size_t numOutputs, size_t numState, PlanState &state) {
  std::vector<Buffer> &buffers = state.plan.memory.buffers;
  for (BlockArgument arg : main.getArguments()) {
    auto type = arg.getType().dyn_cast<MemRefType>();
    if (!type)
      return makeError("internal error: @main argument is not a buffer");
    Buffer buffer;
    buffer.id = buffers.size();
    size_t i = arg.getArgNumber();
    if (i + numState < numInputs) {
      buffer.kind = BufferKind::Input;
      buffer.index = i;
    } else if (i < numInputs) {
      buffer.kind = BufferKind::State;
      buffer.index = i - (numInputs - numState);
      state.stateIn.push_back(buffer.id);
    } else if (i < numInputs + numConstants) {
      buffer.kind = BufferKind::Constant;
      buffer.index = i - numInputs;
    } else if (i < numInputs + numConstants + numOutputs) {
      buffer.kind = BufferKind::Output;
      buffer.index = i - numInputs - numConstants;
    } else {
      buffer.kind = BufferKind::Transient;
      state.stateOut.push_back(buffer.id);
    }
    buffer.bytes = bytesOf(type);
    buffer.type = typeText(type);
    state.where[arg] = {buffer.id, 0};
    buffers.push_back(buffer);
  }
  return llvm::Error::success();
}

/// The binding of `v` (a value `state.where` knows): its buffer, byte
/// offset and length in bytes; none for an unknown value.
std::optional<BindingRef> bindingOf(const PlanState &state, Value v, bool write) {
  auto it = state.where.find(v);
  if (it == state.where.end())
    return std::nullopt;
  BindingRef ref;
  ref.buffer = it->second.first;
  ref.offset = it->second.second;
  ref.length = bytesOf(v.getType().cast<MemRefType>());
  ref.write = write;
  return ref;
}

/// What the plan reports of the dispatch `callee` that `call` launches with
/// the bindings `cmd` (the callee's kiln.* attributes, the call's output
/// tensor, bytes read and written through the bindings).
Dispatch dispatchOf(func::FuncOp callee, func::CallOp call, int64_t id, const Logical &cmd) {
  Dispatch d;
  d.id = id;
  d.name = callee.getSymName().str();
  if (auto sources = callee->getAttrOfType<ArrayAttr>("kiln.sources"))
    for (Attribute s : sources)
      d.ops.push_back(parseSource(s.cast<StringAttr>().getValue()));
  std::vector<int64_t> count = i64Array(callee, "kiln.workgroup_count");
  for (size_t k = 0; k < 3 && k < count.size(); ++k)
    d.workgroupCount[k] = count[k];
  d.tileSizes = i64Array(callee, "kiln.tile_sizes");
  d.loopRanges = i64Array(callee, "kiln.loop_ranges");
  if (auto kinds = callee->getAttrOfType<ArrayAttr>("kiln.loop_kinds"))
    for (Attribute k : kinds)
      d.loopKinds.push_back(k.cast<StringAttr>().str());
  if (auto flops = callee->getAttrOfType<IntegerAttr>("kiln.flops"))
    d.flops = flops.getInt();
  d.outputTensor = outputTensorOf(call.getLoc());
  for (const BindingRef &b : cmd.bindings)
    (b.write ? d.bytesWritten : d.bytesRead) += b.length;
  return d;
}

/// The dispatch command of `call` (its memref operands bound in order, the
/// callee's last kiln.num_outputs written), appended to `state.logical`
/// with its Dispatch and in-place candidates. Errors on a callee that is
/// not a dispatch or a binding of an unknown buffer.
llvm::Error readDispatch(ModuleOp module, func::CallOp call, PlanState &state) {
  auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
  if (!callee || !callee->hasAttr("kiln.dispatch_id"))
    return makeError("internal error: @main calls a non-dispatch");
  int64_t id = callee->getAttrOfType<IntegerAttr>("kiln.dispatch_id").getInt();
  int64_t outputs = callee->getAttrOfType<IntegerAttr>("kiln.num_outputs").getInt();
  llvm::SmallVector<Value> buffersUsed;
  for (Value v : call.getOperands())
    if (v.getType().isa<MemRefType>())
      buffersUsed.push_back(v);
  Logical cmd{CommandKind::Dispatch, id, {}};
  for (auto [i, v] : llvm::enumerate(buffersUsed)) {
    bool write = i + outputs >= buffersUsed.size();
    auto ref = bindingOf(state, v, write);
    if (!ref)
      return makeError("internal error: dispatch binds an unknown buffer");
    cmd.bindings.push_back(*ref);
  }
  Dispatch d = dispatchOf(callee, call, id, cmd);
  state.inplaceInputs[id] = i64Array(callee, "kiln.inplace_inputs");
  state.dispatchInfo[id] = d;
  state.logical.push_back(std::move(cmd));
  return llvm::Error::success();
}

/// Walks @main's body in order: an allocation becomes a transient buffer,
/// a view shares its source's place, a copy, fill or dispatch call becomes a
/// logical command in `state.logical`. Errors on anything else.
llvm::Error readCommands(ModuleOp module, func::FuncOp main, PlanState &state) {
  std::vector<Buffer> &buffers = state.plan.memory.buffers;
  for (Operation &op : main.getBody().front()) {
    if (auto alloc = dyn_cast<memref::AllocOp>(&op)) {
      Buffer buffer;
      buffer.id = buffers.size();
      buffer.kind = BufferKind::Transient;
      buffer.bytes = bytesOf(alloc.getType());
      buffer.type = typeText(alloc.getType());
      state.where[alloc.getResult()] = {buffer.id, 0};
      buffers.push_back(buffer);
      continue;
    }
    if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp, memref::CastOp>(&op)) {
      auto it = state.where.find(op.getOperand(0));
      if (it == state.where.end())
        return makeError("internal error: view of an unknown buffer in @main");
      // Copied before inserting: the insertion may grow the map and free
      // the bucket `it` points into (read after free when it did).
      std::pair<int64_t, int64_t> place = it->second;
      state.where[op.getResult(0)] = place;
      continue;
    }
    if (isa<memref::DeallocOp, arith::ConstantOp, func::ReturnOp>(&op))
      continue;
    Value src, dst;
    if (asCopy(&op, src, dst)) {
      auto from = bindingOf(state, src, false), to = bindingOf(state, dst, true);
      if (!from || !to)
        return makeError("internal error: copy between unknown buffers");
      state.logical.push_back({CommandKind::Copy, -1, {*from, *to}});
      continue;
    }
    if (auto fill = dyn_cast<linalg::FillOp>(&op)) {
      auto to =
          fill.hasBufferSemantics() ? bindingOf(state, fill.getOutputs()[0], true) : std::nullopt;
      auto pattern = fillPatternOf(fill.getInputs()[0]);
      if (!to || !pattern)
        return makeError("internal error: fill in @main is not a 32-bit constant "
                         "into a known buffer");
      state.logical.push_back({CommandKind::Fill, -1, {*to}, *pattern});
      continue;
    }
    if (auto call = dyn_cast<func::CallOp>(&op)) {
      if (llvm::Error error = readDispatch(module, call, state))
        return error;
      continue;
    }
    return makeError("internal error: unexpected operation '" + op.getName().getStringRef() +
                     "' in @main");
  }
  return llvm::Error::success();
}

/// The last command of each state variable: a copy of its final value
/// into its State buffer, which assignWaves places after every read of the
/// old value (write-after-read).
void appendStateCopies(PlanState &state) {
  const std::vector<Buffer> &buffers = state.plan.memory.buffers;
  for (size_t k = 0; k < state.stateIn.size() && k < state.stateOut.size(); ++k) {
    int64_t bytes = buffers[state.stateIn[k]].bytes;
    state.logical.push_back(
        {CommandKind::Copy,
         -1,
         {{state.stateOut[k], 0, bytes, false}, {state.stateIn[k], 0, bytes, true}}});
  }
}

/// The persistent region: each State buffer at the next multiple of 64
/// from arena offset 0, every placed transient buffer moved above the
/// region, the arena and its lower bound grown by it, and one
/// CompilationPlan::state entry per variable (`names`).
void placeState(PlanState &state, const std::vector<std::string> &names) {
  std::vector<Buffer> &buffers = state.plan.memory.buffers;
  MemoryPlan &memory = state.plan.memory;
  int64_t persistent = 0;
  for (size_t k = 0; k < state.stateIn.size(); ++k) {
    Buffer &buf = buffers[state.stateIn[k]];
    buf.offset = persistent;
    persistent += (buf.bytes + 63) / 64 * 64;
    state.plan.state.push_back({k < names.size() ? names[k] : "state" + std::to_string(k), buf.id,
                                buf.offset, buf.bytes, buf.type});
  }
  if (persistent == 0)
    return;
  for (Buffer &buf : buffers)
    if (buf.kind == BufferKind::Transient && buf.firstCommand >= 0)
      buf.offset += persistent;
  memory.persistentBytes = persistent;
  memory.arenaBytes += persistent;
  memory.lowerBoundBytes += persistent;
}

/// Outputs hold their final value only: bufferization may compute an
/// intermediate in an output's buffer and overwrite it later (a fully
/// connected layer's result, then the softmax of it, in place). Every use
/// before the output's final whole write (one that does not read it) moves
/// to a transient buffer of its own, appended to the buffers, so each
/// output byte is written once.
void moveOutputIntermediates(PlanState &state) {
  std::vector<Buffer> &buffers = state.plan.memory.buffers;
  std::vector<Logical> &logical = state.logical;
  for (size_t b = 0, n = buffers.size(); b < n; ++b) {
    if (buffers[b].kind != BufferKind::Output)
      continue;
    std::optional<size_t> finalWrite;
    for (size_t c = 0; c < logical.size(); ++c) {
      bool writesWhole = false, reads = false;
      for (const BindingRef &ref : logical[c].bindings) {
        if (ref.buffer != static_cast<int64_t>(b))
          continue;
        reads |= !ref.write;
        writesWhole |= ref.write && ref.offset == 0 && ref.length == buffers[b].bytes;
      }
      if (writesWhole && !reads)
        finalWrite = c;
    }
    if (!finalWrite || *finalWrite == 0)
      continue;
    Buffer scratch = buffers[b];
    scratch.id = buffers.size();
    scratch.kind = BufferKind::Transient;
    scratch.index = 0;
    bool used = false;
    for (size_t c = 0; c < *finalWrite; ++c)
      for (BindingRef &ref : logical[c].bindings)
        if (ref.buffer == static_cast<int64_t>(b)) {
          ref.buffer = scratch.id;
          used = true;
        }
    if (used)
      buffers.push_back(scratch);
  }
}

/// Versions: bufferization may reuse one allocation for several values
/// (a dispatch writing a dead buffer in place). A command that writes a
/// whole transient buffer without reading it starts a new value; each value
/// becomes its own buffer of the plan (appended), with its own writer,
/// lifetime and place in the arena. Rebinds `state.logical` to them.
void splitVersions(PlanState &state) {
  std::vector<Buffer> &buffers = state.plan.memory.buffers;
  std::map<int64_t, int64_t> current; // original id -> current version
  std::map<int64_t, bool> written;    // version -> has a writer
  for (Logical &cmd : state.logical) {
    std::set<int64_t> reads;
    for (const BindingRef &b : cmd.bindings)
      if (!b.write)
        reads.insert(b.buffer);
    for (BindingRef &b : cmd.bindings) {
      int64_t original = b.buffer;
      auto it = current.find(original);
      int64_t version = it == current.end() ? original : it->second;
      const Buffer &buf = buffers[original];
      bool whole = b.offset == 0 && b.length == buf.bytes;
      if (b.write && buf.kind == BufferKind::Transient && written[version] && whole &&
          !reads.count(original)) {
        Buffer fresh = buffers[original];
        fresh.id = buffers.size();
        buffers.push_back(fresh);
        version = fresh.id;
      }
      current[original] = version;
      if (b.write)
        written[version] = true;
      b.buffer = version;
    }
  }
}

/// Waves: ASAP over read-after-write (and, for buffers written twice,
/// write-after-read/write) dependencies between the logical commands.
Waves assignWaves(const std::vector<Logical> &logical) {
  Waves waves;
  waves.of.assign(logical.size(), 0);
  std::map<int64_t, int64_t> lastWriteWave, lastReadWave;
  for (size_t c = 0; c < logical.size(); ++c) {
    int64_t wave = 0;
    for (const BindingRef &b : logical[c].bindings) {
      if (auto it = lastWriteWave.find(b.buffer); it != lastWriteWave.end())
        wave = std::max(wave, it->second + 1);
      if (b.write)
        if (auto it = lastReadWave.find(b.buffer); it != lastReadWave.end())
          wave = std::max(wave, it->second + 1);
    }
    waves.of[c] = wave;
    for (const BindingRef &b : logical[c].bindings) {
      int64_t &slot = b.write ? lastWriteWave[b.buffer] : lastReadWave[b.buffer];
      slot = std::max(slot, wave);
    }
    waves.count = std::max(waves.count, wave + 1);
  }
  return waves;
}

/// The schedule: the logical commands by wave (stable, so program order
/// within a wave), a barrier between consecutive waves, each command's
/// index its position in the list.
void emitSchedule(const std::vector<Logical> &logical, const Waves &waves, Schedule &schedule) {
  const std::vector<int64_t> &waveOf = waves.of;
  std::vector<size_t> order(logical.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return waveOf[a] < waveOf[b]; });
  std::vector<Command> &commands = schedule.commands;
  for (size_t k = 0; k < order.size(); ++k) {
    size_t c = order[k];
    if (k > 0 && waveOf[c] != waveOf[order[k - 1]]) {
      Command barrier;
      barrier.kind = CommandKind::Barrier;
      barrier.wave = waveOf[order[k - 1]];
      barrier.index = commands.size();
      commands.push_back(barrier);
    }
    Command cmd;
    cmd.kind = logical[c].kind;
    cmd.dispatch = logical[c].dispatch;
    cmd.wave = waveOf[c];
    cmd.bindings = logical[c].bindings;
    cmd.fillPattern = logical[c].fillPattern;
    cmd.index = commands.size();
    commands.push_back(std::move(cmd));
  }
  schedule.waves = waves.count;
}

/// Liveness of every buffer: its first and last command (Buffer fields)
/// and its first and last wave (`state.firstWave`, `state.lastWave`).
void computeLiveness(PlanState &state) {
  std::vector<Buffer> &buffers = state.plan.memory.buffers;
  state.firstWave.assign(buffers.size(), -1);
  state.lastWave.assign(buffers.size(), -1);
  for (const Command &cmd : state.plan.schedule.commands)
    for (const BindingRef &b : cmd.bindings) {
      Buffer &buf = buffers[b.buffer];
      if (buf.firstCommand < 0)
        buf.firstCommand = cmd.index;
      buf.lastCommand = cmd.index;
      if (state.firstWave[b.buffer] < 0)
        state.firstWave[b.buffer] = cmd.wave;
      state.lastWave[b.buffer] = std::max(state.lastWave[b.buffer], cmd.wave);
    }
}

/// In place: an elementwise dispatch's output takes the memory of an input
/// of the same size that dies in that dispatch's wave and that no other
/// command of the wave reads. The output then aliases the input (its
/// Buffer::aliasOf, the input's last wave extended to the output's, the
/// Dispatch's aliasedBindings). Both must be written exactly once
/// (bufferization may reuse one buffer for several values; such buffers
/// keep their own place).
void aliasInPlace(PlanState &state) {
  std::vector<Buffer> &buffers = state.plan.memory.buffers;
  const std::vector<Command> &commands = state.plan.schedule.commands;
  std::vector<int64_t> &lastWave = state.lastWave;
  std::map<int64_t, int> writers;
  for (const Command &cmd : commands)
    for (const BindingRef &b : cmd.bindings)
      if (b.write)
        ++writers[b.buffer];
  for (const Command &cmd : commands) {
    if (cmd.kind != CommandKind::Dispatch || cmd.bindings.empty())
      continue;
    const BindingRef &out = cmd.bindings.back();
    Buffer &outBuf = buffers[out.buffer];
    if (outBuf.kind != BufferKind::Transient || outBuf.aliasOf >= 0 || out.offset != 0 ||
        out.length != outBuf.bytes || writers[out.buffer] != 1)
      continue;
    for (int64_t position : state.inplaceInputs[cmd.dispatch]) {
      if (position < 0 || position >= static_cast<int64_t>(cmd.bindings.size()) - 1)
        continue;
      const BindingRef &in = cmd.bindings[position];
      Buffer &inBuf = buffers[in.buffer];
      if (inBuf.kind != BufferKind::Transient || inBuf.aliasOf >= 0 || in.offset != 0 ||
          inBuf.bytes != outBuf.bytes || writers[in.buffer] != 1 ||
          lastWave[in.buffer] != cmd.wave || in.buffer == out.buffer)
        continue;
      bool readElsewhere = false;
      for (const Command &other : commands)
        if (other.index != cmd.index && other.wave == cmd.wave)
          for (const BindingRef &b : other.bindings)
            readElsewhere |= b.buffer == in.buffer;
      if (readElsewhere)
        continue;
      outBuf.aliasOf = in.buffer;
      lastWave[in.buffer] = std::max(lastWave[in.buffer], lastWave[out.buffer]);
      state.dispatchInfo[cmd.dispatch].aliasedBindings = {
          position, static_cast<int64_t>(cmd.bindings.size()) - 1};
      break;
    }
  }
}

/// Arena placement of transient buffers over their wave lifetimes
/// (placeHillClimb): every used, unaliased transient buffer's byte offset,
/// aliases at their target's offset (whose lifetime now covers theirs), and
/// the arena's size, lower bound and planner.
void placeArena(PlanState &state) {
  std::vector<Buffer> &buffers = state.plan.memory.buffers;
  std::vector<LiveRange> ranges;
  std::vector<int64_t> transientIds;
  for (const Buffer &buf : buffers)
    if (buf.kind == BufferKind::Transient && buf.firstCommand >= 0 && buf.aliasOf < 0) {
      ranges.push_back({buf.bytes, state.firstWave[buf.id], state.lastWave[buf.id]});
      transientIds.push_back(buf.id);
    }
  Placement placement = placeHillClimb(ranges);
  for (size_t i = 0; i < transientIds.size(); ++i)
    buffers[transientIds[i]].offset = placement.offsets[i];
  for (Buffer &buf : buffers)
    if (buf.aliasOf >= 0)
      buf.offset = buffers[buf.aliasOf].offset;
  MemoryPlan &memory = state.plan.memory;
  memory.arenaBytes = placement.arenaBytes;
  memory.lowerBoundBytes = arenaLowerBound(ranges);
  memory.planner = placement.planner.empty() ? "greedy-by-size" : placement.planner;
}

} // namespace

llvm::Expected<CompilationPlan> buildPlan(ModuleOp module, size_t numInputs, size_t numConstants,
                                          const std::vector<std::string> &outputNames,
                                          const std::vector<std::string> &stateNames) {
  func::FuncOp main = mainOf(module);
  if (!main)
    return makeError("internal error: no @main to plan");
  PlanState state;
  if (llvm::Error error = bindArguments(main, numInputs, numConstants, outputNames.size(),
                                        stateNames.size(), state))
    return error;
  if (state.stateIn.size() != stateNames.size() || state.stateOut.size() != stateNames.size())
    return makeError("internal error: @main's state arguments do not match its state variables");
  if (llvm::Error error = readCommands(module, main, state))
    return error;
  appendStateCopies(state);
  moveOutputIntermediates(state);
  splitVersions(state);
  emitSchedule(state.logical, assignWaves(state.logical), state.plan.schedule);
  computeLiveness(state);
  aliasInPlace(state);
  placeArena(state);
  placeState(state, stateNames);

  CompilationPlan &plan = state.plan;
  for (auto &[id, d] : state.dispatchInfo)
    plan.dispatches.push_back(d);
  bindOutputs(plan, outputNames);
  nameOutputTensors(plan);
  auto quantization = readQuantization(module);
  if (!quantization)
    return quantization.takeError();
  plan.quantization = std::move(*quantization);
  return std::move(plan);
}

} // namespace kiln
