// LongBench's scorer, reimplemented from the official metrics.py and eval.py (forgetting-transformer
// eval/longbench, adapted from THUDM/LongBench v1; commit 883f260c) so that scores are bit-equal.
//
// eval.py, as the paper ran it: every dataset's prediction is cut to its first line after
// stripping leading '\n' (the upstream restriction to trec/triviaqa/samsum/lsht is commented out
// there), the metric is the max over the record's answers, and every record is scored with the
// all_classes of the LAST record of the file (eval.py overwrites it while reading; LongBench's
// files carry the same list on every record).
//
// The Chinese metrics qa_f1_zh_score and rouge_zh_score segment words with jieba.cut(text,
// cut_all=False) of jieba 0.42.1: tasks/longbench/jieba.h, a port of its algorithm reading
// Debian's python3-jieba data.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace foxeval::longbench {

// metrics.py's metric for `dataset` (eval.py's dataset2metric) on one (prediction, answer) pair,
// with no first-line cut. foxeval::Error for an unknown dataset, for a
// passage_retrieval answer without "Paragraph N" / "段落N" (metrics.py: IndexError) and for
// invalid UTF-8.
double metric(const std::string& dataset, const std::string& prediction, const std::string& answer,
              const std::vector<std::string>& all_classes);

// eval.py's scorer: round(100 * total / len(predictions), 2) with Python's round. The vectors are
// per record; foxeval::Error when their sizes differ or there are no records (eval.py divides by 0).
// One record's score as eval.py's scorer computes it (0..1): the prediction's first line (for the
// tasks eval.py cuts), the best metric over its answers; `all_classes` as scorer passes them (the
// last record's list).
double record_score(const std::string& dataset, const std::string& prediction, const std::vector<std::string>& answers,
                    const std::vector<std::string>& all_classes);

double score_dataset(const std::string& dataset, const std::vector<std::string>& predictions,
                     const std::vector<std::vector<std::string>>& answers,
                     const std::vector<std::vector<std::string>>& all_classes);

// eval.py's scorer_e (LongBench-E): {"0-4k": .., "4-8k": .., "8k+": ..} by length < 4000, < 8000,
// else; each round(100 * np.mean(bucket), 2) with NumPy's mean (pairwise sum) and NumPy's round
// (rint(x * 100) / 100, unlike Python's). An empty bucket is NaN, as np.mean([]) gives and
// json.dump writes it (`NaN`); nlohmann::json's dump() would print it as null, so a writer that
// must match eval.py's result.json prints NaN itself.
nlohmann::json score_dataset_e(const std::string& dataset, const std::vector<std::string>& predictions,
                               const std::vector<std::vector<std::string>>& answers,
                               const std::vector<std::vector<std::string>>& all_classes,
                               const std::vector<int64_t>& lengths);

// The metrics of metrics.py, for tests and for callers that need one directly.
double qa_f1_score(const std::string& prediction, const std::string& ground_truth);
double rouge_score(const std::string& prediction, const std::string& ground_truth);
double classification_score(const std::string& prediction, const std::string& ground_truth,
                            const std::vector<std::string>& all_classes);
double retrieval_score(const std::string& prediction, const std::string& ground_truth);
double retrieval_zh_score(const std::string& prediction, const std::string& ground_truth);
double count_score(const std::string& prediction, const std::string& ground_truth);
double code_sim_score(const std::string& prediction, const std::string& ground_truth);
double qa_f1_zh_score(const std::string& prediction, const std::string& ground_truth);
double rouge_zh_score(const std::string& prediction, const std::string& ground_truth);

// normalize_zh_answer(s): lower, drop string.punctuation and metrics.py's Chinese punctuation,
// drop every whitespace character.
std::string normalize_zh_answer(const std::string& s);

// True for the datasets eval.py scores with classification_score (they need all_classes).
bool uses_all_classes(const std::string& dataset);
// foxeval::Error naming the known datasets unless `dataset` is in eval.py's dataset2metric
// (LongBench's 21 tasks).
void require_metric(const std::string& dataset);

// normalize_answer(s).split(): lower, drop string.punctuation (ASCII only), articles a/an/the as
// whole \w words replaced by a space, split on Unicode whitespace.
std::vector<std::string> normalize_answer_tokens(const std::string& s);

// prediction.lstrip('\n').split('\n')[0].
std::string first_line(const std::string& prediction);

}  // namespace foxeval::longbench
