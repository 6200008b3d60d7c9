#include "tasks/longbench/jieba.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "data/errors.h"
#include "data/python/json_escape.h"
#include "data/python/unicode.h"

namespace foxeval::longbench {

namespace {

// finalseg's stand-in for a missing emission or transition probability.
constexpr double kMinFloat = -3.14e100;
// finalseg.viterbi's states, in the order of its `states` argument 'BMES'.
constexpr std::array<char, 4> kStates = {'B', 'M', 'E', 'S'};
constexpr char kDefaultDir[] = "/usr/lib/python3/dist-packages/jieba";

int state_index(char c) {
  for (int i = 0; i < 4; ++i)
    if (kStates[i] == c) return i;
  return -1;
}

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("jieba data: cannot read " + path);
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw Error("jieba data: error reading " + path);
  return buf.str();
}

// ---------------------------------------------------------------------------------------------
// dict.txt -> Tokenizer.FREQ / Tokenizer.total (gen_pfdict), held as a trie over code points: a
// string is a FREQ key exactly when it is a node, so get_DAG's `frag in FREQ` walk is a trie walk.

struct PrefixDict {
  std::unordered_map<uint64_t, uint32_t> children;  // key(node, c) -> child node
  std::vector<int64_t> freq{0};                      // per node; node 0 is the root (the empty string)
  int64_t total = 0;
  size_t entry_lines = 0;

  static uint64_t key(uint32_t node, char32_t c) { return uint64_t{node} * 0x110000u + c; }

  // The child of `node` by `c`, or 0 when there is none.
  uint32_t child(uint32_t node, char32_t c) const {
    auto it = children.find(key(node, c));
    return it == children.end() ? 0 : it->second;
  }

  // FREQ.get(s[b:e]), with 0 for a missing key (both are falsy to the Python).
  int64_t get(const char32_t* b, const char32_t* e) const {
    uint32_t node = 0;
    for (; b != e; ++b)
      if ((node = child(node, *b)) == 0) return 0;
    return freq[node];
  }

  // gen_pfdict's body for one entry: FREQ[word] = freq (a repeated word's later line wins, while
  // total counts both), and each prefix not yet a key becomes one with 0.
  void add(const std::u32string& word, int64_t f) {
    uint32_t node = 0;
    for (char32_t c : word) {
      auto [it, inserted] = children.try_emplace(key(node, c), static_cast<uint32_t>(freq.size()));
      if (inserted) freq.push_back(0);
      node = it->second;
    }
    freq[node] = f;
    total += f;
    ++entry_lines;
  }
};

bool is_bytes_strip_space(char c) {  // bytes.strip(): ASCII whitespace
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// int(freq) for the plain decimal numbers dict.txt holds. Python's int() also takes signs,
// underscores and non-ASCII digits; those (and negative counts, which would fail later in
// math.log) are rejected here as malformed.
bool parse_frequency(const std::string& s, int64_t& out) {
  if (s.empty() || s.size() > 18) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  return true;
}

// One line of gen_pfdict: line.strip().decode('utf-8'); word, freq = line.split(' ')[:2]; int(freq).
// The whole line is decoded, as there: invalid UTF-8 anywhere in it is a malformed entry.
void add_dict_line(PrefixDict& dict, const std::string& raw, const std::string& path, size_t lineno) {
  const std::string where = path + " line " + std::to_string(lineno);
  size_t b = 0, e = raw.size();
  while (b < e && is_bytes_strip_space(raw[b])) ++b;
  while (e > b && is_bytes_strip_space(raw[e - 1])) --e;
  const std::u32string line = utf8_to_u32(raw.substr(b, e - b), "invalid dictionary entry in " + where);
  const size_t sp1 = line.find(U' ');
  if (sp1 == std::u32string::npos)
    throw Error("invalid dictionary entry in " + where + ": '" + u32_to_utf8(line) + "' (want 'word freq [tag]')");
  const size_t sp2 = line.find(U' ', sp1 + 1);
  const std::string freq_text = u32_to_utf8(line.substr(sp1 + 1, sp2 == std::u32string::npos ? sp2 : sp2 - sp1 - 1));
  int64_t f = 0;
  if (!parse_frequency(freq_text, f)) throw Error("invalid dictionary entry in " + where + ": bad frequency '" + freq_text + "'");
  dict.add(line.substr(0, sp1), f);
}

// Iterates the file as Python's binary file iteration does: lines end at b'\n', and a last line
// without one still counts. Every line must be an entry (gen_pfdict rejects blank lines too).
PrefixDict load_dict(const std::string& path) {
  const std::string text = read_whole_file(path);
  PrefixDict dict;
  dict.children.reserve(text.size() / 8);
  dict.freq.reserve(text.size() / 8);
  size_t pos = 0, lineno = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    add_dict_line(dict, text.substr(pos, nl - pos), path, ++lineno);
    pos = nl + 1;
  }
  if (dict.entry_lines == 0) throw Error("jieba data: " + path + " holds no dictionary entries");
  return dict;
}

// ---------------------------------------------------------------------------------------------
// finalseg/prob_*.py: `P={...}` Python literals (dicts of str keys with float or dict values).
// The parser takes the literal forms those files use, plus the other plain ones a regenerated
// file could use: ' or " strings with an optional u prefix and the escapes \\ \' \" \n \r \t \xHH
// \uHHHH \UHHHHHHHH, signed decimal floats and ints, trailing commas, # comments, and leading
// `from ... import ...` / `import ...` lines. Anything else is an error naming file and line.

class PyLiteralParser {
 public:
  PyLiteralParser(std::string text, std::string path) : s_(std::move(text)), path_(std::move(path)) {}

  // Parses `P = <value>` (after any import lines) to the end of the file.
  template <class ParseValue>
  void parse_assignment(ParseValue&& parse_value) {
    skip_imports();
    expect('P');
    expect('=');
    parse_value();
    skip_space();
    if (pos_ != s_.size()) fail("unexpected text after the dict literal");
  }

  // `{key: value, ...}`: calls on_entry(key) with the parser right at the value.
  template <class OnEntry>
  void parse_dict(OnEntry&& on_entry) {
    expect('{');
    while (true) {
      if (peek() == '}') break;
      const std::u32string key = parse_string();
      expect(':');
      on_entry(key);
      if (peek() != ',') break;
      ++pos_;
    }
    expect('}');
  }

  // A float literal as Python reads it; strtod rounds correctly, as Python's float parsing does,
  // so the value is bit-equal to the Python's.
  double parse_number() {
    skip_space();
    const size_t start = pos_;
    if (pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+')) ++pos_;
    while (pos_ < s_.size() && (is_number_char(s_[pos_]) || (is_sign(s_[pos_]) && is_exp(s_[pos_ - 1])))) ++pos_;
    const std::string token = s_.substr(start, pos_ - start);
    char* end = nullptr;
    const double v = token.empty() ? 0.0 : std::strtod(token.c_str(), &end);
    if (token.empty() || end != token.c_str() + token.size() || token.find_first_of("0123456789") == std::string::npos)
      fail_at(start, "expected a number, got '" + s_.substr(start, 20) + "'");
    return v;
  }

  std::u32string parse_string() {
    skip_space();
    const size_t start = pos_;
    if (pos_ < s_.size() && (s_[pos_] == 'u' || s_[pos_] == 'U')) ++pos_;
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) fail_at(start, "expected a string key");
    const char quote = s_[pos_++];
    if (s_.compare(pos_, 2, std::string(2, quote)) == 0) fail_at(start, "triple-quoted strings are not supported");
    std::u32string out;
    std::string run;  // raw UTF-8 between escapes
    while (true) {
      if (pos_ >= s_.size() || s_[pos_] == '\n') fail_at(start, "unterminated string");
      const char c = s_[pos_++];
      if (c == quote) break;
      if (c != '\\') {
        run += c;
        continue;
      }
      out += decode(run, start);
      run.clear();
      out += parse_escape();
    }
    out += decode(run, start);
    return out;
  }

  [[noreturn]] void fail(const std::string& msg) const { fail_at(pos_, msg); }

  // "<file> line N" for the byte offset `at`.
  std::string where(size_t at) const {
    size_t line = 1;
    for (size_t i = 0; i < at && i < s_.size(); ++i) line += s_[i] == '\n';
    return path_ + " line " + std::to_string(line);
  }

  size_t pos() const { return pos_; }

 private:
  static bool is_number_char(char c) { return (c >= '0' && c <= '9') || c == '.' || is_exp(c); }
  static bool is_exp(char c) { return c == 'e' || c == 'E'; }
  static bool is_sign(char c) { return c == '+' || c == '-'; }

  // Strict UTF-8 decoding of raw string-literal bytes; where() (a scan from the file start) is
  // only worked out for the error.
  std::u32string decode(const std::string& raw, size_t at) const {
    try {
      return utf8_to_u32(raw, "string");
    } catch (const Error& e) {
      fail_at(at, e.what());
    }
  }

  [[noreturn]] void fail_at(size_t at, const std::string& msg) const {
    throw Error("jieba data: malformed " + where(at) + ": " + msg);
  }

  void skip_space() {
    while (pos_ < s_.size()) {
      const char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  void skip_imports() {
    while (true) {
      skip_space();
      if (s_.compare(pos_, 5, "from ") != 0 && s_.compare(pos_, 7, "import ") != 0) return;
      while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
    }
  }

  char peek() {
    skip_space();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }

  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  char32_t parse_hex(int digits) {
    if (pos_ + digits > s_.size()) fail("truncated escape");
    char32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const char c = s_[pos_++];
      const int d = hex_digit(c);
      if (d < 0) fail("bad hex digit in escape");
      v = v * 16 + static_cast<char32_t>(d);
    }
    if (v > 0x10FFFF) fail("escape beyond U+10FFFF");
    return v;
  }

  // After a backslash.
  char32_t parse_escape() {
    if (pos_ >= s_.size()) fail("truncated escape");
    switch (s_[pos_++]) {
      case '\\': return U'\\';
      case '\'': return U'\'';
      case '"': return U'"';
      case 'n': return U'\n';
      case 'r': return U'\r';
      case 't': return U'\t';
      case 'x': return parse_hex(2);
      case 'u': return parse_hex(4);
      case 'U': return parse_hex(8);
      default: fail(std::string("unsupported escape '\\") + s_[pos_ - 1] + "'");
    }
  }

  std::string s_;
  std::string path_;
  size_t pos_ = 0;
};

// The finalseg model: start_P, trans_P, emit_P, indexed by kStates.
struct Hmm {
  std::array<double, 4> start{};
  std::array<std::array<double, 4>, 4> trans{};  // trans[from][to]; kMinFloat where missing
  std::array<std::unordered_map<char32_t, double>, 4> emit;
  size_t start_states = 0;
  size_t trans_entries = 0;

  double emit_of(int state, char32_t c) const {  // emit_p[y].get(c, MIN_FLOAT)
    auto it = emit[state].find(c);
    return it == emit[state].end() ? kMinFloat : it->second;
  }
};

// A state key ('B', 'M', 'E' or 'S'); `what` names the dict for the error.
int parse_state_key(PyLiteralParser& p, const std::u32string& key, size_t at, const std::string& what) {
  const int s = key.size() == 1 && key[0] < 0x80 ? state_index(static_cast<char>(key[0])) : -1;
  if (s < 0) throw Error("jieba data: malformed " + p.where(at) + ": " + what + " key '" + u32_to_utf8(key) + "' is not one of B, M, E, S");
  return s;
}

// Reads `P={'B': {...}, ...}` where every state of BMES must be present, as finalseg indexes
// trans_P[y0] and emit_P[y] without a default; inner dicts go to on_inner(state).
template <class OnInner>
void parse_state_dict(PyLiteralParser& p, const std::string& path, const std::string& what, OnInner&& on_inner) {
  std::array<bool, 4> seen{};
  p.parse_assignment([&] {
    p.parse_dict([&](const std::u32string& key) {
      const int s = parse_state_key(p, key, p.pos(), what);
      seen[s] = true;
      on_inner(s);
    });
  });
  for (int s = 0; s < 4; ++s)
    if (!seen[s]) throw Error("jieba data: malformed " + path + ": " + what + " has no state '" + kStates[s] + "'");
}

Hmm load_hmm(const std::string& dir) {
  Hmm h;
  const std::string start_path = dir + "/finalseg/prob_start.py";
  PyLiteralParser ps(read_whole_file(start_path), start_path);
  std::array<bool, 4> seen{};
  ps.parse_assignment([&] {
    ps.parse_dict([&](const std::u32string& key) {
      const int s = parse_state_key(ps, key, ps.pos(), "start_P");
      seen[s] = true;
      h.start[s] = ps.parse_number();
    });
  });
  for (int s = 0; s < 4; ++s) {
    if (!seen[s]) throw Error("jieba data: malformed " + start_path + ": start_P has no state '" + kStates[s] + "'");
    ++h.start_states;
  }

  const std::string trans_path = dir + "/finalseg/prob_trans.py";
  PyLiteralParser pt(read_whole_file(trans_path), trans_path);
  std::array<std::array<bool, 4>, 4> has{};
  parse_state_dict(pt, trans_path, "trans_P", [&](int from) {
    h.trans[from].fill(kMinFloat);  // a repeated outer key replaces the whole inner dict
    has[from] = {};
    pt.parse_dict([&](const std::u32string& key) {
      const int to = parse_state_key(pt, key, pt.pos(), "trans_P inner");
      h.trans[from][to] = pt.parse_number();
      has[from][to] = true;
    });
  });
  for (const auto& row : has)
    for (bool b : row) h.trans_entries += b;

  const std::string emit_path = dir + "/finalseg/prob_emit.py";
  PyLiteralParser pe(read_whole_file(emit_path), emit_path);
  parse_state_dict(pe, emit_path, "emit_P", [&](int state) {
    auto& m = h.emit[state];
    m.clear();
    pe.parse_dict([&](const std::u32string& key) {
      if (key.size() != 1)
        throw Error("jieba data: malformed " + pe.where(pe.pos()) + ": emit_P key '" + u32_to_utf8(key) + "' is not one character");
      m[key[0]] = pe.parse_number();  // a repeated key: the later value wins, as in a dict display
    });
  });
  return h;
}

}  // namespace

struct JiebaTokenizer::Tables {
  PrefixDict dict;
  double log_total = 0;  // calc's logtotal = log(self.total)
  Hmm hmm;
};

// ---------------------------------------------------------------------------------------------
// Cutting. Every token is a run of the input's code points, so the pieces below record
// [begin, end) ranges and the UTF-8 tokens are cut from the input bytes at the end.

namespace {

using Range = std::pair<size_t, size_t>;

bool is_ascii_alnum(char32_t c) { return (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') || (c >= U'0' && c <= U'9'); }
bool is_han(char32_t c) { return c >= 0x4E00 && c <= 0x9FD5; }  // [\u4E00-\u9FD5]

// re_han_default's class [\u4E00-\u9FD5a-zA-Z0-9+#&\._%\-].
bool in_han_default(char32_t c) {
  return is_han(c) || is_ascii_alnum(c) || c == U'+' || c == U'#' || c == U'&' || c == U'.' || c == U'_' || c == U'%' || c == U'-';
}

// Python's max() over (value, tag) tuples keeps the first largest: a later item replaces the best
// only when it compares greater, and tuples compare the values first, then the tags.
bool tuple_greater(double v, int tag, double best_v, int best_tag) { return v > best_v || (v == best_v && tag > best_tag); }

class Cutter {
 public:
  Cutter(const JiebaTokenizer::Tables& t, const std::u32string& s) : t_(t), s_(s) {}

  // Tokenizer.cut: re_han_default.split(sentence) into runs inside and outside the class.
  std::vector<Range> cut() {
    size_t i = 0;
    while (i < s_.size()) {
      const bool inside = in_han_default(s_[i]);
      size_t j = i;
      while (j < s_.size() && in_han_default(s_[j]) == inside) ++j;
      inside ? cut_dag(i, j) : cut_skip_block(i, j);
      i = j;
    }
    return std::move(out_);
  }

 private:
  void emit(size_t b, size_t e) { out_.emplace_back(b, e); }

  // A block outside the class goes through re_skip_default.split (\r\n|\s): separators come out
  // whole and the other pieces char by char. So every character is its own token, except that
  // "\r\n" is one (the alternation tries \r\n before \s). \s itself needs no test here.
  void cut_skip_block(size_t b, size_t e) {
    for (size_t k = b; k < e;) {
      const size_t n = (s_[k] == U'\r' && k + 1 < e && s_[k + 1] == U'\n') ? 2 : 1;
      emit(k, k + n);
      k += n;
    }
  }

  // get_DAG + calc for s[b:e]: route_end[i] is the last index of the best word starting at i.
  std::vector<size_t> best_route(size_t b, size_t e) const {
    const size_t n = e - b;
    std::vector<double> route_v(n + 1, 0.0);  // route[N] = (0, 0)
    std::vector<size_t> route_end(n + 1, 0);
    std::vector<std::pair<size_t, int64_t>> dag;  // DAG[k]: (x, FREQ of s[k:x+1]), x ascending
    for (size_t k = n; k-- > 0;) {
      dag_of(b, e, k, dag);
      bool first = true;
      for (const auto& [x, f] : dag) {
        // log(FREQ.get(frag) or 1) - logtotal + route[x + 1][0], in Python's order of operations.
        const double v = std::log(static_cast<double>(f)) - t_.log_total + route_v[x + 1];
        if (first || tuple_greater(v, static_cast<int>(x), route_v[k], static_cast<int>(route_end[k]))) {
          route_v[k] = v;
          route_end[k] = x;
          first = false;
        }
      }
    }
    return route_end;
  }

  // get_DAG's list for position k (relative to b): the ends x of the fragments s[k:x+1] with a
  // non-zero FREQ, walking while the fragment is a key at all; [k] when none is a word (calc then
  // uses FREQ.get(...) or 1 = 1).
  void dag_of(size_t b, size_t e, size_t k, std::vector<std::pair<size_t, int64_t>>& dag) const {
    dag.clear();
    uint32_t node = 0;
    for (size_t i = k; b + i < e; ++i) {
      node = t_.dict.child(node, s_[b + i]);
      if (node == 0) break;
      if (const int64_t f = t_.dict.freq[node]) dag.emplace_back(i, f);
    }
    if (dag.empty()) dag.emplace_back(k, 1);
  }

  // __cut_DAG (the HMM version): runs of single-character route steps gather in a buffer that is
  // flushed before each longer word and at the end.
  void cut_dag(size_t b, size_t e) {
    const std::vector<size_t> route_end = best_route(b, e);
    size_t buf_begin = b;  // the buffer is s[buf_begin:x]
    for (size_t x = b; x < e;) {
      const size_t y = b + route_end[x - b] + 1;
      if (y - x != 1) {
        flush_buffer(buf_begin, x);
        emit(x, y);
        buf_begin = y;
      }
      x = y;
    }
    flush_buffer(buf_begin, e);
  }

  // One character as is; a buffer that is no word with a non-zero FREQ (missing or 0: falsy)
  // goes to finalseg.cut; a dictionary word comes out char by char.
  void flush_buffer(size_t b, size_t e) {
    if (e - b == 1) {
      emit(b, e);
    } else if (e - b > 1) {
      if (t_.dict.get(s_.data() + b, s_.data() + e) == 0) {
        finalseg_cut(b, e);
      } else {
        for (size_t k = b; k < e; ++k) emit(k, k + 1);
      }
    }
  }

  // finalseg.cut: re_han ([\u4E00-\u9FD5]+) splits the text; Han runs go to the HMM, the rest to
  // re_skip's split.
  void finalseg_cut(size_t b, size_t e) {
    for (size_t i = b; i < e;) {
      const bool han = is_han(s_[i]);
      size_t j = i;
      while (j < e && is_han(s_[j]) == han) ++j;
      han ? hmm_cut(i, j) : finalseg_skip_split(i, j);
      i = j;
    }
  }

  // re_skip ([a-zA-Z0-9]+(?:\.\d+)?%?).split(blk) with its empty pieces dropped: matches and the
  // text between them come out whole.
  void finalseg_skip_split(size_t b, size_t e) {
    size_t gap = b;  // start of the unmatched text before the next match
    for (size_t i = b; i < e;) {
      if (!is_ascii_alnum(s_[i])) {
        ++i;
        continue;
      }
      const size_t m = skip_match_end(i, e);
      if (gap < i) emit(gap, i);
      emit(i, m);
      gap = i = m;
    }
    if (gap < e) emit(gap, e);
  }

  // End of the re_skip match at i (s[i] is alphanumeric): greedy [a-zA-Z0-9]+, then \.\d+ if a
  // decimal digit follows the dot (\d on str: Unicode decimals), then an optional %.
  size_t skip_match_end(size_t i, size_t e) const {
    while (i < e && is_ascii_alnum(s_[i])) ++i;
    if (i + 1 < e && s_[i] == U'.' && py_isdecimal(s_[i + 1])) {
      i += 2;
      while (i < e && py_isdecimal(s_[i])) ++i;
    }
    if (i < e && s_[i] == U'%') ++i;
    return i;
  }

  // finalseg.__cut: the Viterbi path, then its B/M/E/S walk.
  void hmm_cut(size_t b, size_t e) {
    const std::vector<int> pos = viterbi(b, e);
    const size_t n = e - b;
    size_t begin = 0, next = 0;
    for (size_t i = 0; i < n; ++i) {
      const char p = kStates[pos[i]];
      if (p == 'B') {
        begin = i;
      } else if (p == 'E') {
        emit(b + begin, b + i + 1);
        next = i + 1;
      } else if (p == 'S') {
        emit(b + i, b + i + 1);
        next = i + 1;
      }
    }
    if (next < n) emit(b + next, e);  // the tail: sentence[nexti:]
  }

  // finalseg.viterbi(obs, 'BMES', ...). Back-pointers replace the Python's path lists (path[y] is
  // path[state] + [y], the same sequence); ties in max() go to the larger state letter.
  std::vector<int> viterbi(size_t b, size_t e) const {
    static constexpr std::array<std::array<int, 2>, 4> kPrev = {{
        {2, 3},  // PrevStatus['B'] = 'ES'
        {1, 0},  // PrevStatus['M'] = 'MB'
        {0, 1},  // PrevStatus['E'] = 'BM'
        {3, 2},  // PrevStatus['S'] = 'SE'
    }};
    const Hmm& h = t_.hmm;
    const size_t n = e - b;
    std::vector<std::array<double, 4>> v(n);
    std::vector<std::array<int, 4>> back(n);
    for (int y = 0; y < 4; ++y) v[0][y] = h.start[y] + h.emit_of(y, s_[b]);
    for (size_t t = 1; t < n; ++t) {
      for (int y = 0; y < 4; ++y) {
        const double em = h.emit_of(y, s_[b + t]);
        int best = -1;
        double best_v = 0;
        for (int y0 : kPrev[y]) {
          const double cand = v[t - 1][y0] + h.trans[y0][y] + em;  // (V + trans) + em, as Python adds
          if (best < 0 || tuple_greater(cand, kStates[y0], best_v, kStates[best])) {
            best = y0;
            best_v = cand;
          }
        }
        v[t][y] = best_v;
        back[t][y] = best;
      }
    }
    // max((V[-1][y], y) for y in 'ES')
    const int e_state = 2, s_state = 3;
    int last = tuple_greater(v[n - 1][s_state], 'S', v[n - 1][e_state], 'E') ? s_state : e_state;
    std::vector<int> pos(n);
    for (size_t t = n; t-- > 0;) {
      pos[t] = last;
      if (t > 0) last = back[t][last];
    }
    return pos;
  }

  const JiebaTokenizer::Tables& t_;
  const std::u32string& s_;
  std::vector<Range> out_;
};

size_t utf8_length(char32_t c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

}  // namespace

JiebaTokenizer::JiebaTokenizer(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw Error("jieba data folder '" + dir + "' not found: install it with `apt-get install python3-jieba`, "
                "or set FOXEVAL_JIEBA_DIR to a folder holding jieba 0.42.1's dict.txt and finalseg/prob_*.py");
  auto t = std::make_unique<Tables>();
  t->dict = load_dict(dir + "/dict.txt");
  t->log_total = std::log(static_cast<double>(t->dict.total));
  t->hmm = load_hmm(dir);
  tables_ = std::move(t);
}

JiebaTokenizer::~JiebaTokenizer() = default;
JiebaTokenizer::JiebaTokenizer(JiebaTokenizer&&) noexcept = default;
JiebaTokenizer& JiebaTokenizer::operator=(JiebaTokenizer&&) noexcept = default;

std::vector<std::string> JiebaTokenizer::cut(const std::string& utf8_text) const {
  const std::u32string s = utf8_to_u32(utf8_text, "jieba_cut input");
  std::vector<size_t> byte_at(s.size() + 1, 0);  // byte offset of each code point
  for (size_t i = 0; i < s.size(); ++i) byte_at[i + 1] = byte_at[i] + utf8_length(s[i]);
  std::vector<std::string> tokens;
  for (const auto& [b, e] : Cutter(*tables_, s).cut()) tokens.push_back(utf8_text.substr(byte_at[b], byte_at[e] - byte_at[b]));
  return tokens;
}

JiebaDataStats JiebaTokenizer::stats() const {
  const Tables& t = *tables_;
  JiebaDataStats st{};
  st.dict_words = t.dict.entry_lines;
  st.prefix_entries = t.dict.freq.size() - 1;  // every node but the root
  st.total_freq = t.dict.total;
  st.start_states = t.hmm.start_states;
  st.trans_entries = t.hmm.trans_entries;
  for (int s = 0; s < 4; ++s) st.emit_entries[kStates[s]] = t.hmm.emit[s].size();
  return st;
}

namespace {
int checked_state(char c) {
  const int s = state_index(c);
  if (s < 0) throw Error(std::string("jieba: no HMM state '") + c + "'");
  return s;
}
}  // namespace

double JiebaTokenizer::emit_prob(char state, char32_t c) const { return tables_->hmm.emit_of(checked_state(state), c); }
double JiebaTokenizer::trans_prob(char from, char to) const { return tables_->hmm.trans[checked_state(from)][checked_state(to)]; }
double JiebaTokenizer::start_prob(char state) const { return tables_->hmm.start[checked_state(state)]; }

std::string jieba_data_dir() {
  const char* env = std::getenv("FOXEVAL_JIEBA_DIR");
  return env && *env ? std::string(env) : std::string(kDefaultDir);
}

const JiebaTokenizer& default_jieba() {
  static const JiebaTokenizer tokenizer(jieba_data_dir());
  return tokenizer;
}

std::vector<std::string> jieba_cut(const std::string& utf8_text) { return default_jieba().cut(utf8_text); }
JiebaDataStats jieba_data_stats() { return default_jieba().stats(); }

}  // namespace foxeval::longbench
