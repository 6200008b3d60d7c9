// Windows of a token array (a block of rows x columns), and the order in which the official
// LongCrawl64 loader (LongCrawlDataset in datamodule/longcrawl64.py) visits them.
#pragma once
#include <cstdint>
#include <ostream>
#include <vector>

namespace foxeval {

// Rows [row0, row0 + nrows), columns [col0, col0 + ncols) of a TokenRows.
struct Window {
  int64_t row0 = 0;
  int64_t nrows = 0;
  int64_t col0 = 0;
  int64_t ncols = 0;
  bool operator==(const Window& o) const {
    return row0 == o.row0 && nrows == o.nrows && col0 == o.col0 && ncols == o.ncols;
  }
  bool operator!=(const Window& o) const { return !(*this == o); }
};

inline std::ostream& operator<<(std::ostream& os, const Window& w) {
  return os << "Window{rows " << w.row0 << "+" << w.nrows << ", cols " << w.col0 << "+" << w.ncols << "}";
}

// How LongCrawlDataset cuts documents into sequences (our reading of the official code, not a
// copy of it):
//  * only seq_len-aligned segments are used: a row of row_length tokens gives
//    row_length / seq_len windows starting at col0 = 0, seq_len, 2*seq_len, ...; the tail
//    row_length % seq_len tokens are dropped (the official loader goes further and asserts
//    that the tail is empty; we allow it and drop it, as its doc_len formula does);
//  * a batch is batch_size consecutive documents at the same col0;
//  * batch k of the loader is: row group g = k % (num_docs / batch_size),
//    column window c = k / (num_docs / batch_size); i.e. the loader sweeps all documents at
//    col0 = 0 first, then all documents at col0 = seq_len, and so on (column-major).
//  * batch_len == seq_len (the loader asserts seq_len is None, so one batch = one sequence);
//    every window's first input is the EOT token (BOS), the caller builds inputs from labels.
// num_docs must be a multiple of batch_size (the held-out loader asserts it to drop no token).
// Throws foxeval::Error on non-positive sizes, seq_len > row_length or a ragged batch.
std::vector<Window> longcrawl_windows(int64_t num_docs, int64_t row_length, int64_t seq_len,
                                      int64_t batch_size);

// The same with batch_size 1: one window per (document, col0), in loader order.
std::vector<Window> longcrawl_row_windows(int64_t num_docs, int64_t row_length, int64_t seq_len);

// How many documents the official held-out loader reads for `total_tokens` (2^31 in the
// paper): doc_count = total_tokens / doc_len with doc_len = row_length - row_length % seq_len,
// which must divide exactly (safe_divide). Pass this, not the array's row count, as num_docs:
// taking the first N windows of a longer list would, in the column-major order, mean other
// documents (at seq_len < row_length) than the official evaluation. Throws foxeval::Error when
// it does not divide, or when it needs more documents than num_rows.
int64_t longcrawl_doc_count(int64_t total_tokens, int64_t num_rows, int64_t row_length,
                            int64_t seq_len);

}  // namespace foxeval
