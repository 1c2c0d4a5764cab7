//===- Csv.cpp - Comma-separated values, RFC 4180 -------------------------===//
#include "kiln/Csv.h"

namespace kiln {

std::string csvField(std::string_view field) {
  bool quote = field.find_first_of(",\"\r\n") != std::string_view::npos ||
               (!field.empty() && (field.front() == ' ' || field.back() == ' '));
  if (!quote)
    return std::string(field);
  std::string out = "\"";
  for (char c : field) {
    if (c == '"')
      out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string csvText(const std::vector<CsvRecord> &records) {
  std::string out;
  for (const CsvRecord &record : records) {
    for (size_t i = 0; i < record.size(); ++i) {
      if (i)
        out += ',';
      out += csvField(record[i]);
    }
    out += "\r\n";
  }
  return out;
}

bool parseCsv(std::string_view text, std::vector<CsvRecord> &records, std::string &error) {
  records.clear();
  CsvRecord record;
  std::string field;
  size_t line = 1, i = 0;
  bool started = false; // a character of the current record was read
  auto fail = [&](const std::string &what) {
    error = "line " + std::to_string(line) + ": " + what;
    return false;
  };
  auto endRecord = [&] {
    record.push_back(std::move(field));
    field.clear();
    records.push_back(std::move(record));
    record.clear();
    started = false;
  };
  while (i < text.size()) {
    started = true;
    if (text[i] == '"' && field.empty()) { // a quoted field
      size_t start = line;
      for (++i;; ++i) {
        if (i >= text.size())
          return fail("the quoted field opened on line " + std::to_string(start) +
                      " is not closed");
        if (text[i] == '"' && i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else if (text[i] == '"') {
          ++i;
          break;
        } else {
          line += text[i] == '\n';
          field += text[i];
        }
      }
      if (i < text.size() && text[i] != ',' && text[i] != '\r' && text[i] != '\n')
        return fail("characters after the closing quote of a field");
      if (i >= text.size())
        break;
    }
    char c = text[i];
    if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
      ++i;
    } else if (c == '\r' || c == '\n') {
      endRecord();
      i += c == '\r' && i + 1 < text.size() && text[i + 1] == '\n' ? 2 : 1;
      ++line;
    } else if (c == '"') {
      return fail("a double quote inside an unquoted field (quote the field and double it)");
    } else {
      field += c;
      ++i;
    }
  }
  if (started)
    endRecord();
  return true;
}

} // namespace kiln
