#include "tasks/longbench/longbench_prompt_set.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <map>
#include <thread>

#include "data/errors.h"
#include "data/records.h"
#include "data/tokenizer.h"
#include "tasks/longbench/longbench_prompts.h"

namespace foxeval::longbench {

PromptSet build_prompt_set(const PromptSettings& s, const Gpt2Tokenizer& tok) {
  if (s.max_length < 2) throw Error(fmt::format("--max-length {} must be at least 2", s.max_length));
  PromptSet set;
  set.config = load_task_config(s.config_dir.empty() ? bundled_config_dir() : s.config_dir);
  set.tasks = select_tasks(set.config, s.tasks, s.e);
  std::map<std::string, DataSource> source_of;
  for (const std::string& task : set.tasks) {
    const DataSource source = task_data_source(s.data_dir, task, s.e);
    source_of[task] = source;
    set.data_sources.push_back(source);
    std::vector<Record> records = read_task_records(source);
    if (records.empty())
      throw Error(fmt::format("{}: no records (task '{}'); LongBench's files hold one JSON object per line", source.where(), task));
    if (s.limit >= 0 && static_cast<int64_t>(records.size()) > s.limit) records.resize(static_cast<size_t>(s.limit));
    for (Record& r : records) set.prompts.push_back({task, std::move(r), {}});
  }
  // Formatting errors first, in order, so the message names the first bad record.
  std::vector<std::string> texts(set.prompts.size());
  for (size_t i = 0; i < set.prompts.size(); ++i) {
    const Prompt& p = set.prompts[i];
    texts[i] = format_template(set.config.prompt.at(p.task), p.record.data,
                               fmt::format("{} (task '{}')", record_where(source_of.at(p.task), static_cast<size_t>(p.record.index)), p.task));
  }
  // Tokenizing 3,000 prompts of ~60 kB is seconds per core: use them all. The tokenizer is
  // immutable after loading, so threads share it.
  const size_t n_threads = std::max<size_t>(1, std::min<size_t>(std::thread::hardware_concurrency(), 32));
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> errors(n_threads);
  auto work = [&](size_t t) {
    try {
      for (size_t i = next++; i < texts.size(); i = next++) set.prompts[i].ids = prompt_ids(tok, texts[i], s.max_length);
    } catch (...) {
      errors[t] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 0; t < n_threads; ++t) threads.emplace_back(work, t);
  for (std::thread& th : threads) th.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return set;
}


void write_prompts_jsonl(const PromptSet& set, const std::string& path) {
  std::string out;
  for (const Prompt& p : set.prompts) {
    const nlohmann::ordered_json line = {{"task", p.task}, {"index", p.record.index}, {"_id", p.record.data.at("_id")}, {"input_ids", p.ids}};
    out += line.dump() + "\n";
  }
  write_text_atomic(path, out);
}

}  // namespace foxeval::longbench
