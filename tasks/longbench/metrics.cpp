// metrics.py's per-pair metrics and eval.py's dataset2metric.
#include "tasks/longbench/metrics.h"

#include <algorithm>
#include <map>

#include "data/errors.h"
#include "tasks/longbench/jieba.h"
#include "tasks/longbench/rouge.h"
#include "tasks/longbench/sequence_matcher.h"
#include "data/python/unicode.h"

namespace foxeval::longbench {

namespace {

bool ascii_punctuation(char32_t c) {  // Python's string.punctuation
  return c < 0x80 && std::string_view("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool word_char(char32_t c) { return c == U'_' || py_isalnum(c); }  // re's \w on str

// metrics.py's f1_score on token lists: Counter intersection; 0 when nothing is shared.
double token_f1(const std::vector<std::string>& prediction, const std::vector<std::string>& ground_truth) {
  std::map<std::string, int64_t> pred_count, truth_count;
  for (const auto& t : prediction) ++pred_count[t];
  for (const auto& t : ground_truth) ++truth_count[t];
  int64_t num_same = 0;
  for (const auto& [token, count] : pred_count) {
    auto it = truth_count.find(token);
    if (it != truth_count.end()) num_same += std::min(count, it->second);
  }
  if (num_same == 0) return 0.0;
  const double precision = 1.0 * static_cast<double>(num_same) / static_cast<double>(prediction.size());
  const double recall = 1.0 * static_cast<double>(num_same) / static_cast<double>(ground_truth.size());
  return (2 * precision * recall) / (precision + recall);
}

// The share of re.findall(r"\d+", prediction) equal to `id`.
double share_equal(const std::string& prediction, const std::string& id) {
  const std::vector<std::string> numbers = find_decimal_runs(utf8_to_u32(prediction, "prediction"));
  int64_t right = 0;
  for (const auto& n : numbers) right += n == id;
  return numbers.empty() ? 0.0 : static_cast<double>(right) / static_cast<double>(numbers.size());
}

// re.findall(marker + r"(\d+)", ground_truth)[0]; metrics.py raises IndexError when absent.
std::string paragraph_id(const std::string& ground_truth, const std::u32string& marker, const char* metric_name) {
  const std::u32string gt = utf8_to_u32(ground_truth, "answer");
  for (size_t pos = gt.find(marker); pos != std::u32string::npos; pos = gt.find(marker, pos + 1)) {
    size_t end = pos + marker.size();
    while (end < gt.size() && py_isdecimal(gt[end])) ++end;
    if (end > pos + marker.size()) return u32_to_utf8(gt.substr(pos + marker.size(), end - pos - marker.size()));
  }
  throw Error(std::string(metric_name) + ": the answer \"" + ground_truth + "\" names no paragraph (\"" +
              u32_to_utf8(marker) + "N\"); metrics.py fails with IndexError on it");
}

enum class Metric { kQaF1, kQaF1Zh, kRouge, kRougeZh, kClassification, kRetrieval, kRetrievalZh, kCount, kCodeSim };

const std::map<std::string, Metric>& dataset2metric() {
  static const std::map<std::string, Metric> table = {
      {"narrativeqa", Metric::kQaF1},       {"qasper", Metric::kQaF1},
      {"multifieldqa_en", Metric::kQaF1},   {"multifieldqa_zh", Metric::kQaF1Zh},
      {"hotpotqa", Metric::kQaF1},          {"2wikimqa", Metric::kQaF1},
      {"musique", Metric::kQaF1},           {"dureader", Metric::kRougeZh},
      {"gov_report", Metric::kRouge},       {"qmsum", Metric::kRouge},
      {"multi_news", Metric::kRouge},       {"vcsum", Metric::kRougeZh},
      {"trec", Metric::kClassification},    {"triviaqa", Metric::kQaF1},
      {"samsum", Metric::kRouge},           {"lsht", Metric::kClassification},
      {"passage_retrieval_en", Metric::kRetrieval}, {"passage_count", Metric::kCount},
      {"passage_retrieval_zh", Metric::kRetrievalZh}, {"lcc", Metric::kCodeSim},
      {"repobench-p", Metric::kCodeSim},
  };
  return table;
}

}  // namespace

std::vector<std::string> normalize_answer_tokens(const std::string& s) {
  const std::u32string lowered = py_lower(utf8_to_u32(s, "qa_f1_score text"));
  std::u32string text;
  text.reserve(lowered.size());
  for (char32_t c : lowered)
    if (!ascii_punctuation(c)) text += c;
  // re.sub(r"\b(a|an|the)\b", " ", text): with \b on both sides the match is a whole maximal run
  // of \w characters equal to an article.
  std::u32string no_articles;
  no_articles.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (!word_char(text[i])) {
      no_articles += text[i++];
      continue;
    }
    size_t j = i;
    while (j < text.size() && word_char(text[j])) ++j;
    const std::u32string word = text.substr(i, j - i);
    if (word == U"a" || word == U"an" || word == U"the") no_articles += U' ';
    else no_articles += word;
    i = j;
  }
  // " ".join(text.split()) and then .split() again: the tokens of one split.
  std::vector<std::string> tokens;
  for (const std::u32string& t : py_split(no_articles)) tokens.push_back(u32_to_utf8(t));
  return tokens;
}

double qa_f1_score(const std::string& prediction, const std::string& ground_truth) {
  return token_f1(normalize_answer_tokens(prediction), normalize_answer_tokens(ground_truth));
}

double rouge_score(const std::string& prediction, const std::string& ground_truth) {
  return rouge_l_f(prediction, ground_truth).value_or(0.0);
}

namespace {

// normalize_zh_answer's punctuation: string.punctuation + its cn_punctuation string.
bool zh_punctuation(char32_t c) {
  static const std::u32string cn =
      U"！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～｟｠｢｣､、〃》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟〰〾〿–—‘’‛“”„‟…‧﹏.";
  return ascii_punctuation(c) || cn.find(c) != std::u32string::npos;
}

}  // namespace

std::string normalize_zh_answer(const std::string& s) {
  // white_space_fix(remove_punc(lower(s))): "".join(text.split()) drops every whitespace.
  std::u32string kept;
  for (char32_t c : py_lower(utf8_to_u32(s, "qa_f1_zh_score text")))
    if (!zh_punctuation(c) && !py_isspace(c)) kept += c;
  return u32_to_utf8(kept);
}

double qa_f1_zh_score(const std::string& prediction, const std::string& ground_truth) {
  auto tokens = [](const std::string& text) {
    std::vector<std::string> out;
    for (const std::string& token : jieba_cut(text)) {
      std::string t = normalize_zh_answer(token);
      if (!t.empty()) out.push_back(std::move(t));
    }
    return out;
  };
  return token_f1(tokens(prediction), tokens(ground_truth));
}

double rouge_zh_score(const std::string& prediction, const std::string& ground_truth) {
  auto joined = [](const std::string& text) {
    std::string out;
    bool first = true;
    for (const std::string& token : jieba_cut(text)) {
      if (!first) out += ' ';
      first = false;
      out += token;
    }
    return out;
  };
  return rouge_l_f(joined(prediction), joined(ground_truth), kRougeZhMaxReconDepth).value_or(0.0);
}

double classification_score(const std::string& prediction, const std::string& ground_truth,
                            const std::vector<std::string>& all_classes) {
  // Substring tests on valid UTF-8 bytes agree with Python's on code points.
  std::vector<std::string> em_match_list;
  for (const auto& class_name : all_classes)
    if (prediction.find(class_name) != std::string::npos) em_match_list.push_back(class_name);
  // metrics.py removes from the list while iterating over it: Python's list iterator walks an
  // index, so the element after a removed one is skipped, and remove() drops the FIRST equal
  // element, which may sit before the current one.
  for (size_t index = 0; index < em_match_list.size(); ++index) {
    const std::string match_term = em_match_list[index];
    if (ground_truth.find(match_term) != std::string::npos && match_term != ground_truth)
      em_match_list.erase(std::find(em_match_list.begin(), em_match_list.end(), match_term));
  }
  if (std::find(em_match_list.begin(), em_match_list.end(), ground_truth) != em_match_list.end())
    return 1.0 / static_cast<double>(em_match_list.size());
  return 0.0;
}

double retrieval_score(const std::string& prediction, const std::string& ground_truth) {
  return share_equal(prediction, paragraph_id(ground_truth, U"Paragraph ", "retrieval_score"));
}

double retrieval_zh_score(const std::string& prediction, const std::string& ground_truth) {
  return share_equal(prediction, paragraph_id(ground_truth, U"段落", "retrieval_zh_score"));
}

double count_score(const std::string& prediction, const std::string& ground_truth) {
  return share_equal(prediction, ground_truth);
}

double code_sim_score(const std::string& prediction, const std::string& ground_truth) {
  // The first line after leading '\n' that has no '`', '#' or "//" (comments, fences), else "".
  size_t start = prediction.find_first_not_of('\n');
  std::string line;
  while (start != std::string::npos) {
    const size_t end = prediction.find('\n', start);
    const std::string candidate = prediction.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (candidate.find('`') == std::string::npos && candidate.find('#') == std::string::npos &&
        candidate.find("//") == std::string::npos) {
      line = candidate;
      break;
    }
    start = end == std::string::npos ? end : end + 1;
  }
  return fuzz_ratio(line, ground_truth) / 100.0;
}

std::string first_line(const std::string& prediction) {
  const size_t start = prediction.find_first_not_of('\n');
  if (start == std::string::npos) return "";
  const size_t end = prediction.find('\n', start);
  return prediction.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

void require_metric(const std::string& dataset) {
  const auto& table = dataset2metric();
  if (table.count(dataset)) return;
  std::string known;
  for (const auto& [name, m] : table) known += (known.empty() ? "" : ", ") + name;
  throw Error("longbench: no metric for dataset \"" + dataset + "\" (eval.py's dataset2metric knows " + known + ")");
}

bool uses_all_classes(const std::string& dataset) {
  const auto it = dataset2metric().find(dataset);
  return it != dataset2metric().end() && it->second == Metric::kClassification;
}

double metric(const std::string& dataset, const std::string& prediction, const std::string& answer,
              const std::vector<std::string>& all_classes) {
  require_metric(dataset);
  const auto it = dataset2metric().find(dataset);
  switch (it->second) {
    case Metric::kQaF1: return qa_f1_score(prediction, answer);
    case Metric::kRouge: return rouge_score(prediction, answer);
    case Metric::kClassification: return classification_score(prediction, answer, all_classes);
    case Metric::kRetrieval: return retrieval_score(prediction, answer);
    case Metric::kRetrievalZh: return retrieval_zh_score(prediction, answer);
    case Metric::kCount: return count_score(prediction, answer);
    case Metric::kCodeSim: return code_sim_score(prediction, answer);
    case Metric::kQaF1Zh: return qa_f1_zh_score(prediction, answer);
    case Metric::kRougeZh: return rouge_zh_score(prediction, answer);
  }
  throw Error("longbench: unhandled metric for dataset \"" + dataset + "\"");
}

}  // namespace foxeval::longbench
