#include "tasks/niah/niah_prompts.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "data/model_files.h"
#include "data/errors.h"
#include "data/resources.h"
#include "data/python/json_escape.h"
#include "data/json_file.h"
#include "data/utf8.h"

namespace fs = std::filesystem;

namespace foxeval::niah {
namespace {

std::string string_field(const nlohmann::json& j, const std::string& key, const std::string& file) {
  if (!j.contains(key) || !j[key].is_string()) throw Error(fmt::format("{}: field '{}' must be a string", file, key));
  return j[key].get<std::string>();
}

std::vector<int64_t> grid_field(const nlohmann::json& j, const std::string& key, const std::string& file) {
  try {
    const nlohmann::json& g = j.at(key);
    return linspace_rounded(g.at("min").get<double>(), g.at("max").get<double>(), g.at("num").get<int64_t>());
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: field '{}' must be {{min, max, num}} ({})", file, key, e.what()));
  }
}

// Python's slice end: a[:k] keeps min(k, n) items, or n + k (at least 0) for a negative k.
size_t py_slice_end(size_t n, int64_t k) {
  if (k >= 0) return std::min(n, static_cast<size_t>(k));
  return static_cast<size_t>(std::max<int64_t>(0, static_cast<int64_t>(n) + k));
}

}  // namespace

std::string definition_dir() {
  return find_resource({"the NIAH definition files", "tasks/niah", {"prompt.json"}, "FOXEVAL_NIAH_DIR", ""});
}

const std::vector<std::string>& known_modes() {
  static const std::vector<std::string> modes = {"standard", "easy"};
  return modes;
}

Mode load_mode(const std::string& name) {
  const auto& known = known_modes();
  if (std::find(known.begin(), known.end(), name) == known.end())
    throw Error(fmt::format("--mode: unknown NIAH mode '{}' (known: {})", name, fmt::join(known, ", ")));
  const std::string file = (fs::path(definition_dir()) / (name + ".json")).string();
  const nlohmann::json j = read_json(file);
  Mode m;
  m.name = name;
  m.needle = string_field(j, "needle", file);
  m.retrieval_question = string_field(j, "retrieval_question", file);
  m.judge_question = string_field(j, "judge_question", file);
  m.judge_reference = string_field(j, "judge_reference", file);
  m.answer = string_field(j, "answer", file);
  m.lengths = grid_field(j, "lengths", file);
  m.depths = grid_field(j, "depths", file);
  return m;
}

PromptDefinition load_prompt_definition() {
  const std::string file = (fs::path(definition_dir()) / "prompt.json").string();
  const nlohmann::json j = read_json(file);
  PromptDefinition d;
  d.question_suffix = string_field(j, "question_suffix", file);
  d.file_prefix = string_field(j, "file_prefix", file);
  if (!j.contains("final_context_length_buffer") || !j["final_context_length_buffer"].is_number_integer())
    throw Error(file + ": field 'final_context_length_buffer' must be an integer");
  d.buffer = j["final_context_length_buffer"].get<int64_t>();
  if (d.question_suffix.find("{question}") == std::string::npos)
    throw Error(file + ": 'question_suffix' must hold {question}");
  return d;
}

std::vector<int64_t> linspace_rounded(double min, double max, int64_t num) {
  if (num < 1) throw Error(fmt::format("a grid needs at least one value (num = {})", num));
  std::vector<int64_t> v;
  // numpy: start + i * step, the last value exactly `max`; np.round rounds half to even, which
  // std::nearbyint does in the default rounding mode.
  const double step = num > 1 ? (max - min) / static_cast<double>(num - 1) : 0.0;
  for (int64_t i = 0; i < num; ++i) {
    const double x = (i == num - 1 && num > 1) ? max : min + static_cast<double>(i) * step;
    v.push_back(static_cast<int64_t>(std::nearbyint(x)));
  }
  return v;
}

void validate_grid(const std::vector<int64_t>& lengths, const std::vector<int64_t>& depths, int64_t buffer) {
  if (lengths.empty()) throw Error("--lengths: no context length given");
  if (depths.empty()) throw Error("--depths: no depth given");
  std::set<int64_t> seen;
  for (int64_t L : lengths) {
    // A context is built in memory from the repeated haystack: far beyond any evaluated length is a typo.
    if (L > (int64_t(1) << 20))
      throw Error(fmt::format("--lengths: {} is out of range: a context length is at most {} tokens", L, int64_t(1) << 20));
    // The official code would cut the context to L - 200 <= 0 tokens: an empty or backwards haystack.
    if (L <= buffer)
      throw Error(fmt::format("--lengths: {} is not above the {}-token buffer prompt.py keeps free for the question "
                              "and answer (final_context_length_buffer)", L, buffer));
    if (!seen.insert(L).second) throw Error(fmt::format("--lengths: {} is given twice", L));
  }
  seen.clear();
  for (int64_t D : depths) {
    if (D < 0 || D > 100) throw Error(fmt::format("--depths: {} is outside 0..100 (percent of the document)", D));
    if (!seen.insert(D).second) throw Error(fmt::format("--depths: {} is given twice", D));
  }
}

std::vector<std::string> haystack_files(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(fmt::format("--haystack {}: not a folder", dir));
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    // glob's "*" never matches a leading "."; the suffix is matched case-sensitively on Linux.
    if (name.empty() || name[0] == '.' || name.size() < 4 || name.compare(name.size() - 4, 4, ".txt") != 0) continue;
    names.push_back(name);
  }
  if (ec) throw Error(fmt::format("--haystack {}: cannot list the folder ({})", dir, ec.message()));
  if (names.empty()) throw Error(fmt::format("--haystack {}: no .txt files (the haystack is DIR/*.txt)", dir));
  std::sort(names.begin(), names.end());  // char_traits<char> compares as unsigned: code-point order of UTF-8
  std::vector<std::string> paths;
  for (const std::string& n : names) {
    // A plain name of the folder; a link is followed (the user's own), a FIFO or device refused.
    const fs::path p = model_file(dir, n, fmt::format("--haystack {}", dir));
    if (!fs::is_regular_file(p, ec)) throw Error(fmt::format("--haystack {}: {} is not a readable file", dir, n));
    paths.push_back(p.string());
  }
  return paths;
}

std::string read_haystack_file(const std::string& path) {
  const std::string bytes = read_text_file(path);
  const size_t bad = utf8::first_invalid(bytes);
  if (bad != std::string::npos)
    throw Error(fmt::format("{}: not UTF-8 at byte {} (the official code reads the haystack as UTF-8 text)", path, bad));
  std::string text;
  text.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] == '\r') {
      text.push_back('\n');
      if (i + 1 < bytes.size() && bytes[i + 1] == '\n') ++i;
    } else {
      text.push_back(bytes[i]);
    }
  }
  return text;
}

std::string cell_stem(const std::string& prefix, int64_t length, int64_t depth) {
  return fmt::format("{}_len_{}_depth_{}", prefix, length, depth * 100);
}

std::string prompt_file_text(const std::string& escaped_user_message) {
  return "[{\"role\": \"system\", \"content\": \"\"}, {\"role\": \"user\", \"content\": \"" + escaped_user_message +
         "\"}]";
}

PromptBuilder::PromptBuilder(const Gpt2Tokenizer& tok, const std::string& haystack_dir,
                             const std::vector<int64_t>& lengths, std::string needle, std::string retrieval_question,
                             PromptDefinition def)
    : tok_(tok), needle_(std::move(needle)), question_(std::move(retrieval_question)), def_(std::move(def)) {
  if (lengths.empty()) throw Error("--lengths: no context length given");
  const int64_t max_length = *std::max_element(lengths.begin(), lengths.end());
  std::vector<std::string> texts;
  size_t total = 0;
  for (const std::string& f : haystack_files(haystack_dir)) {
    texts.push_back(read_haystack_file(f));
    total += texts.back().size();
  }
  if (total == 0) throw Error(fmt::format("--haystack {}: its .txt files hold no text", haystack_dir));
  // As read_context_files: whole passes over the files, the length counted with BOS after each.
  for (;;) {
    haystack_tokens_ = tok_.encode(haystack_, true, true);
    if (static_cast<int64_t>(haystack_tokens_.size()) >= max_length) break;
    for (const std::string& t : texts) haystack_ += t;
  }
  needle_tokens_ = tok_.encode(needle_, false, true);
  period_ = tok_.encode(".", false, true);  // [13]: the walk back stops after a "." token
}

std::string PromptBuilder::escaped_context(int64_t length, int64_t depth) {
  auto it = trimmed_.find(length);
  if (it == trimmed_.end()) {
    // encode_and_trim: counted with BOS, decoded skipping it; an untrimmed haystack is kept as is.
    std::string trimmed = json_escape(haystack_);
    if (static_cast<int64_t>(haystack_tokens_.size()) > length)
      trimmed = python_reescape(
          tok_.decode(std::vector<int64_t>(haystack_tokens_.begin(), haystack_tokens_.begin() + length), false, true));
    it = trimmed_.emplace(length, tok_.encode(trimmed, false, false)).first;
  }
  std::vector<int64_t> ctx = it->second;
  const std::vector<int64_t>& needle = needle_tokens_;
  const int64_t budget = length - def_.buffer;
  if (static_cast<int64_t>(ctx.size() + needle.size()) > budget)
    ctx.resize(py_slice_end(ctx.size(), budget - static_cast<int64_t>(needle.size())));

  std::vector<int64_t> out;
  if (depth == 100) {
    out = ctx;
    out.insert(out.end(), needle.begin(), needle.end());
  } else {
    // int(len * (depth / 100)) in float64, truncated, as Python.
    int64_t point = static_cast<int64_t>(static_cast<double>(ctx.size()) * (static_cast<double>(depth) / 100.0));
    auto is_period = [&](int64_t id) { return std::find(period_.begin(), period_.end(), id) != period_.end(); };
    while (point > 0 && !is_period(ctx[static_cast<size_t>(point - 1)])) --point;
    out.assign(ctx.begin(), ctx.begin() + point);
    out.insert(out.end(), needle.begin(), needle.end());
    out.insert(out.end(), ctx.begin() + point, ctx.end());
  }
  return python_reescape(tok_.decode(out, false, true));
}

std::string PromptBuilder::escaped_user_message(int64_t length, int64_t depth) {
  std::string suffix = def_.question_suffix;
  suffix.replace(suffix.find("{question}"), 10, question_);
  return escaped_context(length, depth) + json_escape(suffix);
}

std::vector<int64_t> PromptBuilder::prompt_ids(int64_t length, int64_t depth) {
  return tok_.encode(escaped_user_message(length, depth), true, false);
}

}  // namespace foxeval::niah
