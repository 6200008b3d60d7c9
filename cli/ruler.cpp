// `foxeval ruler samples`: RULER's docs (lm-eval 0.4.13's tasks/ruler) without a model.
#include <memory>

#include "cli/command.h"
#include <cstdio>

#include "tasks/ruler/ruler_samples.h"
#include "tasks/ruler/ruler_score.h"

namespace foxeval {
namespace {

std::vector<std::string> split_names(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s + ",") {
    if (c == ',' || c == ' ') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

CommandRegistrar ruler_command([](CLI::App& root) {
  CLI::App* group = command_group(root, "ruler", "RULER (lm-eval 0.4.13's tasks/ruler): samples equal to lm-eval's");
  auto s = std::make_shared<ruler::SamplesSettings>();
  auto tasks = std::make_shared<std::string>(), lengths = std::make_shared<std::string>();
  CLI::App* samples = group->add_subcommand("samples", "Write the generated docs as JSONL (lm-eval's --log_samples `doc`)");
  samples->add_option("--model", s->model_dir, "checkpoint directory whose tokenizer sizes the haystacks (default: bundled GPT-2)");
  samples->add_option("--haystack", s->haystack_dir, "folder of .txt essays for the essay tasks (default: baber/paul_graham_essays from the Hugging Face caches)");
  samples->add_option("--words", s->words_dir, "folder with wonderwords' nounlist.txt, adjectivelist.txt, verblist.txt (default: the installed package's)");
  samples->add_option("--punkt", s->punkt_dir, "nltk's punkt_tab/english folder (default: found under $NLTK_DATA, ~/nltk_data, ...)");
  samples->add_option("--tasks", *tasks, "tasks in the order lm-eval builds them, e.g. niah_single_1,niah_single_2 (default: the group's tasks this build generates: the eight NIAH tasks, ruler_vt, ruler_cwe)");
  samples->add_option("--lengths", *lengths, "max_seq_lengths in tokens, e.g. 4096,8192 (default 4096)");
  samples->add_option("--out", s->out_path, "JSONL file to write")->required();
  samples->callback([s, tasks, lengths] {
    s->tasks = split_names(*tasks);
    if (!lengths->empty()) {
      s->lengths = parse_int_list(*lengths, "--lengths");
      if (s->lengths.empty()) throw Error("--lengths '" + *lengths + "': no length given");
    }
    ruler::write_samples(*s);
  });

  auto sc = std::make_shared<ruler::ScoreSettings>();
  CLI::App* score = group->add_subcommand("score", "Score predictions of `ruler samples` docs as lm-eval does (per task, length, category)");
  score->add_option("--samples", sc->samples_path, "JSONL from `foxeval ruler samples`")->required();
  score->add_option("--predictions", sc->predictions_path, "JSONL of {\"task\", \"doc_id\", \"prediction\"}, one per doc")->required();
  score->add_option("--out", sc->out_path, "result JSON (with the common header)");
  score->callback([sc] {
    const nlohmann::json r = ruler::score_predictions(*sc);
    std::fputs(ruler::score_table(r).c_str(), stdout);
  });
});

}  // namespace
}  // namespace foxeval
