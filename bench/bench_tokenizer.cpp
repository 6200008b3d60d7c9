// `foxeval bench tokenizer`: single-thread encoding speed of the GPT-2 tokenizer, to compare with
// scripts/bench_tokenizer_tiktoken.py (tiktoken encode_ordinary on the same JSON-escaped text).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_common.h"
#include "bench/bench.h"
#include "data/errors.h"
#include "data/json_file.h"
#include "data/python/json_escape.h"
#include "data/tokenizer.h"

namespace foxeval {

void run_bench_tokenizer(const BenchTokenizerArgs& a) {
  if (a.repeats < 1) throw Error("--repeats must be at least 1");
  const Gpt2Tokenizer tok = Gpt2Tokenizer::load(a.model);
  std::vector<std::string> texts, escaped;
  std::size_t raw_bytes = 0, esc_bytes = 0;
  for (const std::string& f : a.files) {
    texts.push_back(read_text_file(f));
    try {
      escaped.push_back(json_escape(texts.back()));
    } catch (const Error& e) {
      throw Error(f + ": " + e.what());
    }
    raw_bytes += texts.back().size();
    esc_bytes += escaped.back().size();
  }
  std::size_t tokens = 0;
  for (const std::string& e : escaped) tokens += tok.encode_bpe(e).size();

  struct Mode {
    std::string name, about;
    std::size_t bytes;
    std::function<void()> fn;
  };
  std::size_t sink = 0;  // keeps the work observable
  const std::vector<Mode> modes = {
      {"bpe", "encode_bpe of the JSON-escaped text (= tiktoken encode_ordinary)", esc_bytes,
       [&] { for (const auto& e : escaped) sink += tok.encode_bpe(e).size(); }},
      {"encode", "encode of the raw text: JSON escaping + BPE + BOS", esc_bytes,
       [&] { for (const auto& t : texts) sink += tok.encode(t).size(); }},
  };
  fmt::print("{} files, {:.3f} MB raw, {:.3f} MB JSON-escaped, {} tokens; 1 thread, median of {}\n",
             a.files.size(), raw_bytes / 1e6, esc_bytes / 1e6, tokens, a.repeats);
  fmt::print("{:<8} {:>10} {:>10} {:>14}  {}\n", "mode", "median_s", "MB/s", "tokens/s", "what");
  nlohmann::json rows = nlohmann::json::array();
  for (const Mode& m : modes) {
    // One warm-up, then the upper median of the timed runs (on the CPU: no synchronization).
    const double s = upper_median(time_repeats(m.fn, 1, a.repeats, at::Device(at::kCPU)).seconds);
    const double mbps = m.bytes / 1e6 / s, tps = tokens / s;
    fmt::print("{:<8} {:>10.4f} {:>10.2f} {:>14.0f}  {}\n", m.name, s, mbps, tps, m.about);
    rows.push_back({{"mode", m.name}, {"about", m.about}, {"median_s", s},
                    {"mb_per_s_escaped", mbps}, {"tokens_per_s", tps}});
  }
  if (sink == 0 && tokens != 0) fmt::print("\n");  // unreachable; defeats dead-code removal
  if (!a.json_out.empty()) {
    const nlohmann::json doc = {{"benchmark", "tokenizer"}, {"implementation", "foxeval"},
                                {"threads", 1}, {"repeats", a.repeats}, {"files", a.files},
                                {"raw_bytes", raw_bytes}, {"escaped_bytes", esc_bytes},
                                {"tokens", tokens}, {"mb", "1e6 bytes of JSON-escaped text"},
                                {"results", rows}};
      write_bench_json(doc, a.json_out, "tokenizer", "cpu", 2);
  }
}

}  // namespace foxeval
