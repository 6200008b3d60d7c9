#include "data/python/punkt.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "data/errors.h"
#include "data/python/punkt_tables.h"
#include "data/python/unicode.h"

namespace foxeval {

namespace {

namespace pt = punkt_tables;

bool in_ranges(const pt::CodeRange* r, size_t n, char32_t c) {
  const pt::CodeRange* it =
      std::upper_bound(r, r + n, static_cast<uint32_t>(c), [](uint32_t v, const pt::CodeRange& x) { return v < x.first; });
  return it != r && c <= (it - 1)->last;
}
bool rx_space(char32_t c) { return in_ranges(pt::kRegexSpace, pt::kRegexSpaceCount, c); }
bool rx_letter(char32_t c) { return in_ranges(pt::kRegexLetter, pt::kRegexLetterCount, c); }
bool rx_digit(char32_t c) { return in_ranges(pt::kRegexDigit, pt::kRegexDigitCount, c); }
bool py_upper(char32_t c) { return in_ranges(pt::kPyUpper, pt::kPyUpperCount, c); }
bool py_lower_char(char32_t c) { return in_ranges(pt::kPyLower, pt::kPyLowerCount, c); }

// PunktLanguageVars: _re_non_word_chars (with "?" and "!", the sentence ends other than ".").
bool non_word(char32_t c) {
  static const std::u32string chars = U")\";}]*:@'({[\u2018\u2019\u201c\u201d\u00ab\u00bb?!";
  return chars.find(c) != std::u32string::npos;
}
// Characters _re_word_start refuses as a word's first.
bool not_word_start(char32_t c) {
  static const std::u32string chars = U"(\"`{[:;&#*@)}]-,";
  return chars.find(c) != std::u32string::npos;
}
bool sent_end(char32_t c) { return c == U'.' || c == U'?' || c == U'!'; }
// re_boundary_realignment's closing punctuation.
bool closing(char32_t c) {
  static const std::u32string chars = U"\"')]}\u2018\u2019\u201c\u201d\u00ab\u00bb";
  return chars.find(c) != std::u32string::npos;
}

// Length of _re_multi_char_punct matched at p (-{2,} | \.{2,} | (?:\.\s){2,}\.), 0 for none.
size_t multi_char(const std::u32string& s, size_t b, size_t e, size_t p) {
  if (p + 1 >= e) return 0;
  if ((s[p] == U'-' || s[p] == U'.') && s[p + 1] == s[p]) {
    size_t q = p;
    while (q < e && s[q] == s[p]) ++q;
    return q - p;
  }
  if (s[p] != U'.') return 0;
  size_t reps = 0, q = p;
  while (q + 1 < e && s[q] == U'.' && rx_space(s[q + 1])) ++reps, q += 2;
  if (reps < 2) return 0;
  if (q < e && s[q] == U'.') return 2 * reps + 1;
  return reps >= 3 ? 2 * reps - 1 : 0;  // backtrack one repetition: its '.' ends the match
}

// The lookahead that ends a word in _word_tokenize_fmt, at position p of the line [b, e).
bool word_end(const std::u32string& s, size_t b, size_t e, size_t p) {
  if (p == e || rx_space(s[p]) || non_word(s[p]) || multi_char(s, b, e, p)) return true;
  if (s[p] != U',') return false;
  const size_t q = p + 1;
  return q == e || rx_space(s[q]) || non_word(s[q]) || multi_char(s, b, e, q);
}

struct Token {
  std::u32string tok, type;
  bool period_final = false, sentbreak = false, abbr = false, ellipsis = false;
};

// _RE_NUMERIC: ^-?[\.,]?\d[\d,\.-]*\.?$
bool numeric(const std::u32string& t) {
  size_t i = 0;
  if (i < t.size() && t[i] == U'-') ++i;
  if (i + 1 < t.size() && (t[i] == U'.' || t[i] == U',') && rx_digit(t[i + 1])) ++i;
  if (i >= t.size() || !rx_digit(t[i])) return false;
  for (++i; i < t.size(); ++i)
    if (!(rx_digit(t[i]) || t[i] == U',' || t[i] == U'.' || t[i] == U'-')) return false;
  return true;
}

Token make_token(std::u32string tok) {
  Token t;
  std::u32string lower = py_lower(tok);
  t.type = numeric(lower) ? U"##number##" : lower;
  t.period_final = !tok.empty() && tok.back() == U'.';
  t.tok = std::move(tok);
  return t;
}

std::u32string type_no_period(const Token& t) {
  if (t.type.size() > 1 && t.type.back() == U'.') return t.type.substr(0, t.type.size() - 1);
  return t.type;
}
std::u32string type_no_sentperiod(const Token& t) { return t.sentbreak ? type_no_period(t) : t.type; }
bool is_initial(const std::u32string& tok) { return tok.size() == 2 && rx_letter(tok[0]) && tok[1] == U'.'; }
bool is_ellipsis(const std::u32string& tok) {
  return tok.size() >= 2 && std::all_of(tok.begin(), tok.end(), [](char32_t c) { return c == U'.'; });
}

bool strip_nonempty(const std::u32string& s, size_t b, size_t e) {
  for (size_t i = b; i < e; ++i)
    if (!py_isspace(s[i])) return true;
  return false;
}

// _tokenize_words: the lines of text (split on "\n") that are not blank, word_tokenize'd.
std::vector<Token> tokenize_words(const std::u32string& s) {
  std::vector<Token> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(U'\n', b);
    if (e == std::u32string::npos) e = s.size();
    if (strip_nonempty(s, b, e)) {
      size_t i = b;
      while (i < e) {
        if (rx_space(s[i])) {
          ++i;
          continue;
        }
        size_t len = multi_char(s, b, e, i);
        if (!len && !not_word_start(s[i])) {
          size_t j = i + 1;  // \S+? : the shortest run of non-space ending at a word end
          while (!word_end(s, b, e, j)) ++j;
          len = j - i;
        }
        if (!len) len = 1;  // \S
        out.push_back(make_token(s.substr(i, len)));
        i += len;
      }
    }
    b = e + 1;
  }
  return out;
}

constexpr int64_t kBegUc = 1 << 1, kMidUc = 1 << 2, kUnkUc = 1 << 3, kBegLc = 1 << 4, kMidLc = 1 << 5, kUnkLc = 1 << 6;
constexpr int64_t kUc = kBegUc + kMidUc + kUnkUc, kLc = kBegLc + kMidLc + kUnkLc;

int64_t ortho_of(const PunktParameters& p, const std::u32string& type) {
  auto it = p.ortho_context.find(type);
  return it == p.ortho_context.end() ? 0 : it->second;
}

void first_pass(const PunktParameters& p, Token& t) {
  const std::u32string& tok = t.tok;
  if (tok.size() == 1 && sent_end(tok[0])) {
    t.sentbreak = true;
  } else if (is_ellipsis(tok)) {
    t.ellipsis = true;
  } else if (t.period_final && !(tok.size() >= 2 && tok[tok.size() - 2] == U'.')) {
    const std::u32string stem = py_lower(tok.substr(0, tok.size() - 1));
    const size_t dash = stem.rfind(U'-');
    const std::u32string last = dash == std::u32string::npos ? stem : stem.substr(dash + 1);
    if (p.abbrev_types.count(stem) || p.abbrev_types.count(last))
      t.abbr = true;
    else
      t.sentbreak = true;
  }
}

enum class Ortho { kFalse, kTrue, kUnknown };

Ortho ortho_heuristic(const PunktParameters& p, const Token& t) {
  static const std::u32string punctuation = U";:,.!?";
  if (t.tok.size() == 1 && punctuation.find(t.tok[0]) != std::u32string::npos) return Ortho::kFalse;
  const int64_t oc = ortho_of(p, type_no_sentperiod(t));
  if (py_upper(t.tok[0]) && (oc & kLc) && !(oc & kMidUc)) return Ortho::kTrue;
  if (py_lower_char(t.tok[0]) && ((oc & kUc) || !(oc & kBegLc))) return Ortho::kFalse;
  return Ortho::kUnknown;
}

void second_pass(const PunktParameters& p, Token& t1, const Token& t2) {
  if (!t1.period_final) return;
  const std::u32string typ = type_no_period(t1), next_typ = type_no_sentperiod(t2);
  const bool initial = is_initial(t1.tok);
  if (p.collocations.count({typ, next_typ})) {
    t1.sentbreak = false, t1.abbr = true;
    return;
  }
  if ((t1.abbr || t1.ellipsis) && !initial) {
    if (ortho_heuristic(p, t2) == Ortho::kTrue) {
      t1.sentbreak = true;
      return;
    }
    if (py_upper(t2.tok[0]) && p.sent_starters.count(next_typ)) {
      t1.sentbreak = true;
      return;
    }
  }
  if (initial || typ == U"##number##") {
    const Ortho h = ortho_heuristic(p, t2);
    if (h == Ortho::kFalse) {
      t1.sentbreak = false, t1.abbr = true;
      return;
    }
    if (h == Ortho::kUnknown && initial && py_upper(t2.tok[0]) && !(ortho_of(p, next_typ) & kLc)) {
      t1.sentbreak = false, t1.abbr = true;
    }
  }
}

// text_contains_sentbreak: a token marked as a sentence break that is not the last token.
bool contains_sentbreak(const PunktParameters& p, const std::u32string& text) {
  std::vector<Token> toks = tokenize_words(text);
  for (Token& t : toks) first_pass(p, t);
  for (size_t i = 0; i + 1 < toks.size(); ++i) {
    second_pass(p, toks[i], toks[i + 1]);
    if (toks[i].sentbreak) return true;  // toks[i+1] follows it
  }
  return false;
}

// One match of period_context_re: a sentence end at `pos` followed by other punctuation or by
// whitespace and a token (after_tok = [pos + 1, after_end), next_tok starting at next_tok).
struct EndMatch {
  size_t pos, after_end;
  std::optional<size_t> next_tok;
};

std::optional<EndMatch> period_context_at(const std::u32string& s, size_t p) {
  if (!sent_end(s[p]) || p + 1 >= s.size()) return std::nullopt;
  if (non_word(s[p + 1])) return EndMatch{p, p + 2, std::nullopt};
  if (!rx_space(s[p + 1])) return std::nullopt;
  size_t q = p + 1;
  while (q < s.size() && rx_space(s[q])) ++q;
  if (q == s.size()) return std::nullopt;
  size_t r = q;
  while (r < s.size() && !rx_space(s[r])) ++r;
  return EndMatch{p, r, q};
}

bool ascii_whitespace(char32_t c) { return c == U' ' || c == U'\t' || c == U'\n' || c == U'\r' || c == U'\x0b' || c == U'\x0c'; }

std::u32string slice(const std::u32string& s, size_t b, size_t e) {
  b = std::min(b, s.size()), e = std::min(e, s.size());
  return b < e ? s.substr(b, e - b) : std::u32string();
}

size_t rstrip_length(const std::u32string& s, size_t b, size_t e) {
  while (e > b && py_isspace(s[e - 1])) --e;
  return e - b;
}

// _slices_from_text over _match_potential_end_contexts: each candidate end with the word before it
// (back to the last ASCII whitespace), overlapping candidates dropped as nltk drops them.
std::vector<std::pair<size_t, size_t>> slices_from_text(const PunktParameters& p, const std::u32string& s) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t last_break = 0;
  auto consider = [&](const EndMatch& m, size_t ws, size_t we) {
    std::u32string context = slice(s, ws, we);
    context += s[m.pos];
    context += slice(s, m.pos + 1, m.after_end);
    if (contains_sentbreak(p, context)) {
      out.emplace_back(last_break, m.pos + 1);
      last_break = m.next_tok ? *m.next_tok : m.pos + 1;
    }
  };
  size_t prev_start = 0, prev_stop = 0;
  std::optional<EndMatch> prev;
  for (size_t pos = 0; pos < s.size(); ++pos) {
    std::optional<EndMatch> m = period_context_at(s, pos);
    if (!m) continue;
    // _get_last_whitespace_index(text[prev_stop:pos]): 0 both for none and for index 0.
    size_t idx = 0;
    for (size_t i = pos; i-- > prev_stop;)
      if (ascii_whitespace(s[i])) {
        idx = i - prev_stop;
        break;
      }
    const size_t word_start = idx ? idx + prev_stop + 1 : prev_start;
    if (prev && prev_stop <= word_start) consider(*prev, prev_start, prev_stop);
    prev = m;
    prev_start = word_start, prev_stop = pos;
  }
  if (prev) consider(*prev, prev_start, prev_stop);
  out.emplace_back(last_break, rstrip_length(s, 0, s.size()));
  return out;
}

// re_boundary_realignment.match(text[b:e]): closing punctuation (as few as possible) followed by
// whitespace, "--" or the end of a line; the match's end, if any.
std::optional<size_t> realignment_match(const std::u32string& s, size_t b, size_t e) {
  e = std::min(e, s.size());
  for (size_t k = b; k < e && closing(s[k]);) {
    ++k;
    if (k < e && rx_space(s[k])) {
      while (k < e && rx_space(s[k])) ++k;
      return k - b;
    }
    if (k + 1 < e && s[k] == U'-' && s[k + 1] == U'-') return k - b;
    if (k == e || s[k] == U'\n') return k - b;
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::pair<size_t, size_t>> punkt_span_tokenize(const PunktParameters& params, const std::u32string& text) {
  const std::vector<std::pair<size_t, size_t>> slices = slices_from_text(params, text);
  std::vector<std::pair<size_t, size_t>> out;
  auto emit = [&](size_t b, size_t e) {
    b = std::min(b, text.size()), e = std::min(e, text.size());
    out.emplace_back(b, std::max(b, e));
  };
  size_t realign = 0;
  for (size_t i = 0; i < slices.size(); ++i) {
    const size_t b1 = slices[i].first + realign, e1 = slices[i].second;
    const bool nonempty = std::min(b1, text.size()) < std::min(e1, text.size());
    if (i + 1 == slices.size()) {
      if (nonempty) emit(b1, e1);
      continue;
    }
    const auto [b2, e2] = slices[i + 1];
    if (std::optional<size_t> m = realignment_match(text, b2, e2)) {
      emit(b1, b2 + rstrip_length(text, b2, b2 + *m));
      realign = *m;
    } else {
      realign = 0;
      if (nonempty) emit(b1, e1);
    }
  }
  return out;
}

std::vector<std::string> punkt_sent_tokenize(const PunktParameters& params, const std::string& text) {
  const std::u32string u = utf8_to_u32(text, "the text to split into sentences");
  std::vector<std::string> out;
  for (const auto& [b, e] : punkt_span_tokenize(params, u)) out.push_back(u32_to_utf8(u.substr(b, e - b)));
  return out;
}

namespace {

// The lines of a UTF-8 file as Python's text mode iterates them (universal newlines), without
// their terminators.
std::vector<std::u32string> read_lines(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("Punkt parameters: cannot read " + path.string());
  std::stringstream buf;
  buf << in.rdbuf();
  const std::u32string text = utf8_to_u32(buf.str(), path.string());
  std::vector<std::u32string> lines;
  std::u32string cur;
  for (size_t i = 0; i < text.size(); ++i) {
    const char32_t c = text[i];
    if (c == U'\n' || c == U'\r') {
      lines.push_back(cur);
      cur.clear();
      if (c == U'\r' && i + 1 < text.size() && text[i + 1] == U'\n') ++i;
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  return lines;
}

std::vector<std::u32string> split_tabs(const std::u32string& line) {
  std::vector<std::u32string> out;
  size_t b = 0;
  for (;;) {
    size_t e = line.find(U'\t', b);
    out.push_back(line.substr(b, e == std::u32string::npos ? std::u32string::npos : e - b));
    if (e == std::u32string::npos) return out;
    b = e + 1;
  }
}

}  // namespace

PunktParameters load_punkt_params(const std::filesystem::path& dir) {
  PunktParameters p;
  for (const std::u32string& line : read_lines(dir / "abbrev_types.txt")) p.abbrev_types.insert(line);
  for (const std::u32string& line : read_lines(dir / "sent_starters.txt")) p.sent_starters.insert(line);
  // tab2tups: a line with other than two fields is a tuple no (type, type) pair can equal.
  for (const std::u32string& line : read_lines(dir / "collocations.tab")) {
    std::vector<std::u32string> f = split_tabs(line);
    if (f.size() == 2) p.collocations.emplace(f[0], f[1]);
  }
  const std::filesystem::path ortho = dir / "ortho_context.tab";
  size_t lineno = 0;
  for (const std::u32string& line : read_lines(ortho)) {
    ++lineno;
    std::vector<std::u32string> f = split_tabs(line);
    const std::string value = f.size() == 2 ? u32_to_utf8(f[1]) : "";
    char* end = nullptr;
    const long long v = value.empty() ? 0 : std::strtoll(value.c_str(), &end, 10);
    if (f.size() != 2 || value.empty() || *end != '\0')
      throw Error(ortho.string() + ":" + std::to_string(lineno) + ": expected `type<TAB>integer flags`");
    p.ortho_context[f[0]] = v;
  }
  return p;
}

std::filesystem::path find_punkt_tab(const std::string& lang) {
  std::vector<std::filesystem::path> roots;
  if (const char* env = std::getenv("NLTK_DATA")) {
    std::string s = env;
    for (size_t b = 0; b <= s.size();) {
      size_t e = s.find(':', b);
      if (e == std::string::npos) e = s.size();
      if (e > b) roots.emplace_back(s.substr(b, e - b));
      b = e + 1;
    }
  }
  if (const char* home = std::getenv("HOME")) roots.emplace_back(std::filesystem::path(home) / "nltk_data");
  for (const char* r : {"/usr/share/nltk_data", "/usr/local/share/nltk_data", "/usr/lib/nltk_data", "/usr/local/lib/nltk_data"})
    roots.emplace_back(r);
  std::string looked;
  for (const auto& root : roots) {
    const std::filesystem::path dir = root / "tokenizers" / "punkt_tab" / lang;
    if (std::filesystem::is_regular_file(dir / "ortho_context.tab")) return dir;
    looked += "\n  " + dir.string();
  }
  throw Error("nltk's punkt_tab/" + lang + " (Punkt sentence-splitter parameters) not found; looked in:" + looked +
              "\nfetch it with: python -m nltk.downloader punkt_tab   (or set NLTK_DATA to the folder holding tokenizers/)");
}

}  // namespace foxeval
