// A tensor that grows along one dimension (a KV cache), with geometric capacity (x1.25) so
// decoding N tokens costs O(N) copies rather than O(N^2) from concatenating every step, while
// wasting at most a quarter of the cache (doubling made a 32k prompt's cache take 64k).
#pragma once
#include <ATen/Functions.h>

#include <algorithm>

namespace foxeval {

class SequenceCache {
 public:
  // Capacity to allocate at the first append (a hint; the cache still grows past it).
  void reserve(int64_t length) { reserved_ = length; }

  // Appends `x` along `dim` and returns a view of everything held (strided, last dim contiguous).
  at::Tensor append(const at::Tensor& x, int64_t dim) {
    const int64_t n = x.size(dim);
    if (!buf_.defined()) {
      dim_ = dim;
      auto sizes = x.sizes().vec();
      sizes[dim] = std::max<int64_t>(n, reserved_ > 0 ? reserved_ : 256);
      buf_ = at::empty(sizes, x.options());
    } else if (len_ + n > buf_.size(dim_)) {
      auto sizes = buf_.sizes().vec();
      sizes[dim_] = std::max(sizes[dim_] + sizes[dim_] / 4, len_ + n);
      at::Tensor bigger = at::empty(sizes, buf_.options());
      bigger.narrow(dim_, 0, len_).copy_(buf_.narrow(dim_, 0, len_));
      buf_ = bigger;
    }
    buf_.narrow(dim_, len_, n).copy_(x);
    len_ += n;
    return buf_.narrow(dim_, 0, len_);
  }
  // Takes `storage` (e.g. one row of fixed decoding slots) as the buffer, empty: appends write
  // into it in place until it is full (past that the cache moves to a buffer of its own).
  void adopt(const at::Tensor& storage, int64_t dim) {
    buf_ = storage;
    dim_ = dim;
    len_ = 0;
  }
  // Forgets the first n entries (a sliding window's keys that no later query sees): the rest moves
  // to the front of the buffer, which keeps its size. Called every ~W tokens, it costs O(1) a token.
  void drop_front(int64_t n) {
    if (n <= 0) return;
    n = std::min(n, len_);
    if (n < len_) {
      at::Tensor rest = buf_.narrow(dim_, n, len_ - n).clone();  // the ranges may overlap
      buf_.narrow(dim_, 0, len_ - n).copy_(rest);
    }
    len_ -= n;
  }
  int64_t length() const { return len_; }
  // Everything held (undefined before the first append).
  at::Tensor held() const { return buf_.defined() ? buf_.narrow(dim_, 0, len_) : at::Tensor(); }
  // The last entry along the cached dimension (e.g. c of the last key: [B, H]).
  at::Tensor last() const { return buf_.select(dim_, len_ - 1); }

 private:
  at::Tensor buf_;
  int64_t len_ = 0;
  int64_t dim_ = 0;
  int64_t reserved_ = 0;
};

}  // namespace foxeval
