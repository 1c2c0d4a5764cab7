//===- PlotTheme.h - The workbench's colours on a QCustomPlot --*- C++ -*-===//
//
// The one place the plots (timeline, memory, sizes) take their colours from
// the widget palette, so they follow a light or dark theme alike.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_VIEWS_PLOTTHEME_H
#define KILN_VIEWS_PLOTTHEME_H

class QCustomPlot;
class QPalette;

namespace kiln::views {

/// Colours `plot` from `palette`: the background in QPalette::Base; both
/// axes' line, ticks, sub-ticks, tick labels and label in QPalette::Text.
/// Call it once, after creating the plot (its legend and items keep their
/// own colours).
void applyPlotTheme(QCustomPlot *plot, const QPalette &palette);

} // namespace kiln::views

#endif
