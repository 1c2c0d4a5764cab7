//===- FuzzContext.h - The MLIR context the import fuzzers share -*- C++ -*-===//
//
// One MLIRContext with Kiln's dialects, single-threaded (libFuzzer calls the
// target from one thread), rebuilt every kContextReuse inputs so uniqued
// attributes and types from earlier inputs do not pile up. Header-only: each
// fuzz binary has its own.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TESTS_FUZZ_FUZZCONTEXT_H
#define KILN_TESTS_FUZZ_FUZZCONTEXT_H

#include "Pipeline.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <memory>

namespace kiln::fuzz {

inline constexpr int kContextReuse = 500;

/// The shared context (see the file comment).
inline mlir::MLIRContext &fuzzContext() {
  static std::unique_ptr<mlir::MLIRContext> context;
  static int uses = 0;
  if (!context || ++uses % kContextReuse == 0) {
    context.reset();
    mlir::DialectRegistry registry;
    kiln::registerKilnDialects(registry);
    context = std::make_unique<mlir::MLIRContext>(registry,
                                                  mlir::MLIRContext::Threading::DISABLED);
    context->loadAllAvailableDialects();
  }
  return *context;
}

} // namespace kiln::fuzz

#endif
