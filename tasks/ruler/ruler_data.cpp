#include "tasks/ruler/ruler_data.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "data/datasets_cache.h"
#include "data/dataset_rows.h"
#include "data/errors.h"
#include "data/python/unicode.h"

namespace fs = std::filesystem;

namespace foxeval::ruler {

namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path.string());
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace

std::vector<std::string> essay_haystack_words(const std::vector<std::string>& essays) {
  std::u32string joined;
  for (size_t i = 0; i < essays.size(); ++i) {
    if (i) joined += U' ';
    joined += utf8_to_u32(essays[i], "essay " + std::to_string(i));
  }
  std::vector<std::string> words;
  std::u32string cur;
  bool in_space = false;
  for (char32_t c : joined) {
    if (py_isspace(c)) {
      if (!in_space) words.push_back(u32_to_utf8(cur)), cur.clear();
      in_space = true;
    } else {
      cur += c;
      in_space = false;
    }
  }
  words.push_back(u32_to_utf8(cur));
  return words;
}

std::vector<std::string> read_essay_folder(const std::string& dir) {
  if (!fs::is_directory(dir)) throw Error("--haystack " + dir + ": not a folder (expected a folder of .txt essays)");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".txt") files.push_back(e.path());
  if (files.empty()) throw Error("--haystack " + dir + ": no .txt files in it");
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) { return a.filename().string() < b.filename().string(); });
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(read_text(f));
  return out;
}

std::vector<std::string> read_essays_from_hf_caches() {
  const HfSplit want{"baber/paul_graham_essays", "", "train"};
  std::vector<std::string> looked;
  std::optional<HfSplitFiles> found = find_in_datasets_cache(want, &looked);
  if (!found) found = find_in_hub_cache(want, &looked);
  if (!found) {
    std::string places;
    for (const std::string& l : looked) places += "\n  " + l;
    throw Error("the essays (Hugging Face dataset baber/paul_graham_essays, split train) are in no local cache (foxeval never "
                "downloads). Looked in:" + places +
                "\nFetch them on a machine with network: python -c \"import datasets; "
                "datasets.load_dataset('baber/paul_graham_essays', split='train')\"\nor pass --haystack DIR (a folder of .txt essays)");
  }
  std::vector<size_t> sizes;
  const std::vector<nlohmann::ordered_json> rows = read_dataset_rows(found->files, &sizes);
  std::vector<std::string> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].contains("text") || !rows[i].at("text").is_string())
      throw Error(dataset_row_where(found->files, sizes, i) + ": expected a string field 'text' (baber/paul_graham_essays)");
    out.push_back(rows[i].at("text").get<std::string>());
  }
  if (out.empty()) throw Error(found->folder + ": baber/paul_graham_essays' train split has no rows");
  return out;
}

std::vector<std::string> read_word_list(const std::string& path) {
  const std::u32string text = utf8_to_u32(read_text(path), path);
  std::vector<std::string> out;
  std::u32string cur;
  auto flush = [&] {
    size_t e = cur.size();
    while (e > 0 && py_isspace(cur[e - 1])) --e;
    out.push_back(u32_to_utf8(cur.substr(0, e)));
    cur.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == U'\n' || text[i] == U'\r') {
      if (text[i] == U'\r' && i + 1 < text.size() && text[i + 1] == U'\n') ++i;
      flush();
    } else {
      cur += text[i];
    }
  }
  if (!cur.empty()) flush();
  return out;
}

std::string find_wonderwords_dir(const std::string& flag_dir) {
  auto holds = [](const fs::path& d) {
    return fs::is_regular_file(d / "nounlist.txt") && fs::is_regular_file(d / "adjectivelist.txt") &&
           fs::is_regular_file(d / "verblist.txt");
  };
  if (!flag_dir.empty()) {
    if (!holds(flag_dir))
      throw Error("--words " + flag_dir + ": expected wonderwords' nounlist.txt, adjectivelist.txt and verblist.txt in it");
    return flag_dir;
  }
  std::vector<fs::path> roots = {".venv/lib", "/opt/ruler-venv/lib", "/usr/lib", "/usr/local/lib"};
  if (const char* home = std::getenv("HOME")) roots.push_back(fs::path(home) / ".local/lib");
  std::string looked;
  for (const auto& root : roots) {
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
      looked += "\n  " + root.string() + "/python3*/{site,dist}-packages/wonderwords/assets";
      continue;
    }
    for (const auto& py : fs::directory_iterator(root, ec)) {
      if (py.path().filename().string().rfind("python3", 0) != 0) continue;
      for (const char* sp : {"site-packages", "dist-packages"}) {
        const fs::path d = py.path() / sp / "wonderwords" / "assets";
        if (holds(d)) return d.string();
        looked += "\n  " + d.string();
      }
    }
  }
  throw Error("wonderwords' word lists not found; looked in:" + looked +
              "\ninstall them with: pip install wonderwords   (or pass --words DIR holding nounlist.txt, adjectivelist.txt, verblist.txt)");
}

std::vector<std::string> niah_words(const std::vector<std::string>& adjectives, const std::vector<std::string>& nouns) {
  std::vector<std::string> words;
  words.reserve(adjectives.size() * nouns.size());
  for (const std::string& a : adjectives)
    for (const std::string& n : nouns) words.push_back(a + "-" + n);
  // Python sorts str by code point; UTF-8 bytes compared unsigned sort the same way.
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return words;
}

}  // namespace foxeval::ruler
