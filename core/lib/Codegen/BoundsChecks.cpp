//===- BoundsChecks.cpp - --check-bounds kernels --------------------------===//
//
// Each checked access becomes
//   %off = ptrtoint(%p) - ptrtoint(%binding)
//   br (%off < 0 || %off + size > extent), %violation, %access
// and the violation block calls the module's one reporting function, then
// returns from the kernel (the workgroup stops; nothing out of bounds is
// read or written).
//
//===----------------------------------------------------------------------===//
#include "BoundsChecks.h"
#include "kiln/Error.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

namespace kiln {
namespace {

/// The binding (argument index below `bindings`) `ptr` points into: through
/// GEPs, casts, MLIR's memref descriptors (extractvalue of the insertvalue
/// that put the pointer there) and phis/selects whose every input agrees.
/// -1 when it is not a binding.
int bindingOf(llvm::Value *ptr, unsigned bindings, llvm::SmallPtrSetImpl<llvm::Value *> &seen,
              int depth = 0) {
  if (depth > 64 || !seen.insert(ptr).second)
    return -2; // a cycle through phis: no opinion
  if (auto *arg = llvm::dyn_cast<llvm::Argument>(ptr))
    return arg->getArgNo() < bindings ? int(arg->getArgNo()) : -1;
  if (auto *gep = llvm::dyn_cast<llvm::GEPOperator>(ptr))
    return bindingOf(gep->getPointerOperand(), bindings, seen, depth + 1);
  if (auto *cast = llvm::dyn_cast<llvm::CastInst>(ptr))
    if (cast->getOperand(0)->getType()->isPointerTy())
      return bindingOf(cast->getOperand(0), bindings, seen, depth + 1);
  if (auto *extract = llvm::dyn_cast<llvm::ExtractValueInst>(ptr)) {
    llvm::Value *agg = extract->getAggregateOperand();
    while (auto *insert = llvm::dyn_cast<llvm::InsertValueInst>(agg)) {
      if (insert->getIndices() == extract->getIndices())
        return bindingOf(insert->getInsertedValueOperand(), bindings, seen, depth + 1);
      agg = insert->getAggregateOperand();
    }
    return -1;
  }
  llvm::SmallVector<llvm::Value *> inputs;
  if (auto *phi = llvm::dyn_cast<llvm::PHINode>(ptr))
    inputs.append(phi->incoming_values().begin(), phi->incoming_values().end());
  else if (auto *select = llvm::dyn_cast<llvm::SelectInst>(ptr))
    inputs = {select->getTrueValue(), select->getFalseValue()};
  else
    return -1;
  int found = -2;
  for (llvm::Value *in : inputs) {
    int b = bindingOf(in, bindings, seen, depth + 1);
    if (b == -2)
      continue;
    if (b == -1 || (found >= 0 && found != b))
      return -1;
    found = b;
  }
  return found;
}

/// One access to check: `ptr` into binding `binding`, `size` bytes.
struct Access {
  llvm::Instruction *inst;
  llvm::Value *ptr;
  llvm::Value *size; // i64
  unsigned binding;
  bool store;
};

/// The module's report record and its reporting function
///   void __kiln_bounds_violation(i32 binding, i32 store, i64 size,
///                                i64 offset, i64 extent, ptr label)
/// which claims the record (cmpxchg of `violated` 0 -> 1) and fills it.
/// Record layout: kiln_bounds_report_t (runtime/src/bounds_report.h).
llvm::Function *reportFunction(llvm::Module &module) {
  const char *name = "__kiln_bounds_violation";
  if (llvm::Function *fn = module.getFunction(name))
    return fn;
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx), *i64 = llvm::Type::getInt64Ty(ctx);
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  auto *recordTy = llvm::StructType::get(ctx, {i32, i32, i32, i32, i64, i64, ptr});
  auto *record = new llvm::GlobalVariable(module, recordTy, /*isConstant=*/false,
                                          llvm::GlobalValue::ExternalLinkage,
                                          llvm::Constant::getNullValue(recordTy),
                                          kBoundsReportSymbol);
  record->setAlignment(llvm::Align(8));
  auto *fnTy = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                       {i32, i32, i64, i64, i64, ptr}, false);
  auto *fn = llvm::Function::Create(fnTy, llvm::GlobalValue::InternalLinkage, name, module);
  fn->addFnAttr(llvm::Attribute::NoInline);
  fn->addFnAttr(llvm::Attribute::Cold);
  auto *entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto *fill = llvm::BasicBlock::Create(ctx, "fill", fn);
  auto *done = llvm::BasicBlock::Create(ctx, "done", fn);
  llvm::IRBuilder<> b(entry);
  llvm::Value *claim = b.CreateAtomicCmpXchg(
      b.CreateStructGEP(recordTy, record, 0), b.getInt32(0), b.getInt32(1), llvm::MaybeAlign(4),
      llvm::AtomicOrdering::SequentiallyConsistent, llvm::AtomicOrdering::SequentiallyConsistent);
  b.CreateCondBr(b.CreateExtractValue(claim, 1), fill, done);
  b.SetInsertPoint(fill);
  b.CreateStore(fn->getArg(0), b.CreateStructGEP(recordTy, record, 1));
  b.CreateStore(fn->getArg(1), b.CreateStructGEP(recordTy, record, 2));
  b.CreateStore(b.CreateTrunc(fn->getArg(2), i32), b.CreateStructGEP(recordTy, record, 3));
  b.CreateStore(fn->getArg(3), b.CreateStructGEP(recordTy, record, 4));
  b.CreateStore(fn->getArg(4), b.CreateStructGEP(recordTy, record, 5));
  b.CreateStore(fn->getArg(5), b.CreateStructGEP(recordTy, record, 6));
  b.CreateBr(done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  return fn;
}

} // namespace

llvm::Expected<unsigned> instrumentBoundsChecks(llvm::Module &module, llvm::Function &kernel,
                                                const std::vector<uint64_t> &bindingBytes,
                                                const std::string &label) {
  if (!kernel.getReturnType()->isVoidTy() || kernel.arg_size() < bindingBytes.size())
    return makeError("internal error: --check-bounds: kernel '" + kernel.getName() +
                     "' is not a void function of its bindings");
  const llvm::DataLayout &layout = module.getDataLayout();
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *i64 = llvm::Type::getInt64Ty(ctx);
  const unsigned bindings = static_cast<unsigned>(bindingBytes.size());
  std::vector<Access> accesses;
  auto add = [&](llvm::Instruction *inst, llvm::Value *ptr, llvm::Value *size, bool store) {
    llvm::SmallPtrSet<llvm::Value *, 16> seen;
    int b = bindingOf(ptr, bindings, seen);
    if (b >= 0)
      accesses.push_back({inst, ptr, size, unsigned(b), store});
  };
  for (llvm::Instruction &inst : llvm::instructions(kernel)) {
    if (auto *load = llvm::dyn_cast<llvm::LoadInst>(&inst))
      add(load, load->getPointerOperand(),
          llvm::ConstantInt::get(i64, layout.getTypeStoreSize(load->getType())), false);
    else if (auto *store = llvm::dyn_cast<llvm::StoreInst>(&inst))
      add(store, store->getPointerOperand(),
          llvm::ConstantInt::get(
              i64, layout.getTypeStoreSize(store->getValueOperand()->getType())),
          true);
    else if (auto *transfer = llvm::dyn_cast<llvm::MemTransferInst>(&inst)) {
      add(transfer, transfer->getRawDest(), transfer->getLength(), true);
      add(transfer, transfer->getRawSource(), transfer->getLength(), false);
    } else if (auto *set = llvm::dyn_cast<llvm::MemSetInst>(&inst))
      add(set, set->getRawDest(), set->getLength(), true);
  }
  if (accesses.empty())
    return 0u;
  llvm::Function *report = reportFunction(module);
  llvm::IRBuilder<> b(ctx);
  b.SetInsertPoint(&*kernel.getEntryBlock().getFirstInsertionPt());
  llvm::Value *name = b.CreateGlobalStringPtr(label, "__kiln_bounds_label");
  for (const Access &a : accesses) {
    b.SetInsertPoint(a.inst);
    llvm::Value *base = kernel.getArg(a.binding);
    llvm::Value *offset =
        b.CreateSub(b.CreatePtrToInt(a.ptr, i64), b.CreatePtrToInt(base, i64), "bounds.offset");
    llvm::Value *size = b.CreateZExtOrTrunc(a.size, i64);
    llvm::Value *extent = llvm::ConstantInt::get(i64, bindingBytes[a.binding]);
    llvm::Value *outside = b.CreateOr(b.CreateICmpSLT(offset, llvm::ConstantInt::get(i64, 0)),
                                      b.CreateICmpUGT(b.CreateAdd(offset, size), extent),
                                      "bounds.outside");
    llvm::Instruction *unreachable = llvm::SplitBlockAndInsertIfThen(
        outside, a.inst, /*Unreachable=*/true,
        llvm::MDBuilder(ctx).createBranchWeights(1, 1u << 20));
    b.SetInsertPoint(unreachable);
    b.CreateCall(report, {b.getInt32(a.binding), b.getInt32(a.store ? 1 : 0), size, offset,
                          extent, name});
    b.CreateRetVoid();
    unreachable->eraseFromParent();
  }
  return static_cast<unsigned>(accesses.size());
}

} // namespace kiln
