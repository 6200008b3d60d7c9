// Prefetcher: order, bounded read-ahead, error propagation, early shutdown; and the window
// order of the official LongCrawl64 loader (expected lists worked out by hand from
// LongCrawlDataset.__getitem__: group = batch_id, column = group // groups_per_column,
// row group = group % groups_per_column).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "data/errors.h"
#include "data/prefetch.h"
#include "data/token_rows.h"
#include "data/windows.h"

using foxeval::Window;

namespace {

std::string fixture(const std::string& name) {
  return std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/zarr/" + name;
}

// Returns row0 * 1000 + col0 for every element; throws on window `fail_at`; counts reads.
class FakeRows : public foxeval::TokenRows {
 public:
  explicit FakeRows(int fail_at = -1) : fail_at_(fail_at) {}
  int64_t num_rows() const override { return 100; }
  int64_t row_length() const override { return 100; }
  std::vector<int64_t> read(int64_t row0, int64_t nrows, int64_t col0,
                            int64_t ncols) const override {
    const int k = reads.fetch_add(1);
    if (k == fail_at_) throw foxeval::Error("fake chunk '7.7' is missing");
    return std::vector<int64_t>(static_cast<size_t>(nrows * ncols), row0 * 1000 + col0);
  }
  std::string describe() const override { return "fake"; }
  mutable std::atomic<int> reads{0};

 private:
  int fail_at_;
};

}  // namespace

TEST_CASE("longcrawl windows: batch_size 2, two sequences per document") {
  // 4 docs of 8 tokens, seq_len 4, batch 2: groups_per_column 2, groups_per_row 2.
  // batch 0: col 0, rows 0-1; batch 1: col 0, rows 2-3; batch 2: col 4, rows 0-1; batch 3: col 4,
  // rows 2-3.
  const std::vector<Window> expected = {{0, 2, 0, 4}, {2, 2, 0, 4}, {0, 2, 4, 4}, {2, 2, 4, 4}};
  CHECK(foxeval::longcrawl_windows(4, 8, 4, 2) == expected);
}

TEST_CASE("longcrawl windows: batch_size 1 sweeps all documents per column; tail dropped") {
  // 3 docs of 10 tokens, seq_len 4: doc_len = 10 - 10 % 4 = 8, two windows per doc, the last 2
  // tokens of every document unused.
  const std::vector<Window> expected = {{0, 1, 0, 4}, {1, 1, 0, 4}, {2, 1, 0, 4},
                                        {0, 1, 4, 4}, {1, 1, 4, 4}, {2, 1, 4, 4}};
  CHECK(foxeval::longcrawl_row_windows(3, 10, 4) == expected);
}

TEST_CASE("longcrawl windows: the held-out protocol (2^31 tokens at 65536, batch 8)") {
  const auto w = foxeval::longcrawl_windows(32768, 65536, 65536, 8);
  REQUIRE(w.size() == 4096);
  for (size_t k = 0; k < w.size(); ++k) {
    REQUIRE(w[k] == Window{static_cast<int64_t>(k) * 8, 8, 0, 65536});
  }
  // At eval length 2048 with batch 16: column-major over 2048 row groups x 32 columns.
  const auto s = foxeval::longcrawl_windows(32768, 65536, 2048, 16);
  REQUIRE(s.size() == 2048 * 32);
  CHECK(s[0] == Window{0, 16, 0, 2048});
  CHECK(s[2047] == Window{32752, 16, 0, 2048});
  CHECK(s[2048] == Window{0, 16, 2048, 2048});
  CHECK(s.back() == Window{32752, 16, 63488, 2048});
}

TEST_CASE("longcrawl windows: refuses dropped documents and bad sizes") {
  CHECK_THROWS_AS(foxeval::longcrawl_windows(5, 8, 4, 2), foxeval::Error);
  CHECK_THROWS_AS(foxeval::longcrawl_windows(4, 8, 16, 1), foxeval::Error);
  CHECK_THROWS_AS(foxeval::longcrawl_windows(4, 8, 0, 1), foxeval::Error);
}

TEST_CASE("longcrawl doc count: total_tokens / doc_len, exact") {
  CHECK(foxeval::longcrawl_doc_count(int64_t{1} << 31, 52131, 65536, 65536) == 32768);
  CHECK(foxeval::longcrawl_doc_count(int64_t{1} << 31, 52131, 65536, 2048) == 32768);
  CHECK(foxeval::longcrawl_doc_count(24, 5, 10, 4) == 3);  // doc_len 8
  CHECK_THROWS_AS(foxeval::longcrawl_doc_count(20, 5, 10, 4), foxeval::Error);  // 20 % 8
  CHECK_THROWS_AS(foxeval::longcrawl_doc_count(48, 5, 10, 4), foxeval::Error);  // 6 > 5 rows
}

TEST_CASE("prefetch: delivers the windows in order with the reader's data") {
  auto rows = foxeval::open_token_rows(fixture("u2_lz4_shuffle.zarr"));
  const auto windows = foxeval::longcrawl_windows(4, rows->row_length(), 256, 2);
  REQUIRE(windows.size() == 4);  // 700 // 256 = 2 columns x 2 row groups
  for (int depth : {1, 2, 4}) {
    CAPTURE(depth);
    foxeval::Prefetcher p(*rows, windows, depth);
    Window w;
    std::vector<int64_t> tokens;
    for (const Window& want : windows) {
      REQUIRE(p.next(w, tokens));
      CHECK(w == want);
      CHECK(tokens == rows->read(want.row0, want.nrows, want.col0, want.ncols));
    }
    CHECK_FALSE(p.next(w, tokens));
    CHECK_FALSE(p.next(w, tokens));
  }
}

TEST_CASE("prefetch: reads at most `depth` windows ahead") {
  FakeRows rows;
  std::vector<Window> windows(20, Window{1, 1, 2, 3});
  foxeval::Prefetcher p(rows, windows, 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(rows.reads.load() == 3);
  Window w;
  std::vector<int64_t> tokens;
  REQUIRE(p.next(w, tokens));
  CHECK(tokens == std::vector<int64_t>(3, 1002));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(rows.reads.load() == 4);
}

TEST_CASE("prefetch: a reader error reaches the consumer after the earlier windows") {
  FakeRows rows(/*fail_at=*/2);
  std::vector<Window> windows;
  for (int k = 0; k < 5; ++k) windows.push_back(Window{k, 1, 0, 2});
  foxeval::Prefetcher p(rows, windows, 2);
  Window w;
  std::vector<int64_t> tokens;
  REQUIRE(p.next(w, tokens));
  CHECK(w.row0 == 0);
  REQUIRE(p.next(w, tokens));
  CHECK(w.row0 == 1);
  CHECK_THROWS_WITH_AS(p.next(w, tokens), "fake chunk '7.7' is missing", foxeval::Error);
  CHECK_THROWS_AS(p.next(w, tokens), foxeval::Error);  // sticky: never a silent end
  CHECK(rows.reads.load() == 3);
}

TEST_CASE("prefetch: stopping early joins the reader without reading everything") {
  FakeRows rows;
  std::vector<Window> windows(1000, Window{0, 1, 0, 1});
  {
    foxeval::Prefetcher p(rows, windows, 2);
    Window w;
    std::vector<int64_t> tokens;
    REQUIRE(p.next(w, tokens));
  }  // destructor must not hang
  CHECK(rows.reads.load() <= 4);
  { foxeval::Prefetcher idle(rows, {}, 2); }  // no windows at all
  { foxeval::Prefetcher never_read(rows, windows, 2); }
}
