//===- kiln/Plan.h - Every decision the compiler made ----------*- C++ -*-===//
//
// Plain data describing a compiled model's dispatches, static schedule and
// memory plan. Produced by the compiler (core/lib/Schedule), printed by
// `kiln inspect --json`, drawn by the workbench, burned into the artifact.
// No MLIR, LLVM or Qt types.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PLAN_H
#define KILN_PLAN_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// A source operator fused into a dispatch: its type ("CONV_2D") and its
/// index in the source model's operator list (-1 if unknown).
struct SourceOp {
  std::string name;
  int64_t sourceIndex = -1;
};

/// How a dispatch's kernel computes, chosen at compile time from the
/// target's register file (kiln-register-tile-contractions; the register
/// tile structure of BLIS/MLAS microkernels).
struct KernelStrategy {
  /// "gemm" (matmul, batch matmul, FULLY_CONNECTED, 1x1 CONV_2D),
  /// "implicit-gemm" (k x k CONV_2D read straight from the input window),
  /// "depthwise" (channels in vectors, taps unrolled), or "loops" (a loop
  /// nest LLVM's vectorizer handles: pooling, elementwise, reductions,
  /// data movement, and ops the register-tiled kernels do not take).
  std::string kind = "loops";
  /// Register tile: tileRows x tileVectors vectors of `lanes` f32 (or, for
  /// int8 products, i32 accumulators) each,
  /// held in registers for the whole reduction (all 0 for "loops").
  int64_t tileRows = 0;
  int64_t tileVectors = 0;
  int64_t lanes = 0;
  /// Layout of the weights the kernel reads, outermost first, e.g.
  /// "KxN (N contiguous)" (empty for "loops").
  std::string weightLayout;
  /// Expected FLOP per cycle of the inner loop on a core that issues 2 FMA
  /// and 2 loads per cycle: 2 x lanes x FMAs per step / max(FMAs / 2,
  /// loads / 2) (0 for "loops").
  double flopsPerCycle = 0;
};

/// One line: "gemm 4x3x8, 24x24 KxN (N contiguous), 32 FLOP/cycle" or
/// "loops".
std::string describeKernel(const KernelStrategy &kernel);

/// The short form: "gemm 4x3x8" (rows x vectors x lanes) or "loops".
std::string kernelTileText(const KernelStrategy &kernel);

struct Dispatch;
struct SourceOp;

/// A source operator as every tool writes it: "CONV_2D #9" (the model's
/// operator code and its index in the model's operator list), or the bare
/// name when the index is unknown (-1).
std::string sourceOpText(const SourceOp &op);

/// A dispatch named with its source operators (sourceOpText) and strategy,
/// e.g. "main_dispatch_2 CONV_2D #9 ADD #10 RELU #11 [gemm 4x3x8]" (trace
/// events, tooltips).
std::string dispatchLabel(const Dispatch &dispatch);

/// One dispatch: a future kernel launch (an executable entry point run over
/// a grid of workgroups).
struct Dispatch {
  int64_t id = 0;
  /// The dispatch's name, e.g. "main_dispatch_3".
  std::string name;
  /// The executable entry point that runs it: `name`, or the name of an
  /// earlier dispatch with the identical kernel (same body, binding types
  /// and aliased bindings; deduplicated at compile time as IREE's
  /// DeduplicateExecutables does). Empty means `name` (plans built by hand).
  std::string entryPoint;
  std::vector<SourceOp> ops;
  /// Workgroup grid (x, y, z); x is the innermost tiled loop.
  std::array<int64_t, 3> workgroupCount = {1, 1, 1};
  /// Workgroup tile size per loop of the dispatch's tiled op (0 = whole).
  std::vector<int64_t> tileSizes;
  /// Loop kinds of the tiled op, "parallel" or "reduction" (same length).
  std::vector<std::string> loopKinds;
  /// Loop extents of the tiled op (same length).
  std::vector<int64_t> loopRanges;
  /// Estimated work, "FLOPs": 2 per multiply-accumulate of a contraction,
  /// convolution or pooling of any element type (an int8 product counts as
  /// an f32 one), plus one per float op of other bodies; integer
  /// elementwise arithmetic is not counted (docs/design.md, "Operation
  /// counts").
  int64_t flops = 0;
  /// Bytes of all bindings read / written once each.
  int64_t bytesRead = 0;
  int64_t bytesWritten = 0;
  /// Binding positions (entry-point order) that share memory because the
  /// output was placed in place of a dead input; the kernel must not assume
  /// they are distinct.
  std::vector<int64_t> aliasedBindings;
  /// The kernel's strategy and register tile.
  KernelStrategy kernel;
  /// The source model's tensor the dispatch completes: the output tensor of
  /// the operator whose location the dispatch's call in @main carries (its
  /// last fused operator; the importers name each operator's first output
  /// tensor in its location). Of the dispatches one operator is split into
  /// (a SOFTMAX's maximum, exponentials, sum and quotient) only the last
  /// carries it. Empty when no location names one (the earlier parts of a
  /// split operator, plans of TOSA .mlir files, plans built by hand).
  std::string outputTensor;
};

/// The entry point that runs `d`: `d.entryPoint`, or `d.name` where that is
/// empty. A dispatch shares another's kernel when this differs from its name.
inline const std::string &entryPointOf(const Dispatch &d) {
  return d.entryPoint.empty() ? d.name : d.entryPoint;
}

/// Where a buffer lives. State: a variable carried from one invocation to
/// the next, in the arena's persistent region (CompilationPlan::state).
enum class BufferKind { Input, Output, Constant, Transient, State };

/// A buffer of the plan. Transient buffers live in the arena at `offset`,
/// state buffers in its persistent region at `offset` (`index`: the state
/// variable's ordinal); inputs, outputs and constants live outside it
/// (`index` is their ordinal).
struct Buffer {
  int64_t id = 0;
  BufferKind kind = BufferKind::Transient;
  int64_t index = 0;
  int64_t bytes = 0;
  /// Arena offset of transient buffers (bytes); 0 otherwise.
  int64_t offset = 0;
  /// First and last command using the buffer (-1 if never used).
  int64_t firstCommand = -1;
  int64_t lastCommand = -1;
  /// The buffer whose memory this one is a view of or reuses in place
  /// (-1 if none).
  int64_t aliasOf = -1;
  /// Shape and element type, for display ("1x64x64x24xf32").
  std::string type;
};

/// A byte range of a buffer bound to a command.
struct BindingRef {
  int64_t buffer = 0;
  int64_t offset = 0;
  int64_t length = 0;
  /// True when the command writes the range.
  bool write = false;
};

enum class CommandKind { Dispatch, Barrier, Copy, Fill };

/// One entry of the static command list the runtime replays.
struct Command {
  int64_t index = 0;
  CommandKind kind = CommandKind::Dispatch;
  /// Dispatch id for Dispatch commands, -1 otherwise.
  int64_t dispatch = -1;
  /// Execution wave: commands of one wave are independent.
  int64_t wave = 0;
  /// Dispatch: the bindings in entry-point order; Copy: source then target;
  /// Fill: the target.
  std::vector<BindingRef> bindings;
  /// Fill: the 4-byte little-endian pattern repeated over the target (the
  /// bits of the splat value, e.g. 0x3f800000 for 1.0f); 0 otherwise.
  uint32_t fillPattern = 0;
};

/// The static schedule: waves separated by barriers.
struct Schedule {
  int64_t waves = 0;
  std::vector<Command> commands;
};

/// The memory plan of the arena.
struct MemoryPlan {
  /// Arena size the runtime must be given, bytes (the persistent region
  /// included).
  int64_t arenaBytes = 0;
  /// Maximum over waves of the bytes live at once, the persistent region
  /// included (no plan can do better).
  int64_t lowerBoundBytes = 0;
  /// Bytes [0, persistentBytes) of the arena hold the state variables
  /// (each at a multiple of 64); transient buffers lie above. 0 for a
  /// stateless model.
  int64_t persistentBytes = 0;
  /// Which placement won ("greedy-by-size", "hill-climb").
  std::string planner;
  std::vector<Buffer> buffers;
};

/// How model output slot `slot` gets its value: the tensor that is output
/// `slot` of the source model (`name`) is bound to buffer `buffer` (kind
/// Output, index `slot`), which exactly the commands `writers` write,
/// together covering each of its bytes once: a dispatch computing it in
/// place, a copy (from an input, a constant or another output) or a fill
/// (a splat constant).
struct OutputBinding {
  int64_t slot = 0;
  std::string name;
  int64_t buffer = -1;
  /// Bytes of the output tensor (its signature shape x element size).
  int64_t bytes = 0;
  /// Indices into schedule.commands, in command order.
  std::vector<int64_t> writers;
};

/// The affine quantization of one integer tensor of the source model, as
/// the TensorFlow Lite schema (v3, QuantizationParameters) records it:
/// real = scale * (q - zero_point), with one scale and zero point for the
/// whole tensor or one per index of a channel dimension. An activation (a
/// model input or an operator's output) or a weights tensor (an 8-bit
/// constant operand: a CONV_2D or DEPTHWISE_CONV_2D filter, FULLY_CONNECTED
/// weights; `readers` not empty). Of per-channel weights the plan keeps a
/// summary (`channels` set): the full lists would more than double an
/// artifact's reflection section (person_detect: 2738 weight scales).
struct TensorQuantization {
  /// The tensor's name in the source model, as the plan names tensors
  /// elsewhere (OutputBinding::name, Dispatch::outputTensor, the signature).
  std::string tensor;
  /// Real units per integer step: one (per tensor) or one per channel,
  /// float32 as the file stores them; each positive and finite.
  std::vector<float> scales;
  /// The integer that stands for real 0, one per scale, as the file stores
  /// it: in [-128, 127] for "i8", [0, 255] for "u8".
  std::vector<int64_t> zeroPoints;
  /// The channel dimension of a per-channel quantization (TFLite's
  /// quantized_dimension); -1 for a per-tensor one.
  int64_t dimension = -1;
  /// The stored integer type: "i8" or "u8" (a uint8 tensor is computed as
  /// int8 inside, zero point - 128, and keeps its uint8 storage at the
  /// model's boundary).
  std::string storage;
  /// Weights only: the source operators that read the tensor as a constant
  /// operand, as SourceOp::sourceIndex (TFLite operator indices), ascending.
  /// Empty for an activation.
  std::vector<int64_t> readers;
  /// Per-channel weights only: the number of channels (scales) in the file;
  /// `scales` then holds just the smallest and the largest of them and
  /// `zeroPoints` their channels' zero points (TFLite int8 weights: 0). 0
  /// where `scales` is the whole list.
  int64_t channels = 0;

  bool perChannel() const { return channels > 0 || scales.size() > 1; }
  bool isWeights() const { return !readers.empty(); }
  /// The number of scales in the file: `channels`, else scales.size().
  int64_t scaleCount() const {
    return channels > 0 ? channels : static_cast<int64_t>(scales.size());
  }
};

/// How every tool writes a quantization: "scale 0.00390625 zero point -128"
/// (per tensor; %g, 6 significant digits) or "per-channel: 8 scales, min
/// 0.0012 max 0.0201, dimension 3" (scaleCount() scales).
std::string describeQuantization(const TensorQuantization &quant);

/// A variable the model carries from one invocation to the next: a TFLite
/// resource variable (VAR_HANDLE) or variable tensor (the state of LSTM,
/// RNN and SVDF). It lives in the arena's persistent region, which no
/// transient buffer reuses, so the caller must pass the same arena to every
/// invocation. The runtime writes its initial value at the first invocation
/// after load or kiln_module_reset_state; commands read it, and the
/// schedule's last copy into it (after every read) leaves the new value for
/// the next invocation.
struct StateVariable {
  /// The tensor's or resource's name in the source model.
  std::string name;
  /// The plan buffer (kind State) holding it.
  int64_t buffer = -1;
  /// Arena offset (a multiple of 64) and size, bytes.
  int64_t offset = 0;
  int64_t bytes = 0;
  /// Shape and element type, for display ("1x20xf32").
  std::string type;
};

/// Everything `kiln inspect` reports about one compilation.
struct CompilationPlan {
  std::string source;
  std::vector<Dispatch> dispatches;
  Schedule schedule;
  MemoryPlan memory;
  /// One entry per model output, in signature order (slot K = output K).
  std::vector<OutputBinding> outputs;
  /// The state variables, in the order of their buffers' indices (empty
  /// for a stateless model).
  std::vector<StateVariable> state;
  /// The quantization of each quantized tensor the model computes or takes
  /// (its inputs and every operator's output) and of its 8-bit weights
  /// (TensorQuantization::readers; int32 biases are left out), sorted by
  /// tensor name; empty for a float model. From the importer's
  /// `kiln.quantization` module attribute (TFLite models).
  std::vector<TensorQuantization> quantization;
};

/// The quantization of tensor `tensor` in `plan`, or null if it has none
/// (a float tensor, a name the plan does not know, an empty name).
const TensorQuantization *findQuantization(const CompilationPlan &plan,
                                           const std::string &tensor);

/// The weights whose readers include one of `d`'s source operators
/// (SourceOp::sourceIndex), in plan order; empty for a float plan.
std::vector<const TensorQuantization *> weightsOf(const CompilationPlan &plan,
                                                  const Dispatch &d);

/// The plan as the JSON document `kiln inspect --json` prints:
/// {source, dispatches: [...], schedule: {waves, commands: [...]},
///  memory: {arena_bytes, lower_bound_bytes, planner, buffers: [...]},
///  quantization: [{tensor, scales, zero_points, dimension, storage,
///  and for weights readers: [operator index, ...], for per-channel weights
///  channels}]}.
std::string planToJson(const CompilationPlan &plan, bool pretty = true);

/// Parses planToJson's output (e.g. an artifact's reflection data).
/// Returns false and sets `error` on malformed input.
bool planFromJson(const std::string &text, CompilationPlan &plan,
                  std::string &error);

/// The dispatch graph in Graphviz DOT (like IREE's
/// --iree-flow-dump-dispatch-graph): dispatches as boxes (name, fused
/// operators, workgroup count, tile sizes, FLOPs), model inputs/outputs as
/// ellipses, one edge per buffer from its writer to each reader, labelled
/// with its bytes.
std::string planToDot(const CompilationPlan &plan);

/// The command list as CSV, one row per command:
/// index,kind,wave,dispatch,name,workgroups,bindings (buffer:offset:length
/// separated by spaces).
std::string planToCsv(const CompilationPlan &plan);

/// How `output` gets its value, for people: "main_dispatch_6" (computed
/// in place), "copy of input 0", "copy of constant 2", "copy of output 0",
/// "fill 0x3f800000", joined by " + " when several commands write parts of
/// it (e.g. "main_dispatch_1 + main_dispatch_2").
std::string describeOutputWriters(const CompilationPlan &plan, const OutputBinding &output);

/// The state rows `kiln inspect` prints, "" for a stateless plan: "state
/// 128 bytes persistent (2 variables, carried across invocations)", then
/// per variable "  state 0 'count' 1xi32, 4 bytes at arena offset 0".
std::string formatStateRows(const CompilationPlan &plan);
/// The same rows for `state` in a `persistentBytes`-byte region (an
/// artifact's memory_plan section, which every profile keeps).
std::string formatStateRows(const std::vector<StateVariable> &state, int64_t persistentBytes);

const char *toString(BufferKind kind);
const char *toString(CommandKind kind);

/// Checks the invariants every plan must hold and returns one message per
/// violation (empty = valid): no two transient buffers live at the same wave
/// overlap in the arena unless one aliases the other; every binding lies
/// inside its buffer; every dispatch reads only buffers written by a command
/// of an earlier wave (or inputs/constants); the arena holds every buffer;
/// every output slot K is bound to buffer K of kind Output whose every byte
/// exactly one command writes, and every read of an output comes in a
/// later wave than all its writes; every state buffer lies in the
/// persistent region, apart from the others, below every transient buffer,
/// and is written by exactly one command, after all its reads.
std::vector<std::string> checkPlan(const CompilationPlan &plan);

} // namespace kiln

#endif
