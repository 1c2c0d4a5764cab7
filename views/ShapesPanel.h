//===- ShapesPanel.h - Fix the dynamic dimensions of model inputs -*- C++ -*-===//
//
// One row per model input with dynamic dimensions (a -1 in its TFLite
// shape signature, a symbolic ONNX dimension such as "batch"): its name (elided to the panel's width) above its
// fields, the static dimensions as read-only fields, each dynamic one as
// an edit; narrow fields, so the panel fits the Tune dock's width. A whole
// number above zero is announced with shapeEdited() (the full static
// shape); anything else is explained on the panel's message line and in
// the field's tooltip and changes nothing.
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

signals:
  /// A valid size was typed: `input` (name) gets `shape`.
  void shapeEdited(const QString &input, const std::vector<int64_t> &shape);
  /// A size was refused (`message` says why).
  void rejected(const QString &message);

private:
  void commit(int input);
  /// Width in pixels of a size field holding `digits` digits.
  int fieldWidth(int digits) const;

  QGridLayout *grid_;
  QLabel *message_;
  std::vector<DynamicInput> inputs_;
  std::vector<std::vector<int64_t>> fixed_;
  std::vector<std::vector<QLineEdit *>> edits_;
  std::vector<QWidget *> rowWidgets_;
};

} // namespace kiln::views

#endif
