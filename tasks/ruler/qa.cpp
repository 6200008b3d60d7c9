#include "tasks/ruler/qa.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "data/errors.h"
#include "data/json_fields.h"
#include "data/json_file.h"
#include "data/python/py_repr.h"
#include "tasks/ruler/sizing.h"

namespace fs = std::filesystem;

namespace foxeval::ruler {

namespace {

const nlohmann::json& field(const nlohmann::json& o, const char* key, const std::string& where) {
  if (!o.is_object() || !o.contains(key)) throw Error(where + ": expected a field '" + key + "'");
  return o.at(key);
}

std::string string_field(const nlohmann::json& o, const char* key, const std::string& where) {
  const nlohmann::json& v = field(o, key, where);
  if (!v.is_string()) throw Error(where + ": field '" + key + "' is not a string");
  return v.get<std::string>();
}

const nlohmann::json& array_field(const nlohmann::json& o, const char* key, const std::string& where) {
  const nlohmann::json& v = field(o, key, where);
  if (!v.is_array()) throw Error(where + ": field '" + key + "' is not a list");
  return v;
}

// total_docs = sorted(set(texts)) and each text's index in it (str order = UTF-8 byte order).
std::map<std::string, size_t> index_docs(const std::vector<std::string>& texts, std::vector<std::string>& docs) {
  std::set<std::string> unique(texts.begin(), texts.end());
  docs.assign(unique.begin(), unique.end());
  std::map<std::string, size_t> idx;
  for (size_t i = 0; i < docs.size(); ++i) idx.emplace(docs[i], i);
  return idx;
}

struct Input {
  std::string text;
  std::vector<std::string> answer;
};

// generate_input_output(index, num_docs, qas, docs). Throws foxeval::Error where random.sample
// raises (before any draw, as Python's does).
Input generate_input_output(const QaDefinition& def, QaData& data, size_t index, int64_t num_docs, PythonRandom& rng) {
  const QaQuestion& q = data.qas.at(index);
  const size_t n_curr = q.context.size(), n_more = q.more_context.size();
  std::vector<std::string> picked;
  std::vector<std::string>* all_docs = &picked;
  if (num_docs < static_cast<int64_t>(data.docs.size())) {
    std::vector<size_t> all = q.context;
    if (num_docs - static_cast<int64_t>(n_curr) > static_cast<int64_t>(n_more)) {
      std::set<size_t> taken(q.context.begin(), q.context.end());
      taken.insert(q.more_context.begin(), q.more_context.end());
      std::vector<size_t> addition;
      for (size_t i = 0; i < data.docs.size(); ++i)
        if (!taken.count(i)) addition.push_back(i);
      const int64_t k = std::max<int64_t>(0, num_docs - static_cast<int64_t>(n_curr) - static_cast<int64_t>(n_more));
      all.insert(all.end(), q.more_context.begin(), q.more_context.end());
      for (size_t i : rng.sample_indices(addition.size(), static_cast<size_t>(k))) all.push_back(addition[i]);
    } else {
      const int64_t k = std::max<int64_t>(0, num_docs - static_cast<int64_t>(n_curr));
      for (size_t i : rng.sample_indices(n_more, static_cast<size_t>(k))) all.push_back(q.more_context[i]);
    }
    for (size_t i : all) picked.push_back(data.docs[i]);
  } else {
    all_docs = &data.docs;  // Python's all_docs = docs: the shuffle below reorders the cached list
  }
  PythonRandom(def.seed).shuffle(*all_docs);
  std::string context;
  for (size_t i = 0; i < all_docs->size(); ++i) {
    if (i) context += "\n\n";
    context += python_format(def.document_prompt, {{"i", std::to_string(i + 1)}, {"document", (*all_docs)[i]}});
  }
  Input in;
  in.text = python_format(def.template_text, {{"context", context}, {"query", q.query}});
  in.answer = q.outputs;
  return in;
}

}  // namespace

QaData read_squad(const std::string& path) {
  const nlohmann::json j = read_json(path);
  QaData out;
  out.path = path;
  const nlohmann::json& articles = array_field(j, "data", path);
  std::vector<std::string> texts;
  for (size_t a = 0; a < articles.size(); ++a) {
    const std::string wa = path + ": data[" + std::to_string(a) + "]";
    for (const auto& p : array_field(articles[a], "paragraphs", wa)) texts.push_back(string_field(p, "context", wa + ".paragraphs[]"));
  }
  const std::map<std::string, size_t> idx = index_docs(texts, out.docs);
  for (size_t a = 0; a < articles.size(); ++a) {
    const nlohmann::json& paras = articles[a].at("paragraphs");
    std::vector<size_t> more_docs;
    for (const auto& p : paras) more_docs.push_back(idx.at(p.at("context").get<std::string>()));
    for (size_t pi = 0; pi < paras.size(); ++pi) {
      const std::string wp = path + ": data[" + std::to_string(a) + "].paragraphs[" + std::to_string(pi) + "]";
      const size_t ctx = more_docs[pi];
      const nlohmann::json& qas = array_field(paras[pi], "qas", wp);
      for (size_t qi = 0; qi < qas.size(); ++qi) {
        const std::string wq = wp + ".qas[" + std::to_string(qi) + "]";
        const nlohmann::json& imp = field(qas[qi], "is_impossible", wq + " (a SQuAD v2 file)");
        if (!imp.is_boolean()) throw Error(wq + ": field 'is_impossible' is not a bool");
        if (imp.get<bool>()) continue;
        QaQuestion q;
        q.query = string_field(qas[qi], "question", wq);
        for (const auto& ans : array_field(qas[qi], "answers", wq)) q.outputs.push_back(string_field(ans, "text", wq + ".answers[]"));
        q.context = {ctx};
        for (size_t m : more_docs)
          if (m != ctx) q.more_context.push_back(m);
        out.qas.push_back(std::move(q));
      }
    }
  }
  return out;
}

QaData read_hotpotqa(const std::string& path) {
  const nlohmann::json j = read_json(path);
  if (!j.is_array()) throw Error(path + ": expected a list of questions (HotpotQA's dev-distractor layout)");
  QaData out;
  out.path = path;
  // f"{t}\n{''.join(p)}" for every (title, sentences) of every question's context.
  std::vector<std::vector<std::string>> per_question;
  std::vector<std::string> texts;
  for (size_t e = 0; e < j.size(); ++e) {
    const std::string we = path + ": [" + std::to_string(e) + "]";
    std::vector<std::string> mine;
    for (const auto& tp : array_field(j[e], "context", we)) {
      if (!tp.is_array() || tp.size() != 2 || !tp[0].is_string() || !tp[1].is_array())
        throw Error(we + ".context: expected [title, [sentence, ...]] pairs");
      std::string doc = tp[0].get<std::string>() + "\n";
      for (const auto& s : tp[1]) {
        if (!s.is_string()) throw Error(we + ".context: a sentence is not a string");
        doc += s.get<std::string>();
      }
      mine.push_back(doc);
      texts.push_back(doc);
    }
    per_question.push_back(std::move(mine));
  }
  const std::map<std::string, size_t> idx = index_docs(texts, out.docs);
  for (size_t e = 0; e < j.size(); ++e) {
    const std::string we = path + ": [" + std::to_string(e) + "]";
    QaQuestion q;
    q.query = string_field(j[e], "question", we);
    q.outputs = {string_field(j[e], "answer", we)};
    for (const std::string& d : per_question[e]) q.context.push_back(idx.at(d));
    out.qas.push_back(std::move(q));
  }
  return out;
}

std::string find_qa_file(const std::string& ruler_tasks_json, const std::string& task, const std::string& flag_path) {
  const nlohmann::json j = read_json(ruler_tasks_json);
  const nlohmann::json& ds = j.at("qa").at("datasets").at(task);
  const std::string file = ds.at("file"), flag = ds.at("flag"), url = ds.at("url");
  if (!flag_path.empty()) {
    if (fs::is_directory(flag_path)) {
      if (fs::is_regular_file(fs::path(flag_path) / file)) return (fs::path(flag_path) / file).string();
      throw Error(flag + " " + flag_path + ": a folder without " + file + " in it (fetch it: curl -L -o " +
                  (fs::path(flag_path) / file).string() + " " + url + ")");
    }
    if (fs::is_regular_file(flag_path)) return flag_path;
    throw Error(flag + " " + flag_path + ": no such file (fetch it: curl -L -o " + flag_path + " " + url + ")");
  }
  std::vector<fs::path> places;
  if (const char* d = std::getenv("FOXEVAL_RULER_DATA"); d && *d) places.push_back(fs::path(d) / file);
  if (const char* h = std::getenv("HOME"); h && *h) places.push_back(fs::path(h) / ".cache/foxeval/ruler" / file);
  std::string looked;
  for (const fs::path& p : places) {
    if (fs::is_regular_file(p)) return p.string();
    looked += "\n  " + p.string();
  }
  const std::string target = places.empty() ? file : places.back().string();
  throw Error(task + " reads " + file + " (foxeval never downloads); looked in:" + (looked.empty() ? std::string("\n  (no $FOXEVAL_RULER_DATA, no $HOME)") : looked) +
              "\nFetch it on a machine with network: mkdir -p " + fs::path(target).parent_path().string() + " && curl -L -o " + target + " " +
              url + "\nor pass " + flag + " FILE");
}

std::vector<RulerDoc> qa_samples(const QaDefinition& def, QaData& data, const TokenCounter& count, int64_t max_len,
                                 PythonRandom& rng) {
  const int64_t ttg = def.tokens_to_generate, incremental = def.incremental;
  // Find the number of documents with question 0 (Python lets a failure here propagate).
  int64_t num_docs = grow_to_fit(incremental, max_len - ttg, static_cast<int64_t>(data.docs.size()), [&](int64_t n) {
    const Input in = generate_input_output(def, data, 0, n, rng);
    return static_cast<int64_t>(count(in.text + " " + python_str_list_repr(in.answer)));
  });
  num_docs = std::max<int64_t>(num_docs, 1);

  std::vector<RulerDoc> docs;
  for (int index = 0; index < def.num_samples; ++index) {
    if (static_cast<size_t>(index) >= data.qas.size())
      throw Error(data.path + ": " + std::to_string(data.qas.size()) + " questions, fewer than lm-eval's " + std::to_string(def.num_samples) +
                  " samples (it fails with IndexError)");
    const int64_t min_docs = static_cast<int64_t>(data.qas[static_cast<size_t>(index)].context.size());
    // [*range(max(num_docs, min_docs), min_docs, -incremental), min_docs]
    std::vector<int64_t> candidates;
    for (int64_t u = std::max(num_docs, min_docs); u > min_docs; u -= incremental) candidates.push_back(u);
    candidates.push_back(min_docs);
    std::optional<Input> sample;
    int64_t length = 0;
    for (int64_t used : candidates) {
      try {
        Input in = generate_input_output(def, data, static_cast<size_t>(index), used, rng);
        length = static_cast<int64_t>(count(in.text)) + ttg;
        if (length <= max_len) {
          sample = std::move(in);
          break;
        }
      } catch (const Error&) {
        // Python catches any failure here and tries fewer documents.
      }
    }
    if (!sample) continue;  // skipped (lm-eval warns)
    docs.push_back({index, std::move(sample->text), std::move(sample->answer), length, max_len, def.gen_prefix});
  }
  if (docs.empty())
    throw Error("ruler QA (" + data.path + "): could not generate any sample at length " + std::to_string(max_len) +
                ": it leaves no room for the template, the gold documents and " + std::to_string(ttg) + " generated tokens; use longer lengths");
  return docs;
}

QaDefinition load_qa_definition(const std::string& path) {
  return read_json_section<QaDefinition>(path, "qa", [](const nlohmann::json& q, QaDefinition& d) {
    read_fields(q, "template", d.template_text, "document_prompt", d.document_prompt, "gen_prefix", d.gen_prefix, "seed",
                d.seed, "num_samples", d.num_samples, "tokens_to_generate", d.tokens_to_generate, "incremental",
                d.incremental);
  });
}

}  // namespace foxeval::ruler
