//===- TableSupport.cpp - Column widths and CSV rows of a table -----------===//
#include "TableSupport.h"

#include "PlanModels.h"

#include <QAbstractItemModel>
#include <QHeaderView>
#include <QTableView>

namespace kiln::views {

void fitColumns(QTableView *table, int maxWidth) {
  table->resizeColumnsToContents();
  QHeaderView *header = table->horizontalHeader();
  for (int c = 0; c < header->count(); ++c)
    if (header->sectionSize(c) > maxWidth)
      header->resizeSection(c, maxWidth);
}

/// A cell's text in the CSV: numbers in C locale, exactly.
static std::string cellText(const QVariant &v) {
  switch (v.typeId()) {
  case QMetaType::Nullptr:
    return {}; // a value not known
  case QMetaType::Double:
  case QMetaType::Float:
    return QString::number(v.toDouble(), 'g', 17).toStdString();
  case QMetaType::Int:
  case QMetaType::LongLong:
  case QMetaType::UInt:
  case QMetaType::ULongLong:
    return QString::number(v.toLongLong()).toStdString();
  default:
    return v.toString().toStdString();
  }
}

std::vector<kiln::CsvRecord> tableRecords(const QAbstractItemModel &model) {
  std::vector<kiln::CsvRecord> records;
  kiln::CsvRecord header;
  for (int c = 0; c < model.columnCount(); ++c)
    header.push_back(model.headerData(c, Qt::Horizontal, Qt::DisplayRole).toString().toStdString());
  records.push_back(std::move(header));
  for (int r = 0; r < model.rowCount(); ++r) {
    kiln::CsvRecord record;
    for (int c = 0; c < model.columnCount(); ++c) {
      QModelIndex index = model.index(r, c);
      QVariant value = model.data(index, ValueRole);
      record.push_back(cellText(value.isValid() ? value : model.data(index, Qt::DisplayRole)));
    }
    records.push_back(std::move(record));
  }
  return records;
}

} // namespace kiln::views
