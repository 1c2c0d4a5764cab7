//===- CsvTest.cpp - The one CSV writer and reader (RFC 4180) ------------===//
//
// kiln::csvText / parseCsv against RFC 4180, section 2: fields with
// commas, double quotes, CR and LF are quoted, quotes doubled, records end
// in CRLF; the expected bytes are written out by hand from the RFC's rules.
//
//===----------------------------------------------------------------------===//
#include "kiln/Csv.h"

#include <gtest/gtest.h>

namespace {

TEST(Csv, PlainFieldsAreWrittenAsTheyAre) {
  EXPECT_EQ(kiln::csvText({{"id", "name", "time_ns"}, {"0", "main_dispatch_0", "1250.5"}}),
            "id,name,time_ns\r\n0,main_dispatch_0,1250.5\r\n");
  EXPECT_EQ(kiln::csvField(""), "");
  EXPECT_EQ(kiln::csvText({}), "");
}

TEST(Csv, CommasQuotesAndLineBreaksAreQuoted) {
  EXPECT_EQ(kiln::csvField("CONV_2D #9, ADD #10"), "\"CONV_2D #9, ADD #10\"");
  EXPECT_EQ(kiln::csvField("gemm \"4x3x8\""), "\"gemm \"\"4x3x8\"\"\"");
  EXPECT_EQ(kiln::csvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(kiln::csvField("cr\rhere"), "\"cr\rhere\"");
  EXPECT_EQ(kiln::csvField("\""), "\"\"\"\"");
  // Leading or trailing spaces are kept by quoting (some readers trim).
  EXPECT_EQ(kiln::csvField(" padded "), "\" padded \"");
  EXPECT_EQ(kiln::csvText({{"a,b", "c\"d", "e\r\nf"}}), "\"a,b\",\"c\"\"d\",\"e\r\nf\"\r\n");
}

TEST(Csv, ParseReadsBackWhatItWrites) {
  const std::vector<kiln::CsvRecord> records = {
      {"Id", "Operators", "Kernel"},
      {"3", "CONV_2D #9 + ADD #10, fused", "gemm \"4x3x8\""},
      {"4", "multi\nline\r\ncell", ""},
      {"", "", ""},
      {" x ", ",", "\""}};
  std::vector<kiln::CsvRecord> parsed;
  std::string error;
  ASSERT_TRUE(kiln::parseCsv(kiln::csvText(records), parsed, error)) << error;
  EXPECT_EQ(parsed, records);
}

TEST(Csv, ParseTakesBareLineFeedsAndNoFinalBreak) {
  std::vector<kiln::CsvRecord> parsed;
  std::string error;
  ASSERT_TRUE(kiln::parseCsv("a,b\nc,\"d\"", parsed, error)) << error;
  EXPECT_EQ(parsed, (std::vector<kiln::CsvRecord>{{"a", "b"}, {"c", "d"}}));
  ASSERT_TRUE(kiln::parseCsv("x\r\n\"\"", parsed, error)) << error;
  EXPECT_EQ(parsed, (std::vector<kiln::CsvRecord>{{"x"}, {""}}));
}

TEST(Csv, ParseRefusesMalformedText) {
  std::vector<kiln::CsvRecord> parsed;
  std::string error;
  EXPECT_FALSE(kiln::parseCsv("a,b\r\nc\"d,e\r\n", parsed, error));
  EXPECT_EQ(error,
            "line 2: a double quote inside an unquoted field (quote the field and double it)");
  EXPECT_FALSE(kiln::parseCsv("a,\"open\r\nstill open", parsed, error));
  EXPECT_EQ(error, "line 2: the quoted field opened on line 1 is not closed");
  EXPECT_FALSE(kiln::parseCsv("\"done\"x,y", parsed, error));
  EXPECT_EQ(error, "line 1: characters after the closing quote of a field");
}

} // namespace
