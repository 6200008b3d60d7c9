#include "tasks/longbench/rouge.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "data/python/unicode.h"

namespace foxeval::longbench {

namespace {

using Words = std::vector<int>;  // word ids; equal ids <=> equal strings

class WordIds {
 public:
  int id(const std::u32string& w) { return ids_.emplace(w, static_cast<int>(ids_.size())).first->second; }

 private:
  std::unordered_map<std::u32string, int> ids_;
};

// [" ".join(s.split()) for s in text.split(".") if len(s) > 0], then each sentence .split(" "):
// an all-whitespace piece becomes the sentence "" whose one word is "".
std::vector<Words> sentences(const std::u32string& text, WordIds& ids) {
  std::vector<Words> out;
  size_t start = 0;
  while (true) {
    const size_t dot = text.find(U'.', start);
    const size_t end = dot == std::u32string::npos ? text.size() : dot;
    if (end > start) {
      Words words;
      for (const std::u32string& w : py_split(text.substr(start, end - start))) words.push_back(ids.id(w));
      if (words.empty()) words.push_back(ids.id(U""));
      out.push_back(std::move(words));
    }
    if (dot == std::u32string::npos) break;
    start = dot + 1;
  }
  return out;
}

// rouge's _recon_lcs(x, y): the LCS table, then the backtrack from (len x, len y) taking x's word
// on a match, else going up when table[i-1][j] > table[i][j-1], else left. Adds the words to
// `lcs_union`; returns false where the recursion would pass `max_depth` frames.
bool recon_lcs(const Words& x, const Words& y, std::unordered_set<int>& lcs_union, int max_depth) {
  const size_t n = x.size(), m = y.size();
  std::vector<int> table((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> int& { return table[i * (m + 1) + j]; };
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j)
      at(i, j) = x[i - 1] == y[j - 1] ? at(i - 1, j - 1) + 1 : std::max(at(i - 1, j), at(i, j - 1));
  std::vector<int> words;
  size_t i = n, j = m;
  int depth = 1;  // the frame for (n, m)
  while (i > 0 && j > 0) {
    if (x[i - 1] == y[j - 1]) {
      words.push_back(x[i - 1]);
      --i;
      --j;
    } else if (at(i - 1, j) > at(i, j - 1)) {
      --i;
    } else {
      --j;
    }
    ++depth;
  }
  if (depth > max_depth) return false;
  lcs_union.insert(words.begin(), words.end());
  return true;
}

size_t distinct(const std::vector<Words>& sents) {
  std::unordered_set<int> s;
  for (const Words& w : sents) s.insert(w.begin(), w.end());
  return s.size();
}

}  // namespace

std::optional<double> rouge_l_f(const std::string& hypothesis, const std::string& reference, int max_recon_depth) {
  WordIds ids;
  const std::vector<Words> hyp = sentences(utf8_to_u32(hypothesis, "rouge hypothesis"), ids);
  const std::vector<Words> ref = sentences(utf8_to_u32(reference, "rouge reference"), ids);
  // get_scores computes rouge-1 and rouge-2 first; they raise only on these same empty inputs.
  if (hyp.empty() || ref.empty()) return std::nullopt;
  const double m = static_cast<double>(distinct(ref));  // >= 1: a sentence has at least one word
  const double n = static_cast<double>(distinct(hyp));
  // _union_lcs per reference sentence, the union carried over: the sum of the increments is the
  // size of the final union of every (reference sentence, hypothesis sentence) LCS.
  std::unordered_set<int> lcs_union;
  for (const Words& r : ref)
    for (const Words& h : hyp)
      if (!recon_lcs(r, h, lcs_union, max_recon_depth)) return std::nullopt;
  const double llcs = static_cast<double>(lcs_union.size());
  const double r_lcs = llcs / m;
  const double p_lcs = llcs / n;
  return 2.0 * ((p_lcs * r_lcs) / (p_lcs + r_lcs + 1e-8));
}

}  // namespace foxeval::longbench
