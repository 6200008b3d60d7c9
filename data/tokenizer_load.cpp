// Loading GPT-2 BPE files (vocab.json/encoder.json + merges.txt/vocab.bpe) into
// Gpt2Tokenizer::Impl, with tiktoken's reading of them (tiktoken/load.py,
// data_gym_to_mergeable_bpe_ranks): a merge's rank is its line, and any two adjacent parts whose
// concatenation is a merge result may merge, at that result's rank.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "data/model_files.h"
#include "data/errors.h"
#include "data/resources.h"
#include "data/hub_cache.h"
#include "data/json_file.h"
#include "data/tokenizer.h"
#include "data/tokenizer_impl.h"
#include "data/utf8.h"

namespace foxeval {
namespace fs = std::filesystem;
namespace {

// GPT-2's byte <-> printable character table (bytes_to_unicode in the GPT-2 release):
// printable Latin-1 bytes map to themselves, the other 68 bytes to U+0100.. in byte order.
std::vector<int> unicode_to_byte_table() {
  std::vector<int> table(512, -1);
  int extra = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    table[printable ? b : 256 + extra++] = b;
  }
  return table;
}

// A vocab key or merge half (byte-level characters) back to raw bytes; throws naming `where`.
std::string to_bytes(std::string_view s, const std::vector<int>& table, const std::string& where) {
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    char32_t cp;
    std::size_t bad;
    const std::size_t n = utf8::decode_one(s, i, &cp, &bad);
    if (n == 0 || cp >= table.size() || table[cp] < 0)
      throw Error(where + ": token '" + std::string(s) + "' is not GPT-2 byte-level text");
    out.push_back(static_cast<char>(table[cp]));
    i += n;
  }
  return out;
}

}  // namespace

std::string Gpt2Tokenizer::bundled_dir() {
  return find_resource({"bundled GPT-2 tokenizer files (or pass the model directory)", "data/gpt2",
                        {"encoder.json", "vocab.bpe"}, "FOXEVAL_GPT2_DIR", ""});
}

std::pair<std::string, std::string> Gpt2Tokenizer::files_of(const ModelFiles& model) {
  const bool has_vocab = !model.vocab_json.empty(), has_merges = !model.merges_txt.empty();
  if (has_vocab && has_merges)  // both inside the model folder, symlinks resolved (data/model_files.h)
    return {model_file(model.dir, "vocab.json", model.dir), model_file(model.dir, "merges.txt", model.dir)};
  if (has_vocab || has_merges)
    throw Error(model.dir + " has " + (has_vocab ? "vocab.json but no merges.txt" : "merges.txt but no vocab.json"));
  const fs::path dir(bundled_dir());
  return {(dir / "encoder.json").string(), (dir / "vocab.bpe").string()};
}

Gpt2Tokenizer Gpt2Tokenizer::load(const ModelFiles& model) {
  const auto [vocab, merges] = files_of(model);
  return load_files(vocab, merges);
}

Gpt2Tokenizer Gpt2Tokenizer::load(const std::string& model) {
  if (!model.empty()) return load(find_model_files(model));
  const fs::path dir(bundled_dir());
  return load_files((dir / "encoder.json").string(), (dir / "vocab.bpe").string());
}

Gpt2Tokenizer Gpt2Tokenizer::load_files(const std::string& vocab_json,
                                        const std::string& merges_txt) {
  auto impl = std::make_shared<Impl>();
  impl->vocab_path = vocab_json;
  const std::vector<int> table = unicode_to_byte_table();

  nlohmann::json vocab;
  try {
    vocab = nlohmann::json::parse(read_text_file(vocab_json));
  } catch (const nlohmann::json::exception& e) {
    throw Error(vocab_json + ": not valid JSON: " + e.what());
  }
  if (!vocab.is_object() || vocab.empty()) throw Error(vocab_json + ": expected a JSON object");
  impl->id_bytes.assign(vocab.size(), std::string());
  std::vector<char> seen(vocab.size(), 0);
  std::unordered_map<std::string, int32_t> by_bytes;  // every token, specials included
  for (const auto& [key, value] : vocab.items()) {
    if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
        value.get<int64_t>() >= static_cast<int64_t>(vocab.size()))
      throw Error(vocab_json + ": id of '" + key + "' is not an integer in [0, " +
                  std::to_string(vocab.size()) + ")");
    const auto id = value.get<int32_t>();
    if (seen[id]) throw Error(vocab_json + ": id " + std::to_string(id) + " appears twice");
    seen[id] = 1;
    if (key == "<|endoftext|>") {
      impl->eos_id = id;
      impl->id_bytes[id] = key;
      continue;
    }
    impl->id_bytes[id] = to_bytes(key, table, vocab_json);
    by_bytes.emplace(impl->id_bytes[id], id);
  }
  if (impl->eos_id < 0) throw Error(vocab_json + ": no <|endoftext|> token");

  // Mergeable tokens: the 256 single bytes, then each merge's result in file order (its rank).
  std::vector<int32_t> rank_of(impl->id_bytes.size(), -1);
  for (int b = 0; b < 256; ++b) {
    const auto it = by_bytes.find(std::string(1, static_cast<char>(b)));
    if (it == by_bytes.end())
      throw Error(vocab_json + ": no token for byte " + std::to_string(b));
    impl->byte_id[b] = it->second;
    rank_of[it->second] = 0;
  }
  std::vector<int32_t> merged_ids;
  {
    std::istringstream in(read_text_file(merges_txt));
    std::string line;
    std::size_t lineno = 0;
    int32_t rank = 256;
    while (std::getline(in, line)) {
      ++lineno;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (lineno == 1 && line.rfind("#", 0) == 0) continue;  // "#version: 0.2"
      if (line.empty()) continue;
      const std::size_t sp = line.find(' ');
      if (sp == std::string::npos || line.find(' ', sp + 1) != std::string::npos)
        throw Error(merges_txt + ":" + std::to_string(lineno) + ": expected two tokens");
      const std::string where = merges_txt + ":" + std::to_string(lineno);
      const std::string bytes = to_bytes(std::string_view(line).substr(0, sp), table, where) +
                                to_bytes(std::string_view(line).substr(sp + 1), table, where);
      const auto it = by_bytes.find(bytes);
      if (it == by_bytes.end())
        throw Error(where + ": merge result '" + line + "' is not in " + vocab_json);
      if (rank_of[it->second] < 0) {
        rank_of[it->second] = rank;
        merged_ids.push_back(it->second);
      }
      ++rank;
    }
  }

  // id_bytes is final now, so views into it stay valid.
  impl->token_ids.reserve(256 + merged_ids.size());
  for (int b = 0; b < 256; ++b)
    impl->token_ids.insert(impl->id_bytes[impl->byte_id[b]], impl->byte_id[b]);
  for (int32_t id : merged_ids) impl->token_ids.insert(impl->id_bytes[id], id);
  // Every split of a merge result into two mergeable tokens is a pair that merges into it.
  struct Pair {
    int32_t l, r;
    PairTable::Value v;
  };
  std::vector<Pair> found;
  for (int32_t id : merged_ids) {
    const std::string_view t = impl->id_bytes[id];
    for (std::size_t k = 1; k < t.size(); ++k) {
      const int32_t l = impl->token_ids.find(t.substr(0, k));
      const int32_t r = impl->token_ids.find(t.substr(k));
      if (l >= 0 && r >= 0) found.push_back(Pair{l, r, PairTable::Value{rank_of[id], id}});
    }
  }
  impl->pairs.reserve(found.size());
  for (const Pair& p : found) impl->pairs.insert(p.l, p.r, p.v);
  return Gpt2Tokenizer(std::move(impl));
}

}  // namespace foxeval
