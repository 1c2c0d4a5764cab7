//===- PlotTheme.cpp - The workbench's colours on a QCustomPlot ----------===//
#include "PlotTheme.h"

#include <QPalette>

#include <qcustomplot.h>

namespace kiln::views {

void applyPlotTheme(QCustomPlot *plot, const QPalette &palette) {
  const QColor text = palette.color(QPalette::Text);
  plot->setBackground(palette.color(QPalette::Base));
  for (QCPAxis *axis : {plot->xAxis, plot->yAxis}) {
    axis->setBasePen(QPen(text));
    axis->setTickPen(QPen(text));
    axis->setSubTickPen(QPen(text));
    axis->setTickLabelColor(text);
    axis->setLabelColor(text);
  }
}

} // namespace kiln::views
