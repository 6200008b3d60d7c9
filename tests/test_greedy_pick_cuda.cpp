// The decode step's greedy pick (kernels/greedy_pick.cu) on the GPU (returns early with a
// message where CUDA is unavailable, as in CI): the same index as torch.argmax for every row,
// ties (first index wins), NaN (counts as the maximum), -inf rows, three dtypes and the 760M
// vocabulary; ids and the token column written, other columns untouched; refusals.
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <doctest/doctest.h>  // after ATen: c10's glog-style CHECK must not replace doctest's

#include <limits>

#include "kernels/greedy_pick.h"
#include "tests/test_support.h"

using namespace foxeval;

TEST_CASE("greedy pick cuda: equals torch.argmax, ties and NaN included") {
  SKIP_WITHOUT_CUDA();
  at::manual_seed(7);
  const auto cuda = at::TensorOptions().device(at::kCUDA);
  for (auto dtype : {at::kBFloat16, at::kFloat, at::kHalf}) {
    for (int64_t S : {1, 3, 64}) {
      for (int64_t V : {1, 7, 1025, 50304}) {
        INFO("dtype " << dtype << " S " << S << " V " << V);
        // Few distinct values (many ties) in bf16/fp16; a NaN in row 1, a -inf row 2.
        at::Tensor logits = at::randint(-4, 4, {S, V}, cuda.dtype(at::kFloat)).to(dtype);
        if (S > 1 && V > 5) logits[1][V / 2] = std::numeric_limits<float>::quiet_NaN(), logits[1][V - 1] = NAN;
        if (S > 2) logits[2].fill_(-std::numeric_limits<float>::infinity());
        at::Tensor ids = at::full({S}, -1, cuda.dtype(at::kLong));
        at::Tensor tokens = at::full({S, 5}, -1, cuda.dtype(at::kLong));
        at::Tensor column = at::full({1}, 3, cuda.dtype(at::kLong));
        REQUIRE(greedy_pick_cuda(logits, ids, tokens, column));
        at::Tensor want = at::argmax(logits, -1);
        CHECK(at::equal(ids, want));
        CHECK(at::equal(tokens.select(1, 3), want));
        CHECK(at::equal(tokens.narrow(1, 0, 3), at::full({S, 3}, -1, cuda.dtype(at::kLong))));
        CHECK(at::equal(tokens.select(1, 4), at::full({S}, -1, cuda.dtype(at::kLong))));
      }
    }
  }
  at::Tensor ids = at::zeros({2}, cuda.dtype(at::kLong)), tokens = at::zeros({2, 4}, cuda.dtype(at::kLong));
  at::Tensor column = at::zeros({1}, cuda.dtype(at::kLong));
  CHECK_FALSE(greedy_pick_cuda(at::zeros({2, 8}), ids, tokens, column));                              // CPU logits
  CHECK_FALSE(greedy_pick_cuda(at::zeros({3, 8}, cuda), ids, tokens, column));                        // rows differ
  CHECK_FALSE(greedy_pick_cuda(at::zeros({2, 8}, cuda.dtype(at::kLong)), ids, tokens, column));       // integer logits
  CHECK_FALSE(greedy_pick_cuda(at::zeros({2, 8}, cuda).t().contiguous().t(), ids, tokens, column));   // strided rows
}
