#include "tasks/ruler/vt.h"

#include <algorithm>
#include <optional>
#include <set>

#include "data/errors.h"
#include "data/json_fields.h"
#include "data/json_file.h"
#include "data/python/py_repr.h"
#include "data/python/unicode.h"
#include "tasks/ruler/replace_all.h"
#include "tasks/ruler/sizing.h"

namespace foxeval::ruler {

namespace {

const std::string kUpper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

bool py_blank(const std::string& s) {
  for (char32_t c : utf8_to_u32(s, "vt noise"))
    if (!py_isspace(c)) return false;
  return true;
}

// Python's s.split(".").
std::vector<std::string> split_dots(const std::string& s) {
  std::vector<std::string> out;
  size_t b = 0;
  for (;;) {
    size_t e = s.find('.', b);
    out.push_back(s.substr(b, e == std::string::npos ? std::string::npos : e - b));
    if (e == std::string::npos) return out;
    b = e + 1;
  }
}

struct Chains {
  std::vector<std::vector<std::string>> vars, chains;
};

// generate_chains(num_chains, num_hops, is_icl). A name drawn twice makes Python's loop cut a short
// group whose hop then indexes past its names (IndexError): the same draws, then an Error.
Chains generate_chains(const VtDefinition& def, bool is_icl, PythonRandom& rng, NumpyRandomState& np_rng) {
  const size_t k = static_cast<size_t>(is_icl ? def.icl_var_length : def.var_length);
  const size_t hops = static_cast<size_t>(is_icl ? std::min(def.icl_max_hops, def.num_hops) : def.num_hops);
  const size_t want = (hops + 1) * static_cast<size_t>(def.num_chains);
  std::vector<std::string> all;
  for (size_t i = 0; i < want; ++i) all.push_back(python_choices_string(rng, kUpper, k));
  while (std::set<std::string>(all.begin(), all.end()).size() < want) all.push_back(python_choices_string(rng, kUpper, k));
  Chains c;
  for (size_t i = 0; i < all.size(); i += hops + 1) {
    std::vector<std::string> these(all.begin() + static_cast<long>(i), all.begin() + static_cast<long>(std::min(all.size(), i + hops + 1)));
    c.vars.push_back(these);
    std::vector<std::string> chain = {"VAR " + these[0] + " = " + std::to_string(np_rng.randint(def.value_low, def.value_high))};
    for (size_t j = 0; j < hops; ++j) {
      if (j + 1 >= these.size()) throw Error("ruler_vt: a repeated variable name left a short chain (IndexError in lm-eval)");
      chain.push_back("VAR " + these[j + 1] + " = VAR " + these[j] + " ");
    }
    c.chains.push_back(chain);
  }
  return c;
}

struct VtInput {
  std::string input;
  std::vector<std::string> answer;
};

VtInput generate_input_output(const VtDefinition& def, size_t num_noises, bool is_icl, PythonRandom& rng, NumpyRandomState& np_rng) {
  Chains c = generate_chains(def, is_icl, rng, np_rng);
  std::vector<std::string> sentences(num_noises, def.noise);
  if (sentences.size() <= c.chains[0].size()) {
    std::vector<std::string> pieces;
    for (const std::string& n : sentences)
      for (const std::string& x : split_dots(n)) pieces.push_back(py_blank(x) ? x : x + ".");
    sentences = pieces;
    if (sentences.size() <= c.chains[0].size()) {
      // chain[: len(sentences) - 1], with Python's negative end for an empty list.
      const long keep = static_cast<long>(sentences.size()) - 1;
      for (auto& chain : c.chains) {
        const long n = static_cast<long>(chain.size());
        chain.resize(static_cast<size_t>(std::max(0L, keep >= 0 ? std::min(keep, n) : n + keep)));
      }
    }
  }
  for (const auto& chain : c.chains) {
    std::vector<size_t> positions = rng.sample_indices(sentences.size(), chain.size());
    std::sort(positions.begin(), positions.end());
    for (size_t j = 0; j < chain.size(); ++j) sentences.insert(sentences.begin() + static_cast<long>(positions[j] + j), chain[j]);
  }
  std::string context;
  for (size_t i = 0; i < sentences.size(); ++i) context += (i ? " " : "") + sentences[i];
  context = replace_all(context, ". \n", ".\n");
  if (c.chains[0].empty()) throw Error("ruler_vt: no room for a chain (IndexError in lm-eval)");
  const std::string& first = c.chains[0][0];
  const std::u32string after = utf8_to_u32(first.substr(first.rfind('=') + 1), "vt value");
  size_t b = 0, e = after.size();
  while (b < e && py_isspace(after[b])) ++b;
  while (e > b && py_isspace(after[e - 1])) --e;
  const std::string value = u32_to_utf8(after.substr(b, e - b));
  VtInput io;
  io.input = python_format(def.template_text + def.answer_prefix,
                           {{"context", context}, {"query", value}, {"num_v", std::to_string(def.num_hops + 1)}});
  io.answer = c.vars[0];
  return io;
}

std::string randomize_icl(const VtDefinition& def, std::string icl, PythonRandom& rng) {
  const std::string tail = def.answer_prefix.substr(def.answer_prefix.size() - 10);
  const size_t cut = icl.find(tail);
  if (cut == std::string::npos) throw Error("ruler_vt: the in-context example lacks its answer prefix");
  std::vector<std::string> targets;
  for (const std::u32string& w : py_split(utf8_to_u32(icl.substr(cut + 10), "vt example"))) targets.push_back(u32_to_utf8(w));
  for (const std::string& item : targets) icl = replace_all(icl, item, python_choices_string(rng, kUpper, utf8_to_u32(item, "vt").size()));
  return icl;
}

// sys_vartrack_w_noise_random(...): `icl` is the in-context example's doc, or none when this call
// makes it.
std::vector<RulerDoc> vartrack(const VtDefinition& def, const TokenCounter& count, int num_samples, int64_t max_len,
                               int64_t incremental, const std::optional<RulerDoc>& icl_doc, PythonRandom& rng,
                               NumpyRandomState& np_rng) {
  const int64_t ttg = def.tokens_to_generate;
  std::string icl;
  int64_t example_tokens = 0;
  if (icl_doc) {
    std::string outs;
    for (size_t i = 0; i < icl_doc->outputs.size(); ++i) outs += (i ? " " : "") + icl_doc->outputs[i];
    icl = icl_doc->input + " " + outs + "\n\n";
    example_tokens = static_cast<int64_t>(count(icl));
  }
  const bool is_icl = !icl_doc;
  const int64_t num_noises = grow_to_fit(incremental, max_len - ttg - example_tokens, -1, [&](int64_t n) {
    const VtInput io = generate_input_output(def, static_cast<size_t>(n), is_icl, rng, np_rng);
    return static_cast<int64_t>(count(io.input + " " + python_str_list_repr(io.answer)));  // f" {answer}"
  });
  std::vector<RulerDoc> docs;
  for (int index = 0; index < num_samples; ++index) {
    int64_t used = num_noises, length = 0;
    std::optional<VtInput> sample;
    // lm-eval retries forever; once the noise cannot shrink and a try still fails it never ends.
    for (int stuck = 0; !sample && stuck < 1000;) {
      try {
        VtInput io = generate_input_output(def, static_cast<size_t>(std::max<int64_t>(used, 0)), is_icl, rng, np_rng);
        length = static_cast<int64_t>(count(io.input)) + ttg + example_tokens;
        if (length <= max_len) sample = std::move(io);
      } catch (const Error&) {
      }
      if (sample) break;
      if (used > incremental) used -= incremental; else ++stuck;
    }
    if (!sample)
      throw Error("ruler_vt: no sample fits " + std::to_string(max_len) + " tokens (lm-eval would retry forever); use longer lengths");
    std::string input = sample->input;
    if (icl_doc) {
      const size_t cutoff = input.find(def.template_text.substr(0, 20));
      input = input.substr(0, cutoff) + randomize_icl(def, icl, rng) + "\n\n" + input.substr(cutoff);
    }
    const size_t gp = input.rfind(" Answer: According to the chain(s) of variable assignment");
    std::string gen_prefix = gp == std::string::npos ? input.substr(input.size() - 1) : input.substr(gp);
    const std::u32string g = utf8_to_u32(gen_prefix, "vt gen_prefix");
    size_t b = 0, e = g.size();
    while (b < e && py_isspace(g[b])) ++b;
    while (e > b && py_isspace(g[e - 1])) --e;
    if (icl_doc) input = input.substr(0, gp == std::string::npos ? input.size() - 1 : gp);  // input[:-1] for rfind's -1
    docs.push_back({index, input, sample->answer, length, max_len, u32_to_utf8(g.substr(b, e - b))});
  }
  return docs;
}

}  // namespace

std::vector<RulerDoc> vt_samples(const VtDefinition& def, const TokenCounter& count, int64_t max_len, PythonRandom& rng,
                                 NumpyRandomState& np_rng) {
  const std::vector<RulerDoc> icl = vartrack(def, count, 1, def.icl_max_seq_length, def.icl_incremental, std::nullopt, rng, np_rng);
  return vartrack(def, count, def.num_samples, max_len, def.incremental, icl.at(0), rng, np_rng);
}

VtDefinition load_vt_definition(const std::string& path) {
  return read_json_section<VtDefinition>(path, "vt", [](const nlohmann::json& v, VtDefinition& d) {
    read_fields(v, "template", d.template_text, "answer_prefix", d.answer_prefix, "noise", d.noise, "num_samples",
                d.num_samples, "tokens_to_generate", d.tokens_to_generate, "incremental", d.incremental, "num_chains",
                d.num_chains, "num_hops", d.num_hops, "var_length", d.var_length);
    read_fields(v.at("icl"), "max_seq_length", d.icl_max_seq_length, "incremental", d.icl_incremental, "var_length",
                d.icl_var_length, "max_hops", d.icl_max_hops);
    d.value_low = v.at("value_range").at(0);
    d.value_high = v.at("value_range").at(1);
  });
}

}  // namespace foxeval::ruler
