//===- TileAndDistribute.cpp - Workgroup tiling of dispatch functions -----===//
//
// See Passes.h for what holds before and after.
//
//===----------------------------------------------------------------------===//
#include "Passes.h"
#include "kiln/Recipe.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Pass/Pass.h"

#include <set>
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/IR/TensorTilingInterfaceImpl.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace kiln {
namespace {

/// Workgroups a dispatch is split into at least, where each keeps
/// kMinWorkgroupBytes of output (see defaultTileSizes).
constexpr int64_t kMinWorkgroups = 8;
constexpr int64_t kMinWorkgroupBytes = 4 * 1024;

/// The largest divisor of `size` not above `limit` (1 at least).
int64_t largestDivisorAtMost(int64_t size, int64_t limit) {
  for (int64_t t = std::min(size, limit); t > 1; --t)
    if (size % t == 0)
      return t;
  return 1;
}

/// Bytes of one element of `type` (at least 1; 8 for index).
int64_t elementBytesOf(ShapedType type) {
  Type element = type.getElementType();
  if (!element.isIntOrFloat())
    return 8;
  return std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
}

/// Bytes per element of the widest tensor a workgroup of `op`'s dispatch
/// keeps per output element: the output and the dispatch's intermediate
/// values (results of its linalg ops and tensor.empty), which become
/// tile-sized stack temporaries. An int8 convolution's tile keeps i32
/// accumulators, 4 bytes per output element, not the output's 1.
int64_t widestTileElementBytes(linalg::LinalgOp op, RankedTensorType output) {
  int64_t widest = elementBytesOf(output);
  auto fn = op->getParentOfType<func::FuncOp>();
  if (!fn)
    return widest;
  fn.walk([&](Operation *inner) {
    if (!isa<linalg::LinalgOp, tensor::EmptyOp>(inner))
      return;
    for (Type t : inner->getResultTypes())
      if (auto shaped = t.dyn_cast<RankedTensorType>())
        widest = std::max(widest, elementBytesOf(shaped));
  });
  return widest;
}

/// Heuristic workgroup tile sizes for `op` (see Passes.h): one entry per
/// loop, 0 = whole loop; `dividingTiles`: outer tiles divide their loop.
/// `budget` bounds the tile's widest temporary (widestTileElementBytes),
/// so it is lowered to output bytes by the ratio of the widest element to
/// the output's; the parallelism floor stays in output bytes.
SmallVector<int64_t> defaultTileSizes(linalg::LinalgOp op, int64_t budget,
                                     int64_t vectorBytes, bool dividingTiles) {
  SmallVector<int64_t> sizes(op.getNumLoops(), 0);
  if (op->getNumResults() != 1)
    return sizes;
  auto type = op->getResult(0).getType().cast<RankedTensorType>();
  AffineMap map = op.getIndexingMapMatchingResult(op->getResult(0));
  int64_t elementBytes = elementBytesOf(type);
  int64_t widening = std::max<int64_t>(1, widestTileElementBytes(op, type) / elementBytes);
  budget = std::max<int64_t>(elementBytes, budget / widening);
  // A fused tensor.pad becomes a temporary (on the kernel's stack) holding
  // the padded input window of the tile. Shrink the budget by how much
  // larger the padded input is than the output, so that temporary stays
  // within the budget too (a stride-2 depthwise convolution's padded input
  // is about 4x its output).
  if (type.hasStaticShape()) {
    int64_t outputBytes = type.getNumElements() * elementBytes;
    // Parallelism: at least kMinWorkgroups workgroups where each still
    // writes kMinWorkgroupBytes, so a local-task device's threads share
    // every dispatch (BlazeFace's 8x8x96 layers were one workgroup each).
    budget = std::min(budget, std::max(kMinWorkgroupBytes, outputBytes / kMinWorkgroups));
    int64_t largestPad = 0;
    if (auto fn = op->getParentOfType<func::FuncOp>())
      fn.walk([&](tensor::PadOp pad) {
        RankedTensorType padType = pad.getResultType();
        if (padType.hasStaticShape())
          largestPad = std::max<int64_t>(
              largestPad, padType.getNumElements() * elementBytesOf(padType));
      });
    if (largestPad > outputBytes && outputBytes > 0)
      budget = std::max<int64_t>(
          elementBytes, static_cast<int64_t>(double(budget) * double(outputBytes) /
                                             double(largestPad)));
  }
  int64_t inner = elementBytes;
  int64_t rank = type.getRank();
  for (int64_t d = rank - 1; d >= 0; --d) {
    auto dim = map.getResult(d).dyn_cast<AffineDimExpr>();
    if (!dim)
      return SmallVector<int64_t>(op.getNumLoops(), 0);
    int64_t size = type.getDimSize(d);
    if (inner * size <= budget) {
      inner *= size;
      continue;
    }
    int64_t tile = std::max<int64_t>(1, budget / inner);
    // The innermost dimension keeps whole SIMD vectors per workgroup.
    int64_t lanes = std::max<int64_t>(1, vectorBytes / elementBytes);
    if (d == rank - 1 && tile > lanes) {
      tile -= tile % lanes;
    } else if (int64_t dividing = dividingTiles ? largestDivisorAtMost(size, tile) : 0;
               d != rank - 1 && 2 * dividing >= tile) {
      // One thread: the largest tile that divides the loop, so every
      // workgroup has the same static extent and the kernel needs no code
      // for a partial tile (4096 rows in 32s, not 41s with a last tile of
      // 37), unless that halves the tile.
      tile = dividing;
    } else if (d != rank - 1) {
      // Tiles of equal size, in a count that 2 and 4 threads split evenly:
      // 64 rows in tiles of 10 (7 workgroups, 4 + 3 on two threads) become
      // 8 tiles of 8.
      int64_t count = (size + tile - 1) / tile;
      if (count > 2)
        count = (count + 3) / 4 * 4;
      tile = (size + count - 1) / count;
    }
    sizes[dim.getPosition()] = tile;
    for (int64_t o = d - 1; o >= 0; --o) {
      auto outer = map.getResult(o).dyn_cast<AffineDimExpr>();
      if (outer && type.getDimSize(o) > 1)
        sizes[outer.getPosition()] = 1;
    }
    break;
  }
  // At most three workgroup dimensions: keep the innermost three tiled loops.
  int64_t tiled = 0;
  for (int64_t i = sizes.size() - 1; i >= 0; --i)
    if (sizes[i] != 0 && ++tiled > 3)
      sizes[i] = 0;
  return sizes;
}

/// extract_slice(tensor.pad) -> pad(extract_slice(source)): each workgroup
/// pads only the input window its tile reads (MLIR's bubbleUpPadSlice).
struct SwapExtractSliceOfPad : public OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto pad = slice.getSource().getDefiningOp<tensor::PadOp>();
    if (!pad)
      return rewriter.notifyMatchFailure(slice, "source is not tensor.pad");
    if (llvm::any_of(slice.getMixedStrides(), [](OpFoldResult s) {
          auto c = getConstantIntValue(s);
          return !c || *c != 1;
        }))
      return rewriter.notifyMatchFailure(slice, "slice is strided");
    Operation *tiled = tensor::bubbleUpPadSlice(
        rewriter, pad, slice.getMixedOffsets(), slice.getMixedSizes(),
        /*generateZeroSliceGuard=*/false);
    if (!tiled)
      return rewriter.notifyMatchFailure(slice, "cannot tile the pad");
    Value result = tiled->getResult(0);
    if (result.getType() != slice.getType())
      result = rewriter.create<tensor::CastOp>(slice.getLoc(), slice.getType(), result);
    rewriter.replaceOp(slice, result);
    return success();
  }
};

/// extract_slice(tensor.empty) -> tensor.empty of the slice's sizes: tile
/// temporaries are tile-sized, not copies of the whole tensor.
struct SliceOfEmpty : public OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    if (!slice.getSource().getDefiningOp<tensor::EmptyOp>())
      return rewriter.notifyMatchFailure(slice, "source is not tensor.empty");
    SmallVector<OpFoldResult> sizes;
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    for (auto [i, size] : llvm::enumerate(slice.getMixedSizes()))
      if (!dropped.test(i))
        sizes.push_back(size);
    rewriter.replaceOpWithNewOp<tensor::EmptyOp>(
        slice, sizes, slice.getType().getElementType());
    return success();
  }
};

struct TileAndDistributePass
    : public PassWrapper<TileAndDistributePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TileAndDistributePass)

  explicit TileAndDistributePass(const DispatchOptions &options)
      : options(options) {}

  StringRef getArgument() const final { return "kiln-tile-and-distribute"; }
  void getDependentDialects(DialectRegistry &registry) const override {
    // Tiling creates scf.for, affine.min/apply, index arithmetic and
    // tensor slices.
    registry.insert<scf::SCFDialect, AffineDialect, arith::ArithDialect,
                    tensor::TensorDialect, linalg::LinalgDialect>();
  }
  StringRef getDescription() const final {
    return "Tile dispatch functions and map tile loops to workgroups";
  }

  void runOnOperation() override {
    std::set<int64_t> ids;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (auto id = fn->getAttrOfType<IntegerAttr>("kiln.dispatch_id"))
        ids.insert(id.getInt());
    for (const auto &[id, sizes] : options.tileSizes)
      if (!ids.count(id)) {
        auto diag = getOperation().emitError()
                    << "tile sizes are given for dispatch " << id << ", which does not exist (";
        if (ids.empty())
          diag << "the model has no dispatches with these fusion settings; see kiln inspect)";
        else
          diag << ids.size() << " dispatches, ids 0 to " << ids.size() - 1
               << " with these fusion settings; see kiln inspect)";
        return signalPassFailure();
      }
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (fn->hasAttr("kiln.dispatch_id"))
        if (failed(process(fn)))
          return signalPassFailure();
    // Callers in @main pass workgroup id 0; the runtime supplies the real
    // ids when it replays the dispatch.
    getOperation().walk([](func::CallOp call) {
      auto callee = call->getParentOfType<ModuleOp>().lookupSymbol<func::FuncOp>(
          call.getCallee());
      if (!callee || !callee->hasAttr("kiln.dispatch_id") ||
          call.getNumOperands() == callee.getNumArguments())
        return;
      OpBuilder b(call);
      Value zero = b.create<arith::ConstantIndexOp>(call.getLoc(), 0);
      SmallVector<Value> operands(call.getOperands());
      operands.append(3, zero);
      call->setOperands(operands);
    });
  }

  LogicalResult process(func::FuncOp fn) {
    MLIRContext *ctx = fn.getContext();
    int64_t id = fn->getAttrOfType<IntegerAttr>("kiln.dispatch_id").getInt();
    // Workgroup ids x, y, z.
    Location loc = fn.getLoc();
    unsigned first = fn.getNumArguments();
    for (int i = 0; i < 3; ++i)
      fn.insertArgument(fn.getNumArguments(), IndexType::get(ctx),
                        DictionaryAttr(), loc);
    SmallVector<int64_t> count = {1, 1, 1};
    SmallVector<int64_t> tileSizes;

    auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    Operation *last = ret.getNumOperands() == 1
                          ? ret.getOperand(0).getDefiningOp()
                          : nullptr;
    auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(last);
    auto tileable = dyn_cast_or_null<TilingInterface>(last);
    auto override = options.tileSizes.find(id);
    SmallVector<int64_t> loopRanges;
    SmallVector<StringRef> loopKinds;
    if (linalgOp) {
      loopRanges = linalgOp.getStaticLoopRanges();
      for (utils::IteratorType t : linalgOp.getIteratorTypesArray())
        loopKinds.push_back(t == utils::IteratorType::parallel ? "parallel"
                                                               : "reduction");
    }
    if (linalgOp && tileable) {
      if (override != options.tileSizes.end())
        tileSizes.assign(override->second.begin(), override->second.end());
      else
        tileSizes = defaultTileSizes(linalgOp, options.workgroupBytes,
                                     options.vectorBytes, options.dividingTiles);
      // The one rule for tile sizes (kiln/Recipe.h), shared with the
      // workbench's inline check.
      if (llvm::Error err = checkTileSizes(
              id, {tileSizes.begin(), tileSizes.end()}, {loopRanges.begin(), loopRanges.end()},
              {loopKinds.begin(), loopKinds.end()}))
        return fn.emitError() << llvm::toString(std::move(err));
      int64_t tiledLoops = 0;
      for (auto [i, t] : llvm::enumerate(tileSizes)) {
        if (t == loopRanges[i])
          t = 0; // a whole loop is one tile
        if (t != 0)
          ++tiledLoops;
      }
      if (tiledLoops > 0) {
        IRRewriter rewriter(ctx);
        rewriter.setInsertionPoint(last);
        scf::SCFTileAndFuseOptions tileOptions;
        tileOptions.tilingOptions.setTileSizes(tileSizes);
        FailureOr<scf::SCFTileAndFuseResult> tiled =
            scf::tileConsumerAndFuseProducerGreedilyUsingSCFForOp(
                rewriter, tileable, tileOptions);
        if (failed(tiled))
          return fn.emitError() << "dispatch " << id << " could not be tiled";
        for (auto [orig, repl] : tiled->replacements)
          orig.replaceAllUsesWith(repl);
        // Turn the loops, outermost first, into workgroup ids; the
        // innermost tiled loop is x.
        int64_t n = tiled->loops.size();
        for (int64_t k = 0; k < n; ++k) {
          scf::ForOp loop = tiled->loops[k];
          int64_t dim = n - 1 - k;
          auto lb = getConstantIntValue(loop.getLowerBound());
          auto ub = getConstantIntValue(loop.getUpperBound());
          auto step = getConstantIntValue(loop.getStep());
          if (!lb || !ub || !step || *step <= 0)
            return fn.emitError() << "dispatch " << id << ": dynamic tile loop";
          count[dim] = (*ub - *lb + *step - 1) / *step;
          rewriter.setInsertionPoint(loop);
          Value wg = fn.getArgument(first + dim);
          Value iv = rewriter.create<arith::AddIOp>(
              loc, loop.getLowerBound(),
              rewriter.create<arith::MulIOp>(loc, wg, loop.getStep()));
          Block *body = loop.getBody();
          auto yield = cast<scf::YieldOp>(body->getTerminator());
          SmallVector<Value> replacements = {iv};
          for (Value init : loop.getInitArgs())
            replacements.push_back(init);
          SmallVector<Value> yielded(yield.getOperands());
          rewriter.eraseOp(yield);
          rewriter.mergeBlockBefore(body, loop, replacements);
          rewriter.replaceOp(loop, yielded);
        }
      } else {
        tileSizes.assign(linalgOp.getNumLoops(), 0);
      }
    } else if (override != options.tileSizes.end()) {
      return fn.emitError() << "dispatch " << id
                            << " has no tileable root; tile sizes cannot be set";
    }
    {
      RewritePatternSet patterns(ctx);
      patterns.add<SwapExtractSliceOfPad, SliceOfEmpty>(ctx);
      if (failed(applyPatternsAndFoldGreedily(fn, std::move(patterns))))
        return fn.emitError() << "dispatch " << id << ": tile cleanup failed";
      // Tile-sized pads -> fill + insert_slice, which bufferize to a stack
      // buffer without MLIR 16's dynamic-shape tensor.pad bufferization.
      RewritePatternSet lowerPads(ctx);
      lowerPads.add<linalg::GeneralizePadOpPattern>(ctx);
      if (failed(applyPatternsAndFoldGreedily(fn, std::move(lowerPads))))
        return fn.emitError() << "dispatch " << id << ": pad lowering failed";
    }
    Builder b(ctx);
    fn->setAttr("kiln.workgroup_count", b.getI64ArrayAttr(count));
    fn->setAttr("kiln.tile_sizes", b.getI64ArrayAttr(tileSizes));
    fn->setAttr("kiln.loop_ranges", b.getI64ArrayAttr(loopRanges));
    fn->setAttr("kiln.loop_kinds", b.getStrArrayAttr(loopKinds));
    return success();
  }

  DispatchOptions options;
};

} // namespace

std::unique_ptr<Pass>
createTileAndDistributePass(const DispatchOptions &options) {
  return std::make_unique<TileAndDistributePass>(options);
}

} // namespace kiln
