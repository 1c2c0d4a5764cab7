//===- RegisterTileContractions.cpp - Register-tiled vector kernels -------===//
//
// See Passes.h for what holds before and after and for how a dispatch's
// register tile is chosen (chooseRegisterTile, registerTileFor), and
// kiln/Plan.h (KernelStrategy) for what the plan records of it.
//
// The kernels follow the structure of the BLIS / MLAS microkernels (Van Zee
// and van de Geijn, "BLIS: A Framework for Rapidly Instantiating BLAS
// Functionality", ACM TOMS 41(3), 2015): an MR x NR block of the output is
// held in vector registers for the whole reduction; each reduction step
// loads NR/lanes vectors of the weights, broadcasts MR scalars of the
// activations and does MR x NR/lanes multiply-adds. LLVM contracts each
// multiply-add into one FMA where the CPU has it (the kernels' float math is
// marked contractable in optimizeModule).
//
//===----------------------------------------------------------------------===//
#include "Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <functional>

using namespace mlir;

namespace kiln {

namespace {

/// One vector of a column block: `width` lanes starting `offset` columns
/// into the block; `masked` when only the first `active` lanes are in range.
struct ColumnVector {
  int64_t offset = 0;
  int64_t width = 0;
  int64_t active = 0;
  bool masked = false;
};

/// The vectors covering `columns` output columns with `lanes`-wide vectors:
/// full vectors, then a narrower unmasked power-of-two vector or one masked
/// vector for the rest.
SmallVector<ColumnVector> columnVectors(int64_t columns, int64_t lanes) {
  SmallVector<ColumnVector> out;
  int64_t c = 0;
  for (; c + lanes <= columns; c += lanes)
    out.push_back({c, lanes, lanes, false});
  int64_t rest = columns - c;
  if (rest == 0)
    return out;
  if (llvm::isPowerOf2_64(rest))
    out.push_back({c, rest, rest, false});
  else
    out.push_back({c, lanes, rest, true});
  return out;
}

Value constantIndex(ImplicitLocOpBuilder &b, int64_t v) {
  return b.create<arith::ConstantIndexOp>(v);
}

/// Loads one column vector at `indices` (the last index is the column).
Value loadVector(ImplicitLocOpBuilder &b, Value memref, ValueRange indices,
                 const ColumnVector &cv) {
  auto type = VectorType::get({cv.width}, memref.getType().cast<MemRefType>().getElementType());
  if (!cv.masked)
    return b.create<vector::LoadOp>(type, memref, indices);
  auto maskType = VectorType::get({cv.width}, b.getI1Type());
  Value mask = b.create<vector::ConstantMaskOp>(maskType,
                                                b.getI64ArrayAttr({cv.active}));
  Value zero = b.create<arith::ConstantOp>(type, b.getZeroAttr(type));
  return b.create<vector::MaskedLoadOp>(type, memref, indices, mask, zero);
}

void storeVector(ImplicitLocOpBuilder &b, Value value, Value memref,
                 ValueRange indices, const ColumnVector &cv) {
  if (!cv.masked) {
    b.create<vector::StoreOp>(value, memref, indices);
    return;
  }
  auto maskType = VectorType::get({cv.width}, b.getI1Type());
  Value mask = b.create<vector::ConstantMaskOp>(maskType,
                                                b.getI64ArrayAttr({cv.active}));
  b.create<vector::MaskedStoreOp>(memref, indices, mask, value);
}

/// acc + x * y on vectors: f32, or integers with x and y sign-extended to
/// the accumulator's width (i8 x i8 -> i32: the form LLVM's x86 backend
/// turns into pmaddwd, AArch64's into smlal).
Value multiplyAdd(ImplicitLocOpBuilder &b, Value x, Value y, Value acc) {
  auto accType = acc.getType().cast<VectorType>();
  if (accType.getElementType().isa<FloatType>())
    return b.create<arith::AddFOp>(b.create<arith::MulFOp>(x, y), acc);
  auto widen = [&](Value v) -> Value {
    return v.getType() == accType ? v : b.create<arith::ExtSIOp>(accType, v).getResult();
  };
  return b.create<arith::AddIOp>(b.create<arith::MulIOp>(widen(x), widen(y)), acc);
}

/// Builds `for iv in [0, ub)` loops nested in order, carrying `init`; `body`
/// gets the induction variables and the carried values and returns the new
/// ones. Returns the values after the outermost loop.
SmallVector<Value> buildReductionNest(
    ImplicitLocOpBuilder &b, ArrayRef<Value> upperBounds, ValueRange init,
    const std::function<SmallVector<Value>(ImplicitLocOpBuilder &, ValueRange,
                                           ValueRange)> &body) {
  SmallVector<Value> ivs;
  std::function<SmallVector<Value>(ImplicitLocOpBuilder &, size_t, ValueRange)>
      nest = [&](ImplicitLocOpBuilder &nb, size_t level,
                 ValueRange carried) -> SmallVector<Value> {
    if (level == upperBounds.size())
      return body(nb, ivs, carried);
    Value zero = constantIndex(nb, 0), one = constantIndex(nb, 1);
    auto loop = nb.create<scf::ForOp>(
        zero, upperBounds[level], one, carried,
        [&](OpBuilder &ob, Location loc, Value iv, ValueRange args) {
          ImplicitLocOpBuilder ib(loc, ob);
          ivs.push_back(iv);
          SmallVector<Value> next = nest(ib, level + 1, args);
          ivs.pop_back();
          ib.create<scf::YieldOp>(next);
        });
    return SmallVector<Value>(loop.getResults());
  };
  return nest(b, 0, init);
}

/// Calls `block(b, rowStart, rows)` for row blocks of `rows` rows over
/// [0, rowCount), then covers the remaining rows (fewer than `rows`) with at
/// most one block each of the powers of two below `rows` (7 left of 8:
/// 4 + 2 + 1), so a remainder still runs a multi-row register tile.
void forEachRowBlock(ImplicitLocOpBuilder &b, Value rowCount, int64_t rows,
                     const std::function<void(ImplicitLocOpBuilder &, Value,
                                              int64_t)> &block) {
  // Block sizes: `rows`, then each power of two below it.
  SmallVector<int64_t> sizes = {rows};
  for (int64_t p = rows > 1 ? int64_t(llvm::PowerOf2Floor(rows - 1)) : 0; p >= 1; p /= 2)
    sizes.push_back(p);
  Value start = constantIndex(b, 0);
  for (int64_t r : sizes) {
    // [start, end): as many r-row blocks as fit (the full blocks for r ==
    // rows, then zero or one block of each smaller power of two).
    Value step = constantIndex(b, r);
    Value left = b.create<arith::SubIOp>(rowCount, start);
    Value whole = r == 1 ? left
                         : b.create<arith::MulIOp>(b.create<arith::DivUIOp>(left, step), step)
                               .getResult();
    Value end = b.create<arith::AddIOp>(start, whole);
    b.create<scf::ForOp>(start, end, step, std::nullopt,
                         [&](OpBuilder &ob, Location loc, Value iv, ValueRange) {
                           ImplicitLocOpBuilder ib(loc, ob);
                           block(ib, iv, r);
                           ib.create<scf::YieldOp>();
                         });
    start = end;
  }
}

/// A contraction C[outer..., row, col] += sum over reductions of
/// A(outer, row, red) * B(outer, red)[col], with the columns static and
/// contiguous in C and B. Matmul, batch matmul and the implicit GEMM of a
/// convolution are instances.
/// How a kernel's accumulators start and end: by default loaded from the
/// output C and stored back; with an epilogue (matchEpilogue), started at
/// the fill value and stored through the fused elementwise consumer.
struct TileIO {
  /// The accumulator of one column vector at `indices` (C's, column last).
  std::function<Value(ImplicitLocOpBuilder &, ValueRange, const ColumnVector &)> init;
  /// Stores the finished accumulator `value` of that column vector.
  std::function<void(ImplicitLocOpBuilder &, ValueRange, const ColumnVector &, Value)> store;
};

struct Contraction {
  Value c, bMatrix;
  TileIO io;
  int64_t columns = 0;
  SmallVector<Value> outerBounds;
  Value rowCount;
  SmallVector<Value> reductionBounds;
  /// C's indices without the column.
  std::function<SmallVector<Value>(ImplicitLocOpBuilder &, ValueRange outer, Value row)>
      cIndices;
  /// The scalar of A for one row and reduction step.
  std::function<Value(ImplicitLocOpBuilder &, ValueRange outer, Value row, ValueRange red)>
      loadA;
  /// B's indices without the column.
  std::function<SmallVector<Value>(ImplicitLocOpBuilder &, ValueRange outer, ValueRange red)>
      bIndices;
  /// Set when B is packed (kiln-pack-weights; bMatrix is then the 1-D
  /// packed buffer): the index of the weight vector `offset` columns into
  /// the column block at `colStart` (tile-relative) for reduction step
  /// `red`; `tail` for the tile's last, narrower block.
  std::function<Value(ImplicitLocOpBuilder &, ValueRange red, Value colStart, int64_t offset,
                      bool tail)>
      packedIndex;
};

/// One register block: `rows` x `vectors` accumulators loaded from C, the
/// reduction nest carrying them, one store each.
void emitContractionBlock(ImplicitLocOpBuilder &b, const Contraction &k,
                          ValueRange outer, Value rowStart, int64_t rows,
                          Value colStart, ArrayRef<ColumnVector> vectors, bool tail) {
  SmallVector<Value> rowIndex;
  for (int64_t r = 0; r < rows; ++r)
    rowIndex.push_back(r == 0 ? rowStart
                              : b.create<arith::AddIOp>(rowStart, constantIndex(b, r))
                                    .getResult());
  auto columnOf = [&](ImplicitLocOpBuilder &nb, const ColumnVector &cv) -> Value {
    return cv.offset == 0 ? colStart
                          : nb.create<arith::AddIOp>(colStart, constantIndex(nb, cv.offset))
                                .getResult();
  };
  SmallVector<Value> acc;
  for (int64_t r = 0; r < rows; ++r)
    for (const ColumnVector &cv : vectors) {
      SmallVector<Value> idx = k.cIndices(b, outer, rowIndex[r]);
      idx.push_back(columnOf(b, cv));
      acc.push_back(k.io.init(b, idx, cv));
    }
  SmallVector<Value> result = buildReductionNest(
      b, k.reductionBounds, acc,
      [&](ImplicitLocOpBuilder &nb, ValueRange red, ValueRange carried) {
        SmallVector<Value> weights;
        for (const ColumnVector &cv : vectors) {
          if (k.packedIndex) {
            Value idx = k.packedIndex(nb, red, colStart, cv.offset, tail);
            weights.push_back(loadVector(nb, k.bMatrix, ValueRange{idx}, cv));
            continue;
          }
          SmallVector<Value> idx = k.bIndices(nb, outer, red);
          idx.push_back(columnOf(nb, cv));
          weights.push_back(loadVector(nb, k.bMatrix, idx, cv));
        }
        SmallVector<Value> next;
        for (int64_t r = 0; r < rows; ++r) {
          Value a = k.loadA(nb, outer, rowIndex[r], red);
          for (size_t v = 0; v < vectors.size(); ++v) {
            Value splat = nb.create<vector::BroadcastOp>(weights[v].getType(), a);
            next.push_back(multiplyAdd(nb, splat, weights[v],
                                       carried[r * vectors.size() + v]));
          }
        }
        return next;
      });
  for (int64_t r = 0; r < rows; ++r)
    for (size_t v = 0; v < vectors.size(); ++v) {
      SmallVector<Value> idx = k.cIndices(b, outer, rowIndex[r]);
      idx.push_back(columnOf(b, vectors[v]));
      k.io.store(b, idx, vectors[v], result[r * vectors.size() + v]);
    }
}

/// Calls `block(b, colStart, vectors, tail)` for the column blocks of
/// `tile` over `columns` static columns: a loop over the uniform blocks
/// (tile.vectors full-width vectors each: no mask, no narrow vector), then
/// one tail block (tail = true) with the rest. Offsets in `vectors` are
/// relative to colStart.
void forEachColumnBlock(
    ImplicitLocOpBuilder &b, int64_t columns, const RegisterTile &tile,
    const std::function<void(ImplicitLocOpBuilder &, Value, ArrayRef<ColumnVector>, bool)>
        &block) {
  SmallVector<ColumnVector> all = columnVectors(columns, tile.lanes);
  const int64_t perBlock = tile.vectors;
  int64_t fullVectors = 0;
  for (const ColumnVector &cv : all)
    fullVectors += !cv.masked && cv.width == tile.lanes;
  const int64_t uniform = fullVectors / perBlock;
  SmallVector<ColumnVector> blockVectors;
  for (int64_t v = 0; v < perBlock; ++v)
    blockVectors.push_back({v * tile.lanes, tile.lanes, tile.lanes, false});
  SmallVector<ColumnVector> tail;
  for (size_t v = uniform * perBlock; v < all.size(); ++v) {
    ColumnVector cv = all[v];
    cv.offset -= uniform * perBlock * tile.lanes;
    tail.push_back(cv);
  }
  const int64_t blockColumns = perBlock * tile.lanes;
  if (uniform == 1)
    block(b, constantIndex(b, 0), blockVectors, false);
  else if (uniform > 1)
    b.create<scf::ForOp>(constantIndex(b, 0), constantIndex(b, uniform * blockColumns),
                         constantIndex(b, blockColumns), std::nullopt,
                         [&](OpBuilder &fb, Location loc, Value col, ValueRange) {
                           ImplicitLocOpBuilder ib(loc, fb);
                           block(ib, col, blockVectors, false);
                           ib.create<scf::YieldOp>();
                         });
  if (!tail.empty())
    block(b, constantIndex(b, uniform * blockColumns), tail, true);
}

/// Emits the whole contraction with `tile`: outer loops, then column blocks
/// (forEachColumnBlock), then row blocks.
void emitContraction(ImplicitLocOpBuilder &b, const Contraction &k,
                     const RegisterTile &tile) {
  SmallVector<Value> outerIvs;
  std::function<void(ImplicitLocOpBuilder &, size_t)> outerNest =
      [&](ImplicitLocOpBuilder &ob, size_t level) {
        if (level < k.outerBounds.size()) {
          ob.create<scf::ForOp>(
              constantIndex(ob, 0), k.outerBounds[level], constantIndex(ob, 1),
              std::nullopt, [&](OpBuilder &fb, Location loc, Value iv, ValueRange) {
                ImplicitLocOpBuilder ib(loc, fb);
                outerIvs.push_back(iv);
                outerNest(ib, level + 1);
                outerIvs.pop_back();
                ib.create<scf::YieldOp>();
              });
          return;
        }
        // Column blocks outermost, rows inside: one block's weight panel
        // (K x blockColumns) is read by every row block of the workgroup
        // while it is in cache.
        forEachColumnBlock(ob, k.columns, tile,
                           [&](ImplicitLocOpBuilder &cb, Value col,
                               ArrayRef<ColumnVector> vectors, bool tail) {
                             forEachRowBlock(cb, k.rowCount, tile.rows,
                                             [&](ImplicitLocOpBuilder &rb, Value rowStart,
                                                 int64_t rows) {
                                               emitContractionBlock(rb, k, outerIvs, rowStart,
                                                                    rows, col, vectors, tail);
                                             });
                           });
      };
  outerNest(b, 0);
}

Value dimOf(ImplicitLocOpBuilder &b, Value memref, int64_t d) {
  return b.create<memref::DimOp>(memref, d);
}

/// Scalar types an epilogue's body may compute in: f32, and signless
/// integers (i1 conditions, the i8/i32/i64 arithmetic of int8
/// requantization).
bool isScalarKernelType(Type t) { return t.isF32() || t.isSignlessInteger(); }

/// True if `value` is an f32, i8 or i32 memref (the element types the
/// kernels compute in: f32, and int8 products accumulated in i32) with a
/// strided layout whose innermost stride is 1 (what vector.load needs).
bool isUnitStrideKernelMemref(Value value) {
  auto type = value.getType().dyn_cast<MemRefType>();
  if (!type || type.getRank() == 0)
    return false;
  Type e = type.getElementType();
  if (!e.isF32() && !e.isSignlessInteger(8) && !e.isSignlessInteger(32))
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)))
    return false;
  return strides.back() == 1;
}

/// Static dimension `d` of `v`'s memref type (dynamic if not a memref).
int64_t staticDim(Value v, int64_t d) {
  auto type = v.getType().dyn_cast<MemRefType>();
  return type && d < type.getRank() ? type.getDimSize(d) : ShapedType::kDynamic;
}

/// A contraction whose output tile is a stack temporary filled with a
/// constant and read once by an elementwise linalg.generic (bias, fused
/// activation, residual ADD) that writes the dispatch's output: the
/// generic's body is applied to the accumulators in registers and the
/// result stored once, instead of storing the tile, reading it back and
/// storing again.
struct Epilogue {
  linalg::GenericOp generic;
  linalg::FillOp fill;
  /// True when the generic's operands carry a trailing unit dimension the
  /// kernel drops (depthwise: HWCM with multiplier 1).
  bool dropUnit = false;
};

/// The stack temporary that defines `v`: a memref.alloca, or a memref.view
/// of an alloca used by nothing else (a temporary with dynamic sizes and a
/// static bound, buildBufferizationPipeline's allocateTileTemporary).
/// Null for any other value.
static Operation *tileTemporaryOf(Value v) {
  if (auto alloca = v.getDefiningOp<memref::AllocaOp>())
    return alloca;
  if (auto view = v.getDefiningOp<memref::ViewOp>())
    if (view.getSource().getDefiningOp<memref::AllocaOp>() && view.getSource().hasOneUse())
      return view;
  return nullptr;
}

/// Matches the Epilogue of `contraction`, whose output is `c` (with a
/// trailing unit dimension the kernel drops if `dropUnit`). Conditions: `c` is a stack temporary (tileTemporaryOf) used only by one linalg.fill before
/// the contraction, the contraction and one linalg.generic after it, with
/// only memory-effect-free ops in between; the generic is all-parallel,
/// writes one unit-stride output (f32, or int8 after a requantization) with
/// the identity map and reads `c` with the identity map; its other inputs
/// are unit-stride memrefs read with the identity map or along the column
/// dimension only (a bias, per-channel multipliers and shifts); its body is
/// arith ops on f32 or signless integer scalars that do not read the
/// output.
std::optional<Epilogue> matchEpilogue(Operation *contraction, Value c, bool dropUnit) {
  Operation *alloca = tileTemporaryOf(c);
  if (!alloca)
    return std::nullopt;
  Epilogue e;
  e.dropUnit = dropUnit;
  for (Operation *user : alloca->getUsers()) {
    if (user == contraction)
      continue;
    if (auto fill = dyn_cast<linalg::FillOp>(user); fill && !e.fill &&
        fill->getBlock() == contraction->getBlock() && fill->isBeforeInBlock(contraction))
      e.fill = fill;
    else if (auto generic = dyn_cast<linalg::GenericOp>(user); generic && !e.generic &&
             generic->getBlock() == contraction->getBlock() &&
             contraction->isBeforeInBlock(generic))
      e.generic = generic;
    else
      return std::nullopt;
  }
  if (!e.fill || !e.generic ||
      e.fill.value().getType() != c.getType().cast<MemRefType>().getElementType())
    return std::nullopt;
  for (Operation *op = contraction->getNextNode(); op != e.generic; op = op->getNextNode())
    if (!isMemoryEffectFree(op))
      return std::nullopt;
  linalg::GenericOp g = e.generic;
  if (!g.hasBufferSemantics() || g.getNumDpsInits() != 1 ||
      g.getNumParallelLoops() != g.getNumLoops())
    return std::nullopt;
  const int64_t rank = g.getNumLoops();
  const int64_t cRank = dropUnit ? rank - 1 : rank;
  // An f32 memref of the loops' rank whose column dimension (the last one
  // the kernel indexes) has unit stride, as vector.load needs.
  auto usable = [&](Value v) {
    auto type = v.getType().dyn_cast<MemRefType>();
    SmallVector<int64_t> strides;
    int64_t offset;
    return type && type.getRank() == rank && isScalarKernelType(type.getElementType()) &&
           (!dropUnit || type.getDimSize(rank - 1) == 1) &&
           succeeded(getStridesAndOffset(type, strides, offset)) && strides[cRank - 1] == 1;
  };
  OpOperand *out = g.getDpsInitOperand(0);
  if (!usable(out->get()) || !g.getMatchingIndexingMap(out).isIdentity())
    return std::nullopt;
  Block &body = g.getRegion().front();
  if (!g.getMatchingBlockArgument(out).use_empty())
    return std::nullopt;
  bool readsC = false;
  for (OpOperand *in : g.getDpsInputOperands()) {
    AffineMap map = g.getMatchingIndexingMap(in);
    if (in->get() == c) {
      if (!map.isIdentity() || readsC)
        return std::nullopt;
      readsC = true;
      continue;
    }
    if (map.isIdentity() && usable(in->get()))
      continue;
    auto type = in->get().getType().dyn_cast<MemRefType>();
    bool bias = map.getNumResults() == 1 && map.getResult(0).isa<AffineDimExpr>() &&
                map.getResult(0).cast<AffineDimExpr>().getPosition() == cRank - 1 &&
                type && type.getRank() == 1 && isUnitStrideKernelMemref(in->get());
    if (!bias)
      return std::nullopt;
  }
  if (!readsC)
    return std::nullopt;
  for (Operation &op : body.without_terminator()) {
    if (op.getDialect() != op.getContext()->getLoadedDialect<arith::ArithDialect>() ||
        op.getNumRegions() != 0 || op.getNumResults() != 1)
      return std::nullopt;
    for (Type t : op.getResultTypes())
      if (!isScalarKernelType(t))
        return std::nullopt;
    for (Value v : op.getOperands())
      if (!isScalarKernelType(v.getType()))
        return std::nullopt;
  }
  return e;
}

/// Default TileIO: the accumulators are loaded from `c` and stored back.
TileIO memoryIO(Value c) {
  TileIO io;
  io.init = [c](ImplicitLocOpBuilder &b, ValueRange idx, const ColumnVector &cv) {
    return loadVector(b, c, idx, cv);
  };
  io.store = [c](ImplicitLocOpBuilder &b, ValueRange idx, const ColumnVector &cv, Value v) {
    storeVector(b, v, c, idx, cv);
  };
  return io;
}

/// TileIO through `e`: accumulators start at the fill value; at the end the
/// generic's body runs on vectors (its scalar operands from outside the
/// body broadcast) and the result is stored to the generic's output. Views
/// that drop a trailing unit dimension are built with `b` (at the generic).
TileIO epilogueIO(ImplicitLocOpBuilder &b, Epilogue e, Value c,
                  const std::function<Value(ImplicitLocOpBuilder &, Value)> &dropUnit) {
  linalg::GenericOp g = e.generic;
  // The generic's operands as the kernel indexes them.
  SmallVector<Value> inputs;
  SmallVector<bool> isBias;
  for (OpOperand *in : g.getDpsInputOperands()) {
    Value v = in->get();
    bool bias = v != c && !g.getMatchingIndexingMap(in).isIdentity();
    isBias.push_back(bias);
    inputs.push_back(v == c || bias || !e.dropUnit ? v : dropUnit(b, v));
  }
  Value output = g.getDpsInitOperand(0)->get();
  if (e.dropUnit)
    output = dropUnit(b, output);
  Value fillValue = e.fill.value();
  Block *body = &g.getRegion().front();
  TileIO io;
  io.init = [fillValue](ImplicitLocOpBuilder &ib, ValueRange, const ColumnVector &cv) -> Value {
    return ib.create<vector::BroadcastOp>(VectorType::get({cv.width}, fillValue.getType()),
                                          fillValue);
  };
  io.store = [=](ImplicitLocOpBuilder &ib, ValueRange idx, const ColumnVector &cv, Value acc) {
    IRMapping map;
    for (size_t i = 0; i < inputs.size(); ++i) {
      Value arg = body->getArgument(i);
      if (inputs[i] == c)
        map.map(arg, acc);
      else if (isBias[i])
        map.map(arg, loadVector(ib, inputs[i], ValueRange{idx.back()}, cv));
      else
        map.map(arg, loadVector(ib, inputs[i], idx, cv));
    }
    auto vectorOf = [&](Type t) { return VectorType::get({cv.width}, t); };
    for (Operation &op : body->without_terminator()) {
      if (isa<arith::ConstantOp>(op)) {
        Value scalar = ib.clone(op)->getResult(0);
        map.map(op.getResult(0),
                ib.create<vector::BroadcastOp>(vectorOf(scalar.getType()), scalar).getResult());
        continue;
      }
      SmallVector<Value> operands;
      for (Value v : op.getOperands())
        operands.push_back(map.contains(v)
                               ? map.lookup(v)
                               : ib.create<vector::BroadcastOp>(vectorOf(v.getType()), v)
                                     .getResult());
      OperationState state(op.getLoc(), op.getName());
      state.addOperands(operands);
      state.addAttributes(op.getAttrs());
      state.addTypes(vectorOf(op.getResult(0).getType()));
      Operation *vop = ib.create(state);
      map.map(op.getResult(0), vop->getResult(0));
    }
    Value result = map.lookup(body->getTerminator()->getOperand(0));
    storeVector(ib, result, output, idx, cv);
  };
  return io;
}

/// Erases what an epilogue replaced (the generic and the fill); the
/// temporary, left with only `memref.dim` users, folds away.
void eraseEpilogue(PatternRewriter &rewriter, Epilogue e) {
  rewriter.eraseOp(e.generic);
  rewriter.eraseOp(e.fill);
}

} // namespace

std::optional<RegisterTile> registerTileFor(Operation *op, const KernelTarget &target,
                                            std::string *whyNot) {
  auto fail = [&](const char *why) -> std::optional<RegisterTile> {
    if (whyNot)
      *whyNot = why;
    return std::nullopt;
  };
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::Conv2DNhwcHwcfOp,
                        linalg::DepthwiseConv2DNhwcHwcmOp>(op))
    return fail("not a matmul, batch matmul, NHWC/HWCF convolution or depthwise convolution");
  if (!linalgOp.hasBufferSemantics())
    return fail("runs on buffers");
  Value in = linalgOp.getDpsInputOperand(0)->get(), w = linalgOp.getDpsInputOperand(1)->get(),
        out = linalgOp.getDpsInitOperand(0)->get();
  Type inElement = in.getType().cast<MemRefType>().getElementType();
  Type wElement = w.getType().cast<MemRefType>().getElementType();
  Type outElement = out.getType().cast<MemRefType>().getElementType();
  bool f32 = inElement.isF32() && wElement.isF32() && outElement.isF32();
  bool int8 = inElement.isSignlessInteger(8) && wElement.isSignlessInteger(8) &&
              outElement.isSignlessInteger(32);
  // int8 register tiles need SIMD lanes: on a scalar target (Cortex-M) the
  // tile's unrolled integer accumulators outnumber the registers and only
  // add code, so the loop kernel stays.
  if (int8 && target.vectorLanes < 4)
    return fail("int8 register tiles need at least 4 vector lanes");
  if (!(f32 || int8) || !isUnitStrideKernelMemref(w) || !isUnitStrideKernelMemref(out))
    return fail("needs f32 operands (or i8 operands with an i32 accumulator) whose "
                "innermost dimension has unit stride");
  if (isa<linalg::DepthwiseConv2DNhwcHwcmOp>(op)) {
    if (!isUnitStrideKernelMemref(in))
      return fail("needs an input with unit-stride channels");
    if (staticDim(w, 3) != 1)
      return fail("channel multiplier is not 1");
    int64_t kh = staticDim(w, 0), kw = staticDim(w, 1), channels = staticDim(w, 2);
    if (ShapedType::isDynamic(kh) || ShapedType::isDynamic(kw) ||
        ShapedType::isDynamic(channels) || kh * kw > 49)
      return fail("needs a static window of at most 49 taps and static channels");
    return chooseDepthwiseTile(channels, target);
  }
  auto outType = out.getType().cast<MemRefType>();
  int64_t columns = outType.getDimSize(outType.getRank() - 1);
  if (ShapedType::isDynamic(columns))
    return fail("needs a static output column (channel) count");
  return chooseRegisterTile(columns, target);
}

namespace {

/// Weights kiln-pack-weights stored in the panel layout: `b` (the op's B
/// operand) is the marked unrealized cast of the packed 1-D buffer, or a
/// subview of it that slices only the columns.
struct PackedWeights {
  Value packed;
  PanelLayout layout;
  /// The reduction dimensions of the logical weights (K = their product).
  SmallVector<int64_t> reductionDims;
  /// Where the op's columns start in the logical weights.
  OpFoldResult columnOffset;
};

std::optional<PackedWeights> packedWeightsOf(Value b) {
  PackedWeights p;
  p.columnOffset = IntegerAttr::get(IndexType::get(b.getContext()), 0);
  Value logical = b;
  if (auto subview = b.getDefiningOp<memref::SubViewOp>()) {
    p.columnOffset = subview.getMixedOffsets().back();
    logical = subview.getSource();
  }
  auto cast = logical.getDefiningOp<UnrealizedConversionCastOp>();
  if (!cast || !cast->hasAttr(kPanelColumnsAttrName) || cast.getInputs().size() != 1)
    return std::nullopt;
  auto type = logical.getType().cast<MemRefType>();
  p.packed = cast.getInputs().front();
  p.layout.columns = type.getShape().back();
  p.layout.rows = type.getNumElements() / p.layout.columns;
  p.layout.panel = cast->getAttrOfType<IntegerAttr>(kPanelColumnsAttrName).getInt();
  p.reductionDims.assign(type.getShape().begin(), type.getShape().end() - 1);
  return p;
}

/// Contraction::packedIndex for `p` (PanelLayout in Passes.h): the block
/// at tile column colStart starts at global column s = offset + colStart,
/// a panel boundary (kiln-pack-weights checked it), so its panel begins at
/// element s x K; rows are `panel` wide, the tail block's N - s.
std::function<Value(ImplicitLocOpBuilder &, ValueRange, Value, int64_t, bool)>
packedIndexOf(const PackedWeights &p) {
  return [p](ImplicitLocOpBuilder &b, ValueRange red, Value colStart, int64_t offset,
             bool tail) -> Value {
    Value k = red[0];
    for (size_t i = 1; i < red.size(); ++i)
      k = b.create<arith::AddIOp>(
          b.create<arith::MulIOp>(k, constantIndex(b, p.reductionDims[i])), red[i]);
    Value start = colStart;
    if (std::optional<int64_t> c = getConstantIntValue(p.columnOffset); c != 0)
      start = b.create<arith::AddIOp>(start, getValueOrCreateConstantIndexOp(
                                                 b, b.getLoc(), p.columnOffset));
    Value base = b.create<arith::MulIOp>(start, constantIndex(b, p.layout.rows));
    // The tail block is the last panel: N - (its start) columns wide.
    Value width = tail ? b.create<arith::SubIOp>(constantIndex(b, p.layout.columns), start)
                             .getResult()
                       : constantIndex(b, p.layout.panel);
    Value row = b.create<arith::AddIOp>(base, b.create<arith::MulIOp>(k, width));
    return b.create<arith::AddIOp>(row, constantIndex(b, offset));
  };
}

/// linalg.matmul (C[m, n] += A[m, k] B[k, n]) and linalg.batch_matmul (the
/// same with a leading batch index on every operand, an outer loop).
template <typename OpTy, bool Batched>
struct TileMatmulFamily : public OpRewritePattern<OpTy> {
  TileMatmulFamily(MLIRContext *ctx, const KernelTarget &target)
      : OpRewritePattern<OpTy>(ctx), target(target) {}
  LogicalResult matchAndRewrite(OpTy op, PatternRewriter &rewriter) const override {
    std::string why;
    std::optional<RegisterTile> tile = registerTileFor(op, target, &why);
    if (!tile)
      return rewriter.notifyMatchFailure(op, why);
    Value a = op.getDpsInputOperand(0)->get(), bm = op.getDpsInputOperand(1)->get(),
          c = op.getDpsInitOperand(0)->get();
    const int64_t first = Batched ? 1 : 0; // position of the row index
    std::optional<Epilogue> epilogue = matchEpilogue(op, c, /*dropUnit=*/false);
    if (epilogue)
      rewriter.setInsertionPoint(epilogue->generic);
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Contraction k;
    k.c = c;
    k.io = epilogue ? epilogueIO(b, *epilogue, c, nullptr) : memoryIO(c);
    k.bMatrix = bm;
    k.columns = c.getType().template cast<MemRefType>().getDimSize(first + 1);
    if (Batched)
      k.outerBounds = {dimOf(b, c, 0)};
    k.rowCount = dimOf(b, c, first);
    k.reductionBounds = {dimOf(b, a, first + 1)};
    k.cIndices = [](ImplicitLocOpBuilder &, ValueRange outer, Value row) {
      SmallVector<Value> idx(outer.begin(), outer.end());
      idx.push_back(row);
      return idx;
    };
    k.loadA = [a](ImplicitLocOpBuilder &nb, ValueRange outer, Value row,
                  ValueRange red) -> Value {
      SmallVector<Value> idx(outer.begin(), outer.end());
      idx.append({row, red[0]});
      return nb.create<memref::LoadOp>(a, idx);
    };
    k.bIndices = [](ImplicitLocOpBuilder &, ValueRange outer, ValueRange red) {
      SmallVector<Value> idx(outer.begin(), outer.end());
      idx.push_back(red[0]);
      return idx;
    };
    if (std::optional<PackedWeights> packed = packedWeightsOf(bm); packed && !Batched) {
      k.bMatrix = packed->packed;
      k.packedIndex = packedIndexOf(*packed);
    }
    emitContraction(b, k, *tile);
    if (epilogue)
      eraseEpilogue(rewriter, *epilogue);
    rewriter.eraseOp(op);
    return success();
  }
  KernelTarget target;
};
using TileMatmul = TileMatmulFamily<linalg::MatmulOp, false>;
using TileBatchMatmul = TileMatmulFamily<linalg::BatchMatmulOp, true>;

/// The two values of a conv's strides or dilations attribute.
std::pair<int64_t, int64_t> pairOf(DenseIntElementsAttr attr) {
  auto values = attr.getValues<int64_t>();
  return {values[0], values[1]};
}

/// ivs[i] * scale + offset * step, folded where constant.
Value affineIndex(ImplicitLocOpBuilder &b, Value base, int64_t scale, Value tap,
                  int64_t tapScale) {
  Value x = scale == 1 ? base
                       : b.create<arith::MulIOp>(base, constantIndex(b, scale)).getResult();
  Value t = tapScale == 1 ? tap
                          : b.create<arith::MulIOp>(tap, constantIndex(b, tapScale)).getResult();
  return b.create<arith::AddIOp>(x, t);
}

/// conv_2d_nhwc_hwcf as an implicit GEMM: rows = output columns (ow) of one
/// output row (n, oh), columns = output channels, reduction = (kh, kw, c),
/// read straight from the input window (no im2col copy).
struct TileConv2D : public OpRewritePattern<linalg::Conv2DNhwcHwcfOp> {
  TileConv2D(MLIRContext *ctx, const KernelTarget &target)
      : OpRewritePattern(ctx), target(target) {}
  LogicalResult matchAndRewrite(linalg::Conv2DNhwcHwcfOp op,
                                PatternRewriter &rewriter) const override {
    std::string why;
    std::optional<RegisterTile> tile = registerTileFor(op, target, &why);
    if (!tile)
      return rewriter.notifyMatchFailure(op, why);
    Value in = op.getDpsInputOperand(0)->get(), w = op.getDpsInputOperand(1)->get(),
          out = op.getDpsInitOperand(0)->get();
    int64_t f = out.getType().cast<MemRefType>().getDimSize(3);
    auto [sh, sw] = pairOf(op.getStrides());
    auto [dh, dw] = pairOf(op.getDilations());
    std::optional<Epilogue> epilogue = matchEpilogue(op, out, /*dropUnit=*/false);
    if (epilogue)
      rewriter.setInsertionPoint(epilogue->generic);
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Contraction k;
    k.c = out;
    k.io = epilogue ? epilogueIO(b, *epilogue, out, nullptr) : memoryIO(out);
    k.bMatrix = w;
    k.columns = f;
    k.outerBounds = {dimOf(b, out, 0), dimOf(b, out, 1)};
    k.rowCount = dimOf(b, out, 2);
    k.reductionBounds = {dimOf(b, w, 0), dimOf(b, w, 1), dimOf(b, w, 2)};
    k.cIndices = [](ImplicitLocOpBuilder &, ValueRange outer, Value row) {
      return SmallVector<Value>{outer[0], outer[1], row};
    };
    k.loadA = [=](ImplicitLocOpBuilder &nb, ValueRange outer, Value row,
                  ValueRange red) -> Value {
      Value h = affineIndex(nb, outer[1], sh, red[0], dh);
      Value x = affineIndex(nb, row, sw, red[1], dw);
      return nb.create<memref::LoadOp>(in, ValueRange{outer[0], h, x, red[2]});
    };
    k.bIndices = [](ImplicitLocOpBuilder &, ValueRange, ValueRange red) {
      return SmallVector<Value>{red[0], red[1], red[2]};
    };
    if (std::optional<PackedWeights> packed = packedWeightsOf(w)) {
      k.bMatrix = packed->packed;
      k.packedIndex = packedIndexOf(*packed);
    }
    emitContraction(b, k, *tile);
    if (epilogue)
      eraseEpilogue(rewriter, *epilogue);
    rewriter.eraseOp(op);
    return success();
  }
  KernelTarget target;
};

/// An NHWC input window padded through a stack buffer, as the tiled
/// dispatch leaves it: linalg.fill of the buffer with a constant, then
/// linalg.copy of `source` into the view at (0, top, left, 0) of size
/// (N, rows, cols, C). The buffer at (n, h, x, c) is the source at
/// (n, h - top, x - left, c) inside that view, else the fill value.
struct PaddedInput {
  linalg::FillOp fill;
  linalg::CopyOp copy;
  Value source;
  OpFoldResult top, left, rows, cols;
};

/// Matches the PaddedInput that `consumer` reads as `in`: `in` is a
/// stack temporary (tileTemporaryOf) whose only other users are one linalg.fill and one unit-
/// stride subview that one linalg.copy writes, in the order fill, copy,
/// consumer in one block; the view offsets only H and W; the source is a
/// unit-stride f32 memref of rank 4.
std::optional<PaddedInput> matchPaddedInput(Value in, Operation *consumer) {
  Operation *alloca = tileTemporaryOf(in);
  auto type = in.getType().cast<MemRefType>();
  if (!alloca || type.getRank() != 4)
    return std::nullopt;
  PaddedInput p;
  memref::SubViewOp interior;
  for (Operation *user : alloca->getUsers()) {
    if (user == consumer)
      continue;
    if (auto fill = dyn_cast<linalg::FillOp>(user); fill && !p.fill)
      p.fill = fill;
    else if (auto view = dyn_cast<memref::SubViewOp>(user); view && !interior)
      interior = view;
    else
      return std::nullopt;
  }
  if (!p.fill || !interior || p.fill.value().getType() != type.getElementType() ||
      !interior->hasOneUse())
    return std::nullopt;
  p.copy = dyn_cast<linalg::CopyOp>(*interior->getUsers().begin());
  if (!p.copy || p.copy.getOutputs().front() != interior.getResult())
    return std::nullopt;
  Block *block = consumer->getBlock();
  if (p.fill->getBlock() != block || p.copy->getBlock() != block ||
      !p.fill->isBeforeInBlock(p.copy) || !p.copy->isBeforeInBlock(consumer))
    return std::nullopt;
  p.source = p.copy.getInputs().front();
  if (!isUnitStrideKernelMemref(p.source) || p.source.getType().cast<MemRefType>().getRank() != 4 ||
      interior.getType().getRank() != 4)
    return std::nullopt;
  SmallVector<OpFoldResult> offsets = interior.getMixedOffsets(),
                            sizes = interior.getMixedSizes(),
                            strides = interior.getMixedStrides();
  for (OpFoldResult stride : strides)
    if (!isConstantIntValue(stride, 1))
      return std::nullopt;
  if (!isConstantIntValue(offsets[0], 0) || !isConstantIntValue(offsets[3], 0) ||
      !isConstantIntValue(sizes[3], type.getDimSize(3)))
    return std::nullopt;
  p.top = offsets[1];
  p.left = offsets[2];
  p.rows = sizes[1];
  p.cols = sizes[2];
  return p;
}

/// Reads the padded buffer of `p` at (n, h, x, c0..) as one column vector,
/// straight from the source: the source position is clamped into range
/// for the load and the fill value selected where (h, x) is padding.
Value loadPadded(ImplicitLocOpBuilder &b, PaddedInput p, Value n, Value h, Value x, Value c,
                 const ColumnVector &cv) {
  Location loc = b.getLoc();
  Value hs = b.create<arith::SubIOp>(h, getValueOrCreateConstantIndexOp(b, loc, p.top));
  Value xs = b.create<arith::SubIOp>(x, getValueOrCreateConstantIndexOp(b, loc, p.left));
  // Unsigned compares: a negative position is a large unsigned one.
  Value hIn = b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, hs,
                                      getValueOrCreateConstantIndexOp(b, loc, p.rows));
  Value xIn = b.create<arith::CmpIOp>(arith::CmpIPredicate::ult, xs,
                                      getValueOrCreateConstantIndexOp(b, loc, p.cols));
  Value zero = constantIndex(b, 0);
  Value hc = b.create<arith::SelectOp>(hIn, hs, zero);
  Value xc = b.create<arith::SelectOp>(xIn, xs, zero);
  Value v = loadVector(b, p.source, {n, hc, xc, c}, cv);
  Value pad = b.create<vector::BroadcastOp>(v.getType(), p.fill.value());
  Value inside = b.create<arith::AndIOp>(hIn, xIn);
  return b.create<arith::SelectOp>(inside, v, pad);
}

/// Drops the trailing unit dimension of a depthwise filter/output buffer
/// (channel multiplier 1) with a rank-reducing subview.
Value dropTrailingUnitDim(ImplicitLocOpBuilder &b, Value memref) {
  auto type = memref.getType().cast<MemRefType>();
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)), strides(rank, b.getIndexAttr(1)),
      sizes;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    sizes.push_back(type.isDynamicDim(d) ? OpFoldResult(dimOf(b, memref, d))
                                         : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
    if (d + 1 < rank)
      shape.push_back(type.getDimSize(d));
  }
  auto reduced = memref::SubViewOp::inferRankReducedResultType(shape, type, offsets, sizes,
                                                               strides)
                     .cast<MemRefType>();
  return b.create<memref::SubViewOp>(reduced, memref, offsets, sizes, strides);
}

/// depthwise_conv_2d_nhwc_hwcm with multiplier 1: channels in vectors,
/// `tile.rows` output pixels of one row per step, the window's taps
/// unrolled so a loaded input vector serves every tap that reads it.
struct TileDepthwise : public OpRewritePattern<linalg::DepthwiseConv2DNhwcHwcmOp> {
  TileDepthwise(MLIRContext *ctx, const KernelTarget &target)
      : OpRewritePattern(ctx), target(target) {}
  LogicalResult matchAndRewrite(linalg::DepthwiseConv2DNhwcHwcmOp op,
                                PatternRewriter &rewriter) const override {
    std::string why;
    std::optional<RegisterTile> found = registerTileFor(op, target, &why);
    if (!found)
      return rewriter.notifyMatchFailure(op, why);
    Value in = op.getDpsInputOperand(0)->get(), w = op.getDpsInputOperand(1)->get(),
          out = op.getDpsInitOperand(0)->get();
    auto wType = w.getType().cast<MemRefType>();
    int64_t kh = wType.getDimSize(0), kw = wType.getDimSize(1), channels = wType.getDimSize(2);
    auto [sh, sw] = pairOf(op.getStrides());
    auto [dh, dw] = pairOf(op.getDilations());
    std::optional<Epilogue> epilogue = matchEpilogue(op, out, /*dropUnit=*/true);
    if (epilogue)
      rewriter.setInsertionPoint(epilogue->generic);
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Value filter = dropTrailingUnitDim(b, w);
    Value output = dropTrailingUnitDim(b, out);
    TileIO io = epilogue ? epilogueIO(b, *epilogue, out, dropTrailingUnitDim) : memoryIO(output);
    // Padding read at the window's edges instead of through the copy.
    std::optional<PaddedInput> padded = matchPaddedInput(in, op);
    auto loadInput = [&](ImplicitLocOpBuilder &lb, Value n, Value h, Value x, Value c,
                         const ColumnVector &cv) {
      return padded ? loadPadded(lb, *padded, n, h, x, c, cv)
                    : loadVector(lb, in, {n, h, x, c}, cv);
    };
    RegisterTile tile = *found;

    auto emitBlock = [&](ImplicitLocOpBuilder &rb, Value n, Value oh, Value rowStart,
                         int64_t rows, Value c0, ArrayRef<ColumnVector> vectors) {
      auto channelOf = [&](const ColumnVector &cv) -> Value {
        return cv.offset == 0
                   ? c0
                   : rb.create<arith::AddIOp>(c0, constantIndex(rb, cv.offset)).getResult();
      };
      SmallVector<Value> cs;
      for (const ColumnVector &cv : vectors)
        cs.push_back(channelOf(cv));
      SmallVector<Value> ow;
      for (int64_t r = 0; r < rows; ++r)
        ow.push_back(r == 0 ? rowStart
                            : rb.create<arith::AddIOp>(rowStart, constantIndex(rb, r))
                                  .getResult());
      SmallVector<Value> acc;
      for (int64_t r = 0; r < rows; ++r)
        for (size_t v = 0; v < vectors.size(); ++v)
          acc.push_back(io.init(rb, {n, oh, ow[r], cs[v]}, vectors[v]));
      for (int64_t i = 0; i < kh; ++i) {
        Value h = affineIndex(rb, oh, sh, constantIndex(rb, i), dh);
        for (int64_t j = 0; j < kw; ++j) {
          for (size_t v = 0; v < vectors.size(); ++v) {
            const ColumnVector &cv = vectors[v];
            Value c = cs[v];
            Value wv = loadVector(rb, filter, {constantIndex(rb, i), constantIndex(rb, j), c}, cv);
            for (int64_t r = 0; r < rows; ++r) {
              Value x = affineIndex(rb, ow[r], sw, constantIndex(rb, j), dw);
              Value xv = loadInput(rb, n, h, x, c, cv);
              Value &a = acc[r * vectors.size() + v];
              a = multiplyAdd(rb, xv, wv, a);
            }
          }
        }
      }
      for (int64_t r = 0; r < rows; ++r)
        for (size_t v = 0; v < vectors.size(); ++v)
          io.store(rb, {n, oh, ow[r], cs[v]}, vectors[v], acc[r * vectors.size() + v]);
    };

    auto loop = [&](ImplicitLocOpBuilder &lb, Value ub,
                    const std::function<void(ImplicitLocOpBuilder &, Value)> &body) {
      lb.create<scf::ForOp>(constantIndex(lb, 0), ub, constantIndex(lb, 1), std::nullopt,
                            [&](OpBuilder &fb, Location loc, Value iv, ValueRange) {
                              ImplicitLocOpBuilder ib(loc, fb);
                              body(ib, iv);
                              ib.create<scf::YieldOp>();
                            });
    };
    loop(b, dimOf(b, output, 0), [&](ImplicitLocOpBuilder &nb, Value n) {
      loop(nb, dimOf(nb, output, 1), [&](ImplicitLocOpBuilder &hb, Value oh) {
        forEachRowBlock(hb, dimOf(hb, output, 2), tile.rows,
                        [&](ImplicitLocOpBuilder &rb, Value rowStart, int64_t rows) {
                          // Channel blocks inside the pixel block: the
                          // pixels' input rows stay in cache across them.
                          forEachColumnBlock(rb, channels, tile,
                                             [&](ImplicitLocOpBuilder &cb, Value c0,
                                                 ArrayRef<ColumnVector> vectors, bool) {
                                               emitBlock(cb, n, oh, rowStart, rows, c0,
                                                         vectors);
                                             });
                        });
      });
    });
    if (epilogue)
      eraseEpilogue(rewriter, *epilogue);
    rewriter.eraseOp(op);
    if (padded) {
      rewriter.eraseOp(padded->copy);
      rewriter.eraseOp(padded->fill);
    }
    return success();
  }
  KernelTarget target;
};

struct RegisterTileContractionsPass
    : public PassWrapper<RegisterTileContractionsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RegisterTileContractionsPass)

  RegisterTileContractionsPass() = default;
  explicit RegisterTileContractionsPass(const KernelTarget &target) : target(target) {}

  StringRef getArgument() const final { return "kiln-register-tile-contractions"; }
  StringRef getDescription() const final {
    return "Matmuls and convolutions on buffers -> register-tiled vector loops";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, memref::MemRefDialect, scf::SCFDialect,
                    vector::VectorDialect>();
  }

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRegisterTileContractionsPatterns(patterns, target);
    GreedyRewriteConfig config;
    config.maxIterations = 2;
    // Every rewrite erases its op and emits loops the patterns do not
    // match, so one sweep suffices; folding is left to the canonicalizer.
    (void)applyPatternsAndFoldGreedily(getOperation(), std::move(patterns), config);
    // Packed weights are only readable by the kernels above: a marked cast
    // still in use means an op kiln-pack-weights expected to be tiled was
    // not, and the loop path would read the packed buffer as K x N.
    WalkResult result = getOperation().walk([&](UnrealizedConversionCastOp cast) {
      if (!cast->hasAttr(kPanelColumnsAttrName))
        return WalkResult::advance();
      for (Operation *user : llvm::make_early_inc_range(cast->getUsers()))
        if (isa<memref::SubViewOp>(user) && user->use_empty())
          user->erase();
      if (!cast->use_empty()) {
        cast.emitError("internal error: packed weights read by an op that is not register-tiled");
        return WalkResult::interrupt();
      }
      cast->erase();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  KernelTarget target;
};

} // namespace

RegisterTile chooseRegisterTile(int64_t columns, const KernelTarget &target) {
  RegisterTile tile;
  tile.lanes = std::max<int64_t>(1, target.vectorLanes);
  int64_t vectorsNeeded = std::max<int64_t>(1, (columns + tile.lanes - 1) / tile.lanes);
  // Column vectors per block: 3 covers 24- and 48-wide layers in one or two
  // blocks; wider register files take 4 (AVX-512, or scalar FP registers).
  int64_t maxVectors = target.vectorRegisters >= 32 ? 4 : (vectorsNeeded == 3 ? 3 : 2);
  tile.vectors = std::min(vectorsNeeded, maxVectors);
  // Accumulators + one weight vector per column vector + one broadcast.
  tile.rows = std::clamp<int64_t>((target.vectorRegisters - tile.vectors - 1) / tile.vectors,
                                  1, 8);
  return tile;
}

RegisterTile chooseDepthwiseTile(int64_t channels, const KernelTarget &target) {
  RegisterTile tile;
  tile.lanes = std::max<int64_t>(1, target.vectorLanes);
  int64_t vectorsNeeded = std::max<int64_t>(1, (channels + tile.lanes - 1) / tile.lanes);
  tile.vectors = std::min<int64_t>(vectorsNeeded, 2);
  // Accumulators + one filter vector and one input vector per column vector.
  tile.rows = std::clamp<int64_t>((target.vectorRegisters - 2 * tile.vectors) / tile.vectors,
                                  1, 4);
  return tile;
}

/// "AxBxC" of a memref's static shape.
static std::string shapeOf(Value v) {
  auto type = v.getType().cast<MemRefType>();
  std::string text;
  for (int64_t d : type.getShape())
    text += (text.empty() ? "" : "x") +
            (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
  return text;
}

/// "KxN packed: 2 panels Kx64 + Kx32" for the plan's weight layout.
static std::string panelLayoutText(const PanelLayout &l) {
  const int64_t full = l.columns / l.panel, rest = l.columns % l.panel;
  std::string k = std::to_string(l.rows);
  std::string text = k + "x" + std::to_string(l.columns) + " KxN packed: " +
                     std::to_string(full) + (full == 1 ? " panel " : " panels ") + k + "x" +
                     std::to_string(l.panel);
  if (rest)
    text += " + " + k + "x" + std::to_string(rest);
  return text + " (each contiguous)";
}

KernelStrategy kernelStrategyOf(func::FuncOp dispatch, const KernelTarget &target) {
  KernelStrategy strategy;
  dispatch.walk([&](linalg::LinalgOp op) {
    std::optional<RegisterTile> tile = registerTileFor(op, target);
    if (!tile || strategy.kind != "loops")
      return;
    Value weights = op.getDpsInputOperand(1)->get();
    std::optional<PackedWeights> packed = packedWeightsOf(weights);
    strategy.tileRows = tile->rows;
    strategy.tileVectors = tile->vectors;
    strategy.lanes = tile->lanes;
    int64_t fmas = tile->rows * tile->vectors, loads = tile->rows + tile->vectors;
    if (isa<linalg::MatmulOp>(op)) {
      strategy.kind = "gemm";
      strategy.weightLayout = shapeOf(weights) + " KxN (N contiguous)";
    } else if (isa<linalg::BatchMatmulOp>(op)) {
      strategy.kind = "gemm";
      strategy.weightLayout = shapeOf(weights) + " BxKxN (N contiguous)";
    } else if (isa<linalg::Conv2DNhwcHwcfOp>(op)) {
      strategy.kind = "implicit-gemm";
      strategy.weightLayout = shapeOf(weights) + " HxWxCxF (F contiguous)";
    } else {
      strategy.kind = "depthwise";
      strategy.weightLayout = shapeOf(weights) + " HxWxCx1 (C contiguous)";
      // Per tap: one filter vector per column vector and one input vector
      // per accumulator (loads shared between taps are not counted).
      loads = tile->vectors + fmas;
    }
    if (packed)
      strategy.weightLayout = panelLayoutText(packed->layout);
    // Multiply-adds per cycle: half as many without FMA (a multiply and
    // an add each). Only the lanes the op's columns fill do useful work.
    double madds = double(target.fmaPerCycle) / (target.fma ? 1.0 : 2.0);
    double cycles = std::max(double(fmas) / madds, double(loads) / double(target.loadsPerCycle));
    Value out = op.getDpsInitOperand(0)->get();
    auto outType = out.getType().cast<MemRefType>();
    int64_t columns = isa<linalg::DepthwiseConv2DNhwcHwcmOp>(op)
                          ? outType.getDimSize(outType.getRank() - 2)
                          : outType.getDimSize(outType.getRank() - 1);
    double usedLanes = std::min<double>(double(columns), double(tile->vectors * tile->lanes));
    strategy.flopsPerCycle = 2.0 * usedLanes * double(tile->rows) / cycles;
  });
  return strategy;
}

void populateRegisterTileContractionsPatterns(RewritePatternSet &patterns,
                                              const KernelTarget &target) {
  patterns.add<TileMatmul, TileBatchMatmul, TileConv2D, TileDepthwise>(
      patterns.getContext(), target);
}

std::unique_ptr<Pass> createRegisterTileContractionsPass(const KernelTarget &target) {
  return std::make_unique<RegisterTileContractionsPass>(target);
}

} // namespace kiln
