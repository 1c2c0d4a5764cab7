//===- TileAndDistributeTest.cpp - kiln-tile-and-distribute ---------------===//
//
// The tile size rule (kiln::checkTileSizes) and the dialects the pass
// declares. What the pass writes (tiles from the workgroup budget, explicit
// tile sizes and their errors) is checked in
// core/test/Transforms/tile-and-distribute.mlir and
// tile-and-distribute-tile-sizes.mlir.
//
//===----------------------------------------------------------------------===//
#include "Transforms/Passes.h"
#include "kiln/Plan.h"
#include "kiln/Recipe.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"

#include "llvm/Support/Error.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace mlir;

namespace {

TEST(TileAndDistribute, CheckTileSizesIsTheTilersRule) {
  // A fully connected layer as the plan describes it: loops m=4, n=2
  // parallel, k=8 reduction. The tiler itself calls kiln::checkTileSizes
  // (core/test/Transforms/tile-and-distribute-tile-sizes.mlir).
  std::vector<int64_t> ranges = {4, 2, 8};
  std::vector<std::string> kinds = {"parallel", "parallel", "reduction"};
  auto check = [&](const std::vector<int64_t> &sizes) {
    llvm::Error err = kiln::checkTileSizes(0, sizes, ranges, kinds);
    return err ? llvm::toString(std::move(err)) : std::string();
  };
  EXPECT_EQ(check({2, 0, 0}), "");
  EXPECT_EQ(check({4, 2, 0}), ""); // whole loops
  EXPECT_NE(check({2, 0}).find("dispatch 0 has 3 loops; 2 tile sizes given"), std::string::npos);
  EXPECT_NE(check({5, 0, 0}).find("exceeds the loop's range 4"), std::string::npos);
  EXPECT_NE(check({-1, 0, 0}).find("negative"), std::string::npos);
  EXPECT_NE(check({0, 0, 4}).find("loop 2 is a reduction"), std::string::npos);
  ranges = {8, 8, 8, 8};
  kinds.assign(4, "parallel");
  EXPECT_NE(check({2, 2, 2, 2}).find("4 loops split; at most 3"), std::string::npos);
  EXPECT_EQ(check({2, 2, 2, 8}), "");
}

TEST(TileAndDistribute, DeclaresTheDialectsItCreates) {
  // Tiling builds scf.for, affine.min/apply, arith index math and tensor
  // slices; a pass must declare such dialects so that it runs on a context
  // where only the input's dialects are loaded (mlir-opt, these tests).
  DialectRegistry registry;
  kiln::createTileAndDistributePass(kiln::DispatchOptions())
      ->getDependentDialects(registry);
  std::vector<std::string> names;
  for (StringRef name : registry.getDialectNames())
    names.push_back(name.str());
  for (const char *dialect : {"scf", "affine", "arith", "tensor"})
    EXPECT_TRUE(std::find(names.begin(), names.end(), dialect) != names.end())
        << dialect << " is not a dependent dialect of kiln-tile-and-distribute";
}

} // namespace
