// See windows.h for the order of the official loader that this reproduces.
#include "data/windows.h"

#include <fmt/format.h>

#include "data/errors.h"

namespace foxeval {

std::vector<Window> longcrawl_windows(int64_t num_docs, int64_t row_length, int64_t seq_len,
                                      int64_t batch_size) {
  if (num_docs <= 0 || row_length <= 0 || seq_len <= 0 || batch_size <= 0) {
    throw Error(fmt::format(
        "longcrawl_windows: sizes must be positive (num_docs {}, row_length {}, seq_len {}, "
        "batch_size {})",
        num_docs, row_length, seq_len, batch_size));
  }
  if (seq_len > row_length) {
    throw Error(fmt::format("longcrawl_windows: seq_len {} is longer than the rows ({})", seq_len,
                            row_length));
  }
  if (num_docs % batch_size != 0) {
    throw Error(fmt::format(
        "longcrawl_windows: {} documents is not a multiple of batch size {} (the official "
        "held-out loader refuses to drop documents)",
        num_docs, batch_size));
  }
  const int64_t groups_per_column = num_docs / batch_size;  // row groups per column window
  const int64_t windows_per_row = row_length / seq_len;     // the tail is dropped
  std::vector<Window> out;
  out.reserve(static_cast<size_t>(groups_per_column * windows_per_row));
  // Loader batch index k = c * groups_per_column + g: columns outer, row groups inner.
  for (int64_t c = 0; c < windows_per_row; ++c) {
    for (int64_t g = 0; g < groups_per_column; ++g) {
      out.push_back(Window{g * batch_size, batch_size, c * seq_len, seq_len});
    }
  }
  return out;
}

std::vector<Window> longcrawl_row_windows(int64_t num_docs, int64_t row_length, int64_t seq_len) {
  return longcrawl_windows(num_docs, row_length, seq_len, 1);
}

int64_t longcrawl_doc_count(int64_t total_tokens, int64_t num_rows, int64_t row_length,
                            int64_t seq_len) {
  if (total_tokens <= 0 || seq_len <= 0 || seq_len > row_length) {
    throw Error(fmt::format("longcrawl_doc_count: bad sizes (total_tokens {}, row_length {}, "
                            "seq_len {})",
                            total_tokens, row_length, seq_len));
  }
  const int64_t doc_len = row_length - row_length % seq_len;
  if (total_tokens % doc_len != 0) {
    throw Error(fmt::format("{} tokens is not a whole number of documents of {} usable tokens "
                            "(row length {}, seq_len {})",
                            total_tokens, doc_len, row_length, seq_len));
  }
  const int64_t docs = total_tokens / doc_len;
  if (docs > num_rows) {
    throw Error(fmt::format("{} tokens needs {} documents of {} tokens; the array has {} rows",
                            total_tokens, docs, doc_len, num_rows));
  }
  return docs;
}

}  // namespace foxeval
