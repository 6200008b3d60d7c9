// wikitext's document detokenizer (lm-eval 0.4.4 tasks/wikitext/preprocess_wikitext.py), step
// for step: the plain replacements as str.replace, the bracket rules as re.sub with RE2 (whose
// leftmost-first submatch semantics equal Python's backtracking for these patterns), and Python's
// Unicode \s spelled out, since RE2's \s is ASCII only.
#include <re2/re2.h>

#include <memory>
#include <utility>

#include "tasks/lm_eval/docs.h"
#include "tasks/lm_eval/pystr.h"

namespace foxeval::lm_eval {
namespace {

struct BracketRule {
  std::unique_ptr<RE2> pattern;
  std::string rewrite;
};

// re.sub(r"\(\s*([^\)]*?)\s*\)", r"(\1)") and its [ ], { }, " ", ' ' siblings.
std::vector<BracketRule> make_bracket_rules() {
  const std::string s = kPySpaceClass;
  const auto rule = [&](const std::string& open, const std::string& close, const std::string& not_close,
                        const std::string& rewrite) {
    RE2::Options opt;
    opt.set_log_errors(false);
    return BracketRule{std::make_unique<RE2>(open + s + "*(" + not_close + "*?)" + s + "*" + close, opt), rewrite};
  };
  std::vector<BracketRule> rules;
  rules.push_back(rule("\\(", "\\)", "[^\\)]", "(\\1)"));
  rules.push_back(rule("\\[", "\\]", "[^\\]]", "[\\1]"));
  rules.push_back(rule("\\{", "\\}", "[^}]", "{\\1}"));
  rules.push_back(rule("\"", "\"", "[^\"]", "\"\\1\""));
  rules.push_back(rule("'", "'", "[^']", "'\\1'"));
  return rules;
}

}  // namespace

std::string wikitext_detokenizer(const std::string& page) {
  static const std::vector<BracketRule> rules = make_bracket_rules();
  // re.sub(r"/' [0-9]/", r"/'[0-9]/"): the replacement is the literal text "/'[0-9]/" (sic).
  static const RE2 slash_quote_digit("/' [0-9]/");

  std::string s = py_replace(page, "s '", "s'");  // contractions
  RE2::GlobalReplace(&s, slash_quote_digit, "/'[0-9]/");
  // lm-eval's str.replace steps, in its order: number separators, then punctuation.
  static const std::pair<const char*, const char*> kSeparators[] = {
      {" @-@ ", "-"}, {" @,@ ", ","}, {" @.@ ", "."}, {" : ", ": "}, {" ; ", "; "},
      {" . ", ". "},  {" ! ", "! "},  {" ? ", "? "},  {" , ", ", "}};
  // After the double brackets: the miscellaneous ones.
  static const std::pair<const char*, const char*> kMiscellaneous[] = {
      {"= = = =", "===="}, {"= = =", "==="}, {"= =", "=="}, {" \u00b0 ", "\u00b0"},
      {" \n", "\n"},       {"\n ", "\n"},    {" N ", " 1 "}, {" 's", "'s"}};
  for (const auto& [from, to] : kSeparators) s = py_replace(s, from, to);
  for (const BracketRule& r : rules) RE2::GlobalReplace(&s, *r.pattern, r.rewrite);  // double brackets
  for (const auto& [from, to] : kMiscellaneous) s = py_replace(s, from, to);
  return s;
}

}  // namespace foxeval::lm_eval
