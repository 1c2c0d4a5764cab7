//===- ProjectHost.h - What ProjectController reads of the window -*- C++ -*-===//
//
// The narrow side of the window that ProjectController sees: the document
// shown, whether a build runs, the current dispatch, the last failed open
// and the last diagnostic. MainWindow implements it. What the controller
// asks of the window goes the other way, as ProjectController's signals
// (show a re-plan, build, open, select a dispatch, report a message), which
// MainWindow connects.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_WORKBENCH_PROJECTHOST_H
#define KILN_WORKBENCH_PROJECTHOST_H

#include "Document.h"
#include "ShapesPanel.h"

#include <QString>

#include <memory>
#include <vector>

namespace kiln::workbench {

/// The window as ProjectController reads it (read only).
class ProjectHost {
public:
  virtual ~ProjectHost() = default;
  /// The document shown (null before the first successful open, after a
  /// close).
  virtual std::shared_ptr<const kiln::views::ModelDocument> document() const = 0;
  /// A compilation runs: from an open or a build until its compileFinished.
  virtual bool isCompiling() const = 0;
  /// The dispatch id of the shared selection's current row (-1: none).
  virtual qint64 currentDispatch() const = 0;
  /// The file whose last open or build failed or was cancelled (empty
  /// after a success), and whether it was cancelled.
  virtual const QString &lastFailedPath() const = 0;
  virtual bool lastOpenCancelled() const = 0;
  /// The inputs whose dynamic dimensions stopped the last failed open or
  /// build, with the sizes the compiler suggests; empty if something else
  /// stopped it (or it succeeded).
  virtual const std::vector<kiln::views::DynamicInput> &lastUnfixedInputs() const = 0;
  /// The text of the diagnostics panel's last message (empty if none).
  virtual QString lastDiagnostic() const = 0;
};

} // namespace kiln::workbench

#endif
