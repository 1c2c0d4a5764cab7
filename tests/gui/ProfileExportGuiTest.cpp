//===- ProfileExportGuiTest.cpp - Profile dock and File > Export View -----===//
//
// Issue 30, items 9 and 10, on the real MainWindow (offscreen) over copies
// of small models in tests/data (no model cache):
//   - the Profile dock shows kiln::profileDispatches' rows of the plan
//     (estimated), then of the host run's trace once Run on Host lands;
//     a click on the Time header sorts the rows largest first, and picking
//     a row selects its dispatch in every view;
//   - Save Profile Table as CSV writes the rows in screen order; read back
//     with kiln::parseCsv they equal the core's rows, computed again here;
//   - Save Graph as SVG parses as XML with a text element per dispatch
//     title at least and the graph's size; the PNG loads with QImage at
//     the graph's size; the timeline's PNG has the plot's size;
//   - Save Trace as Perfetto JSON is disabled (with a tooltip saying why)
//     until a run is measured; then it parses (QJsonDocument) with one
//     complete ("X") dispatch event per traced dispatch command, each
//     named by kiln::traceCommandNames;
//   - an unwritable path is refused with its name and reason, nothing
//     written;
//   - an int8 convolution says OP, never FLOP (graph, profile, inspector).
//
//===----------------------------------------------------------------------===//
#include "GraphView.h"
#include "GuiTestSupport.h"
#include "MainWindow.h"
#include "PlanModels.h"
#include "ProfileView.h"
#include "TimelineView.h"
#include "ViewExport.h"
#include "Workbench.h"

#include "kiln/Csv.h"
#include "kiln/Profile.h"

#include <QAction>
#include <QFile>
#include <QHeaderView>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include <qcustomplot.h>

#include <cmath>

using namespace kiln::views;
using namespace kiln::workbench;

class ProfileExportGuiTest : public QObject {
  Q_OBJECT

  std::unique_ptr<MainWindow> w;
  QTemporaryDir tmp;

  bool open(const QString &relative, const QString &name) {
    QString copy = tmp.filePath(name);
    QFile::remove(copy);
    if (!QFile::copy(QStringLiteral(KILN_TEST_DATA_DIR "/") + relative, copy))
      return false;
    w->openFile(copy);
    return waitForCompile(*w);
  }

  /// Index of table `name` among Export View's tables.
  static int tableIndex(const QString &name) {
    const QStringList names = {"Dispatches", "Profile", "Commands", "Buffers", "Section Sizes"};
    return int(names.indexOf(name));
  }

  /// The proxy's ValueRole of `column`, top to bottom.
  QList<double> columnValues(int column) const {
    QSortFilterProxyModel *proxy = w->profileView()->proxy();
    QList<double> values;
    for (int r = 0; r < proxy->rowCount(); ++r)
      values << proxy->data(proxy->index(r, column), ValueRole).toDouble();
    return values;
  }

private slots:
  void initTestCase() {
    kiln::guitest::startTestSettings("kiln-profile-export-gui-test");
    w = std::make_unique<MainWindow>();
    w->resize(1600, 1000);
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    QVERIFY(open("ops/chain_blaze_block/model.tflite", "chain_blaze_block.tflite"));
  }

  void cleanupTestCase() { w.reset(); }

  // Times in three significant digits, never in exponent form (the review
  // saw "1e+03 us summed" for 999.6 us).
  void timesInThreeDigitsWithoutExponents() {
    QCOMPARE(formatNs(850), QStringLiteral("850 ns"));
    QCOMPARE(formatNs(999.6), QStringLiteral("1.00 \u00b5s"));
    QCOMPARE(formatNs(12345), QStringLiteral("12.3 \u00b5s"));
    QCOMPARE(formatNs(999600), QStringLiteral("1.00 ms"));
    QCOMPARE(formatNs(123456789), QStringLiteral("123 ms"));
    QCOMPARE(formatNs(1.5e9), QStringLiteral("1.50 s"));
    QCOMPARE(formatNs(2.5e12), QStringLiteral("2500 s"));
  }

  void profileShowsTheEstimateThenTheRun() {
    const kiln::CompilationPlan &plan = *w->document()->plan;
    ProfileModel *model = w->profileView()->model();
    QVERIFY(!model->isMeasured());
    auto estimated = kiln::profileDispatches(plan, nullptr);
    QCOMPARE(model->rows().size(), estimated.size());
    for (size_t i = 0; i < estimated.size(); ++i) {
      QCOMPARE(model->rows()[i].id, estimated[i].id);
      QCOMPARE(model->rows()[i].estimatedNs, estimated[i].estimatedNs);
      QCOMPARE(model->rows()[i].timeNs, estimated[i].estimatedNs);
    }
    // No run yet: the trace cannot be saved, and the action says why.
    QAction *trace = w->viewExporter()->action(ExportItem::TraceJson);
    QVERIFY(trace);
    QVERIFY(!trace->isEnabled());
    QVERIFY2(trace->toolTip().contains("Run on Host"), qPrintable(trace->toolTip()));
    QVERIFY(w->viewExporter()
                ->save(ExportItem::TraceJson, tmp.filePath("early.json"))
                .startsWith("nothing to save"));
    QVERIFY(!QFile::exists(tmp.filePath("early.json")));

    w->runOnHost();
    QVERIFY(waitForRun(*w));
    QVERIFY(w->measuredRun());
    QVERIFY(model->isMeasured());
    QVERIFY(trace->isEnabled());
    auto measured = kiln::profileDispatches(plan, &w->measuredRun()->events);
    QCOMPARE(model->rows().size(), measured.size());
    double shares = 0;
    for (size_t i = 0; i < measured.size(); ++i) {
      QCOMPARE(model->rows()[i].measuredNs, measured[i].measuredNs);
      QVERIFY2(measured[i].measuredNs > 0, measured[i].name.c_str());
      shares += model->rows()[i].share;
    }
    QVERIFY(std::abs(shares - 1) < 1e-9);
  }

  void clickOnTimeSortsLargestFirst() {
    QTableView *table = w->profileView()->table();
    QDockWidget *dock = w->dockOf(w->profileView());
    QVERIFY(dock);
    dock->raise();
    QApplication::processEvents();
    QHeaderView *header = table->horizontalHeader();
    const int x = header->sectionViewportPosition(ProfileModel::Time) +
                  header->sectionSize(ProfileModel::Time) / 2;
    QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, QPoint(x, header->height() / 2));
    QCOMPARE(header->sortIndicatorSection(), int(ProfileModel::Time));
    QCOMPARE(header->sortIndicatorOrder(), Qt::DescendingOrder);
    QList<double> times = columnValues(ProfileModel::Time);
    QCOMPARE(times.size(), int(w->document()->plan->dispatches.size()));
    for (int i = 1; i < times.size(); ++i)
      QVERIFY2(
          times[i - 1] >= times[i],
          qPrintable(QStringLiteral("row %1: %2 < %3").arg(i).arg(times[i - 1]).arg(times[i])));

    // The bottom row picked here is the dispatch selected everywhere.
    QSortFilterProxyModel *proxy = w->profileView()->proxy();
    const int last = proxy->rowCount() - 1;
    const qint64 id = proxy->data(proxy->index(last, 0), IdRole).toLongLong();
    table->selectionModel()->setCurrentIndex(
        proxy->index(last, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    QCOMPARE(w->currentDispatch(), id);
    QCOMPARE(w->graphView()->selectedDispatch(), int64_t(id));
    // And a dispatch picked elsewhere is the profile's current row.
    const qint64 first = w->document()->plan->dispatches.front().id;
    w->selectDispatch(first);
    QCOMPARE(proxy->data(table->selectionModel()->currentIndex(), IdRole).toLongLong(), first);
  }

  void profileCsvEqualsTheCoreRows() {
    const QString path = tmp.filePath("profile.csv");
    QCOMPARE(w->viewExporter()->save(ExportItem::TableCsv, path, tableIndex("Profile")), QString());
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    std::vector<kiln::CsvRecord> records;
    std::string error;
    QVERIFY2(kiln::parseCsv(f.readAll().toStdString(), records, error), error.c_str());
    auto rows = kiln::profileDispatches(*w->document()->plan, &w->measuredRun()->events);
    QCOMPARE(records.size(), rows.size() + 1);
    QCOMPARE(records[0], (kiln::CsvRecord{"Id", "Name", "Operators", "Time", "Share", "Work",
                                          "Rate", "Read", "Written", "Arena", "Stack", "Kernel"}));
    // Screen order: time, largest first (the sort of the last test).
    std::sort(rows.begin(), rows.end(), [](auto &a, auto &b) { return a.timeNs > b.timeNs; });
    for (size_t i = 0; i < rows.size(); ++i) {
      const kiln::CsvRecord &r = records[i + 1];
      const kiln::DispatchProfile &p = rows[i];
      QCOMPARE(r.size(), size_t(12));
      QCOMPARE(r[0], std::to_string(p.id));
      QCOMPARE(r[1], p.name);
      QCOMPARE(r[2], p.operators);
      QCOMPARE(std::stod(r[3]), p.timeNs);
      QCOMPARE(std::stod(r[4]), p.share);
      QCOMPARE(r[5], std::to_string(p.work));
      QCOMPARE(std::stod(r[6]), p.workPerSecond);
      QCOMPARE(r[7], std::to_string(p.bytesRead));
      QCOMPARE(r[8], std::to_string(p.bytesWritten));
      QCOMPARE(r[9], std::to_string(p.arenaBytes));
      QCOMPARE(r[10], std::string()); // no stack frames for a host build
      QCOMPARE(r[11], p.kernel);
    }
    // The dispatch table too: one record per dispatch, in plan order.
    const QString dispatches = tmp.filePath("dispatches.csv");
    QCOMPARE(w->viewExporter()->save(ExportItem::TableCsv, dispatches, tableIndex("Dispatches")),
             QString());
    QFile g(dispatches);
    QVERIFY(g.open(QIODevice::ReadOnly));
    QVERIFY2(kiln::parseCsv(g.readAll().toStdString(), records, error), error.c_str());
    const auto &plan = *w->document()->plan;
    QCOMPARE(records.size(), plan.dispatches.size() + 1);
    for (size_t i = 0; i < plan.dispatches.size(); ++i) {
      QCOMPARE(records[i + 1][1], plan.dispatches[i].name);
      QCOMPARE(records[i + 1][5], std::to_string(plan.dispatches[i].flops));
    }
  }

  void graphSvgAndPng() {
    GraphView *graph = w->graphView();
    const QSizeF scene = graph->scene()->sceneRect().size();
    const QString svg = tmp.filePath("graph.svg");
    QCOMPARE(w->viewExporter()->save(ExportItem::GraphSvg, svg), QString());
    QFile f(svg);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&f);
    int elements = 0, texts = 0;
    QString width, height;
    QStringList textContent;
    while (!xml.atEnd()) {
      if (xml.readNext() != QXmlStreamReader::StartElement)
        continue;
      ++elements;
      if (xml.name() == QLatin1String("svg")) {
        width = xml.attributes().value("width").toString();
        height = xml.attributes().value("height").toString();
      }
      if (xml.name() == QLatin1String("text")) {
        ++texts;
        textContent << xml.readElementText(QXmlStreamReader::IncludeChildElements);
      }
    }
    QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));
    const auto &plan = *w->document()->plan;
    QVERIFY(texts >= int(plan.dispatches.size()));
    QVERIFY(elements > texts);
    for (const kiln::Dispatch &d : plan.dispatches)
      QVERIFY2(textContent.join('\n').contains(QString::fromStdString(d.name)), d.name.c_str());
    // QSvgGenerator writes the size in millimetres at its 72 dpi default.
    QVERIFY2(!width.isEmpty() && !height.isEmpty(), "svg without a size");

    const QString png = tmp.filePath("graph.png");
    QCOMPARE(w->viewExporter()->save(ExportItem::GraphPng, png), QString());
    QImage image(png);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(int(std::ceil(scene.width())), int(std::ceil(scene.height()))));

    const QString timeline = tmp.filePath("timeline.png");
    QCOMPARE(w->viewExporter()->save(ExportItem::TimelinePng, timeline), QString());
    QImage plot(timeline);
    QVERIFY(!plot.isNull());
    QCOMPARE(plot.size(), w->timelineView()->plot()->size());
    const QString memory = tmp.filePath("memory.svg");
    QCOMPARE(w->viewExporter()->save(ExportItem::MemorySvg, memory), QString());
    QFile m(memory);
    QVERIFY(m.open(QIODevice::ReadOnly));
    QXmlStreamReader mxml(&m);
    while (!mxml.atEnd())
      mxml.readNext();
    QVERIFY2(!mxml.hasError(), qPrintable(mxml.errorString()));
  }

  void perfettoJsonHasOneEventPerDispatch() {
    const QString path = tmp.filePath("trace.json");
    QCOMPARE(w->viewExporter()->save(ExportItem::TraceJson, path), QString());
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QJsonParseError error;
    QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &error);
    QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(error.errorString()));
    const auto &plan = *w->document()->plan;
    const std::vector<std::string> names = kiln::traceCommandNames(plan);
    std::map<int64_t, int> perCommand;
    for (const QJsonValue &v : doc.object().value("traceEvents").toArray()) {
      QJsonObject e = v.toObject();
      if (e.value("ph").toString() != "X" || e.value("cat").toString() != "dispatch")
        continue;
      const int64_t command = e.value("args").toObject().value("command").toInteger();
      ++perCommand[command];
      QCOMPARE(e.value("name").toString().toStdString(), names.at(command));
      QVERIFY(e.value("dur").toDouble() > 0);
    }
    int dispatchCommands = 0;
    for (const kiln::Command &c : plan.schedule.commands)
      if (c.kind == kiln::CommandKind::Dispatch) {
        ++dispatchCommands;
        QCOMPARE(perCommand[c.index], 1);
      }
    QCOMPARE(int(perCommand.size()), dispatchCommands);
  }

  void unwritablePathIsRefused() {
    const QString path = tmp.filePath("no-such-folder/profile.csv");
    QString error = w->viewExporter()->save(ExportItem::TableCsv, path, tableIndex("Profile"));
    QVERIFY2(error.contains(path) && error.contains("cannot write"), qPrintable(error));
    QVERIFY(!QFile::exists(path));
  }

  void int8SaysOp() {
    QVERIFY(open("ops_int8/conv_2d_valid_stride2_relu/model.tflite", "conv_int8.tflite"));
    const kiln::CompilationPlan &plan = *w->document()->plan;
    const kiln::Dispatch *conv = nullptr;
    for (const kiln::Dispatch &d : plan.dispatches)
      for (const kiln::SourceOp &op : d.ops)
        if (op.name == "CONV_2D")
          conv = &d;
    QVERIFY(conv);
    QVERIFY(kiln::isIntegerDispatch(plan, *conv));
    // The graph's node: "3.2 kOP", no FLOP.
    for (const GraphNode &n : w->graphView()->layout().nodes)
      if (n.kind == GraphNode::Dispatch && n.id == conv->id) {
        QVERIFY2(n.lines.join(' ').contains("3.2 kOP"), qPrintable(n.lines.join(' ')));
        QVERIFY2(!n.tooltip.contains("FLOP"), qPrintable(n.tooltip));
      }
    ProfileModel *model = w->profileView()->model();
    const int row = model->rowOfDispatch(conv->id);
    QVERIFY(row >= 0);
    QCOMPARE(model->data(model->index(row, ProfileModel::Work), Qt::DisplayRole).toString(),
             QStringLiteral("3.2 kOP"));
    QCOMPARE(w->dispatchModel()
                 ->headerData(DispatchListModel::Flops, Qt::Horizontal, Qt::DisplayRole)
                 .toString(),
             QStringLiteral("Work"));
  }
};

QTEST_MAIN(ProfileExportGuiTest)
#include "ProfileExportGuiTest.moc"
