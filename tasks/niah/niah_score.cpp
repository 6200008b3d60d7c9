#include "tasks/niah/niah_score.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "data/errors.h"
#include "data/python/unicode.h"
#include "data/utf8.h"
#include "tasks/results/item_stats.h"
#include "tasks/run/runner.h"

namespace foxeval::niah {
namespace {

// Function words that carry no part of an answer.
const std::set<std::string>& stop_words() {
  static const std::set<std::string> words = {"a",  "an", "the", "and", "or", "but", "in", "on", "at", "of", "to",
                                              "for", "with", "is", "are", "was", "be", "it", "its", "do", "as", "by"};
  return words;
}

std::vector<std::string> split_words(const std::string& normalized) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < normalized.size()) {
    const size_t j = std::min(normalized.find(' ', i), normalized.size());
    if (j > i) words.push_back(normalized.substr(i, j - i));
    i = j + 1;
  }
  return words;
}

struct Mean {
  double sum = 0;
  int64_t n = 0;
  double value() const { return n ? sum / static_cast<double>(n) : 0.0; }
};

// Means per length and per depth (in the order first seen, = grid order) and overall.
nlohmann::json grid_means(const std::vector<nlohmann::json>& cells, const std::string& key) {
  std::vector<int64_t> lengths, depths;
  std::map<int64_t, Mean> by_len, by_depth;
  Mean all;
  for (const nlohmann::json& c : cells) {
    const int64_t L = c.at("length").get<int64_t>(), D = c.at("depth").get<int64_t>();
    const double s = c.at(key).get<double>();
    if (!by_len.count(L)) lengths.push_back(L);
    if (!by_depth.count(D)) depths.push_back(D);
    by_len[L].sum += s, by_len[L].n++;
    by_depth[D].sum += s, by_depth[D].n++;
    all.sum += s, all.n++;
  }
  nlohmann::json ml = nlohmann::json::array(), md = nlohmann::json::array();
  for (int64_t L : lengths) ml.push_back({{"length", L}, {"mean", by_len[L].value()}});
  for (int64_t D : depths) md.push_back({{"depth", D}, {"mean", by_depth[D].value()}});
  return {{"mean_by_length", ml}, {"mean_by_depth", md}, {"mean", all.value()}};
}

// per_item (tasks/results/item_stats.h) of a grid mean: one item per cell, named by its length and depth.
nlohmann::json cell_items(const nlohmann::json& cells, const std::string& key) {
  ItemScores s;
  for (const nlohmann::json& c : cells) {
    s.ids.push_back(fmt::format("length={},depth={}", c.at("length").dump(), c.at("depth").dump()));
    s.values.push_back(c.at(key).get<double>());
  }
  return per_item_entry(s);
}

const char* const kScorer =
    "offline: 10 if the normalized answer phrase is in the prediction, else 1 + round(9 * recall), recall = the "
    "largest fraction of the answer's key words in one sentence (tasks/niah/niah_score.h)";

}  // namespace

std::string normalize_text(std::string_view s) {
  std::string out;
  bool space = true;  // no leading space
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    const bool word = c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (word) {
      out.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : ch);
      space = false;
    } else if (!space) {
      out.push_back(' ');
      space = true;
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::vector<std::string> answer_key_words(std::string_view answer) {
  std::vector<std::string> keys;
  for (const std::string& w : split_words(normalize_text(answer)))
    if (!stop_words().count(w) && std::find(keys.begin(), keys.end(), w) == keys.end()) keys.push_back(w);
  return keys;
}

CellScore score_prediction(std::string_view prediction, std::string_view answer) {
  const std::vector<std::string> keys = answer_key_words(answer);
  if (keys.empty()) throw Error(fmt::format("NIAH answer '{}' has no key words to score with", answer));
  CellScore r;
  const std::vector<std::string> pred_words = split_words(normalize_text(prediction));
  const std::vector<std::string> answer_words = split_words(normalize_text(answer));
  r.contains_answer = std::search(pred_words.begin(), pred_words.end(), answer_words.begin(), answer_words.end()) !=
                      pred_words.end();
  size_t best = 0, start = 0;
  while (start <= prediction.size()) {
    size_t end = prediction.find_first_of(".!?\n", start);
    if (end == std::string_view::npos) end = prediction.size();
    const std::vector<std::string> words = split_words(normalize_text(prediction.substr(start, end - start)));
    const std::set<std::string> present(words.begin(), words.end());
    size_t found = 0;
    for (const std::string& k : keys) found += present.count(k);
    best = std::max(best, found);
    start = end + 1;
  }
  const size_t n = keys.size();
  r.recall = static_cast<double>(best) / static_cast<double>(n);
  // round_half_up(9 * best / n) in integers, so the score never depends on float rounding.
  const int scaled = static_cast<int>((18 * best + n) / (2 * n));
  r.score = r.contains_answer ? 10 : 1 + scaled;
  return r;
}

nlohmann::json build_result(const nlohmann::json& identity, const std::vector<nlohmann::json>& records) {
  if (!identity.contains("answer") || !identity["answer"].is_string())
    throw Error("NIAH result: the settings carry no 'answer' to score with");
  const std::string answer = identity["answer"].get<std::string>();
  nlohmann::json cells = nlohmann::json::array();
  bool judged = !records.empty();
  for (const nlohmann::json& rec : records) {
    for (const char* k : {"length", "depth", "prediction"})
      if (!rec.contains(k)) throw Error(fmt::format("NIAH record without '{}': {}", k, rec.dump().substr(0, 200)));
    nlohmann::json c = rec;
    const CellScore s = score_prediction(rec["prediction"].get<std::string>(), answer);
    c["score"] = s.score;
    c["answer_recall"] = s.recall;
    c["contains_answer"] = s.contains_answer;
    judged = judged && rec.contains("judge_score");
    cells.push_back(std::move(c));
  }
  nlohmann::json out = {{"task", "niah"}, {"scorer", kScorer}};
  for (const char* k : {"mode", "model", "model_type", "num_parameters", "haystack_digest", "max_new_tokens", "dtype"})
    if (identity.contains(k)) out[k] = identity[k];
  nlohmann::json means = grid_means(cells, "score");
  for (auto it = means.begin(); it != means.end(); ++it) out[it.key()] = it.value();
  if (judged) {
    out["judge"] = grid_means(cells, "judge_score");
    if (identity.contains("judge_model")) out["judge"]["model"] = identity["judge_model"];
  }
  if (!cells.empty()) {
    out["per_item"] = {{"mean", cell_items(cells, "score")}};
    if (judged) out["per_item"]["judge/mean"] = cell_items(cells, "judge_score");
  }
  out["cells"] = std::move(cells);
  return out;
}

}  // namespace foxeval::niah
