// Reads windows of a TokenRows on a background thread, a few ahead of the consumer, so chunk
// decompression overlaps with GPU compute. Errors in the reader thread are re-thrown from
// next() in order (windows before the failing one are still delivered). Destroying the
// Prefetcher early stops and joins the thread.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "data/token_rows.h"
#include "data/windows.h"

namespace foxeval {

class Prefetcher {
 public:
  // `rows` must outlive the Prefetcher. depth = how many windows may be read ahead (>= 1).
  Prefetcher(const TokenRows& rows, std::vector<Window> windows, int depth);
  ~Prefetcher();
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // The next window and its tokens (row-major, w.nrows x w.ncols), in the given order.
  // Returns false when all windows were delivered; throws what the reader threw.
  bool next(Window& w, std::vector<int64_t>& tokens);

 private:
  struct Item {
    Window window;
    std::vector<int64_t> tokens;
  };
  void run();

  const TokenRows& rows_;
  const std::vector<Window> windows_;
  const size_t depth_;

  std::mutex mu_;
  std::condition_variable cv_;  // one variable for both sides: few waiters, simple logic
  std::deque<Item> ready_;
  std::exception_ptr error_;  // set once; the reader stops after it
  bool reader_done_ = false;
  bool stop_ = false;
  std::thread thread_;  // last member: starts after everything above exists
};

}  // namespace foxeval
