//===- Workbench.h - Command line, screenshots and benchmark ----*- C++ -*-===//
//
// kiln-workbench [--fix-shape=INPUT=DIMS]... [FILE]
// kiln-workbench --screenshots=DIR MODEL [BAD...]  (one PNG per view)
// kiln-workbench --benchmark=N MODEL...            (open -> plan drawn, code, stripped)
//
//===----------------------------------------------------------------------===//
#ifndef KILN_WORKBENCH_WORKBENCH_H
#define KILN_WORKBENCH_WORKBENCH_H

#include <QString>
#include <QStringList>

namespace kiln::workbench {

class MainWindow;

/// Blocks (running the event loop) until `window`'s compilation ends or
/// `timeoutMs` passes; returns the compileFinished result (false on
/// timeout).
bool waitForCompile(MainWindow &window, int timeoutMs = 300000);
/// Same for a host run.
bool waitForRun(MainWindow &window, int timeoutMs = 300000);

/// Makes every view paint now (each dock is raised in turn and grabbed);
/// returns the number of views drawn.
int drawAllViews(MainWindow &window);

/// Writes one PNG per view of the open document into `dir` (created if
/// needed): window (1600x1000), window-1024x700, graph, graph-collapsed, dispatches, timeline,
/// timeline-measured, memory, sizes, inspector, diagnostics, profile and
/// profile-1024x700 (the Profile dock, measured), export-view (File >
/// Export View open). The files in
/// `failing` are opened just before the diagnostics shot, so it shows their
/// errors (the document stays). Returns the files written; errors go to
/// stderr.
QStringList saveScreenshots(MainWindow &window, const QString &dir, const QStringList &failing = {});

/// Compares the open model's outputs with the model or artifact `other`
/// (ProjectController::compareOutputsWith) and writes the window with the
/// Compare dock raised at 1024x700 and 1600x1000: compare-quantization-
/// 1024x700.png and compare-quantization.png in `dir`. Returns the files
/// written (none when the comparison fails; the error goes to stderr).
QStringList saveCompareScreenshots(MainWindow &window, const QString &dir, const QString &other);

/// Runs the application: parses arguments, shows the window, opens files.
int runWorkbench(int argc, char **argv);

} // namespace kiln::workbench

#endif
