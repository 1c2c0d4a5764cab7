//===- ShapesPanel.h - Fix the dynamic dimensions of model inputs -*- C++ -*-===//
//
// One row per model input with dynamic dimensions (a -1 in its TFLite
// shape signature, a symbolic ONNX dimension such as "batch"): its name (elided to the panel's
// width) above its fields, the static dimensions as read-only fields, each dynamic one as an edit;
// narrow fields, so the panel fits the Tune dock's width. A whole number above zero is announced
// with shapeEdited() (the full static shape); anything else is explained on the panel's message
// line and in the field's tooltip and changes nothing.
//
// Below them, for an ONNX model, one row per small input that can be fixed
// to a value (`--fix-value`: a constant of the build that leaves the
// signature, e.g. a sample rate): its name, type and shape, and an edit
// holding the value. Text the recipe's parser takes (kiln::parseFixValue)
// is announced with valueEdited(); an empty field unfixes the input.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_SHAPESPANEL_H
#define KILN_VIEWS_SHAPESPANEL_H

#include "kiln/ModelInputs.h"

#include <QString>
#include <QWidget>

#include <cstdint>
#include <vector>

class QGridLayout;
class QLabel;
class QLineEdit;

namespace kiln::views {

/// A model input with dynamic dimensions, as the panel shows it (from
/// kiln/ModelInputs.h's data: dynamicInputOf).
struct DynamicInput {
  QString name;
  int index = 0;
  /// One size per dimension, -1 where it is dynamic.
  std::vector<int64_t> signature;
  /// Per dimension: the ONNX symbol of a dynamic one ("batch"), or empty.
  std::vector<QString> dimNames;
  /// The static shape the compiler suggests (sizes it checked compile),
  /// empty if none.
  std::vector<int64_t> suggestion;
};

/// A model input the panel offers to fix to a value (valueInputsOf).
struct ValueInput {
  QString name;
  int index = 0;
  /// NumPy-style element type name ("int64", "float32", "bool").
  QString elementType;
  /// The input's static shape (empty for a scalar).
  std::vector<int64_t> shape;
};

/// The most elements of an input the panel offers to fix to a value.
inline constexpr int64_t kMaxOfferedValueElements = 16;

/// The inputs of an ONNX model the panel offers to fix to values: a number
/// element type checkValueFixes takes, a static shape of at most
/// kMaxOfferedValueElements elements; and every input `fixed` names (by
/// name or index) whatever its size. None for other formats (`onnx` false).
std::vector<ValueInput> valueInputsOf(const std::vector<kiln::ModelInput> &inputs, bool onnx,
                                      const std::vector<std::string> &fixed);

/// The panel's form of a core model input and the shape suggested for it.
DynamicInput dynamicInputOf(const kiln::ModelInput &input, const std::vector<int64_t> &suggestion = {});
/// The same for each unfixed input an import error carries.
std::vector<DynamicInput> dynamicInputsOf(const std::vector<kiln::UnfixedInput> &unfixed);

class ShapesPanel : public QWidget {
  Q_OBJECT
public:
  explicit ShapesPanel(QWidget *parent = nullptr);
  /// The inputs to offer and the shapes fixed so far (same order; an empty
  /// shape = not fixed yet).
  void setInputs(const std::vector<DynamicInput> &inputs, const std::vector<std::vector<int64_t>> &fixed);
  const std::vector<DynamicInput> &inputs() const { return inputs_; }
  /// The edit of dynamic dimension `dim` of input `input` (nullptr if none).
  QLineEdit *edit(int input, int dim) const;
  /// The message line (errors in red).
  QLabel *messageLabel() const { return message_; }
  /// The inputs to offer for a value and the value text of each (same
  /// order; empty = not fixed).
  void setValueInputs(const std::vector<ValueInput> &inputs, const std::vector<QString> &values);
  const std::vector<ValueInput> &valueInputs() const { return valueInputs_; }
  /// The value edit of value input `input` (nullptr if none).
  QLineEdit *valueEdit(int input) const;
  /// Whether the panel has anything to show (dynamic or value inputs).
  bool hasRows() const { return !inputs_.empty() || !valueInputs_.empty(); }

signals:
  /// A valid size was typed: `input` (name) gets `shape`.
  void shapeEdited(const QString &input, const std::vector<int64_t> &shape);
  /// A value the recipe's parser takes was typed for `input` (name), or
  /// the field was emptied (`value` empty: the input is not fixed).
  void valueEdited(const QString &input, const QString &value);
  /// A size was refused (`message` says why).
  void rejected(const QString &message);

private:
  void commit(int input);
  void commitValue(int input);
  /// Width in pixels of a size field holding `digits` digits.
  int fieldWidth(int digits) const;

  QGridLayout *grid_;
  QLabel *title_;
  QLabel *valuesTitle_;
  QGridLayout *valuesGrid_;
  QLabel *message_;
  std::vector<ValueInput> valueInputs_;
  std::vector<QString> values_;
  std::vector<QLineEdit *> valueEdits_;
  std::vector<QWidget *> valueWidgets_;
  std::vector<DynamicInput> inputs_;
  std::vector<std::vector<int64_t>> fixed_;
  std::vector<std::vector<QLineEdit *>> edits_;
  std::vector<QWidget *> rowWidgets_;
};

} // namespace kiln::views

#endif
