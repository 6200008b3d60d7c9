// The NIAH result: a deterministic offline score per cell (no network), the grid means, and the
// ResultBuilder ("niah") shared by `foxeval niah run`, `niah score` and `foxeval merge`.
//
// Offline score (the paper's 1-10 scale; the paper asked GPT-4o, tasks/niah/judge.json):
//   normalize(s): ASCII letters lower-cased; every ASCII character that is not a letter or digit
//     becomes a space (non-ASCII bytes are kept as word characters); runs of spaces collapse;
//     the ends are trimmed. Words = normalize(s) split at spaces.
//   key words = the distinct words of normalize(answer) that are not stop words (kStopWords);
//     for the needle's answer "eat a sandwich and sit in Dolores Park on a sunny day" they are
//     eat, sandwich, sit, dolores, park, sunny, day (7).
//   contains_answer = the words of normalize(answer) appear contiguously in the words of
//     normalize(prediction), anywhere (the judge prompt says extra garbage must not lower the
//     rating as long as the ground truth is included).
//   sentences: the prediction split at '.', '!', '?' and newlines; recall = the largest fraction
//     of key words that one sentence holds (whole words), so the answer counts wherever it is,
//     but words scattered over the garbage do not add up.
//   score = 10 if contains_answer, else 1 + round_half_up(9 * recall): 1 = nothing of the answer,
//     10 = every key word in one sentence. An empty prediction scores 1.
// With 7 key words: 1 word -> 2, 2 -> 4, 3 -> 5, 4 -> 6, 5 -> 7, 6 -> 9, all -> 10.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "data/python/str_strip.h"

namespace foxeval::niah {

struct CellScore {
  int score = 1;                 // 1..10
  double recall = 0;             // best sentence's fraction of key words
  bool contains_answer = false;  // the whole answer phrase, in order
};

std::string normalize_text(std::string_view s);
std::vector<std::string> answer_key_words(std::string_view answer);
CellScore score_prediction(std::string_view prediction, std::string_view answer);

// Python's str.strip() on UTF-8 (the one implementation, data/python/str_strip.h).
inline std::string python_strip(std::string_view s) { return py_strip(s); }

// The result from the identity (needs "answer"; "mode", "model", ... are copied) and the records
// in grid order: each {"length", "depth", "prediction", ...} (+ "judge_score" when judged).
// "cells" carry the record, "score", "answer_recall", "contains_answer"; "mean_by_length" and
// "mean_by_depth" are arrays in grid order; "mean" is over every cell. Judged records add "judge"
// with the same means of the judge's ratings.
nlohmann::json build_result(const nlohmann::json& identity, const std::vector<nlohmann::json>& records);

}  // namespace foxeval::niah
