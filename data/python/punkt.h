// nltk's Punkt sentence splitter as nltk.sent_tokenize(text) runs it (PunktTokenizer("english")
// .tokenize: no training, parameters from the four `punkt_tab/<lang>/` files), ported from nltk
// 3.10.4's nltk/tokenize/punkt.py: the period-context scan, the first pass (sentence ends,
// ellipses, known abbreviations), the second pass (collocations, the orthographic and sentence
// starter heuristics, initials and numbers) and the realignment of closing quotes/brackets.
// nltk compiles its patterns with the `regex` module; the character classes they use are tabulated
// in punkt_tables.h. Tested against nltk over generated text (tests/tools/punkt_goldens.py).
#pragma once
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace foxeval {

// PunktParameters as load_punkt_params fills it, over code points.
struct PunktParameters {
  std::unordered_set<std::u32string> abbrev_types;   // abbrev_types.txt: one type a line
  std::set<std::pair<std::u32string, std::u32string>> collocations;  // collocations.tab: type \t type
  std::unordered_set<std::u32string> sent_starters;  // sent_starters.txt
  std::unordered_map<std::u32string, int64_t> ortho_context;  // ortho_context.tab: type \t flags
};

// Reads <lang_dir>/{collocations.tab, sent_starters.txt, abbrev_types.txt, ortho_context.tab}
// (UTF-8, universal newlines, as nltk opens them). foxeval::Error naming the file (and line) for a
// missing or malformed one.
PunktParameters load_punkt_params(const std::filesystem::path& lang_dir);

// The folder nltk.data.find("tokenizers/punkt_tab/<lang>/") finds among nltk's default search
// roots: each entry of $NLTK_DATA, ~/nltk_data, /usr/share, /usr/local/share, /usr/lib,
// /usr/local/lib (+ /nltk_data). foxeval::Error listing where it looked and how to fetch it.
std::filesystem::path find_punkt_tab(const std::string& lang = "english");

// The sentences' [start, end) spans in code points, as span_tokenize(text) gives them.
std::vector<std::pair<size_t, size_t>> punkt_span_tokenize(const PunktParameters& params, const std::u32string& text);

// sent_tokenize(text): the sentences as UTF-8 (`text` must be valid UTF-8).
std::vector<std::string> punkt_sent_tokenize(const PunktParameters& params, const std::string& text);

}  // namespace foxeval
