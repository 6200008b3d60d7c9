// Bounded producer/consumer queue between one reader thread and the consumer.
#include "data/prefetch.h"

#include <utility>

namespace foxeval {

Prefetcher::Prefetcher(const TokenRows& rows, std::vector<Window> windows, int depth)
    : rows_(rows),
      windows_(std::move(windows)),
      depth_(depth < 1 ? 1 : static_cast<size_t>(depth)) {
  thread_ = std::thread([this] { run(); });
}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();  // a read in progress finishes first (reads are not interruptible)
}

void Prefetcher::run() {
  for (const Window& w : windows_) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || ready_.size() < depth_; });
      if (stop_) break;
    }
    Item item{w, {}};
    try {
      item.tokens = rows_.read(w.row0, w.nrows, w.col0, w.ncols);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = std::current_exception();
      break;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ready_.push_back(std::move(item));
    }
    cv_.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    reader_done_ = true;
  }
  cv_.notify_all();
}

bool Prefetcher::next(Window& w, std::vector<int64_t>& tokens) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !ready_.empty() || reader_done_; });
  if (!ready_.empty()) {
    w = ready_.front().window;
    tokens = std::move(ready_.front().tokens);
    ready_.pop_front();
    lock.unlock();
    cv_.notify_all();  // room for the reader
    return true;
  }
  if (error_) {
    std::rethrow_exception(error_);  // sticky: every later call throws it again
  }
  return false;
}

}  // namespace foxeval
