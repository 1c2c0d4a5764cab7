//===- NpyTest.cpp - .npy reading and writing -----------------------------===//
#include "kiln/Npy.h"

#include <gtest/gtest.h>

#include <cstring>

using kiln::NpyArray;

namespace {

std::vector<uint8_t> npyBytes(const std::string &header, size_t dataBytes) {
  std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                            static_cast<uint8_t>(header.size()), 0};
  b.insert(b.end(), header.begin(), header.end());
  b.resize(b.size() + dataBytes, 0);
  return b;
}

TEST(Npy, RoundTripKeepsShapeDtypeAndBytes) {
  NpyArray a;
  a.shape = {2, 3};
  float values[6] = {1, -2.5f, 3, 4, 5e-8f, 6};
  a.data.assign(reinterpret_cast<uint8_t *>(values), reinterpret_cast<uint8_t *>(values) + 24);
  std::vector<uint8_t> bytes = kiln::serializeNpy(a);
  // Header padded so the data starts on a 64-byte boundary (format spec).
  EXPECT_EQ((bytes.size() - 24) % 64, 0u);
  auto back = kiln::parseNpy(bytes, "mem");
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->dtype, "<f4");
  EXPECT_EQ(back->shape, a.shape);
  EXPECT_EQ(back->data, a.data);
}

TEST(Npy, ParsesOneDimensionalAndScalarShapes) {
  auto one = kiln::parseNpy(npyBytes("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }\n", 12), "x");
  ASSERT_TRUE(static_cast<bool>(one));
  EXPECT_EQ(one->shape, std::vector<int64_t>{3});
  auto scalar = kiln::parseNpy(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n", 4), "x");
  ASSERT_TRUE(static_cast<bool>(scalar));
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(scalar->numElements(), 1);
}

TEST(Npy, RejectsWhatItCannotRead) {
  auto expectError = [](const std::vector<uint8_t> &bytes, const char *needle) {
    auto r = kiln::parseNpy(bytes, "in.npy");
    ASSERT_FALSE(static_cast<bool>(r));
    std::string message = llvm::toString(r.takeError());
    EXPECT_NE(message.find(needle), std::string::npos) << message;
    EXPECT_NE(message.find("in.npy"), std::string::npos) << message;
  };
  expectError({'h', 'e', 'l', 'l', 'o', 0, 0, 0, 0, 0, 0}, "bad magic");
  expectError(npyBytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", 8), "unsupported dtype");
  expectError(npyBytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }\n", 8), "Fortran");
  expectError(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 7), "needs 8");
}

// Found by the npy fuzzer (tests/fuzz/regressions/npy): header text echoed
// in an error is escaped, so the error stays one line.
TEST(Npy, ErrorsQuotingTheHeaderAreOneLine) {
  auto r = kiln::parseNpy(npyBytes("{'descr': '<f4', 'for\n\x01 'shape': (1, 10), }\n", 40), "in.npy");
  ASSERT_FALSE(static_cast<bool>(r));
  std::string message = llvm::toString(r.takeError());
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_NE(message.find("malformed .npy header"), std::string::npos) << message;
  EXPECT_NE(message.find("\\0A"), std::string::npos) << message;
}

// 2^62 x 2^62 x 0 elements of 4 bytes: the byte size of the non-zero
// dimensions overflows 64 bits whatever the order; refused, never wrapped
// around to a size that matches the data.
TEST(Npy, ShapesWhoseByteSizeOverflowsAreRefused) {
  for (const char *shape : {"(4611686018427387904, 4611686018427387904, 0)",
                            "(0, 4611686018427387904, 4611686018427387904)",
                            "(4611686018427387904, 4)"}) {
    auto r = kiln::parseNpy(
        npyBytes(std::string("{'descr': '<f4', 'fortran_order': False, 'shape': ") + shape + ", }\n", 0),
        "in.npy");
    ASSERT_FALSE(static_cast<bool>(r)) << shape;
    std::string message = llvm::toString(r.takeError());
    EXPECT_NE(message.find("overflows 64 bits"), std::string::npos) << message;
  }
}

// |i1 and |u1 arrays keep their dtype through a round trip, and
// integerElement widens each integer type by its signedness.
TEST(Npy, IntegerDtypesRoundTripAndWiden) {
  NpyArray i8;
  i8.dtype = "|i1";
  i8.shape = {3};
  i8.data = {0x80, 0xff, 0x7f}; // -128, -1, 127
  auto back = kiln::parseNpy(kiln::serializeNpy(i8), "mem");
  ASSERT_TRUE(static_cast<bool>(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->dtype, "|i1");
  EXPECT_EQ(kiln::tensorTypeText(back->shape, back->dtype), "3xi8");
  EXPECT_EQ(kiln::integerElement(*back, 0), -128);
  EXPECT_EQ(kiln::integerElement(*back, 1), -1);
  EXPECT_EQ(kiln::integerElement(*back, 2), 127);
  NpyArray u8 = i8;
  u8.dtype = "|u1";
  EXPECT_EQ(kiln::integerElement(u8, 0), 128);
  EXPECT_EQ(kiln::integerElement(u8, 1), 255);
  NpyArray i32;
  i32.dtype = "<i4";
  i32.shape = {1};
  i32.data = {0xfe, 0xff, 0xff, 0xff}; // -2
  EXPECT_EQ(kiln::integerElement(i32, 0), -2);
  EXPECT_TRUE(kiln::isIntegerDtype("|i1"));
  EXPECT_TRUE(kiln::isIntegerDtype("|u1"));
  EXPECT_TRUE(kiln::isIntegerDtype("<i8"));
  EXPECT_FALSE(kiln::isIntegerDtype("<f4"));
  EXPECT_FALSE(kiln::isIntegerDtype("<f2"));
  EXPECT_FALSE(kiln::isIntegerDtype(">i4"));
}

} // namespace
