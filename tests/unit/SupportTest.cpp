//===- SupportTest.cpp - The one median and the one atomic file write -----===//
//
// kiln::medianOf, latencyText and withinSpread (kiln/Run.h), which every
// latency Kiln prints goes through, and kiln::writeFilesAtomically (kiln/AtomicWrite.h), which
// every file Kiln writes goes through. Expected values by hand.
//
//===----------------------------------------------------------------------===//
#include "kiln/AtomicWrite.h"
#include "kiln/Run.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

TEST(Median, MiddleValueOrMeanOfTheMiddleTwo) {
  // 20 runs, 1..20 ms out of order: the middle two are 10 and 11.
  std::vector<double> runs = {7, 3,  19, 1, 12, 20, 5, 14, 9, 16,
                              2, 18, 11, 6, 15, 10, 4, 17, 8, 13};
  EXPECT_EQ(kiln::medianOf(runs), 10.5);
  EXPECT_EQ(kiln::latencyOf(runs, kiln::RunOptions()).medianMs, 10.5);
  EXPECT_EQ(kiln::latencyOf(runs, kiln::RunOptions()).minMs, 1);
  EXPECT_EQ(kiln::latencyOf(runs, kiln::RunOptions()).maxMs, 20);
  EXPECT_EQ(kiln::medianOf({3, 1, 2}), 2);
  EXPECT_EQ(kiln::medianOf({4}), 4);
  EXPECT_EQ(kiln::medianOf({}), 0);
  EXPECT_EQ(kiln::latencyOf({}, kiln::RunOptions()).medianMs, -1); // not measured
}

TEST(Latency, OneTextSaysDeviceThreadsAndRuns) {
  kiln::RunOptions options;
  options.device = "local-task";
  options.threads = 2;
  kiln::LatencyStats s = kiln::latencyOf({6.6, 6.61, 6.62, 7.0}, options);
  EXPECT_EQ(kiln::latencyText(s), "median 6.62 ms, local-task 2 threads, 4 runs"); // (6.61+6.62)/2
  s.medianMs = 16;
  EXPECT_EQ(kiln::latencyText(s), "median 16.0 ms, local-task 2 threads, 4 runs");
  // local-sync is one thread whatever `threads` says; one run is "run".
  kiln::LatencyStats one = kiln::latencyOf({0.1234}, kiln::RunOptions{"local-sync", 4});
  EXPECT_EQ(kiln::latencyText(one), "median 0.123 ms, local-sync 1 thread, 1 run");
  EXPECT_EQ(kiln::latencyText(kiln::LatencyStats()), "not measured");
}

TEST(Latency, WithinSpreadWhenTheRangesOverlap) {
  kiln::RunOptions options;
  kiln::LatencyStats a = kiln::latencyOf({9, 10, 12}, options);
  EXPECT_TRUE(kiln::withinSpread(a, kiln::latencyOf({8.5, 9.5, 10}, options)));
  EXPECT_TRUE(kiln::withinSpread(a, kiln::latencyOf({12, 14, 15}, options))); // touching
  EXPECT_FALSE(kiln::withinSpread(a, kiln::latencyOf({5, 5.5, 6}, options)));
  EXPECT_FALSE(kiln::withinSpread(a, kiln::LatencyStats())); // unmeasured
}

class AtomicWrite : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kiln-atomic-write", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }
  std::string path(const char *name) const {
    llvm::SmallString<128> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  static std::string read(const std::string &file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  /// The names in the folder (no temporaries left behind).
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec; it.increment(ec))
      out.push_back(llvm::sys::path::filename(it->path()).str());
    std::sort(out.begin(), out.end());
    return out;
  }
  llvm::SmallString<128> dir;
};

TEST_F(AtomicWrite, WritesTheFileWithAPlainFilesMode) {
  ASSERT_FALSE(
      static_cast<bool>(kiln::writeFileAtomically(path("a.kiln"), llvm::StringRef("one"))));
  ASSERT_FALSE(
      static_cast<bool>(kiln::writeFileAtomically(path("a.kiln"), llvm::StringRef("two"))));
  EXPECT_EQ(read(path("a.kiln")), "two");
  EXPECT_EQ(names(), std::vector<std::string>{"a.kiln"});
  struct stat st;
  ASSERT_EQ(::stat(path("a.kiln").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0111, 0u); // not executable (writeToOutput's temporaries are)
}

TEST_F(AtomicWrite, AFailedFileLeavesEveryFileAsItWas) {
  std::ofstream(path("a.json")) << "old a";
  // The second file's folder does not exist: nothing is renamed.
  llvm::Error err = kiln::writeFilesAtomically(
      {{path("a.json"), [](llvm::raw_ostream &os) { os << "new a"; }},
       {path("missing/b.json"), [](llvm::raw_ostream &os) { os << "b"; }}});
  ASSERT_TRUE(static_cast<bool>(err));
  std::string message = llvm::toString(std::move(err));
  EXPECT_EQ(message.rfind(path("missing/b.json") + ": cannot write: ", 0), 0u) << message;
  EXPECT_EQ(read(path("a.json")), "old a");
  EXPECT_EQ(names(), std::vector<std::string>{"a.json"});
  // A folder where the file should go: refused, nothing left behind.
  ASSERT_FALSE(llvm::sys::fs::create_directory(path("c.kiln")));
  message = llvm::toString(kiln::writeFileAtomically(path("c.kiln"), llvm::StringRef("x")));
  EXPECT_EQ(message.rfind(path("c.kiln") + ": cannot write: ", 0), 0u) << message;
  EXPECT_EQ(names(), (std::vector<std::string>{"a.json", "c.kiln"}));
}

TEST_F(AtomicWrite, SpecialFilesAreWrittenInPlace) {
  // A FIFO (as /dev/stdout may be) stays a FIFO: it is opened and written,
  // never renamed over.
  const std::string fifo = path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  ASSERT_FALSE(static_cast<bool>(kiln::writeFileAtomically(fifo, llvm::StringRef("through"))));
  char buffer[16] = {};
  ssize_t n = ::read(reader, buffer, sizeof buffer);
  ::close(reader);
  EXPECT_EQ(std::string(buffer, n > 0 ? size_t(n) : 0), "through");
  struct stat st;
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

} // namespace
