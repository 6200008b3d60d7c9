// `foxeval inspect gates|attention` and `foxeval plot gates`: what a checkpoint forgets.
#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/command.h"
#include "cli/run_options.h"
#include "cli/validators.h"
#include "data/errors.h"
#include "data/hub_cache.h"
#include "data/json_file.h"
#include "data/tokenizer.h"
#include "models/registry.h"
#include "tasks/run/distributed.h"
#include "tasks/inspect/inspect_plot.h"
#include "tasks/inspect/inspect_table.h"
#include "tasks/inspect/inspect_task.h"
#include "tasks/run/launcher_env.h"
#include "tasks/run/runner.h"
#include "tasks/inspect/inspect_summary.h"

namespace foxeval {
namespace {

// "a:b" -> [a, b); either end may be left out (0, the text's end).
std::pair<int64_t, int64_t> parse_span(const std::string& s, int64_t T) {
  const size_t colon = s.find(':');
  if (colon == std::string::npos) throw Error(fmt::format("--span {}: expected a:b (token positions, b excluded)", s));
  auto part = [&](const std::string& p, int64_t dflt) {
    if (p.empty()) return dflt;
    int64_t v = 0;
    if (!detail::parse_int64(p, v)) throw Error(fmt::format("--span {}: '{}' is not an integer", s, p));
    return v;
  };
  const int64_t a = part(s.substr(0, colon), 0), b = part(s.substr(colon + 1), T);
  if (a < 0 || b > T || a >= b)
    throw Error(fmt::format("--span {}: needs 0 <= a < b <= {} (the text's tokens)", s, T));
  return {a, b};
}

constexpr int64_t kMaxSpan = 512;

CommandRegistrar inspect_command([](CLI::App& root) {
  CLI::App* group = command_group(root, "inspect", "What a checkpoint forgets: its forget gates (decays) and attention maps");

  // ---- gates ----
  auto gs = std::make_shared<inspect::GatesSettings>();
  auto shards = std::make_shared<ShardArgs>();
  CLI::App* gates = group->add_subcommand("gates", "Per layer and head: forget gate distribution, mean log gate, decay reach");
  gates->add_option("--model", gs->model_dir, "Hugging Face checkpoint directory (or repo id in the local cache)")->required();
  gates->add_option("--data", gs->data_path, "token array (.npy or zarr), one document per row, as `foxeval loss` reads it");
  gates->add_option("--text", gs->text_path, "a text file, tokenized as LongCrawl64 (BOS first): one document");
  gates->add_option("--tokens", gs->max_tokens,
                    "tokens to look at: --data reads the first max(1, N / row length) rows (default 524288: 8 rows of "
                    "65536); --text keeps the first N (default: all)")
      ->check(int_range(1, int64_t(1) << 40));
  gates->add_option("--bos-id", gs->bos_id, "--data: each row is read as [bos] + row[:-1] (default 50256)")->check(int_range(0));
  gates->add_option("-o,--out", gs->out_path, "result JSON")->required();
  add_run_options(gates, gs->run);
  add_shard_options(gates, *shards, "documents", "journal (OUT.journal.jsonl)");
  gates->callback([gates, gs, shards] {
    resolve_task_settings(gates, "inspect-gates", *shards, *gs);
    nlohmann::json r;
    run_task("inspect gates", gs->ranks, [&] { r = inspect::run_gates(*gs); }, [&] { inspect::print_gates_summary(r); });
  });

  // ---- attention ----
  struct AttentionArgs {
    std::string model, text, span, out, matrices, title;
    int64_t layer = 0, head = 0, max_tokens = 0;
    RunOptions run;
  };
  auto aa = std::make_shared<AttentionArgs>();
  CLI::App* att = group->add_subcommand("attention", "One head's decay matrix and attention matrix on a span, as an SVG");
  att->add_option("--model", aa->model, "Hugging Face checkpoint directory (or repo id in the local cache)")->required();
  att->add_option("--text", aa->text, "a text file, tokenized as LongCrawl64 (BOS first)")->required();
  att->add_option("--layer", aa->layer, "layer, from 0")->required()->check(int_range(0, 1 << 20));
  att->add_option("--head", aa->head, "head, from 0")->required()->check(int_range(0, 1 << 20));
  att->add_option("--span", aa->span, "token positions a:b to draw (b excluded, BOS is 0; at most 512; default 0:min(T, 256))");
  att->add_option("--tokens", aa->max_tokens, "keep the first N tokens of the text (default: all)")->check(int_range(1, int64_t(1) << 40));
  att->add_option("-o,--out", aa->out, "SVG file")->required();
  att->add_option("--matrices", aa->matrices, "also write both matrices (lower triangles) as JSON");
  att->add_option("--title", aa->title, "figure title (default: model, layer, head)");
  add_run_options(att, aa->run);
  att->callback([att, aa] {
    resolve_run(att, aa->run);
    const std::string text = read_text_file(aa->text);
    const ModelFiles files = find_model_files(aa->model);  // resolved once: the tokenizer, then the model
    const Gpt2Tokenizer tok = Gpt2Tokenizer::load(files);
    std::vector<int64_t> ids = tok.encode(text, /*add_bos=*/true);
    if (aa->max_tokens > 0 && static_cast<int64_t>(ids.size()) > aa->max_tokens) ids.resize(aa->max_tokens);
    const auto T = static_cast<int64_t>(ids.size());
    auto [a, b] = aa->span.empty() ? std::pair<int64_t, int64_t>{0, std::min<int64_t>(T, 256)} : parse_span(aa->span, T);
    if (b - a > kMaxSpan)
      throw Error(fmt::format("--span {}:{}: {} tokens; at most {} can be drawn", a, b, b - a, kMaxSpan));
    const LoadedModel model = load_model(files, aa->run);
    const inspect::AttentionMaps m = inspect::attention_maps(*model, ids, aa->layer, aa->head, a, b);
    std::string title = aa->title;
    if (title.empty()) {
      std::string name = aa->model;
      while (name.size() > 1 && name.back() == '/') name.pop_back();
      const size_t slash = name.find_last_of('/');
      title = fmt::format("{}, layer {}, head {}, tokens {}..{}", slash == std::string::npos ? name : name.substr(slash + 1),
                          aa->layer, aa->head, a, b - 1);
    }
    write_text_atomic(aa->out, inspect::attention_svg(m, title));
    if (!aa->matrices.empty()) write_json_atomic(aa->matrices, inspect::attention_maps_json(m), -1);
    std::printf("wrote %s\n", aa->out.c_str());
  });
});

CommandRegistrar plot_gates_command([](CLI::App& root) {
  CLI::App* plot = command_group(root, "plot", "Draw result files");
  struct Args {
    std::string file, out, sort = "head", title;
    double tolerance = 5;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = plot->add_subcommand("gates", "Heads x layers heatmap of the median decay reach of an `inspect gates` result");
  cmd->add_option("result", a->file, "`foxeval inspect gates` result JSON")->required();
  cmd->add_option("-o,--out", a->out, "SVG file")->required();
  cmd->add_option("--sort", a->sort, "head: heads in index order; reach: each layer's heads by reach, longest first")
      ->check(CLI::IsMember({"head", "reach"}));
  cmd->add_option("--tolerance", a->tolerance, "the reach's tolerance: 5 (e^-5) or 10 (e^-10)")->check(CLI::IsMember({"5", "10"}));
  cmd->add_option("--title", a->title, "figure title");
  cmd->callback([a] {
    inspect::plot_gates_file(a->file, a->out, a->tolerance, a->sort, a->title);
    std::printf("wrote %s\n", a->out.c_str());
  });
});

}  // namespace
}  // namespace foxeval
