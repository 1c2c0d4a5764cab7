//===- kiln/Csv.h - Comma-separated values, RFC 4180 ------------*- C++ -*-===//
//
// The one CSV writer (and reader) of Kiln: every table the workbench
// exports (dispatches, profile, commands, buffers, section sizes) is
// written by csvText. The format is RFC 4180 ("Common Format and MIME Type
// for Comma-Separated Values (CSV) Files", section 2): records end with
// CRLF, fields are separated by commas, and a field holding a comma, a
// double quote, CR or LF is enclosed in double quotes with each double
// quote inside doubled. No MLIR, LLVM or Qt types.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CSV_H
#define KILN_CSV_H

#include <string>
#include <string_view>
#include <vector>

namespace kiln {

/// One record: its fields, left to right.
using CsvRecord = std::vector<std::string>;

/// `field` as RFC 4180 writes it: unchanged, or enclosed in double quotes
/// (with its double quotes doubled) when it holds ',', '"', CR or LF, or
/// starts or ends with a space (which some readers would trim).
std::string csvField(std::string_view field);

/// The records as one CSV document: fields by csvField joined with ',',
/// each record ended by CRLF. An empty record is written as an empty line
/// (which parseCsv reads back as one empty field).
std::string csvText(const std::vector<CsvRecord> &records);

/// Parses RFC 4180 text (as csvText writes it; a bare LF also ends a
/// record, and the last record needs no line break). Returns false and
/// sets `error` ("line N: ...") for a quote inside an unquoted field,
/// characters after a closing quote, or an unterminated quoted field.
bool parseCsv(std::string_view text, std::vector<CsvRecord> &records, std::string &error);

} // namespace kiln

#endif
