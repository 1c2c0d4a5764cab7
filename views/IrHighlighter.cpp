//===- IrHighlighter.cpp - Syntax colours for MLIR, LLVM IR, asm ---------===//
#include "IrHighlighter.h"

#include <QApplication>
#include <QPalette>

namespace kiln::views {

IrHighlighter::IrHighlighter(QTextDocument *document) : QSyntaxHighlighter(document) {
  bool dark = QApplication::palette().color(QPalette::Base).lightness() < 128;
  auto fmt = [&](QColor light, QColor darkc, bool bold = false, bool italic = false) {
    QTextCharFormat f;
    f.setForeground(dark ? darkc : light);
    if (bold)
      f.setFontWeight(QFont::Bold);
    f.setFontItalic(italic);
    return f;
  };
  auto add = [&](const char *re, QTextCharFormat f) { rules_.push_back({QRegularExpression(QString::fromLatin1(re)), f}); };
  add(R"(\b\d+(\.\d+)?([eE][-+]?\d+)?\b)", fmt(QColor(150, 80, 0), QColor(240, 170, 90)));
  add(R"(\b(tensor|memref|vector|index|[if](1|8|16|32|64)|bf16|ptr|void|label|type|array|dense|dense_resource)\b)",
      fmt(QColor(0, 110, 110), QColor(90, 200, 200)));
  add(R"(\b[a-z_]+\.[a-z_0-9.]+\b)", fmt(QColor(20, 60, 170), QColor(120, 160, 255), true));
  add(R"(\b(define|declare|call|ret|br|load|store|getelementptr|alloca|phi|icmp|fcmp|select|fadd|fmul|fsub|fdiv|add|mul|sub|and|or|shl|zext|sext|func|return|module|attributes|inbounds|nsw|nuw|fast)\b)",
      fmt(QColor(20, 60, 170), QColor(120, 160, 255), true));
  add(R"([%#][\w.$-]+)", fmt(QColor(120, 40, 140), QColor(210, 150, 230)));
  add(R"(@[\w.$-]+|^[\w.$]+:)", fmt(QColor(0, 120, 0), QColor(120, 220, 120), true));
  add(R"(^\s*\.[\w.]+)", fmt(QColor(110, 110, 110), QColor(170, 170, 170)));
  add(R"("[^"]*")", fmt(QColor(160, 30, 30), QColor(240, 130, 130)));
  add(R"((//|;).*$|^\s*#.*$)", fmt(QColor(110, 110, 110), QColor(150, 150, 150), false, true));
}

void IrHighlighter::highlightBlock(const QString &text) {
  for (const Rule &r : rules_) {
    auto it = r.pattern.globalMatch(text);
    while (it.hasNext()) {
      auto m = it.next();
      setFormat(int(m.capturedStart()), int(m.capturedLength()), r.format);
    }
  }
}

} // namespace kiln::views
