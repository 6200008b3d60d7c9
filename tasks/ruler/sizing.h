// The sizing loop RULER's cwe_utils, vt_utils and qa_utils share: start at `incremental` units
// (words, noise sentences, documents), make a trial input (which draws from the random streams,
// so every trial is made, in order, as lm-eval makes it) and count its tokens; while the count is
// below the budget grow by `incremental`; the first count over the budget steps back one
// increment; reaching `cap` units stops there.
//
//   num = incremental; total = 0
//   while total + tokens_to_generate (+ example_tokens) < max_seq_length:
//       total = len(tokenizer(trial(num)).input_ids)
//       if total + tokens_to_generate (+ example_tokens) > max_seq_length: num -= incremental; break
//       num += incremental
//       if num > cap: num = cap; break          (cwe: len(WORDS); qa: len(docs); vt: none)
#pragma once
#include <cstdint>
#include <functional>

namespace foxeval::ruler {

// `budget` = max_seq_length - tokens_to_generate (- example_tokens); `cap` < 0: none.
// `trial_tokens(num)` makes the trial input for `num` units and returns its token count.
inline int64_t grow_to_fit(int64_t incremental, int64_t budget, int64_t cap, const std::function<int64_t(int64_t)>& trial_tokens) {
  int64_t num = incremental, total = 0;
  while (total < budget) {
    total = trial_tokens(num);
    if (total > budget) {
      num -= incremental;
      break;
    }
    num += incremental;
    if (cap >= 0 && num > cap) {
      num = cap;
      break;
    }
  }
  return num;
}

}  // namespace foxeval::ruler
