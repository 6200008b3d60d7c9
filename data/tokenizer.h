// The LongCrawl64 tokenizer: GPT-2 byte-level BPE over JSON-escaped text, BOS first
// (the official JSONGPT2Tokenizer with add_bos_token=True; see docs/REFERENCE.md, Tokenizer).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace foxeval {

struct ModelFiles;  // data/model_files.h

class Gpt2Tokenizer {
 public:
  // The model's vocab.json + merges.txt when its folder has both; when it has neither, the
  // bundled GPT-2 files (bundled_dir()). Throws foxeval::Error naming the file on a missing (one of
  // the pair) or malformed file. A command that loads the model passes its LoadedModel's files
  // (models/registry.h), so the model is resolved once.
  static Gpt2Tokenizer load(const ModelFiles& model);
  // For commands that read only the tokenizer: `model` (a folder or a hub repo id, data/
  // model_files.h find_model_files) as above, or the bundled files when `model` is empty.
  static Gpt2Tokenizer load(const std::string& model);
  // The two files load(model) reads: {vocab, merges}, bundled or the model's (same checks and errors).
  static std::pair<std::string, std::string> files_of(const ModelFiles& model);
  // Loads exactly these two files (vocab.json or encoder.json; merges.txt or vocab.bpe).
  static Gpt2Tokenizer load_files(const std::string& vocab_json, const std::string& merges_txt);
  // Folder of the bundled encoder.json/vocab.bpe: $FOXEVAL_GPT2_DIR, else FOXEVAL_DATA_DIR/gpt2
  // (compile-time), else <dir of the executable>/../data/gpt2; the first that has encoder.json.
  static std::string bundled_dir();

  // Plain byte-level BPE of UTF-8 text, = tiktoken gpt2 `encode_ordinary` (`<|endoftext|>` in
  // the text is ordinary text). Throws foxeval::Error on invalid UTF-8 (naming the byte offset).
  std::vector<int64_t> encode_bpe(std::string_view utf8) const;

  // What the official tokenizer does: optional JSON escaping (json.dumps(text)[1:-1]), BOS
  // first when `add_bos`, and a literal `<|endoftext|>` in the (escaped) text becomes the special
  // token, as the Hugging Face tokenizer the official code builds on splits on special tokens
  // (= tiktoken `encode(..., allowed_special={"<|endoftext|>"})`).
  std::vector<int64_t> encode(std::string_view text, bool add_bos = true,
                              bool json_escape = true) const;

  // Concatenated token bytes (may be invalid UTF-8 when cut inside a character).
  std::string decode_bpe(const std::vector<int64_t>& ids) const;

  // Official decode: token bytes (special tokens as their text unless `skip_special`), UTF-8
  // with U+FFFD for ill-formed bytes, then json_unescape when `json_unescape`.
  // No clean_up_tokenization_spaces: the checkpoints' tokenizer_config.json sets it false.
  std::string decode(const std::vector<int64_t>& ids, bool json_unescape = true,
                     bool skip_special = false) const;

  int64_t eos_id() const;
  int64_t bos_id() const { return eos_id(); }
  int64_t vocab_size() const;
  // The vocab file this tokenizer was loaded from (for messages and reports).
  const std::string& vocab_path() const;

  struct Impl;

 private:
  explicit Gpt2Tokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;  // immutable after load: copies share, threads may share
};

}  // namespace foxeval
