//===- CompareOutputsGuiTest.cpp - What quantization costs, in Compare ---===//
//
// Issue 30, item 11, on the real MainWindow (offscreen): the float Gemm
// classifier of tests/data/quant_twins is opened, Compare's outputs table
// compares it with its int8 QDQ twin (ProjectController::compareOutputsWith,
// what the "Compare outputs with model..." button runs after its file
// dialog), off the GUI thread, and every cell must equal what
// kiln::compareModels computes on the same two builds here, and the
// float64 reference of gemm_meta.json within one output step. A model
// that does not compile leaves a message naming it.
//
//===----------------------------------------------------------------------===//
#include "CompareView.h"
#include "DiagnosticsView.h"
#include "GuiTestSupport.h"
#include "HostRunJob.h"
#include "MainWindow.h"
#include "ProjectController.h"
#include "Workbench.h"

#include "kiln/Compare.h"
#include "kiln/Compiler.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>

using namespace kiln::views;
using namespace kiln::workbench;

namespace {
QString twin(const char *name) { return QStringLiteral(KILN_TEST_DATA_DIR "/quant_twins/") + name; }
} // namespace

class CompareOutputsGuiTest : public QObject {
  Q_OBJECT

  std::unique_ptr<MainWindow> w;
  QTemporaryDir tmp;

  ProjectController *ctl() const { return w->projectController(); }

  bool compareWith(const QString &path) {
    QSignalSpy done(ctl(), &ProjectController::outputsCompared);
    ctl()->compareOutputsWith(path);
    if (!done.wait(300000))
      return false;
    return done.front().front().toBool();
  }

private slots:
  void initTestCase() {
    kiln::guitest::startTestSettings("kiln-compare-outputs-gui-test");
    w = std::make_unique<MainWindow>();
    w->resize(1600, 1000);
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    // A copy: the workbench may write a project file beside the model.
    QString model = tmp.filePath("gemm_float.onnx");
    QVERIFY(QFile::copy(twin("gemm_float.onnx"), model));
    w->openFile(model);
    QVERIFY2(waitForCompile(*w), qPrintable(model));
    QTRY_VERIFY_WITH_TIMEOUT(!w->document()->artifact.empty(), 120000);
  }

  void cleanupTestCase() { w.reset(); }

  void tableEqualsTheCoreFunction() {
    CompareView *view = ctl()->compareView();
    QCOMPARE(view->modelButton()->text(), QStringLiteral("Compare outputs with model\u2026"));
    QCOMPARE(view->outputsModel()->rowCount(), 0);
    QVERIFY(compareWith(twin("gemm_qdq.onnx")));
    QCOMPARE(view->tabs()->currentIndex(), 1); // the Outputs tab shows the result
    QCOMPARE(view->tabs()->tabText(1), QStringLiteral("Outputs"));
    // The same comparison, computed here with the core function.
    auto b = kiln::compileArtifact(twin("gemm_qdq.onnx").toStdString(), kiln::CompileOptions());
    QVERIFY(bool(b));
    kiln::ModelComparisonOptions options;
    options.run = hostRunOptions();
    auto c = kiln::compareModels(w->document()->artifact, *b, "A", "B", options);
    QVERIFY(bool(c));
    QCOMPARE(c->outputs.size(), size_t(1));
    const kiln::OutputAgreement &m = c->outputs[0];
    OutputAgreementModel *model = view->outputsModel();
    QCOMPARE(model->rowCount(), 1);
    auto cell = [&](int column) { return model->index(0, column).data(Qt::EditRole).toDouble(); };
    QCOMPARE(model->index(0, OutputAgreementModel::Output).data().toString(), QStringLiteral("y"));
    QCOMPARE(cell(OutputAgreementModel::Elements), double(m.elements));
    QCOMPARE(cell(OutputAgreementModel::MaxError), m.maxAbsError);
    QCOMPARE(cell(OutputAgreementModel::Rmse), m.rmse);
    QCOMPARE(cell(OutputAgreementModel::Cosine), m.cosine);
    QCOMPARE(cell(OutputAgreementModel::Top1), m.top1Agreement);
    QCOMPARE(model->index(0, OutputAgreementModel::Top1).data().toString(),
             QStringLiteral("%1%").arg(100.0 * m.top1Agreement, 0, 'f', 1));
    QCOMPARE(model->index(0, OutputAgreementModel::MaxError).data().toString(),
             QString::number(m.maxAbsError, 'e', 4));
    // 8 random samples of [1, 10].
    QCOMPARE(m.elements, int64_t(80));
    QVERIFY2(view->outputsCaption()->text().contains("8 random samples (seed 1)"),
             qPrintable(view->outputsCaption()->text()));
    // Against the float64 reference (16 samples there, 8 here: at most its
    // maximum, and more than nothing).
    QFile metaFile(twin("gemm_meta.json"));
    QVERIFY(metaFile.open(QIODevice::ReadOnly));
    QJsonObject meta = QJsonDocument::fromJson(metaFile.readAll()).object();
    const double step = meta["output_scale"].toDouble();
    QVERIFY(m.maxAbsError <= meta["expected"].toObject()["max_abs_error"].toDouble() + step);
    QVERIFY(m.maxAbsError > 0);
    QVERIFY(m.cosine > 0.999);
  }

  void badModelNamesItself() {
    QString bad = QStringLiteral(KILN_TEST_DATA_DIR "/bad/garbled.tflite");
    QVERIFY(!compareWith(bad));
    QVERIFY2(ctl()->compareView()->outputsCaption()->text().contains("garbled.tflite"),
             qPrintable(ctl()->compareView()->outputsCaption()->text()));
    // The table keeps the last comparison.
    QCOMPARE(ctl()->compareView()->outputsModel()->rowCount(), 1);
  }
};

QTEST_MAIN(CompareOutputsGuiTest)
#include "CompareOutputsGuiTest.moc"
