#include "tasks/ruler/niah.h"

#include <algorithm>
#include <optional>

#include "data/errors.h"
#include "data/json_file.h"
#include "data/python/numpy_random.h"
#include "data/python/str_strip.h"
#include "data/python/unicode.h"
#include "tasks/ruler/replace_all.h"

namespace foxeval::ruler {

namespace {

std::string join(const std::vector<std::string>& parts, const std::string& sep, size_t b = 0, size_t e = SIZE_MAX) {
  e = std::min(e, parts.size());
  std::string out;
  for (size_t i = b; i < e; ++i) {
    if (i > b) out += sep;
    out += parts[i];
  }
  return out;
}

// text.strip(); strict UTF-8 (an invalid haystack is an error naming it).
std::string strip_haystack(const std::string& s) { return u32_to_utf8(py_strip(utf8_to_u32(s, "haystack text"))); }

// generate_random(type_needle).
std::string generate_random(const std::string& type, const NiahData& data, PythonRandom& rng) {
  if (type == "numbers") return std::to_string(rng.randint(1000000, 9999999));
  if (type == "words") return rng.choice(*data.words);
  if (type == "uuids") return python_uuid4_string(rng.getrandbits_words(128));
  throw Error("ruler: needle type '" + type + "' is not one of numbers, words, uuids");
}

struct InputOutput {
  std::string input;
  std::vector<std::string> answers;
  std::string query;
};

const std::vector<std::string>& essay_sentences(NiahData& data, size_t num_haystack) {
  auto it = data.sentences.find(num_haystack);
  if (it != data.sentences.end()) return it->second;
  const std::string text = join(*data.essay_words, " ", 0, num_haystack);
  return data.sentences[num_haystack] = punkt_sent_tokenize(*data.punkt, strip_haystack(text));
}

// generate_input_output(num_haystack, ...). Throws foxeval::Error where Python's random.sample
// raises (more needles than haystack units); the draws before it are consumed, as in Python.
InputOutput generate_input_output(const NiahDefinition& def, const NiahTask& t, NiahData& data, size_t num_haystack,
                                  int num_needle_k, PythonRandom& rng) {
  std::vector<std::string> keys, needles;
  std::vector<std::vector<std::string>> values;
  for (int k = 0; k < num_needle_k; ++k) {
    keys.push_back(generate_random(t.needle_k, data, rng));
    std::vector<std::string> value;
    for (int v = 0; v < t.num_needle_v; ++v) {
      value.push_back(generate_random(t.needle_v, data, rng));
      needles.push_back(python_format(def.needle, {{"type_needle_v", t.needle_v}, {"key", keys.back()}, {"value", value.back()}}));
    }
    values.push_back(value);
  }
  PythonRandom(def.needle_shuffle_seed).shuffle(needles);

  std::string context;
  if (t.haystack == "essay") {
    const std::vector<std::string>& sents = essay_sentences(data, num_haystack);
    std::vector<int64_t> positions;
    for (size_t i : rng.sample_indices(def.depths.size(), needles.size()))
      positions.push_back(static_cast<int64_t>(static_cast<double>(sents.size()) * (static_cast<double>(def.depths[i]) / 100.0)));
    std::sort(positions.begin(), positions.end());
    positions.insert(positions.begin(), 0);
    positions.push_back(static_cast<int64_t>(sents.size()));
    std::vector<std::string> pieces;
    for (size_t i = 1; i < positions.size(); ++i) {
      pieces.push_back(join(sents, " ", static_cast<size_t>(positions[i - 1]), static_cast<size_t>(std::max(positions[i - 1], positions[i]))));
      if (i - 1 < needles.size()) pieces.push_back(needles[i - 1]);
    }
    context = join(pieces, " ");
  } else {
    std::vector<std::string> sentences;
    if (t.haystack == "repeat") {
      sentences.assign(num_haystack, def.repeat_haystack);
    } else if (t.haystack == "needle") {
      for (size_t i = 0; i < num_haystack; ++i) {
        std::string key = generate_random(t.needle_k, data, rng);
        std::string value = generate_random(t.needle_v, data, rng);
        sentences.push_back(python_format(def.needle, {{"type_needle_v", t.needle_v}, {"key", key}, {"value", value}}));
      }
    } else {
      throw Error("ruler: haystack '" + t.haystack + "' is not one of essay, repeat, needle");
    }
    if (needles.size() > num_haystack) throw Error("Sample larger than population");
    std::vector<size_t> indexes = rng.sample_indices(num_haystack, needles.size());
    std::sort(indexes.rbegin(), indexes.rend());
    for (size_t i = 0; i < indexes.size(); ++i) sentences.insert(sentences.begin() + static_cast<long>(indexes[i]), needles[i]);
    context = join(sentences, "\n");
  }

  InputOutput io;
  std::vector<std::string> queries;
  for (size_t i : rng.sample_indices(static_cast<size_t>(num_needle_k), static_cast<size_t>(t.num_needle_q))) {
    queries.push_back(keys[i]);
    io.answers.insert(io.answers.end(), values[i].begin(), values[i].end());
  }
  io.query = queries.size() > 1 ? join(queries, ", ", 0, queries.size() - 1) + ", and " + queries.back() : queries[0];
  std::string templ = def.template_text, type_v = t.needle_v;
  if (t.num_needle_q * t.num_needle_v == 1) {
    for (const auto& [from, to] : def.single_answer_rewrites) templ = replace_all(templ, from, to);
    type_v.pop_back();  // "numbers" -> "number"
  }
  io.input = python_format(templ, {{"type_needle_v", type_v}, {"context", context}, {"query", io.query}});
  return io;
}

}  // namespace

std::string python_format(const std::string& templ, const std::map<std::string, std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < templ.size(); ++i) {
    const char c = templ[i];
    if ((c == '{' || c == '}') && i + 1 < templ.size() && templ[i + 1] == c) {
      out += c, ++i;
    } else if (c == '{') {
      const size_t e = templ.find('}', i);
      if (e == std::string::npos) throw Error("template: unmatched '{' in: " + templ.substr(0, 60));
      auto it = fields.find(templ.substr(i + 1, e - i - 1));
      if (it == fields.end()) throw Error("template: unknown field {" + templ.substr(i + 1, e - i - 1) + "}");
      out += it->second;
      i = e;
    } else if (c == '}') {
      throw Error("template: single '}' in: " + templ.substr(0, 60));
    } else {
      out += c;
    }
  }
  return out;
}

std::vector<RulerDoc> niah_samples(const NiahDefinition& def, const NiahTask& t, NiahData& data,
                                   const TokenCounter& count_tokens, int64_t max_len, PythonRandom& rng) {
  const int num_needle_k = std::max(t.num_needle_k, t.num_needle_q);
  const int64_t num_needles = static_cast<int64_t>(num_needle_k) * t.num_needle_v;
  const int64_t ttg = def.tokens_to_generate;
  int64_t incremental = t.haystack == "essay" ? 500 : 25;
  if (t.haystack != "essay" && max_len < 4096) incremental = 5;
  const int64_t essay_units = t.haystack == "essay" ? static_cast<int64_t>(data.essay_words->size()) : 0;

  // The sizing loop: grow the haystack until the prompt and answers pass the length. Each trial
  // draws needles from rng, as Python's does.
  int64_t num_haystack = std::max(incremental, num_needles);
  int64_t total_tokens = 0;
  while (total_tokens + ttg < max_len) {
    InputOutput io = generate_input_output(def, t, data, static_cast<size_t>(num_haystack), num_needle_k, rng);
    total_tokens = static_cast<int64_t>(count_tokens(io.input + join(io.answers, " ")));
    if (total_tokens + ttg > max_len) {
      num_haystack -= incremental;
      break;
    }
    if (t.haystack == "essay" && num_haystack > essay_units) {
      num_haystack = essay_units;
      break;
    }
    if (num_haystack > max_len)
      throw Error("ruler " + t.name + ": the haystack grew past " + std::to_string(max_len) + " units without reaching " +
                  std::to_string(max_len) + " tokens (last: " + std::to_string(total_tokens) + ")");
    num_haystack += incremental;
  }
  num_haystack = std::max(num_haystack, num_needles);

  std::vector<RulerDoc> docs;
  for (int index = 0; index < def.num_samples; ++index) {
    std::optional<InputOutput> sample;
    int64_t length = 0;
    for (int64_t used = num_haystack; used > 0; used -= incremental) {
      try {
        InputOutput io = generate_input_output(def, t, data, static_cast<size_t>(used), num_needle_k, rng);
        length = static_cast<int64_t>(count_tokens(io.input)) + ttg;
        if (length <= max_len) {
          sample = std::move(io);
          break;
        }
      } catch (const Error&) {
        // Python's generator catches any failure and tries a smaller haystack.
      }
    }
    if (!sample) continue;  // lm-eval skips it (and warns)
    RulerDoc d;
    d.index = index;
    d.input = std::move(sample->input);
    d.outputs = std::move(sample->answers);
    d.length = length;
    d.max_length = max_len;
    std::string type_v = t.needle_v;
    if (t.num_needle_q * t.num_needle_v == 1)
      d.gen_prefix = "The special magic " + type_v.substr(0, type_v.size() - 1) + " for " + sample->query + " mentioned in the provided text is";
    else
      d.gen_prefix = "The special magic " + type_v + " for " + sample->query + " mentioned in the provided text are";
    if (d.outputs.empty() || d.input.find(d.outputs[0]) == std::string::npos)
      throw Error("ruler " + t.name + ": needle not in input (sample " + std::to_string(index) + ")");
    docs.push_back(std::move(d));
  }
  if (docs.empty())
    throw Error("ruler " + t.name + ": could not generate any sample at length " + std::to_string(max_len) +
                ": it leaves no room for the template, " + std::to_string(num_needles) + " needle(s) and " +
                std::to_string(ttg) + " generated tokens; use longer lengths");
  return docs;
}

NiahDefinition load_niah_definition(const std::string& path) {
  const nlohmann::json j = read_json(path);
  auto field = [&](const nlohmann::json& o, const char* key) -> const nlohmann::json& {
    if (!o.is_object() || !o.contains(key)) throw Error(path + ": missing field '" + key + "'");
    return o.at(key);
  };
  try {
    const nlohmann::json& n = field(j, "niah");
    NiahDefinition d;
    d.template_text = field(n, "template").get<std::string>();
    d.needle = field(n, "needle").get<std::string>();
    d.repeat_haystack = field(n, "repeat_haystack").get<std::string>();
    for (const auto& r : field(n, "single_answer_rewrites")) d.single_answer_rewrites.emplace_back(r.at(0), r.at(1));
    d.num_samples = field(n, "num_samples").get<int>();
    d.tokens_to_generate = field(n, "tokens_to_generate").get<int>();
    d.needle_shuffle_seed = field(n, "needle_shuffle_seed").get<uint64_t>();
    const nlohmann::json& dp = field(n, "depths");
    d.depths = numpy_round_linspace(field(dp, "start").get<double>(), field(dp, "stop").get<double>(), field(dp, "num").get<int>());
    for (const auto& [name, o] : field(n, "tasks").items()) {
      NiahTask t;
      t.name = name;
      t.haystack = field(o, "haystack").get<std::string>();
      t.needle_k = field(o, "needle_k").get<std::string>();
      t.needle_v = field(o, "needle_v").get<std::string>();
      t.num_needle_k = o.value("num_needle_k", 1);
      t.num_needle_v = o.value("num_needle_v", 1);
      t.num_needle_q = o.value("num_needle_q", 1);
      d.tasks[name] = t;
    }
    return d;
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace foxeval::ruler
