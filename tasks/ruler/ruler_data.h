// The data RULER's generators read, from where researchers keep it (never downloaded): the essay
// haystack (a folder of .txt, or the Hugging Face cache of baber/paul_graham_essays) and the
// wonderwords word lists, turned into what lm-eval 0.4.13's modules build from them at import.
#pragma once
#include <string>
#include <vector>

namespace foxeval::ruler {

// prepare_niah.get_haystack("essay") over the given essay texts: " ".join(texts), every run of
// Python whitespace made one space, split(" ") (so leading/trailing whitespace gives "" words).
std::vector<std::string> essay_haystack_words(const std::vector<std::string>& essays);

// The .txt files of `dir`, sorted by file name, as essay texts (UTF-8). foxeval::Error naming the
// folder when it is missing or holds no .txt.
std::vector<std::string> read_essay_folder(const std::string& dir);

// The `text` of every row of baber/paul_graham_essays' train split (what lm-eval's get_haystack
// loads), from the local `datasets` cache or the huggingface_hub cache. foxeval::Error listing where
// it looked and the command that fetches it (or --haystack).
std::vector<std::string> read_essays_from_hf_caches();

// One wonderwords asset list (nounlist.txt, adjectivelist.txt, verblist.txt) as wonderwords reads
// it: lines (universal newlines), each right-stripped of whitespace. foxeval::Error naming the file.
std::vector<std::string> read_word_list(const std::string& path);

// The folder holding wonderwords' lists: `flag_dir` when given, else the assets folder of a
// wonderwords package under the Python site-packages foxeval knows (./.venv, /opt/ruler-venv,
// ~/.local). foxeval::Error listing where it looked and `pip install wonderwords`.
std::string find_wonderwords_dir(const std::string& flag_dir);

// prepare_niah.WORDS: sorted(set(f"{adj}-{noun}" for adj in adjectives for noun in nouns)).
std::vector<std::string> niah_words(const std::vector<std::string>& adjectives, const std::vector<std::string>& nouns);

}  // namespace foxeval::ruler
