//===- CompileJob.cpp - Compilations off the GUI thread ------------------===//
#include "CompileJob.h"

#include "kiln/ModelInputs.h"
#include "kiln/Recipe.h"
#include "kiln/Run.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QtConcurrent/QtConcurrentRun>


namespace kiln::workbench {

CompileJob::CompileJob(QObject *parent) : QObject(parent), cancel_(std::make_shared<std::atomic<bool>>(false)) {
  connect(&watcher_, &QFutureWatcher<JobResult>::finished, this, [this] {
    result_ = watcher_.result();
    emit finished();
  });
}

CompileJob::~CompileJob() {
  cancel();
  watcher_.waitForFinished();
}

bool CompileJob::isRunning() const { return watcher_.isRunning(); }
void CompileJob::cancel() { cancel_->store(true); }
void CompileJob::wait() { watcher_.waitForFinished(); }

static QString errorText(llvm::Error error) { return QString::fromStdString(llvm::toString(std::move(error))); }

/// Records whether this host's runtime loads `doc`'s artifact (its own
/// check of architecture, CPU features and format: describeArtifact).
static void noteHostLoad(kiln::views::ModelDocument &doc) {
  doc.hostLoadError.clear();
  if (doc.artifact.empty())
    return;
  if (auto loaded = kiln::describeArtifact(doc.artifact); !loaded)
    doc.hostLoadError = errorText(loaded.takeError());
}

std::shared_ptr<kiln::views::ModelDocument> makePlannedDocument(const QString &path,
                                                                std::shared_ptr<const kiln::CompilationPlan> plan,
                                                                const kiln::CompileOptions &options, double planMs) {
  auto doc = std::make_shared<kiln::views::ModelDocument>();
  doc->path = QFileInfo(path).absoluteFilePath();
  doc->isArtifact = false;
  doc->plan = std::move(plan);
  doc->options = options;
  doc->options.onPhase = nullptr;
  doc->compileMs = planMs; // code generation follows: no artifact, no sizes
  return doc;
}

void CompileJob::start(const QString &path, const kiln::CompileOptions &baseOptions, bool stripped, bool planFirst) {
  auto cancel = cancel_;
  QPointer<CompileJob> self(this);
  auto phaseHook = [self, cancel](int build) {
    return [self, cancel, build](kiln::CompilePhase phase) {
      if (self)
        QMetaObject::invokeMethod(self.data(), [self, build, phase] {
          if (self)
            emit self->phaseStarted(build, int(phase));
        }, Qt::QueuedConnection);
      return !cancel->load();
    };
  };
  kiln::CompileOptions options = baseOptions;
  options.onPhase = phaseHook(0);
  kiln::CompileOptions strippedOptions = baseOptions;
  strippedOptions.onPhase = phaseHook(1);
  llvm::cantFail(kiln::applyProfile("stripped", strippedOptions)); // a known profile

  watcher_.setFuture(QtConcurrent::run([self, path, options, strippedOptions, stripped, planFirst,
                                        cancel]() -> JobResult {
    JobResult r;
    auto doc = std::make_shared<kiln::views::ModelDocument>();
    doc->path = QFileInfo(path).absoluteFilePath();
    doc->options = options;
    doc->options.onPhase = nullptr;
    std::string p = path.toStdString();
    QElapsedTimer timer;
    timer.start();
    auto fail = [&](QString message) {
      r.error = std::move(message);
      r.cancelled = cancel->load();
      return r;
    };
    // A model's import error: its text, and the unfixed inputs it carries.
    auto failModel = [&](llvm::Error e) {
      r.unfixed = kiln::unfixedInputsOf(e);
      return fail(errorText(std::move(e)));
    };
    if (!QFileInfo::exists(path))
      return fail(QStringLiteral("%1: no such file (it was moved or deleted)").arg(path));
    if (kiln::isArtifactFile(p)) {
      doc->isArtifact = true;
      QFile f(path);
      if (!f.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("%1: %2").arg(path, f.errorString()));
      QByteArray bytes = f.readAll();
      doc->artifact.assign(bytes.begin(), bytes.end());
      noteHostLoad(*doc);
      // One pass through the gate; sizes, plan and summary come from it.
      std::string name = QFileInfo(path).fileName().toStdString();
      auto info = kiln::verifyArtifact(doc->artifact, name);
      if (!info)
        return fail(errorText(info.takeError()));
      auto sizes = kiln::sectionSizesOf(*info, name);
      if (!sizes)
        return fail(errorText(sizes.takeError()));
      doc->sizes = *sizes;
      auto plan = kiln::planOfArtifact(*info, p);
      if (!plan) {
        // Still show the sizes of an artifact built without reflection, and
        // the plan figures its memory_plan and device sections carry.
        r.error = errorText(plan.takeError());
        auto bare = std::make_shared<kiln::CompilationPlan>();
        if (auto summary = kiln::summaryOf(*info, p)) {
          bare->memory.arenaBytes = summary->arenaBytes;
          bare->memory.lowerBoundBytes = summary->lowerBoundBytes;
          bare->schedule.waves = summary->waves;
          doc->artifactCommands = summary->commands;
          doc->artifactDispatches = summary->dispatches;
        } else {
          llvm::consumeError(summary.takeError());
        }
        doc->plan = bare;
      } else {
        doc->plan = *plan;
      }
      doc->compileMs = timer.elapsed();
      r.ok = true;
      r.doc = doc;
      return r;
    }
    // The plan first (the views draw it while LLVM generates code); it is
    // the one compile() produces with the same options.
    std::shared_ptr<const kiln::CompilationPlan> planned;
    if (planFirst) {
      auto plan = kiln::planModel(p, options);
      if (!plan)
        return failModel(plan.takeError());
      planned = *plan;
      std::shared_ptr<const kiln::views::ModelDocument> shown =
          makePlannedDocument(path, planned, options, timer.nsecsElapsed() / 1e6);
      if (self)
        QMetaObject::invokeMethod(self.data(), [self, shown] {
          if (self) {
            self->planned_ = shown;
            emit self->planReady();
          }
        }, Qt::QueuedConnection);
      timer.restart();
    }
    auto result = kiln::compile(p, options);
    if (!result)
      return failModel(result.takeError());
    doc->compileMs = timer.nsecsElapsed() / 1e6;
    doc->artifact = std::move(result->artifact);
    noteHostLoad(*doc);
    doc->controlFlow = result->controlFlow;
    doc->warnings = result->warnings;
    // The views keep the plan they drew (same options, same plan).
    doc->plan = planned ? planned : result->plan;
    auto sizes = kiln::readSectionSizes(doc->artifact, QFileInfo(path).fileName().toStdString());
    if (!sizes)
      return fail(errorText(sizes.takeError()));
    doc->sizes = *sizes;
    if (stripped) {
      // Show the default build now; the stripped one only adds sizes. The
      // GUI gets its own copy (the worker goes on filling `doc`).
      auto shown = std::make_shared<const kiln::views::ModelDocument>(*doc);
      if (self)
        QMetaObject::invokeMethod(self.data(), [self, shown] {
          if (self) {
            self->partial_ = shown;
            emit self->documentReady();
          }
        }, Qt::QueuedConnection);
      timer.restart();
      auto small = kiln::compileArtifact(p, strippedOptions);
      if (!small) {
        // The default build stands; say why the comparison is missing.
        r.ok = true;
        r.cancelled = cancel->load();
        r.error = QStringLiteral("stripped build: ") + errorText(small.takeError());
        r.doc = doc;
        return r;
      }
      auto ssizes = kiln::readSectionSizes(*small, QFileInfo(path).fileName().toStdString() + " (stripped)");
      if (!ssizes)
        return fail(errorText(ssizes.takeError()));
      doc->strippedSizes = *ssizes;
      doc->strippedMs = timer.nsecsElapsed() / 1e6;
    }
    r.ok = true;
    r.doc = doc;
    return r;
  }));
}

} // namespace kiln::workbench
