//===- MemoryView.h - The arena's buffers over time (QCustomPlot) -*- C++ -*-===//
//
// The memory plan as rectangles: x spans a buffer's lifetime in commands
// (firstCommand .. lastCommand + 1), y its place in the arena (offset ..
// offset + bytes). Buffers that alias one another share a colour and are
// linked by a line; the arena size and the lower bound are horizontal
// lines. Hover names the producer, the consumers and the lifetime.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_MEMORYVIEW_H
#define KILN_VIEWS_MEMORYVIEW_H

#include "Document.h"

#include "kiln/Plan.h"

#include <QPointer>
#include <QWidget>

#include <memory>
#include <vector>

class QCustomPlot;
class QCPItemRect;
class QCPItemLine;
class QCPItemStraightLine;
class QItemSelectionModel;
class QLabel;

namespace kiln::views {

/// True for the buffers the view draws: transient buffers placed in the
/// arena (their alias root is transient too), used by at least one command
/// (firstCommand >= 0) and not empty.
bool isPlacedBuffer(const kiln::CompilationPlan &plan, const kiln::Buffer &b);

/// The aliasing panel: a caption and the plot.
class MemoryView : public QWidget, public DocumentView {
  Q_OBJECT
public:
  explicit MemoryView(QWidget *parent = nullptr);
  /// Draws the memory plan of `plan` (null clears).
  void setPlan(std::shared_ptr<const kiln::CompilationPlan> plan);
  /// DocumentView: the memory plan of `doc`'s plan (setPlan); the plan
  /// already drawn is left as it is.
  void setDocument(std::shared_ptr<const ModelDocument> doc) override;
  /// No memory plan (setPlan(nullptr)).
  void clear() override;
  void setSelectionModel(QItemSelectionModel *selection) override;

  /// Buffer ids drawn, one rectangle each, in the order drawn.
  const std::vector<int64_t> &drawnBuffers() const { return buffers_; }
  /// Rectangle of buffer `i` of drawnBuffers() in plot coordinates
  /// (x: commands, y: bytes).
  QRectF rectAt(int i) const;
  /// Number of alias links drawn.
  int aliasLinkCount() const { return int(aliasLinks_.size()); }
  /// Y values of the arena-size and lower-bound lines.
  double arenaLineY() const;
  double lowerBoundLineY() const;
  /// Buffer id under plot widget point `pos`, -1 if none; and its tooltip.
  int64_t bufferAt(const QPoint &plotPos) const;
  QString tooltipFor(int64_t buffer) const;
  /// The dispatch whose binding writes `buffer` (-1 if none); clicking the
  /// buffer selects it.
  int64_t producerOf(int64_t buffer) const;
  /// Buffers highlighted for the selected dispatch.
  std::vector<int64_t> highlightedBuffers() const;
  QCustomPlot *plot() const { return plot_; }

private:
  void redraw();
  void highlight(int64_t dispatch);

  QCustomPlot *plot_;
  QLabel *caption_;
  std::shared_ptr<const kiln::CompilationPlan> plan_;
  std::vector<int64_t> buffers_;
  std::vector<QCPItemRect *> rects_;
  std::vector<QCPItemLine *> aliasLinks_;
  QCPItemStraightLine *arenaLine_ = nullptr, *lowerLine_ = nullptr;
  std::vector<bool> highlighted_;
  QPointer<QItemSelectionModel> selection_;
};

} // namespace kiln::views

#endif
