//===- CompareView.cpp - Two builds side by side --------------------------===//
#include "CompareView.h"

#include "PlanModels.h"

#include "kiln/Run.h"

#include <QBrush>
#include <QColor>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::views {

CompareModel::CompareModel(QObject *parent) : QAbstractTableModel(parent) {}

void CompareModel::setBuilds(const std::optional<kiln::BuildSummary> &a, const std::optional<kiln::BuildSummary> &b) {
  // The rows of `kiln diff`'s two tables (sections, then the plan), B - A.
  // Plan rows are keyed "plan.NAME", apart from the section rows.
  beginResetModel();
  rows_.clear();
  values_.clear();
  latencyNoise_ = a && b && kiln::withinSpread(a->latency, b->latency);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto add = [&](const QString &key, double va, double vb) {
    rows_ << key;
    values_.push_back({a ? va : nan, b ? vb : nan, a && b ? vb - va : nan});
  };
  if (a || b) {
    // One side alone is listed with the other side empty.
    const kiln::BuildSummary &x = a ? *a : *b;
    const kiln::BuildSummary &y = b ? *b : *a;
    auto bytesOf = [](const kiln::BuildSummary &s, const std::string &name) {
      for (const auto &sec : s.sizes.sections)
        if (sec.first == name)
          return double(sec.second);
      return 0.0;
    };
    std::vector<std::string> names;
    for (const auto &sec : x.sizes.sections)
      names.push_back(sec.first);
    for (const auto &sec : y.sizes.sections)
      if (std::find(names.begin(), names.end(), sec.first) == names.end())
        names.push_back(sec.first);
    for (const std::string &n : names)
      add(QString::fromStdString(n), bytesOf(x, n), bytesOf(y, n));
    add(QStringLiteral("(overhead)"), double(x.sizes.overhead), double(y.sizes.overhead));
    add(QStringLiteral("total"), double(x.sizes.fileBytes), double(y.sizes.fileBytes));
    add(QStringLiteral("plan.arena_bytes"), double(x.arenaBytes), double(y.arenaBytes));
    add(QStringLiteral("plan.lower_bound_bytes"), double(x.lowerBoundBytes), double(y.lowerBoundBytes));
    add(QStringLiteral("plan.dispatches"), double(x.dispatches), double(y.dispatches));
    add(QStringLiteral("plan.commands"), double(x.commands), double(y.commands));
    add(QStringLiteral("plan.waves"), double(x.waves), double(y.waves));
    if (x.latency.medianMs >= 0 || y.latency.medianMs >= 0) {
      rows_ << QStringLiteral("plan.median_ms");
      double va = a && a->latency.medianMs >= 0 ? a->latency.medianMs : nan, vb = b && b->latency.medianMs >= 0 ? b->latency.medianMs : nan;
      values_.push_back({va, vb, vb - va});
    }
  }
  endResetModel();
}

double CompareModel::value(const QString &name, Column column) const {
  int row = rows_.indexOf(name);
  if (row < 0 || column == What)
    return std::numeric_limits<double>::quiet_NaN();
  return values_[row][column - 1];
}

bool CompareModel::isColoured(const QString &name) const {
  int row = rows_.indexOf(name);
  if (row < 0)
    return false;
  double v = values_[row][2];
  if (std::isnan(v) || v == 0)
    return false;
  return !(name == QLatin1String("plan.median_ms") && latencyNoise_);
}

int CompareModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(rows_.size()); }
int CompareModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : NumColumns; }

static QString rowLabel(const QString &rawKey) {
  QString key = rawKey;
  if (key.startsWith(QLatin1String("plan.")))
    key = key.mid(5);
  else if (key != QLatin1String("total") && key != QLatin1String("(overhead)"))
    return QObject::tr("%1 section (bytes)").arg(key);
  if (key == QLatin1String("commands"))
    return QObject::tr("commands (entries)");
  if (key == QLatin1String("arena_bytes"))
    return QObject::tr("arena");
  if (key == QLatin1String("lower_bound_bytes"))
    return QObject::tr("arena lower bound");
  if (key == QLatin1String("median_ms"))
    return QObject::tr("median latency (ms)");
  if (key == QLatin1String("total"))
    return QObject::tr("file total");
  return key;
}

QVariant CompareModel::data(const QModelIndex &index, int role) const {
  if (!index.isValid() || index.row() >= rowCount())
    return {};
  const QString &key = rows_[index.row()];
  bool ms = key == QLatin1String("plan.median_ms");
  if (role == Qt::DisplayRole) {
    if (index.column() == What)
      return rowLabel(key);
    double v = values_[index.row()][index.column() - 1];
    if (std::isnan(v))
      return QString();
    QString text = ms ? QString::number(v, 'f', 3) : QLocale().toString(qint64(v));
    if (index.column() == Delta && v > 0)
      text.prepend(QLatin1Char('+'));
    if (index.column() == Delta && values_[index.row()][0] > 0 && v != 0)
      text += QStringLiteral(" (%1%)").arg(100.0 * v / values_[index.row()][0], 0, 'f', 1);
    if (index.column() == Delta && ms && latencyNoise_)
      text += QObject::tr(", noise");
    return text;
  }
  if (role == Qt::EditRole && index.column() != What)
    return values_[index.row()][index.column() - 1];
  if (role == Qt::TextAlignmentRole && index.column() != What)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ForegroundRole && index.column() == Delta && isColoured(key)) {
    double v = values_[index.row()][2];
    return v < 0 ? QBrush(QColor(0, 0x80, 0)) : QBrush(QColor(0xb0, 0, 0));
  }
  if (role == Qt::ToolTipRole && index.column() == Delta && ms && latencyNoise_)
    return QObject::tr("Within the measured spread (the min..max of A and B overlap): timing noise, "
                       "neither a gain nor a loss");
  if (role == Qt::ToolTipRole && index.column() == What)
    return QObject::tr("`kiln diff` row \u201c%1\u201d").arg(key);
  return {};
}

QVariant CompareModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  switch (section) {
  case What:
    return tr("What");
  case A:
    return tr("A");
  case B:
    return tr("B");
  case Delta:
    return tr("B \u2212 A");
  }
  return {};
}

OutputAgreementModel::OutputAgreementModel(QObject *parent) : QAbstractTableModel(parent) {}

void OutputAgreementModel::setComparison(const std::vector<kiln::OutputAgreement> &rows) {
  beginResetModel();
  rows_ = rows;
  endResetModel();
}

int OutputAgreementModel::rowCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : int(rows_.size());
}
int OutputAgreementModel::columnCount(const QModelIndex &parent) const {
  return parent.isValid() ? 0 : NumColumns;
}

QVariant OutputAgreementModel::data(const QModelIndex &index, int role) const {
  if (!index.isValid() || index.row() >= rowCount())
    return {};
  const kiln::OutputAgreement &m = rows_[index.row()];
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double v = nan;
  switch (index.column()) {
  case Elements:
    v = double(m.elements);
    break;
  case MaxError:
    v = m.maxAbsError;
    break;
  case Rmse:
    v = m.rmse;
    break;
  case Cosine:
    v = m.cosine;
    break;
  case Top1:
    v = m.classifier ? m.top1Agreement : nan;
    break;
  default:
    break;
  }
  if (role == Qt::DisplayRole) {
    if (index.column() == Output)
      return QString::fromStdString(m.name);
    if (index.column() == Elements)
      return QLocale().toString(qint64(m.elements));
    if (std::isnan(v))
      return index.column() == Top1 ? QStringLiteral("\u2013") : QString();
    if (index.column() == Cosine)
      return QString::number(v, 'f', 8);
    if (index.column() == Top1)
      return QStringLiteral("%1%").arg(100.0 * v, 0, 'f', 1);
    return QString::number(v, 'e', 4);
  }
  if (role == Qt::EditRole && index.column() != Output)
    return v;
  if (role == Qt::TextAlignmentRole && index.column() != Output)
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ToolTipRole && index.column() == Output)
    return m.dequantizedA || m.dequantizedB
               ? tr("Integer values dequantized (real = scale \u00d7 (q \u2212 zero point)) in %1")
                     .arg(m.dequantizedA && m.dequantizedB ? tr("both models")
                          : m.dequantizedA                 ? tr("model A")
                                                           : tr("model B"))
               : tr("Compared as stored");
  if (role == Qt::ToolTipRole && index.column() == Top1 && !m.classifier)
    return tr("Top-1 agreement applies to classifier outputs ([N] or [1, N], N \u2265 2)");
  return {};
}

QVariant OutputAgreementModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole)
    return {};
  switch (section) {
  case Output:
    return tr("Output");
  case Elements:
    return tr("Elements");
  case MaxError:
    return tr("Max |error|");
  case Rmse:
    return tr("RMSE");
  case Cosine:
    return tr("Cosine");
  case Top1:
    return tr("Top-1 agreement");
  }
  return {};
}

CompareView::CompareView(QWidget *parent) : QWidget(parent) {
  // Two tabs: the builds of this model side by side, and this model's
  // outputs against another model's.
  auto *outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  tabs_ = new QTabWidget(this);
  outer->addWidget(tabs_);
  auto *builds = new QWidget(tabs_);
  auto *v = new QVBoxLayout(builds);
  auto *bar = new QHBoxLayout;
  stripped_ = new QPushButton(tr("Default vs stripped"), builds);
  stripped_->setToolTip(tr("Build the current settings with both profiles and compare (latency measured on this host)"));
  pin_ = new QPushButton(tr("Keep current as A"), builds);
  pin_->setToolTip(tr("Keep the current build as A (\u201cbefore\u201d), then change settings"));
  current_ = new QPushButton(tr("Compare A with current"), builds);
  current_->setToolTip(tr("Show the current build as B (\u201cafter\u201d)"));
  bar->addWidget(stripped_);
  bar->addWidget(pin_);
  bar->addWidget(current_);
  bar->addStretch(1);
  v->addLayout(bar);
  caption_ = new QLabel(emptyText(), builds);
  caption_->setWordWrap(true);
  v->addWidget(caption_);
  model_ = new CompareModel(this);
  table_ = new QTableView(builds);
  table_->setModel(model_);
  table_->setAccessibleName(tr("Compare"));
  table_->verticalHeader()->hide();
  table_->setAlternatingRowColors(true);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  v->addWidget(table_, 1);
  tabs_->addTab(builds, tr("Builds"));
  // What quantization costs: the open model against another, per output.
  auto *outputs = new QWidget(tabs_);
  auto *o = new QVBoxLayout(outputs);
  auto *outputsBar = new QHBoxLayout;
  model2_ = new QPushButton(tr("Compare outputs with model\u2026"), outputs);
  model2_->setToolTip(
      tr("Run the open model and another (its float or int8 twin, another export) on "
         "the same random inputs and compare every output"));
  outputsBar->addWidget(model2_);
  outputsBar->addStretch(1);
  o->addLayout(outputsBar);
  outputsCaption_ = new QLabel(outputsEmptyText(), outputs);
  outputsCaption_->setWordWrap(true);
  o->addWidget(outputsCaption_);
  outputsModel_ = new OutputAgreementModel(this);
  outputsTable_ = new QTableView(outputs);
  outputsTable_->setModel(outputsModel_);
  outputsTable_->setAccessibleName(tr("Output agreement"));
  outputsTable_->verticalHeader()->hide();
  outputsTable_->setAlternatingRowColors(true);
  outputsTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  o->addWidget(outputsTable_, 1);
  tabs_->addTab(outputs, tr("Outputs"));
  connect(model2_, &QPushButton::clicked, this, &CompareView::modelComparisonRequested);
  connect(stripped_, &QPushButton::clicked, this, &CompareView::defaultVsStrippedRequested);
  connect(pin_, &QPushButton::clicked, this, &CompareView::pinRequested);
  connect(current_, &QPushButton::clicked, this, &CompareView::currentRequested);
}

void CompareView::setBuilds(const QString &labelA, const std::optional<kiln::BuildSummary> &a, const QString &labelB,
                            const std::optional<kiln::BuildSummary> &b) {
  model_->setBuilds(a, b);
  diffText_ = a && b ? QString::fromStdString(kiln::formatBuildDiff(*a, *b, false)) : QString();
  auto describe = [](const QString &label, const std::optional<kiln::BuildSummary> &s) {
    if (!s)
      return tr("%1: \u2014").arg(label);
    return tr("%1: %2 bytes, CPU %3, %4")
        .arg(label).arg(s->sizes.fileBytes)
        .arg(QString::fromStdString(s->cpu), QString::fromStdString(kiln::latencyText(s->latency)));
  };
  if (!a && !b) {
    caption_->setText(emptyText());
    table_->setToolTip(QString());
    return;
  }
  caption_->setText(tr("<b>A</b> = %1<br><b>B</b> = %2").arg(describe(labelA, a).toHtmlEscaped(),
                                                                    describe(labelB, b).toHtmlEscaped()));
  table_->setToolTip(diffText_);
}

QString CompareView::emptyText() {
  return tr("No builds compared yet. Press <b>Default vs stripped</b> to build the current settings with both "
            "profiles and compare them, or <b>Keep current as A</b>, change a setting in Tune, then "
            "<b>Compare A with current</b>. Latency is measured on this host as the Run dock measures it.");
}

void CompareView::setBusy(const QString &text) { caption_->setText(text.toHtmlEscaped()); }

QString CompareView::outputsEmptyText() {
  return tr(
      "No second model compared yet. Press <b>Compare outputs with model\u2026</b> and choose "
      "another model or artifact with the same inputs and outputs (the float twin of an int8 "
      "model, another export): both run on the same seeded random inputs, integer outputs "
      "dequantized, as <tt>kiln validate A --compare-with=B</tt> does.");
}

void CompareView::setOutputComparison(const QString &labelA, const QString &labelB,
                                      const kiln::ModelComparison &c) {
  tabs_->setCurrentIndex(1);
  outputsModel_->setComparison(c.outputs);
  outputsCaption_->setText(tr("<b>A</b> = %1<br><b>B</b> = %2<br>on %3")
                               .arg(labelA.toHtmlEscaped(), labelB.toHtmlEscaped(),
                                    QString::fromStdString(c.inputSource).toHtmlEscaped()));
  outputsTable_->setToolTip(QString::fromStdString(kiln::formatModelComparison(c)));
}

void CompareView::setOutputsBusy(const QString &text) {
  tabs_->setCurrentIndex(1);
  outputsCaption_->setText(text.toHtmlEscaped());
}

} // namespace kiln::views
