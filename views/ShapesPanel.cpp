//===- ShapesPanel.cpp - Fix the dynamic dimensions of model inputs -------===//
#include "ShapesPanel.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QVBoxLayout>

#include "kiln/Recipe.h"

namespace kiln::views {

namespace {
/// An input's name on its own line above its fields: elided in the middle
/// when the dock is narrower than the name (TFLite names such as
/// "serving_default_input_1:0" have no spaces to wrap at), the whole name
/// as tooltip; it never widens the Tune panel.
class NameLabel : public QLabel {
public:
  NameLabel(const QString &text, QWidget *parent) : QLabel(text, parent) {
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    setToolTip(text);
  }
  QSize minimumSizeHint() const override { return {0, QLabel::minimumSizeHint().height()}; }

protected:
  void paintEvent(QPaintEvent *) override {
    QPainter painter(this);
    const QRect r = contentsRect();
    painter.drawText(r, Qt::AlignLeft | Qt::AlignVCenter, fontMetrics().elidedText(text(), Qt::ElideMiddle, r.width()));
  }
};
/// The ONNX symbol of dimension `d` ("batch"), empty if it has none.
QString symbolOf(const DynamicInput &in, size_t d) { return d < in.dimNames.size() ? in.dimNames[d] : QString(); }

/// A dynamic dimension's tooltip: what to type, and its symbol.
QString dimensionTip(const DynamicInput &in, size_t d) {
  QString symbol = symbolOf(in, d);
  return symbol.isEmpty() ? ShapesPanel::tr("dynamic dimension %1: a whole number above 0").arg(d)
                          : ShapesPanel::tr("dynamic dimension %1 ('%2'): a whole number above 0").arg(d).arg(symbol);
}
} // namespace

DynamicInput dynamicInputOf(const kiln::ModelInput &input, const std::vector<int64_t> &suggestion) {
  DynamicInput out;
  out.name = QString::fromStdString(input.name);
  out.index = input.index;
  out.signature = input.shape;
  for (size_t d = 0; d < input.shape.size(); ++d)
    out.dimNames.push_back(d < input.dimNames.size() ? QString::fromStdString(input.dimNames[d]) : QString());
  if (suggestion.size() == input.shape.size())
    out.suggestion = suggestion;
  return out;
}

std::vector<ValueInput> valueInputsOf(const std::vector<kiln::ModelInput> &inputs, bool onnx,
                                      const std::vector<std::string> &fixed) {
  std::vector<ValueInput> out;
  if (!onnx)
    return out;
  static const QStringList types = {
      QStringLiteral("float32"), QStringLiteral("int8"),   QStringLiteral("uint8"),
      QStringLiteral("int16"),   QStringLiteral("uint16"), QStringLiteral("int32"),
      QStringLiteral("uint32"),  QStringLiteral("int64"),  QStringLiteral("bool")};
  for (const kiln::ModelInput &in : inputs) {
    bool named = false;
    for (const std::string &f : fixed)
      named |= f == in.name || f == std::to_string(in.index);
    int64_t elements = 1;
    for (int64_t d : in.shape)
      elements *= d;
    bool small = !in.isDynamic() && elements <= kMaxOfferedValueElements &&
                 types.contains(QString::fromStdString(in.elementType));
    if (!small && !named)
      continue;
    out.push_back({QString::fromStdString(in.name), in.index,
                   QString::fromStdString(in.elementType), in.shape});
  }
  return out;
}

std::vector<DynamicInput> dynamicInputsOf(const std::vector<kiln::UnfixedInput> &unfixed) {
  std::vector<DynamicInput> out;
  for (const kiln::UnfixedInput &u : unfixed)
    out.push_back(dynamicInputOf(u.input, u.suggestion));
  return out;
}

ShapesPanel::ShapesPanel(QWidget *parent) : QWidget(parent) {
  auto *v = new QVBoxLayout(this);
  v->setContentsMargins(0, 0, 0, 0);
  title_ = new QLabel(
      tr("<b>Dynamic input dimensions</b> (Kiln compiles static shapes: give each -1 a size)"),
      this);
  title_->setWordWrap(true);
  v->addWidget(title_);
  // One input per row: its name above, its fields below (never side by
  // side, so a long name or a 4-D shape does not widen the narrow dock).
  grid_ = new QGridLayout;
  grid_->setVerticalSpacing(2);
  v->addLayout(grid_);
  valuesTitle_ = new QLabel(
      tr("<b>Inputs fixed to values</b> (a constant of the build, e.g. a sample rate: the "
         "artifact no longer takes the input; empty = not fixed)"),
      this);
  valuesTitle_->setWordWrap(true);
  valuesTitle_->hide();
  v->addWidget(valuesTitle_);
  valuesGrid_ = new QGridLayout;
  valuesGrid_->setVerticalSpacing(2);
  v->addLayout(valuesGrid_);
  message_ = new QLabel(this);
  message_->setWordWrap(true);
  message_->setStyleSheet(QStringLiteral("color: #b00000"));
  v->addWidget(message_);
}

int ShapesPanel::fieldWidth(int digits) const {
  // The text plus QLineEdit's frame and text margins (as its size hint adds them).
  return fontMetrics().horizontalAdvance(QString(digits, QLatin1Char('0'))) + 2 * fontMetrics().averageCharWidth() + 6;
}

QLineEdit *ShapesPanel::valueEdit(int input) const {
  return input >= 0 && input < int(valueEdits_.size()) ? valueEdits_[input] : nullptr;
}

namespace {
/// "int64 []" / "float32 [3]": the type and shape a value must fill.
QString valueTypeText(const ValueInput &in) {
  QStringList dims;
  for (int64_t d : in.shape)
    dims << QString::number(d);
  return QStringLiteral("%1 [%2]").arg(in.elementType, dims.join(QLatin1Char(',')));
}
} // namespace

void ShapesPanel::setValueInputs(const std::vector<ValueInput> &inputs,
                                 const std::vector<QString> &values) {
  bool same = inputs.size() == valueInputs_.size();
  for (size_t i = 0; same && i < inputs.size(); ++i)
    same = inputs[i].name == valueInputs_[i].name && inputs[i].shape == valueInputs_[i].shape &&
           inputs[i].elementType == valueInputs_[i].elementType;
  values_ = values;
  values_.resize(inputs.size());
  if (!same) {
    for (QWidget *w : valueWidgets_) {
      w->hide();
      valuesGrid_->removeWidget(w);
      w->deleteLater();
    }
    valueWidgets_.clear();
    valueEdits_.clear();
    valueInputs_ = inputs;
    for (size_t i = 0; i < valueInputs_.size(); ++i) {
      const ValueInput &in = valueInputs_[i];
      auto *name = new NameLabel(
          QStringLiteral("%1 (input %2, %3)").arg(in.name).arg(in.index).arg(valueTypeText(in)),
          this);
      valuesGrid_->addWidget(name, 2 * int(i), 0);
      valueWidgets_.push_back(name);
      auto *e = new QLineEdit(this);
      e->setAccessibleName(QStringLiteral("%1 value").arg(in.name));
      e->setPlaceholderText(in.shape.empty() ? tr("value") : tr("v0,v1,\u2026"));
      int input = int(i);
      connect(e, &QLineEdit::editingFinished, this, [this, input] { commitValue(input); });
      valuesGrid_->addWidget(e, 2 * int(i) + 1, 0);
      valueWidgets_.push_back(e);
      valueEdits_.push_back(e);
    }
  }
  for (size_t i = 0; i < valueEdits_.size(); ++i) {
    valueEdits_[i]->setText(values_[i]);
    valueEdits_[i]->setStyleSheet(QString());
    valueEdits_[i]->setToolTip(tr("%1: a number, or one per element separated by ','")
                                   .arg(valueTypeText(valueInputs_[i])));
  }
  valuesTitle_->setVisible(!valueInputs_.empty());
  title_->setVisible(!inputs_.empty());
}

void ShapesPanel::commitValue(int input) {
  const ValueInput &in = valueInputs_[input];
  QLineEdit *e = valueEdits_[input];
  QString text = e->text().trimmed();
  if (text == values_[input])
    return;
  if (!text.isEmpty()) {
    // The recipe's own parser of a --fix-value value (the model check
    // follows when the build re-plans).
    auto parsed = kiln::parseFixValue(text.toStdString());
    if (!parsed) {
      QString why =
          tr("%1: %2").arg(in.name, QString::fromStdString(llvm::toString(parsed.takeError())));
      e->setStyleSheet(QStringLiteral("background: #ffd8d8"));
      e->setToolTip(why);
      message_->setText(why);
      emit rejected(why);
      return;
    }
  }
  e->setStyleSheet(QString());
  message_->clear();
  values_[input] = text;
  emit valueEdited(in.name, text);
}

QLineEdit *ShapesPanel::edit(int input, int dim) const {
  if (input < 0 || input >= int(edits_.size()) || dim < 0 || dim >= int(edits_[input].size()))
    return nullptr;
  return edits_[input][dim];
}

void ShapesPanel::setInputs(const std::vector<DynamicInput> &inputs, const std::vector<std::vector<int64_t>> &fixed) {
  bool same = inputs.size() == inputs_.size();
  for (size_t i = 0; same && i < inputs.size(); ++i)
    same = inputs[i].name == inputs_[i].name && inputs[i].signature == inputs_[i].signature;
  if (same) {
    // Only the values changed (an edit, undo or redo): keep the fields.
    fixed_ = fixed;
    fixed_.resize(inputs_.size());
    for (size_t i = 0; i < inputs_.size(); ++i)
      for (size_t d = 0; d < inputs_[i].signature.size(); ++d) {
        if (inputs_[i].signature[d] >= 0)
          continue;
        QLineEdit *e = edits_[i][d];
        e->setText(d < fixed_[i].size() ? QString::number(fixed_[i][d]) : QString());
        e->setStyleSheet(QString());
        e->setToolTip(dimensionTip(inputs_[i], d));
      }
    message_->clear();
    title_->setVisible(!inputs_.empty());
    return;
  }
  // A field may be emitting editingFinished right now: delete later.
  for (QWidget *w : rowWidgets_) {
    w->hide();
    grid_->removeWidget(w);
    w->deleteLater();
  }
  rowWidgets_.clear();
  edits_.clear();
  inputs_ = inputs;
  fixed_ = fixed;
  fixed_.resize(inputs_.size());
  message_->clear();
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const DynamicInput &in = inputs_[i];
    auto *name = new NameLabel(QStringLiteral("%1 (input %2)").arg(in.name).arg(in.index), this);
    grid_->addWidget(name, 2 * int(i), 0);
    rowWidgets_.push_back(name);
    auto *dims = new QWidget(this);
    auto *h = new QHBoxLayout(dims);
    h->setContentsMargins(0, 0, 0, 0);
    h->setSpacing(2);
    std::vector<QLineEdit *> row(in.signature.size(), nullptr);
    for (size_t d = 0; d < in.signature.size(); ++d) {
      if (d)
        h->addWidget(new QLabel(QStringLiteral("\u00d7"), dims));
      auto *e = new QLineEdit(dims);
      // Room for 5 digits, down to 3 in a narrow dock.
      e->setMinimumWidth(fieldWidth(3));
      e->setMaximumWidth(fieldWidth(5));
      e->setAccessibleName(QStringLiteral("%1 dim %2").arg(in.name).arg(d));
      if (in.signature[d] >= 0) {
        e->setText(QString::number(in.signature[d]));
        e->setReadOnly(true);
        e->setEnabled(false);
        e->setToolTip(tr("static dimension"));
      } else {
        const auto &f = fixed_[i];
        if (d < f.size())
          e->setText(QString::number(f[d]));
        // Unfixed: the ONNX symbol, else the size the build uses (a TFLite
        // input's recorded size, or the compiler's suggestion).
        e->setPlaceholderText(!symbolOf(in, d).isEmpty() ? symbolOf(in, d)
                              : d < in.suggestion.size() ? QString::number(in.suggestion[d])
                                                         : tr("size"));
        e->setToolTip(dimensionTip(in, d));
        int input = int(i);
        connect(e, &QLineEdit::editingFinished, this, [this, input] { commit(input); });
      }
      row[d] = e;
      h->addWidget(e);
    }
    h->addStretch(1);
    grid_->addWidget(dims, 2 * int(i) + 1, 0);
    rowWidgets_.push_back(dims);
    edits_.push_back(row);
  }
  title_->setVisible(!inputs_.empty());
}

void ShapesPanel::commit(int input) {
  const DynamicInput &in = inputs_[input];
  std::vector<int64_t> shape = in.signature;
  bool complete = true;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] >= 0)
      continue;
    QLineEdit *e = edits_[input][d];
    QString text = e->text().trimmed();
    if (text.isEmpty()) {
      complete = false;
      continue;
    }
    bool ok = false;
    qlonglong v = text.toLongLong(&ok);
    QString why;
    if (!ok)
      why = tr("%1, dimension %2: \u201c%3\u201d is not a whole number").arg(in.name).arg(d).arg(text);
    else if (v <= 0)
      why = tr("%1, dimension %2: %3 is not a size; give a whole number above 0").arg(in.name).arg(d).arg(text);
    if (!why.isEmpty()) {
      e->setStyleSheet(QStringLiteral("background: #ffd8d8"));
      e->setToolTip(why);
      message_->setText(why);
      emit rejected(why);
      return;
    }
    e->setStyleSheet(QString());
    e->setToolTip(dimensionTip(in, d));
    shape[d] = v;
  }
  message_->clear();
  if (!complete || shape == fixed_[input])
    return;
  fixed_[input] = shape;
  emit shapeEdited(in.name, shape);
}

} // namespace kiln::views
