// `foxeval loss --text`: per-position loss on a text corpus with the LongCrawl64 protocol.
//
// Documents (data/text_docs.h) are tokenized as the checkpoint was trained: JSON escaping
// (json.dumps(text)[1:-1]) + GPT-2 BPE, with the model folder's vocab.json/merges.txt when present,
// else the bundled GPT-2 files (data/tokenizer.h); no BOS in the stored tokens: each window's input
// is [bos] + window[:-1], as LongCrawl64's rows. Windows:
//  * default (as LongCrawl64 was prepared: documents shorter than 64 KiT discarded, each kept one
//    to a row of 65536 tokens): a document of at least seq_len tokens gives its first seq_len tokens;
//    shorter documents are skipped and counted (documents_skipped, tokens_skipped), the rest of a
//    longer one counted in tokens_dropped;
//  * --pack: every document followed by the separator token (--separator-id, default the EOT
//    token 50256), concatenated in order and cut into consecutive seq_len windows; the tail that
//    makes no whole window is tokens_dropped. (LongCrawl64 itself packed nothing.)
// Tokenizing runs on every core and is cached beside the output (OUT.tokens-KEY.bin, KEY from the
// text's digest and the tokenizer files' digests), so a resume or a rerun never tokenizes again.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/text_docs.h"
#include "data/token_rows.h"
#include "data/model_files.h"
#include "data/tokenizer.h"

namespace foxeval {

// The known corpora's text field and dedupe key (tasks/loss/text_corpora.json), filled into `spec`
// where the user gave none; other sources: field "text".
void apply_corpus_defaults(TextSourceSpec& spec, bool field_given);

// Every document's tokens (no BOS), concatenated; doc d is tokens[offsets[d], offsets[d + 1]).
struct DocTokens {
  std::vector<int64_t> offsets;
  std::vector<int32_t> tokens;
  std::string cache_path;
  bool from_cache = false;
  double seconds = 0;  // tokenizing (or reading the cache)
};

// The tokenizer foxeval uses for the model (Gpt2Tokenizer::load) and the SHA-256 digest of its two files.
struct TextTokenizer {
  Gpt2Tokenizer tokenizer;
  std::string digest;  // "sha256:..." over (vocab file, merges file)
};
TextTokenizer text_tokenizer(const ModelFiles& model);

// Tokenizes `docs` on `threads` threads (0: every core), or reads the cache file `cache_base`.tokens-KEY.bin
// when it holds these documents tokenized by this tokenizer; writes it (atomically) otherwise.
// `cache_base` empty: no cache.
DocTokens tokenize_docs(const std::vector<std::string>& docs, const std::string& text_digest, const TextTokenizer& tok,
                        const std::string& cache_base, int threads = 0);

// What a window adds to the counts beside the sums (loss.h LossState).
struct WindowCounts {
  int64_t rows = 0, tokens_dropped = 0, rows_unread = 0, documents_skipped = 0, tokens_skipped = 0;
};

// The windows of a tokenized corpus: an in-memory TokenRows of one window per row, and what each
// window counts.
struct TextWindows {
  std::unique_ptr<TokenRows> rows;
  std::vector<WindowCounts> counts;  // per window
  int64_t documents = 0, documents_skipped = 0, windows_unread = 0;
};
// `max_windows`: the first windows only (--tokens / seq_len); the documents past it count as rows_unread.
TextWindows text_windows(const DocTokens& t, int64_t seq_len, bool pack, int64_t separator_id, int64_t max_windows);

}  // namespace foxeval
