//===- Document.h - What the workbench shows for one opened file -*- C++ -*-===//
//
// Plain data handed from the compile job to every view: the plan, the
// artifact bytes and their section sizes (default and stripped build), and
// the trace of a host run once measured. Views only read it, through the
// one interface every view of the opened file implements (DocumentView).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_DOCUMENT_H
#define KILN_VIEWS_DOCUMENT_H

#include "kiln/Artifact.h"
#include "kiln/Compiler.h"
#include "kiln/Plan.h"
#include "kiln/Run.h"

#include <QString>

#include <memory>
#include <optional>
#include <vector>

class QItemSelectionModel;

namespace kiln::views {

/// One opened model (.tflite, .onnx, .mlir) or artifact (.kiln) and everything
/// the compiler decided about it.
struct ModelDocument {
  /// Absolute path of the opened file.
  QString path;
  /// True for a .kiln artifact (plan read from its reflection data; no IR,
  /// no stripped rebuild).
  bool isArtifact = false;
  /// For an artifact without reflection data (the plan is then empty): the
  /// command and dispatch counts of its command list; -1 otherwise.
  int64_t artifactCommands = -1;
  int64_t artifactDispatches = -1;
  /// The compiler's plan (never null; empty for an artifact without
  /// reflection).
  std::shared_ptr<const kiln::CompilationPlan> plan;
  /// Options the model was compiled with (emitStage reuses them).
  kiln::CompileOptions options;
  /// Default-profile artifact bytes (or the opened .kiln file).
  std::vector<uint8_t> artifact;
  /// Why this host cannot run `artifact` (the runtime's refusal to load
  /// it: another architecture, CPU features this CPU lacks), one line;
  /// empty when it can or there is no artifact.
  QString hostLoadError;
  /// Section sizes of `artifact`.
  std::optional<kiln::SectionSizes> sizes;
  /// Section sizes of the stripped build (models only).
  std::optional<kiln::SectionSizes> strippedSizes;
  /// Wall time of the default compilation (or of reading the artifact)
  /// and of the stripped one, milliseconds.
  double compileMs = 0;
  double strippedMs = 0;
  /// What the ONNX importer did with each If, Loop and Scan and why
  /// (CompileResult::controlFlow); empty for TFLite and artifacts.
  std::vector<kiln::ControlFlowDecision> controlFlow;
  /// The compiler's warnings (CompileResult::warnings: a model compiled at
  /// its recorded input shapes, a setting that changed nothing), one
  /// sentence each, as `kiln` prints them; empty for artifacts.
  std::vector<std::string> warnings;
};

/// A traced host run of the document's artifact.
struct MeasuredRun {
  std::string device;
  unsigned threads = 1;
  /// Trace of the first invocation (dispatches and workgroups).
  std::vector<kiln::TraceEvent> events;
  /// Events the trace could not hold (kiln::RunResult::traceDropped);
  /// Diagnostics says the trace was cut when it is not 0.
  uint64_t droppedEvents = 0;
  /// Wall time of the timed invocations, ms.
  std::vector<double> timesMs;
};

/// The interface every view of the opened file implements (graph,
/// inspector, timeline, memory, sizes), so the window hands each the
/// document shown and the shared dispatch selection the same way
/// (MainWindow::setDocument).
class DocumentView {
public:
  virtual ~DocumentView() = default;
  /// Shows `doc` (not null; clear() for none). The same model's next
  /// document (its code generated, a re-plan) may carry the plan already
  /// shown: each view says what it keeps then.
  virtual void setDocument(std::shared_ptr<const ModelDocument> doc) = 0;
  /// The shared selection (a QItemSelectionModel over a DispatchListModel,
  /// one for every view; null: none): the view follows its current row and
  /// sets it when the user picks a dispatch in the view. Replaces the
  /// selection set before.
  virtual void setSelectionModel(QItemSelectionModel *selection) = 0;
  /// Shows nothing (no document open).
  virtual void clear() = 0;
};

} // namespace kiln::views

#endif
