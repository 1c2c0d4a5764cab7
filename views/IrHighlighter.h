//===- IrHighlighter.h - Syntax colours for MLIR, LLVM IR, asm --*- C++ -*-===//
#ifndef KILN_VIEWS_IRHIGHLIGHTER_H
#define KILN_VIEWS_IRHIGHLIGHTER_H

#include <QRegularExpression>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

#include <vector>

namespace kiln::views {

/// Highlights the IR text of every stage: MLIR (ops, %values, @symbols,
/// types, // comments), LLVM IR (; comments, keywords) and assembly
/// (labels, directives, # comments). Colours follow the palette's
/// lightness so dark themes stay readable.
class IrHighlighter : public QSyntaxHighlighter {
  Q_OBJECT
public:
  explicit IrHighlighter(QTextDocument *document);

protected:
  void highlightBlock(const QString &text) override;

private:
  struct Rule {
    QRegularExpression pattern;
    QTextCharFormat format;
  };
  std::vector<Rule> rules_;
};

} // namespace kiln::views

#endif
