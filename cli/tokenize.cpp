// `foxeval tokenize` / `foxeval detokenize`: the LongCrawl64 GPT-2 tokenizer from the command
// line (JSON-escaped BPE with BOS, as the checkpoints were trained; --plain for raw BPE).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/command.h"
#include "data/errors.h"
#include "data/json_file.h"
#include "data/tokenizer.h"

namespace foxeval {
namespace {

struct TokenizeArgs {
  std::string file, text, model;
  bool no_bos = false, plain = false;
};

struct DetokenizeArgs {
  std::string ids, file, model;
  bool plain = false, skip_special = false, no_newline = false;
};

void run_tokenize(const TokenizeArgs& a) {
  std::string text = a.text;
  if (!a.file.empty()) text = read_text_file(a.file);
  const Gpt2Tokenizer tok = Gpt2Tokenizer::load(a.model);
  std::vector<int64_t> ids;
  try {
    ids = tok.encode(text, !a.no_bos, !a.plain);
  } catch (const Error& e) {
    throw Error((a.file.empty() ? std::string("--text") : a.file) + ": " + e.what());
  }
  std::string out = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) out += fmt::format(i ? ", {}" : "{}", ids[i]);
  out += "]\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
}

void run_detokenize(const DetokenizeArgs& a) {
  std::vector<int64_t> ids;
  if (!a.file.empty()) {
    try {
      ids = nlohmann::json::parse(read_text_file(a.file)).get<std::vector<int64_t>>();
    } catch (const nlohmann::json::exception& e) {
      throw Error(a.file + ": expected a JSON array of token ids (" + e.what() + ")");
    }
  } else {
    ids = parse_int_list(a.ids, "--ids");
  }
  const Gpt2Tokenizer tok = Gpt2Tokenizer::load(a.model);
  // The text as decoded, then one newline as a shell prompt expects; --no-newline keeps the bytes
  // alone, for output that must round-trip byte for byte.
  const std::string text = tok.decode(ids, !a.plain, a.skip_special);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (!a.no_newline) std::fputc('\n', stdout);
}

const CommandRegistrar reg([](CLI::App& root) {
  auto ta = std::make_shared<TokenizeArgs>();
  CLI::App* t = root.add_subcommand(
      "tokenize", "Text -> JSON array of GPT-2 ids (JSON-escaped text, BOS first, as LongCrawl64)");
  auto* tf = t->add_option("--file", ta->file, "UTF-8 text file to tokenize")->check(CLI::ExistingFile);
  auto* tt = t->add_option("--text", ta->text, "text to tokenize");
  tf->excludes(tt);
  t->add_option("--model", ta->model,
                "model directory whose vocab.json/merges.txt to use (default: bundled GPT-2)");
  t->add_flag("--no-bos", ta->no_bos, "do not put BOS (<|endoftext|>, 50256) first");
  t->add_flag("--plain", ta->plain,
              "no JSON escaping: plain GPT-2 BPE of the text (a literal <|endoftext|> is still "
              "the special token 50256, as in the official tokenizer)");
  t->callback([ta, tf, tt]() {
    if (tf->count() == 0 && tt->count() == 0) throw Error("tokenize: give --file or --text");
    run_tokenize(*ta);
  });

  auto da = std::make_shared<DetokenizeArgs>();
  CLI::App* d = root.add_subcommand(
      "detokenize", "GPT-2 ids -> text (JSON-unescaped, as the official decode)");
  auto* di = d->add_option("--ids", da->ids, "ids, e.g. 50256,15496,995 or '[50256, 15496]'");
  auto* df = d->add_option("--file", da->file, "file holding a JSON array of ids")
                 ->check(CLI::ExistingFile);
  di->excludes(df);
  d->add_option("--model", da->model,
                "model directory whose vocab.json/merges.txt to use (default: bundled GPT-2)");
  d->add_flag("--plain", da->plain, "no JSON unescaping of the decoded text");
  d->add_flag("--skip-special", da->skip_special, "drop <|endoftext|> tokens");
  d->add_flag("--no-newline", da->no_newline, "print the text alone, without the final newline (byte for byte)");
  d->callback([da, di, df]() {
    if (di->count() == 0 && df->count() == 0) throw Error("detokenize: give --ids or --file");
    run_detokenize(*da);
  });
});

}  // namespace
}  // namespace foxeval
