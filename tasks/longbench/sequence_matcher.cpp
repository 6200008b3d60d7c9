#include "tasks/longbench/sequence_matcher.h"

#include <cmath>
#include <unordered_map>
#include <vector>

#include "data/python/unicode.h"

namespace foxeval::longbench {

namespace {

struct Match {
  int64_t i, j, size;
};

class Matcher {
 public:
  Matcher(const std::u32string& a, const std::u32string& b) : a_(a), b_(b) {
    // b2j: positions of each element of b, increasing; autojunk drops "popular" elements.
    std::unordered_map<char32_t, std::vector<int64_t>> b2j;
    for (int64_t j = 0; j < static_cast<int64_t>(b.size()); ++j) b2j[b[j]].push_back(j);
    const int64_t n = static_cast<int64_t>(b.size());
    if (n >= 200) {
      const int64_t ntest = n / 100 + 1;
      for (auto it = b2j.begin(); it != b2j.end();) {
        if (static_cast<int64_t>(it->second.size()) > ntest) it = b2j.erase(it);
        else ++it;
      }
    }
    b2j_ = std::move(b2j);
    j2len_.assign(b.size() + 1, 0);
    new_j2len_.assign(b.size() + 1, 0);
  }

  // difflib's find_longest_match(alo, ahi, blo, bhi) with no isjunk: the longest block of
  // non-popular elements (earliest in a, then in b), then extended over equal elements either
  // side (popular ones included). Junk-extension loops are no-ops without isjunk.
  Match find_longest_match(int64_t alo, int64_t ahi, int64_t blo, int64_t bhi) {
    int64_t besti = alo, bestj = blo, bestsize = 0;
    // j2len[j + 1]: length of the match ending at a[i - 1], b[j] (offset by one so j - 1 >= -1).
    std::vector<int64_t> touched, new_touched;
    for (int64_t i = alo; i < ahi; ++i) {
      new_touched.clear();
      auto found = b2j_.find(a_[i]);
      if (found != b2j_.end()) {
        for (int64_t j : found->second) {
          if (j < blo) continue;
          if (j >= bhi) break;
          const int64_t k = j2len_[j] + 1;  // j2len_[j] is the entry for j - 1
          new_j2len_[j + 1] = k;
          new_touched.push_back(j + 1);
          if (k > bestsize) {
            besti = i - k + 1;
            bestj = j - k + 1;
            bestsize = k;
          }
        }
      }
      for (int64_t t : touched) j2len_[t] = 0;
      for (int64_t t : new_touched) j2len_[t] = new_j2len_[t], new_j2len_[t] = 0;
      touched.swap(new_touched);
    }
    for (int64_t t : touched) j2len_[t] = 0;
    while (besti > alo && bestj > blo && a_[besti - 1] == b_[bestj - 1]) {
      --besti;
      --bestj;
      ++bestsize;
    }
    while (besti + bestsize < ahi && bestj + bestsize < bhi && a_[besti + bestsize] == b_[bestj + bestsize])
      ++bestsize;
    return {besti, bestj, bestsize};
  }

 private:
  const std::u32string& a_;
  const std::u32string& b_;
  std::unordered_map<char32_t, std::vector<int64_t>> b2j_;
  std::vector<int64_t> j2len_, new_j2len_;
};

}  // namespace

int64_t sequence_matcher_matches(const std::u32string& a, const std::u32string& b) {
  Matcher m(a, b);
  // get_matching_blocks' work queue; the order of the pieces does not change the total.
  struct Piece {
    int64_t alo, ahi, blo, bhi;
  };
  std::vector<Piece> queue{{0, static_cast<int64_t>(a.size()), 0, static_cast<int64_t>(b.size())}};
  int64_t matches = 0;
  while (!queue.empty()) {
    const Piece p = queue.back();
    queue.pop_back();
    const Match x = m.find_longest_match(p.alo, p.ahi, p.blo, p.bhi);
    if (x.size == 0) continue;
    matches += x.size;
    if (p.alo < x.i && p.blo < x.j) queue.push_back({p.alo, x.i, p.blo, x.j});
    if (x.i + x.size < p.ahi && x.j + x.size < p.bhi) queue.push_back({x.i + x.size, p.ahi, x.j + x.size, p.bhi});
  }
  return matches;
}

double sequence_matcher_ratio(const std::u32string& a, const std::u32string& b) {
  const int64_t length = static_cast<int64_t>(a.size() + b.size());
  if (length == 0) return 1.0;
  return 2.0 * static_cast<double>(sequence_matcher_matches(a, b)) / static_cast<double>(length);
}

int fuzz_ratio(const std::string& a, const std::string& b) {
  // fuzzywuzzy's decorators, outermost first: equal strings -> 100, then an empty one -> 0.
  if (a == b) return 100;
  if (a.empty() || b.empty()) return 0;
  const double r = sequence_matcher_ratio(utf8_to_u32(a, "fuzz.ratio prediction"), utf8_to_u32(b, "fuzz.ratio answer"));
  // int(round(100 * r)): Python's round is half-to-even, as nearbyint in the default rounding mode.
  return static_cast<int>(std::nearbyint(100.0 * r));
}

}  // namespace foxeval::longbench
