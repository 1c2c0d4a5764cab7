//===- LayoutTest.cpp - The default window layout at two window sizes -----===//
//
// Opens BlazeFace (53 dispatches) in the real MainWindow with no saved
// layout and checks, from widget geometry only (never pixels), that the
// dispatch graph is the central widget with the largest area, that no two
// docks overlap at 1024x700 and at 1600x1000, that every dock's content
// gets at least its minimum size, that every button and chooser of the
// Tune dock is fully visible, that the Find box holds a dispatch name, and
// that the graph opens (and Fit Graph, Ctrl+0, refits) with node text at
// least at the UI font's size. A dock layout saved by an older layout
// version is ignored; one saved by this version is restored. The same
// checks hold for the embedding model (a dynamic batch): the Diagnostics
// button that fixes it shows whole in the panel after the failed open,
// and once fixed, Tune's input shapes row keeps the dock's width, so its
// buttons and fields stay fully visible at both sizes.
//
//===----------------------------------------------------------------------===//
#include "GuiTestSupport.h"

#include "DiagnosticsView.h"
#include "GraphView.h"
#include "MainWindow.h"
#include "ProjectController.h"
#include "ShapesPanel.h"
#include "TuningView.h"
#include "Workbench.h"

#include <QAbstractButton>
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QFontInfo>
#include <QLineEdit>
#include <QMenuBar>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QStandardPaths>
#include <QStyle>
#include <QStyleOptionButton>
#include <QTemporaryDir>
#include <QtTest>

using namespace kiln::views;
using namespace kiln::workbench;
using namespace kiln::guitest;

namespace {

/// `widget`'s rectangle in `window`'s coordinates.
QRect inWindow(const QWidget *widget, const QWidget *window) {
  return QRect(widget->mapTo(window, QPoint(0, 0)), widget->size());
}

QString text(const QRect &r) {
  return QStringLiteral("%1x%2+%3+%4").arg(r.width()).arg(r.height()).arg(r.x()).arg(r.y());
}

/// The size a layout gives `w` at least: its minimum size where set, else
/// its minimum size hint.
QSize effectiveMinimum(const QWidget *w) {
  QSize hint = w->minimumSizeHint();
  return QSize(w->minimumWidth() > 0 ? w->minimumWidth() : hint.width(),
               w->minimumHeight() > 0 ? w->minimumHeight() : hint.height());
}

/// `b`'s text fits in the button's contents rectangle (inside its frame,
/// as the style draws it).
bool textFits(const QPushButton *b) {
  QStyleOptionButton opt;
  opt.initFrom(b);
  opt.text = b->text();
  QRect contents = b->style()->subElementRect(QStyle::SE_PushButtonContents, &opt, b);
  return b->fontMetrics().horizontalAdvance(b->text()) <= contents.width();
}

/// The point size a font is drawn at (also for fonts given in pixels).
double pointSize(const QFont &f) { return QFontInfo(f).pointSizeF(); }

} // namespace

class LayoutTest : public QObject {
  Q_OBJECT

  std::unique_ptr<MainWindow> w;
  QTemporaryDir tmp; // the embedding model's copy and its project file

  QDockWidget *dock(const char *name) const {
    for (QDockWidget *d : w->docks())
      if (d->objectName() == QLatin1String(name))
        return d;
    return nullptr;
  }

  /// Every visible dock's geometry, for failure messages.
  QString describe() const {
    QStringList parts{QStringLiteral("window %1, graph %2").arg(text(w->rect()), text(inWindow(w->centralWidget(), w.get())))};
    for (QDockWidget *d : w->docks())
      if (d->isVisible() && !d->visibleRegion().isEmpty())
        parts << QStringLiteral("%1 %2").arg(d->objectName(), text(inWindow(d, w.get())));
    return parts.join(QStringLiteral("; "));
  }

  void resizeTo(QSize size) {
    w->resize(size);
    QApplication::processEvents();
    QTRY_COMPARE(w->size(), size);
  }

  /// The graph's scale shows node text at least at the UI font's size, and
  /// the topmost node (an input) is in the viewport.
  void checkReadable() {
    GraphView *g = w->graphView();
    QApplication::processEvents();
    double shown = pointSize(g->font()) * g->transform().m11();
    QVERIFY2(shown >= pointSize(QApplication::font()) - 1e-6,
             qPrintable(QStringLiteral("node text at %1 pt, UI font %2 pt (scale %3)")
                            .arg(shown).arg(pointSize(QApplication::font())).arg(g->transform().m11())));
    const GraphLayout &layout = g->layout();
    QVERIFY(!layout.nodes.empty());
    const GraphNode *top = &layout.nodes.front();
    for (const GraphNode &n : layout.nodes)
      if (n.rect.top() < top->rect.top())
        top = &n;
    QRect onScreen = g->mapFromScene(top->rect).boundingRect();
    QVERIFY2(g->viewport()->rect().intersects(onScreen),
             qPrintable(QStringLiteral("top node at %1, viewport %2").arg(text(onScreen), text(g->viewport()->rect()))));
    // Fit to width: where the graph's width fits at this scale, all of it shows.
    if (layout.bounds.width() * g->transform().m11() <= g->viewport()->width()) {
      QRect all = g->mapFromScene(layout.bounds).boundingRect();
      QVERIFY2(all.left() >= -1 && all.right() <= g->viewport()->width() + 1,
               qPrintable(QStringLiteral("graph %1 in viewport %2").arg(text(all), text(g->viewport()->rect()))));
    }
  }

  /// Docks, graph, Tune dock and Find box at window size `size`.
  void checkLayout(QSize size) {
    resizeTo(size);
    const QRect window = w->rect();
    const QRect graph = inWindow(w->centralWidget(), w.get());
    QCOMPARE(w->centralWidget(), static_cast<QWidget *>(w->graphPanel()));
    QList<QDockWidget *> shown;
    for (QDockWidget *d : w->docks())
      if (d->isVisible() && !d->isFloating() && !d->visibleRegion().isEmpty()) // not a tab behind another
        shown << d;
    QVERIFY2(shown.size() >= 3, qPrintable(describe())); // left, right, bottom
    const int64_t graphArea = int64_t(graph.width()) * graph.height();
    for (int i = 0; i < shown.size(); ++i) {
      QRect a = inWindow(shown[i], w.get());
      QVERIFY2(window.contains(a), qPrintable(describe()));
      QVERIFY2(!a.intersects(graph), qPrintable(describe()));
      QVERIFY2(int64_t(a.width()) * a.height() < graphArea, qPrintable(describe()));
      for (int j = i + 1; j < shown.size(); ++j)
        QVERIFY2(!a.intersects(inWindow(shown[j], w.get())), qPrintable(describe()));
    }
    // The docks a user starts with show their whole panel: no scrolling.
    for (const char *name : {"dispatches", "inspector", "timeline", "tune", "diagnostics"}) {
      QDockWidget *d = dock(name);
      QVERIFY(d);
      d->raise();
      QApplication::processEvents();
      auto *scroll = qobject_cast<QScrollArea *>(d->widget());
      QWidget *view = scroll ? scroll->widget() : d->widget();
      QSize have = scroll ? scroll->viewport()->size() : view->size(), need = effectiveMinimum(view);
      QVERIFY2(have.width() >= need.width() && have.height() >= need.height(),
               qPrintable(QStringLiteral("%1: %2x%3 below its minimum %4x%5")
                              .arg(d->objectName()).arg(have.width()).arg(have.height())
                              .arg(need.width()).arg(need.height())));
    }
    // The Tune dock: every button and chooser fully visible in the window.
    QDockWidget *tune = w->dockOf(w->projectController()->tuningView());
    QVERIFY(tune);
    tune->raise();
    QApplication::processEvents();
    QList<QWidget *> controls;
    for (QAbstractButton *b : tune->findChildren<QAbstractButton *>())
      controls << b;
    for (QComboBox *c : tune->findChildren<QComboBox *>())
      controls << c;
    for (QLineEdit *e : w->projectController()->tuningView()->shapes()->findChildren<QLineEdit *>())
      controls << e; // the input shapes' fields (a model with dynamic inputs)
    TuningView *tv = w->projectController()->tuningView();
    QVERIFY(controls.contains(tv->buildButton()));
    QVERIFY(controls.contains(tv->resetButton()));
    QVERIFY(controls.contains(tv->fusionBox()));
    int checked = 0;
    for (QWidget *c : controls) {
      if (!c->isVisibleTo(tune))
        continue; // hidden by design (the shapes panel of a static model)
      QString name = c->objectName().isEmpty() ? QString::fromLatin1(c->metaObject()->className()) : c->objectName();
      if (auto *b = qobject_cast<QAbstractButton *>(c); b && !b->text().isEmpty())
        name = b->text();
      QVERIFY2(c->isVisible(), qPrintable(name));
      QVERIFY2(c->visibleRegion().boundingRect() == c->rect(),
               qPrintable(QStringLiteral("%1: visible %2 of %3").arg(name, text(c->visibleRegion().boundingRect()),
                                                                    text(c->rect()))));
      QVERIFY2(window.contains(inWindow(c, w.get())), qPrintable(name));
      if (auto *b = qobject_cast<QPushButton *>(c)) // "Reset Tuning", not "Reset"
        QVERIFY2(textFits(b), qPrintable(QStringLiteral("%1: %2 px wide, text %3 px")
                                             .arg(name).arg(b->width()).arg(b->fontMetrics().horizontalAdvance(b->text()))));
      ++checked;
    }
    QVERIFY(checked >= 6); // target, profile, format, fusion, reset, build
    // The Find box holds a dispatch reference such as "CONV_2D #12 ".
    QLineEdit *find = w->graphPanel()->searchBox();
    QVERIFY(find->isVisible());
    int need = find->fontMetrics().horizontalAdvance(QStringLiteral("CONV_2D #12 "));
    QVERIFY2(find->width() >= need, qPrintable(QStringLiteral("Find box %1 px, needs %2").arg(find->width()).arg(need)));
    // Back to the views the screenshots and users start with.
    dock("dispatches")->raise();
    dock("timeline")->raise();
  }

private slots:
  void initTestCase() {
    startTestSettings("kiln-workbench-layout-test");
    QVERIFY2(QFile::exists(modelPath("blazeface")), "run the fetch_models fixture first");
    w = std::make_unique<MainWindow>();
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    w->openFile(modelPath("blazeface"));
    QVERIFY(waitForCompile(*w));
  }

  void cleanupTestCase() { w.reset(); }

  void graphOpensReadable() {
    QCOMPARE(int(w->document()->plan->dispatches.size()), w->graphView()->dispatchNodeCount());
    checkReadable();
  }

  void layoutAt1024x700() { checkLayout(QSize(1024, 700)); }
  void layoutAt1600x1000() { checkLayout(QSize(1600, 1000)); }
  /// Shrinking again gives the room back from the graph, not the docks' contents.
  void layoutShrunkAgain() { checkLayout(QSize(1024, 700)); }

  void fitGraphIsReadable() {
    QAction *fit = nullptr;
    for (QAction *menu : w->menuBar()->actions())
      for (QAction *a : menu->menu() ? menu->menu()->actions() : QList<QAction *>())
        if (a->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_0))
          fit = a;
    QVERIFY(fit);
    for (QSize size : {QSize(1600, 1000), QSize(1024, 700)}) {
      resizeTo(size);
      w->graphView()->scale(0.2, 0.2); // a sliver, as the old Fit made it
      fit->trigger();
      checkReadable();
    }
  }

  /// Panels squeezed, hidden or floated, then View > Reset Layout: the
  /// default layout again at the window's size (checkLayout's rules).
  void resetLayoutAfterSqueeze() {
    QAction *reset = w->findChild<QAction *>(QStringLiteral("resetLayout"));
    QVERIFY(reset);
    resizeTo(QSize(1600, 1000));
    w->resizeDocks({dock("timeline")}, {600}, Qt::Vertical);
    w->resizeDocks({dock("dispatches")}, {40}, Qt::Horizontal);
    dock("inspector")->hide();
    resizeTo(QSize(1024, 700));
    QVERIFY(dock("timeline")->height() > 700 / 3); // squeezed: the graph has little room
    reset->trigger();
    QApplication::processEvents();
    QVERIFY(dock("inspector")->isVisible());
    QVERIFY2(dock("timeline")->height() <= 280,
             qPrintable(QString::number(dock("timeline")->height())));
    QVERIFY2(dock("dispatches")->width() >= 240,
             qPrintable(QString::number(dock("dispatches")->width())));
    checkLayout(QSize(1024, 700));
  }

  void savedLayoutVersioned() {
    const QString key = QStringLiteral("window/state");
    auto bottomHeight = [](MainWindow &m) {
      for (QDockWidget *d : m.docks())
        if (d->objectName() == QLatin1String("timeline"))
          return d->height();
      return -1;
    };
    auto timelineDock = [](MainWindow &m) {
      for (QDockWidget *d : m.docks())
        if (d->objectName() == QLatin1String("timeline"))
          return d;
      return static_cast<QDockWidget *>(nullptr);
    };
    // This version's state comes back: a tall bottom strip stays tall.
    QSettings().clear();
    {
      MainWindow m;
      m.resize(1024, 700);
      m.show();
      QVERIFY(QTest::qWaitForWindowExposed(&m));
      m.resizeDocks({timelineDock(m)}, {450}, Qt::Vertical);
      QApplication::processEvents();
      QVERIFY(bottomHeight(m) >= 400);
      m.close(); // saves geometry and state
    }
    QVERIFY(QSettings().contains(key));
    {
      MainWindow m;
      m.show();
      QVERIFY(QTest::qWaitForWindowExposed(&m));
      QTRY_VERIFY2(bottomHeight(m) >= 400, qPrintable(QString::number(bottomHeight(m))));
      // The same state written without a version (as before layout version
      // 2): the default layout instead.
      m.resizeDocks({timelineDock(m)}, {450}, Qt::Vertical);
      QApplication::processEvents();
      QSettings().setValue(key, m.saveState());
    }
    {
      MainWindow m;
      m.show();
      QVERIFY(QTest::qWaitForWindowExposed(&m));
      QApplication::processEvents();
      QVERIFY2(bottomHeight(m) < m.height() / 3,
               qPrintable(QStringLiteral("bottom strip %1 of %2").arg(bottomHeight(m)).arg(m.height())));
      QRect graph = inWindow(m.centralWidget(), &m);
      QVERIFY(graph.height() > bottomHeight(m));
    }
    QSettings().clear();
  }

  /// The embedding model (dynamic batch) fails to open; its Diagnostics
  /// message offers the fix on a button shown whole in the panel.
  void dynamicInputFixButtonShown_data() {
    QTest::addColumn<QSize>("size");
    QTest::newRow("1024x700") << QSize(1024, 700);
    QTest::newRow("1600x1000") << QSize(1600, 1000);
  }
  void dynamicInputFixButtonShown() {
    QFETCH(QSize, size);
    resizeTo(size);
    // A batch that records no size (shape [-1,8]): the import stops and
    // offers the fix.
    QString model =
        copyModelTo(tmp.path(), QStringLiteral(KILN_TEST_DATA_DIR "/bad/dynamic_batch.tflite"),
                    "dynamic_batch.tflite");
    QVERIFY(!model.isEmpty());
    DiagnosticsView *diag = w->diagnostics();
    for (int i = 0; i < 12; ++i) // a session's earlier messages: the list is taller than the panel
      diag->add(DiagnosticsView::Severity::Note, modelPath("blazeface"), QStringLiteral("earlier note %1").arg(i));
    w->openFile(model);
    QVERIFY(!waitForCompile(*w)); // its batch is dynamic
    QDockWidget *dd = w->dockOf(diag);
    QVERIFY(dd);
    dd->raise();
    QApplication::processEvents();
    QAbstractButton *fix = diag->fixButton(diag->topLevelItemCount() - 1);
    QVERIFY(fix);
    QVERIFY(fix->isVisible());
    QRect inViewport(fix->mapTo(diag->viewport(), QPoint(0, 0)), fix->size());
    QVERIFY2(diag->viewport()->rect().contains(inViewport),
             qPrintable(QStringLiteral("button %1, viewport %2").arg(text(inViewport), text(diag->viewport()->rect()))));
    QVERIFY2(fix->visibleRegion().boundingRect() == fix->rect(),
             qPrintable(QStringLiteral("visible %1 of %2").arg(text(fix->visibleRegion().boundingRect()), text(fix->rect()))));
    auto *button = qobject_cast<QPushButton *>(fix);
    QVERIFY(button);
    QVERIFY2(textFits(button), qPrintable(QStringLiteral("\"%1\" (%2 px) in %3 px")
                                              .arg(fix->text()).arg(fix->fontMetrics().horizontalAdvance(fix->text()))
                                              .arg(fix->width())));
    QVERIFY(fix->height() >= fix->sizeHint().height());
    dock("timeline")->raise();
  }

  /// Fixed from that button, the model shows Tune's input shapes row; the
  /// dock keeps its width: every button, chooser and field fully visible.
  void layoutWithDynamicInput() {
    QString model = tmp.filePath("dynamic_batch.tflite");
    QAbstractButton *fix = w->diagnostics()->fixButton(w->diagnostics()->topLevelItemCount() - 1);
    QVERIFY(fix);
    fix->click();
    QVERIFY2(waitForCompile(*w), qPrintable(w->diagnostics()->lastMessage()));
    QVERIFY(QTest::qWaitFor([&] { return !w->projectController()->isDiscovering(); }, 60000));
    QCOMPARE(w->projectController()->modelPath(), model);
    ShapesPanel *shapes = w->projectController()->tuningView()->shapes();
    QCOMPARE(int(shapes->inputs().size()), 1);
    QVERIFY(shapes->isVisibleTo(w->projectController()->tuningView()));
    const size_t dims = shapes->inputs()[0].signature.size();
    QCOMPARE(int(dims), 2); // [-1,8]
    for (QSize size : {QSize(1024, 700), QSize(1600, 1000), QSize(1024, 700)}) {
      checkLayout(size);
      for (size_t d = 0; d < dims; ++d) { // a field holds its size in full
        QLineEdit *e = shapes->edit(0, int(d));
        QVERIFY(e);
        int need = e->fontMetrics().horizontalAdvance(e->text().isEmpty() ? QStringLiteral("000") : e->text());
        QVERIFY2(e->width() >= need, qPrintable(QStringLiteral("dim %1: %2 px, text %3 px").arg(d).arg(e->width()).arg(need)));
      }
    }
  }
};

QTEST_MAIN(LayoutTest)
#include "LayoutTest.moc"
