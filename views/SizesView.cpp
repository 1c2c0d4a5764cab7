//===- SizesView.cpp - Artifact bytes per section ------------------------===//
#include "SizesView.h"
#include "PlanModels.h"
#include "PlotTheme.h"

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

#include <qcustomplot.h>

namespace kiln::views {

SizesView::SizesView(QWidget *parent)
    : QWidget(parent), plot_(new QCustomPlot(this)), table_(new QTableView(this)), model_(new SectionSizesModel(this)) {
  caption_ = new QLabel(this);
  caption_->setWordWrap(true);
  table_->setModel(model_);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->verticalHeader()->hide();
  table_->setAlternatingRowColors(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setAccessibleName(tr("Section sizes table"));
  auto *split = new QSplitter(Qt::Vertical, this);
  split->addWidget(plot_);
  split->addWidget(table_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  plot_->setMinimumHeight(260);
  table_->setMinimumHeight(120);
  auto *layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(caption_);
  layout->addWidget(split, 1);

  QPalette pal = palette();
  applyPlotTheme(plot_, pal);
  plot_->setAccessibleName(tr("Section sizes chart"));
  plot_->yAxis->setScaleType(QCPAxis::stLogarithmic);
  plot_->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
  plot_->yAxis->setNumberFormat("eb");
  plot_->yAxis->setNumberPrecision(0);
  plot_->yAxis->setLabel(tr("bytes (log scale)"));
  plot_->legend->setVisible(true);
  plot_->legend->setBrush(pal.color(QPalette::Base));
  plot_->legend->setTextColor(pal.color(QPalette::Text));
  plot_->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
}

void SizesView::setDocument(std::shared_ptr<const ModelDocument> doc) {
  setSizes(doc->sizes, doc->strippedSizes);
}

void SizesView::clear() { setSizes(std::nullopt, std::nullopt); }

void SizesView::setSizes(std::optional<kiln::SectionSizes> a, std::optional<kiln::SectionSizes> b) {
  model_->setSizes(a, b);
  // Without a stripped build (a .kiln file opened, or the stripped build
  // still coming) its columns would stay empty.
  table_->setColumnHidden(SectionSizesModel::Stripped, !b);
  table_->setColumnHidden(SectionSizesModel::Delta, !b);
  plot_->clearPlottables();
  a_ = b_ = nullptr;
  labels_.clear();
  if (!a) {
    caption_->clear();
    plot_->replot();
    return;
  }
  int rows = model_->rowCount() - 1; // every row but "total"
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  QVector<double> keys;
  for (int r = 0; r < rows; ++r) {
    labels_ << model_->index(r, SectionSizesModel::Section).data().toString();
    ticker->addTick(r, labels_.back());
    keys << r;
  }
  plot_->xAxis->setTicker(ticker);
  plot_->xAxis->setTickLabelRotation(30);
  plot_->xAxis->setSubTicks(false);
  plot_->xAxis->setRange(-0.7, rows - 0.3);
  auto *group = new QCPBarsGroup(plot_);
  auto makeBars = [&](bool stripped, const QColor &color, const QString &name) {
    auto *bars = new QCPBars(plot_->xAxis, plot_->yAxis);
    bars->setName(name);
    bars->setBrush(color);
    bars->setPen(QPen(color.darker(140)));
    bars->setWidth(b ? 0.38 : 0.6);
    bars->setBarsGroup(group);
    QVector<double> values;
    for (int r = 0; r < rows; ++r)
      values << double(model_->bytesAt(r, stripped));
    bars->setData(keys, values);
    return bars;
  };
  a_ = makeBars(false, QColor(70, 130, 200), b ? tr("default (%1 bytes)").arg(a->fileBytes)
                                                : tr("artifact (%1 bytes)").arg(a->fileBytes));
  if (b)
    b_ = makeBars(true, QColor(230, 150, 50), tr("stripped (%1 bytes)").arg(b->fileBytes));
  double maxV = 1;
  for (int r = 0; r < rows; ++r)
    maxV = std::max<double>({maxV, double(model_->bytesAt(r, false)), double(b ? model_->bytesAt(r, true) : 0)});
  plot_->yAxis->setRange(1, maxV * 4);
  // The table takes the height of its rows; the chart gets the rest.
  int h = table_->horizontalHeader()->height() + 2 * table_->frameWidth() + 2;
  for (int r = 0; r < model_->rowCount(); ++r)
    h += table_->rowHeight(r);
  table_->setMaximumHeight(h);
  caption_->setText(b ? tr("Default build %1 bytes, stripped build %2 bytes (%3%4 bytes): debug symbols and "
                           "reflection dropped.")
                            .arg(a->fileBytes).arg(b->fileBytes).arg(b->fileBytes >= a->fileBytes ? "+" : "")
                            .arg(b->fileBytes - a->fileBytes)
                      : tr("Artifact as shipped: %1 bytes.").arg(a->fileBytes));
  plot_->replot();
}

std::vector<double> SizesView::barValues(bool stripped) const {
  std::vector<double> out;
  QCPBars *bars = stripped ? b_ : a_;
  if (!bars)
    return out;
  for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
    out.push_back(it->value);
  return out;
}

} // namespace kiln::views
