//===- ViewExport.cpp - Pictures and data out of every view --------------===//
#include "ViewExport.h"

#include "GraphView.h"
#include "TableSupport.h"

#include "kiln/AtomicWrite.h"
#include "kiln/Csv.h"
#include "kiln/Profile.h"
#include "kiln/Run.h"

#include <QAction>
#include <QBuffer>
#include <QFileDialog>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QImage>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QSettings>
#include <QSvgGenerator>

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

namespace kiln::workbench {

using kiln::views::GraphView;

/// The longest side of a PNG of the graph, pixels (a 400-dispatch graph is
/// tens of thousands of pixels tall at 1:1).
static constexpr double kMaxPngSide = 8192;

static QByteArray pngBytes(const QImage &image) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  image.save(&buffer, "PNG");
  return bytes;
}

QByteArray graphImage(GraphView *graph, bool svg) {
  QGraphicsScene *scene = graph ? graph->scene() : nullptr;
  if (!scene || scene->items().isEmpty())
    return {};
  const QRectF source = scene->sceneRect();
  const QColor background = graph->palette().color(QPalette::Base);
  if (svg) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator generator;
    generator.setOutputDevice(&buffer);
    generator.setSize(source.size().toSize());
    generator.setViewBox(QRectF(QPointF(0, 0), source.size()));
    generator.setTitle(QStringLiteral("Kiln dispatch graph"));
    QPainter painter(&generator);
    painter.fillRect(QRectF(QPointF(0, 0), source.size()), background);
    scene->render(&painter, QRectF(QPointF(0, 0), source.size()), source);
    painter.end();
    return bytes;
  }
  const double scale = std::min(1.0, kMaxPngSide / std::max(source.width(), source.height()));
  QImage image(
      QSize(int(std::ceil(source.width() * scale)), int(std::ceil(source.height() * scale))),
      QImage::Format_ARGB32_Premultiplied);
  image.fill(background);
  QPainter painter(&image);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setRenderHint(QPainter::TextAntialiasing);
  scene->render(&painter, QRectF(QPointF(0, 0), QSizeF(image.size())), source);
  painter.end();
  return pngBytes(image);
}

QByteArray plotImage(QCustomPlot *plot, bool svg) {
  if (!plot)
    return {};
  QSize size = plot->size();
  if (size.width() < 200 || size.height() < 100) // never laid out (a dock never shown)
    size = QSize(1200, 600);
  if (!svg)
    return pngBytes(plot->toPixmap(size.width(), size.height()).toImage());
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  QSvgGenerator generator;
  generator.setOutputDevice(&buffer);
  generator.setSize(size);
  generator.setViewBox(QRect(QPoint(0, 0), size));
  QCPPainter painter(&generator);
  painter.setMode(QCPPainter::pmVectorized);
  painter.setMode(QCPPainter::pmNoCaching);
  plot->toPainter(&painter, size.width(), size.height());
  painter.end();
  return bytes;
}

ViewExporter::ViewExporter(ExportSources sources, QWidget *dialogParent)
    : QObject(dialogParent), sources_(std::move(sources)), parent_(dialogParent) {}

void ViewExporter::addActions(QMenu *menu) {
  auto add = [&](const QString &text, ExportItem item, int table = -1) {
    QAction *a =
        menu->addAction(text, this, [this, item, table] { saveInteractively(item, table); });
    entries_.push_back({item, table, a});
  };
  add(tr("Save &Graph as PNG\u2026"), ExportItem::GraphPng);
  add(tr("Save Graph as SVG\u2026"), ExportItem::GraphSvg);
  add(tr("Save &Timeline as PNG\u2026"), ExportItem::TimelinePng);
  add(tr("Save Timeline as SVG\u2026"), ExportItem::TimelineSvg);
  add(tr("Save &Memory Map as PNG\u2026"), ExportItem::MemoryPng);
  add(tr("Save Memory Map as SVG\u2026"), ExportItem::MemorySvg);
  menu->addSeparator();
  for (size_t i = 0; i < sources_.tables.size(); ++i)
    add(tr("Save %1 Table as CSV\u2026").arg(sources_.tables[i].first), ExportItem::TableCsv,
        int(i));
  menu->addSeparator();
  add(tr("Save Trace as &Perfetto JSON\u2026"), ExportItem::TraceJson);
  updateActions();
}

void ViewExporter::updateActions() {
  auto doc = sources_.document ? sources_.document() : nullptr;
  const bool measured = doc && sources_.measured && sources_.measured();
  for (const Entry &e : entries_) {
    if (e.item == ExportItem::TraceJson) {
      e.action->setEnabled(measured);
      e.action->setToolTip(
          measured ? tr("The measured run's trace, for ui.perfetto.dev or chrome://tracing")
                   : tr("Needs a measured run: Build \u25b8 Run on Host (Ctrl+R) first"));
    } else {
      e.action->setEnabled(doc != nullptr);
    }
  }
}

QAction *ViewExporter::action(ExportItem item, int table) const {
  for (const Entry &e : entries_)
    if (e.item == item && e.table == table)
      return e.action;
  return nullptr;
}

QByteArray ViewExporter::bytesOf(ExportItem item, int table, QString &error) const {
  auto doc = sources_.document ? sources_.document() : nullptr;
  if (!doc) {
    error = tr("nothing to save: no model is open");
    return {};
  }
  QByteArray bytes;
  switch (item) {
  case ExportItem::GraphPng:
  case ExportItem::GraphSvg:
    bytes = graphImage(sources_.graph, item == ExportItem::GraphSvg);
    break;
  case ExportItem::TimelinePng:
  case ExportItem::TimelineSvg:
    bytes = plotImage(sources_.timeline, item == ExportItem::TimelineSvg);
    break;
  case ExportItem::MemoryPng:
  case ExportItem::MemorySvg:
    bytes = plotImage(sources_.memory, item == ExportItem::MemorySvg);
    break;
  case ExportItem::TableCsv:
    if (table < 0 || size_t(table) >= sources_.tables.size()) {
      error = tr("nothing to save: no table %1").arg(table);
      return {};
    }
    bytes = QByteArray::fromStdString(
        kiln::csvText(kiln::views::tableRecords(*sources_.tables[table].second)));
    break;
  case ExportItem::TraceJson: {
    const kiln::views::MeasuredRun *run = sources_.measured ? sources_.measured() : nullptr;
    if (!run) {
      error = tr("nothing to save: no measured run (Build \u25b8 Run on Host first)");
      return {};
    }
    bytes = QByteArray::fromStdString(
        kiln::traceToChromeJson(run->events, kiln::traceCommandNames(*doc->plan)));
    break;
  }
  }
  if (bytes.isEmpty())
    error = tr("nothing to save: the view is empty");
  return bytes;
}

QString ViewExporter::save(ExportItem item, const QString &path, int table) const {
  QString error;
  QByteArray bytes = bytesOf(item, table, error);
  if (bytes.isEmpty())
    return error;
  const std::string file = QFileInfo(path).absoluteFilePath().toStdString();
  if (llvm::Error err =
          kiln::writeFileAtomically(file, llvm::StringRef(bytes.constData(), size_t(bytes.size()))))
    return QString::fromStdString(llvm::toString(std::move(err)));
  return {};
}

void ViewExporter::saveInteractively(ExportItem item, int table) {
  QString name, filter;
  switch (item) {
  case ExportItem::GraphPng:
    name = QStringLiteral("graph.png");
    break;
  case ExportItem::GraphSvg:
    name = QStringLiteral("graph.svg");
    break;
  case ExportItem::TimelinePng:
    name = QStringLiteral("timeline.png");
    break;
  case ExportItem::TimelineSvg:
    name = QStringLiteral("timeline.svg");
    break;
  case ExportItem::MemoryPng:
    name = QStringLiteral("memory.png");
    break;
  case ExportItem::MemorySvg:
    name = QStringLiteral("memory.svg");
    break;
  case ExportItem::TableCsv:
    name = (table >= 0 && size_t(table) < sources_.tables.size()
                ? sources_.tables[table].first.toLower()
                : QStringLiteral("table")) +
           QStringLiteral(".csv");
    break;
  case ExportItem::TraceJson:
    name = QStringLiteral("trace.json");
    break;
  }
  const QString suffix = QFileInfo(name).suffix();
  filter = suffix == QLatin1String("png")   ? tr("PNG images (*.png)")
           : suffix == QLatin1String("svg") ? tr("SVG images (*.svg)")
           : suffix == QLatin1String("csv") ? tr("CSV tables (*.csv)")
                                            : tr("Chrome trace-event JSON (*.json)");
  auto doc = sources_.document ? sources_.document() : nullptr;
  QSettings settings;
  QString dir = settings
                    .value(QStringLiteral("exportViewDir"),
                           doc ? QFileInfo(doc->path).absolutePath() : QString())
                    .toString();
  if (doc) // "blazeface-graph.svg"
    name = QFileInfo(doc->path).completeBaseName() + QLatin1Char('-') + name;
  QString path = QFileDialog::getSaveFileName(parent_, tr("Export View"),
                                              dir + QLatin1Char('/') + name, filter);
  if (path.isEmpty())
    return;
  settings.setValue(QStringLiteral("exportViewDir"), QFileInfo(path).absolutePath());
  if (QString error = save(item, path, table); !error.isEmpty())
    QMessageBox::warning(parent_, tr("Export View"), tr("%1 was not saved:\n%2").arg(path, error));
}

} // namespace kiln::workbench
