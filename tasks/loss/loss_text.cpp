#include "tasks/loss/loss_text.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "data/content_digest.h"
#include "data/errors.h"
#include "data/hub_cache.h"
#include "data/json_file.h"
#include "data/resources.h"

namespace foxeval {
namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'F', 'X', 'T', 'O', 'K', '0', '0', '1'};

// Windows already cut, one per row (row_length = seq_len).
class WindowRows : public TokenRows {
 public:
  WindowRows(std::vector<int32_t> tokens, int64_t n, int64_t seq_len) : tokens_(std::move(tokens)), n_(n), len_(seq_len) {}
  int64_t num_rows() const override { return n_; }
  int64_t row_length() const override { return len_; }
  std::vector<int64_t> read(int64_t row0, int64_t nrows, int64_t col0, int64_t ncols) const override {
    if (row0 < 0 || nrows < 0 || row0 + nrows > n_ || col0 < 0 || ncols < 0 || col0 + ncols > len_)
      throw Error("internal: text windows read out of range");
    std::vector<int64_t> out;
    out.reserve(nrows * ncols);
    for (int64_t r = row0; r < row0 + nrows; ++r)
      out.insert(out.end(), tokens_.begin() + r * len_ + col0, tokens_.begin() + r * len_ + col0 + ncols);
    return out;
  }
  std::string describe() const override { return fmt::format("{} text windows of {} tokens", n_, len_); }

 private:
  std::vector<int32_t> tokens_;
  int64_t n_, len_;
};

std::string cache_key(const std::string& text_digest, const std::string& tokenizer_digest) {
  // The format's version and the tokenization recipe are part of the key: another recipe, another file.
  return sha256_hex(fmt::format("foxeval text tokens v1\njson_escape=1 bos=0\n{}\n{}\n", text_digest, tokenizer_digest));
}

bool read_cache(const std::string& path, size_t num_docs, DocTokens& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  char magic[8];
  int64_t docs = 0, tokens = 0;
  if (!f.read(magic, 8) || std::memcmp(magic, kMagic, 8) != 0) return false;
  if (!f.read(reinterpret_cast<char*>(&docs), 8) || !f.read(reinterpret_cast<char*>(&tokens), 8)) return false;
  if (docs != static_cast<int64_t>(num_docs) || tokens < 0) return false;
  out.offsets.resize(docs + 1);
  out.tokens.resize(tokens);
  if (!f.read(reinterpret_cast<char*>(out.offsets.data()), 8 * (docs + 1)) ||
      !f.read(reinterpret_cast<char*>(out.tokens.data()), 4 * tokens))
    return false;
  if (out.offsets.front() != 0 || out.offsets.back() != tokens) return false;
  for (int64_t d = 0; d < docs; ++d)
    if (out.offsets[d] > out.offsets[d + 1]) return false;
  return f.peek() == std::char_traits<char>::eof();
}

void write_cache(const std::string& path, const DocTokens& t) {
  std::string bytes(kMagic, 8);
  const int64_t docs = static_cast<int64_t>(t.offsets.size()) - 1, tokens = static_cast<int64_t>(t.tokens.size());
  bytes.append(reinterpret_cast<const char*>(&docs), 8);
  bytes.append(reinterpret_cast<const char*>(&tokens), 8);
  bytes.append(reinterpret_cast<const char*>(t.offsets.data()), 8 * t.offsets.size());
  bytes.append(reinterpret_cast<const char*>(t.tokens.data()), 4 * t.tokens.size());
  write_text_atomic(path, bytes);
}

}  // namespace

void apply_corpus_defaults(TextSourceSpec& spec, bool field_given) {
  if (spec.source.rfind("hf:", 0) == 0) {
    const std::string id = spec.source.substr(3, spec.source.find(':', 3) - 3);
    const nlohmann::json table =
        read_json(find_resource({"the text corpora table", "tasks/loss/text_corpora.json", {}, "", ""}));
    const nlohmann::json& corpora = table.at("corpora");
    if (corpora.contains(id)) {
      const nlohmann::json& c = corpora.at(id);
      if (!field_given) spec.field = c.at("field").get<std::string>();
      // The key belongs to the corpus' own field: with another field the rows are taken as they are.
      if (!field_given && c.contains("dedupe")) spec.dedupe = c.at("dedupe").get<std::string>();
      return;
    }
  }
  if (!field_given) spec.field = "text";
}

TextTokenizer text_tokenizer(const ModelFiles& model) {
  // The files Gpt2Tokenizer::load takes: the model folder's pair when both are there, else the bundled pair.
  const auto [vocab, merges] = Gpt2Tokenizer::files_of(model);
  TextTokenizer t{Gpt2Tokenizer::load_files(vocab, merges), ""};
  t.digest = combine_digests({{"merges", sha256_file(merges)}, {"vocab", sha256_file(vocab)}});
  return t;
}

DocTokens tokenize_docs(const std::vector<std::string>& docs, const std::string& text_digest, const TextTokenizer& tok,
                        const std::string& cache_base, int threads) {
  const auto start = std::chrono::steady_clock::now();
  DocTokens out;
  if (!cache_base.empty()) {
    out.cache_path = fmt::format("{}.tokens-{}.bin", cache_base, cache_key(text_digest, tok.digest).substr(0, 16));
    if (read_cache(out.cache_path, docs.size(), out)) {
      out.from_cache = true;
      out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return out;
    }
  }
  // Documents are handed out one at a time from a shared counter: a few long books do not leave cores idle.
  const size_t n = docs.size();
  std::vector<std::vector<int64_t>> per_doc(n);
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mu;
  const int workers = static_cast<int>(std::max<size_t>(1, std::min<size_t>(
      n, threads > 0 ? static_cast<size_t>(threads) : std::max(1u, std::thread::hardware_concurrency()))));
  auto work = [&] {
    for (size_t d; (d = next.fetch_add(1)) < n;) {
      try {
        per_doc[d] = tok.tokenizer.encode(docs[d], /*add_bos=*/false, /*json_escape=*/true);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) error = std::current_exception();
        next = n;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < workers; ++i) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  out.offsets.assign(1, 0);
  for (size_t d = 0; d < n; ++d) {
    for (int64_t id : per_doc[d]) out.tokens.push_back(static_cast<int32_t>(id));
    out.offsets.push_back(static_cast<int64_t>(out.tokens.size()));
    std::vector<int64_t>().swap(per_doc[d]);
  }
  if (!out.cache_path.empty()) write_cache(out.cache_path, out);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

TextWindows text_windows(const DocTokens& t, int64_t seq_len, bool pack, int64_t separator_id, int64_t max_windows) {
  if (seq_len < 1) throw Error(fmt::format("--seq-len {}: must be >= 1", seq_len));
  const int64_t num_docs = static_cast<int64_t>(t.offsets.size()) - 1;
  TextWindows w;
  std::vector<int32_t> tokens;
  int64_t n = 0;
  if (!pack) {
    WindowCounts skipped;  // carried by the first window
    std::vector<WindowCounts> counts;
    for (int64_t d = 0; d < num_docs; ++d) {
      const int64_t len = t.offsets[d + 1] - t.offsets[d];
      if (len < seq_len) {
        ++skipped.documents_skipped;
        skipped.tokens_skipped += len;
        continue;
      }
      if (n == max_windows) {
        ++skipped.rows_unread;
        continue;
      }
      tokens.insert(tokens.end(), t.tokens.begin() + t.offsets[d], t.tokens.begin() + t.offsets[d] + seq_len);
      counts.push_back({1, len - seq_len, 0, 0, 0});
      ++n;
    }
    if (n == 0)
      throw Error(fmt::format("--text: none of the {} documents has --seq-len {} tokens (the longest has {}); "
                              "give a shorter --seq-len, or --pack", num_docs, seq_len, [&] {
                                int64_t m = 0;
                                for (int64_t d = 0; d < num_docs; ++d) m = std::max(m, t.offsets[d + 1] - t.offsets[d]);
                                return m;
                              }()));
    counts[0].rows_unread = skipped.rows_unread;
    counts[0].documents_skipped = skipped.documents_skipped;
    counts[0].tokens_skipped = skipped.tokens_skipped;
    w.documents = n;
    w.documents_skipped = skipped.documents_skipped;
    w.windows_unread = skipped.rows_unread;
    w.counts = std::move(counts);
  } else {
    std::vector<int32_t> stream;
    stream.reserve(t.tokens.size() + num_docs);
    std::vector<int64_t> doc_start(num_docs);
    for (int64_t d = 0; d < num_docs; ++d) {
      doc_start[d] = static_cast<int64_t>(stream.size());
      stream.insert(stream.end(), t.tokens.begin() + t.offsets[d], t.tokens.begin() + t.offsets[d + 1]);
      stream.push_back(static_cast<int32_t>(separator_id));
    }
    const int64_t whole = static_cast<int64_t>(stream.size()) / seq_len;
    if (whole == 0)
      throw Error(fmt::format("--text --pack: the {} documents hold {} tokens with separators, less than --seq-len {}",
                              num_docs, stream.size(), seq_len));
    n = std::min(whole, max_windows);
    w.counts.assign(n, WindowCounts{});
    // A document counts in the window where it starts; those starting past the last window are unread.
    for (int64_t d = 0; d < num_docs; ++d) {
      const int64_t k = doc_start[d] / seq_len;
      if (k < n) ++w.counts[k].rows;
      else ++w.counts[0].rows_unread;
    }
    w.counts[n - 1].tokens_dropped = n == whole ? static_cast<int64_t>(stream.size()) - n * seq_len : 0;
    w.documents = num_docs - w.counts[0].rows_unread;
    w.windows_unread = whole - n;
    tokens.assign(stream.begin(), stream.begin() + n * seq_len);
  }
  w.rows = std::make_unique<WindowRows>(std::move(tokens), n, seq_len);
  return w;
}

}  // namespace foxeval
