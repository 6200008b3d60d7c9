// fuzzywuzzy's fuzz.ratio as LongBench installs it (no python-Levenshtein): difflib's
// SequenceMatcher(None, a, b).ratio() over code points, with its "autojunk" heuristic (when b has
// 200 or more elements, an element occurring more than len(b) // 100 + 1 times is not used to
// start a match, only to extend one), rounded to an integer as fuzzywuzzy's utils.intr does.
#pragma once
#include <cstdint>
#include <string>

namespace foxeval::longbench {

// Sum of the sizes of SequenceMatcher(None, a, b).get_matching_blocks() (autojunk on).
int64_t sequence_matcher_matches(const std::u32string& a, const std::u32string& b);

// SequenceMatcher(None, a, b).ratio(): 2.0 * matches / (len(a) + len(b)), 1.0 when both are empty.
double sequence_matcher_ratio(const std::u32string& a, const std::u32string& b);

// fuzz.ratio(a, b) on UTF-8 strings: 100 when equal (even both empty), 0 when either is empty,
// else int(round(100 * ratio)) with Python's round-half-even.
int fuzz_ratio(const std::string& a, const std::string& b);

}  // namespace foxeval::longbench
