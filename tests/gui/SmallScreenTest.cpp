//===- SmallScreenTest.cpp - The window on a 1024x700 screen -------------===//
//
// Runs on the offscreen platform with one 1024x700 screen whose windows
// have frames (tests/gui/screen-1024x700.json, given by CTest as
// QT_QPA_PLATFORM=offscreen:configfile=...): a new window, and one whose
// saved geometry came from a larger screen, open inside the screen with
// their frames, and every default dock is shown in it.
//
//===----------------------------------------------------------------------===//
#include "GuiTestSupport.h"
#include "MainWindow.h"

#include <QApplication>
#include <QDockWidget>
#include <QScreen>
#include <QSettings>
#include <QStandardPaths>
#include <QTest>

using namespace kiln::workbench;

class SmallScreenTest : public QObject {
  Q_OBJECT

  static QString text(const QRect &r) {
    return QStringLiteral("%1x%2+%3+%4").arg(r.width()).arg(r.height()).arg(r.x()).arg(r.y());
  }

private slots:
  void initTestCase() {
    kiln::guitest::startTestSettings("kiln-workbench-small-screen-test");
    QScreen *screen = QGuiApplication::primaryScreen();
    QVERIFY(screen);
    QCOMPARE(screen->availableGeometry().size(), QSize(1024, 700)); // the configured screen
  }

  void newWindowFitsTheScreen() {
    MainWindow m;
    m.show();
    QVERIFY(QTest::qWaitForWindowExposed(&m));
    QApplication::processEvents();
    const QRect avail = m.screen()->availableGeometry();
    QVERIFY2(m.frameGeometry().height() > m.height(), "the configured screen gives windows frames");
    QVERIFY2(
        avail.contains(m.frameGeometry()),
        qPrintable(
            QStringLiteral("window %1 on screen %2").arg(text(m.frameGeometry()), text(avail))));
    for (QDockWidget *d : m.docks())
      if (!d->isFloating() && !d->visibleRegion().isEmpty())
        QVERIFY2(m.rect().contains(d->geometry()), qPrintable(d->objectName()));
  }

  void geometryFromALargerScreenIsShrunk() {
    MainWindow m;
    m.setGeometry(
        QRect(QPoint(300, 200), QSize(1600, 1000))); // as restored from a 1920x1200 screen
    m.show();
    QVERIFY(QTest::qWaitForWindowExposed(&m));
    QApplication::processEvents();
    const QRect avail = m.screen()->availableGeometry();
    QVERIFY2(
        avail.contains(m.frameGeometry()),
        qPrintable(
            QStringLiteral("window %1 on screen %2").arg(text(m.frameGeometry()), text(avail))));
    QSettings().clear();
  }
};

QTEST_MAIN(SmallScreenTest)
#include "SmallScreenTest.moc"
