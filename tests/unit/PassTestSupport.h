//===- PassTestSupport.h - Helpers for the pass unit tests -----*- C++ -*-===//
#ifndef KILN_TESTS_UNIT_PASSTESTSUPPORT_H
#define KILN_TESTS_UNIT_PASSTESTSUPPORT_H

#include "Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kiln::test {

/// Prints an MLIR object (op, map, location) for a failure message.
template <typename T> std::string str(T &&x) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << x;
  return os.str();
}

/// Parses `source` into a module of `context`, with every dialect Kiln's
/// pipelines register (null on a syntax error).
inline mlir::OwningOpRef<mlir::ModuleOp> parse(mlir::MLIRContext &context,
                                               const char *source) {
  mlir::DialectRegistry registry;
  kiln::registerKilnDialects(registry);
  context.appendDialectRegistry(registry);
  return mlir::parseSourceString<mlir::ModuleOp>(source, &context);
}

} // namespace kiln::test

#endif
