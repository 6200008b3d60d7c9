// A port of Python jieba 0.42.1's jieba.cut(text, cut_all=False, HMM=True), the Chinese word
// segmenter behind LongBench's Chinese metrics (rouge_zh_score, qa_f1_zh_score). Token lists equal
// the Python's: tests/test_jieba.cpp checks goldens made by tests/tools/make_jieba_goldens.py.
//
// The data is read from Debian's python3-jieba, never copied into this repository: dict.txt and
// finalseg/prob_{start,trans,emit}.py (Python dict literals, parsed at load time) in the folder
// jieba_data_dir() names.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace foxeval::longbench {

// Sizes of what was loaded, for the completeness test.
struct JiebaDataStats {
  size_t dict_words;       // entry lines of dict.txt (a word listed twice counts twice)
  size_t prefix_entries;   // len(FREQ): distinct words plus their prefixes
  int64_t total_freq;      // sum of the frequencies of all entry lines
  size_t start_states;     // len(start_P)
  size_t trans_entries;    // sum of len(trans_P[s])
  std::map<char, size_t> emit_entries;  // len(emit_P[s]) per state 'B', 'M', 'E', 'S'
};

// One loaded copy of the data. Immutable after construction, so cut() may be called from many
// threads at once.
class JiebaTokenizer {
 public:
  // Loads `dir`/dict.txt and `dir`/finalseg/prob_*.py. Throws foxeval::Error naming the folder
  // when it is missing, and the file (with line or entry) when one is missing or malformed.
  explicit JiebaTokenizer(const std::string& dir);
  ~JiebaTokenizer();
  JiebaTokenizer(JiebaTokenizer&&) noexcept;
  JiebaTokenizer& operator=(JiebaTokenizer&&) noexcept;

  // jieba.cut(text) as a list: UTF-8 in, UTF-8 tokens out; invalid UTF-8 throws foxeval::Error.
  std::vector<std::string> cut(const std::string& utf8_text) const;
  JiebaDataStats stats() const;

  // Looked-up values, for spot checks: emit_P[state].get(c), trans_P[from].get(to), start_P[state];
  // a missing entry gives Python's stand-in MIN_FLOAT (-3.14e100).
  double emit_prob(char state, char32_t c) const;
  double trans_prob(char from, char to) const;
  double start_prob(char state) const;

  struct Tables;

 private:
  std::unique_ptr<const Tables> tables_;
};

// The data folder: $FOXEVAL_JIEBA_DIR if set (and non-empty), else /usr/lib/python3/dist-packages/jieba.
std::string jieba_data_dir();

// The process-wide tokenizer over jieba_data_dir(), loaded on first use (thread-safe). A failed
// load throws and is retried on the next call.
const JiebaTokenizer& default_jieba();

// jieba.cut(text, cut_all=False, HMM=True) of jieba 0.42.1, as a list, with default_jieba().
std::vector<std::string> jieba_cut(const std::string& utf8_text);
JiebaDataStats jieba_data_stats();

}  // namespace foxeval::longbench
