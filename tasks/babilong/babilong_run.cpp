#include "tasks/babilong/babilong_run.h"

#include <c10/core/Device.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "data/errors.h"
#include "data/tokenizer.h"
#include "models/registry.h"
#include "tasks/results/item_stats.h"
#include "tasks/run/generation_loop.h"
#include "tasks/run/identity.h"
#include "tasks/run/runner.h"
#include "tasks/run/task_runner_settings.h"

namespace foxeval::babilong {
namespace {

const TaskDef& task_def(const std::string& name) {
  const Definitions& defs = definitions();
  auto it = defs.tasks.find(name);
  if (it == defs.tasks.end())
    throw Error(fmt::format("--tasks: unknown task '{}' (BABILong has qa1..qa20; {})", name, defs.path));
  return it->second;
}

std::string fetch_command(const std::string& length, const std::string& task) {
  return fmt::format("python -c \"import datasets; datasets.load_dataset('{}', '{}', split='{}')\"", definitions().dataset_path,
                     length, task);
}

std::string places(const std::vector<std::string>& looked) {
  std::string out;
  for (const std::string& l : looked) out += "\n  " + l;
  return out;
}

nlohmann::json gen_kwargs() {
  // As the YAML's generation_kwargs (lm-eval's Instance.arguments[1]).
  return {{"do_sample", false}, {"temperature", 0.0}, {"max_gen_toks", definitions().max_gen_toks}, {"until", nlohmann::json::array()}};
}

nlohmann::json identity(const RunSettings& s, const std::vector<SplitData>& splits, const LoadedModel& model,
                        const Gpt2Tokenizer& tok) {
  nlohmann::json data = nlohmann::json::object();
  for (const SplitData& sp : splits) data[sp.length + "/" + sp.task] = sp.identity.at("digest");
  nlohmann::json id = {{"tokenizer", digest_paths({tok.vocab_path()})},
                       {"definitions", digest_paths({definitions().path})},
                       {"data", data},
                       {"limit", s.limit},
                       {"max_length", s.max_length},
                       {"max_gen_toks", definitions().max_gen_toks},
                       {"dtype", s.run.dtype},
                       {"device_type", c10::Device(s.run.device).is_cuda() ? "cuda" : "cpu"}};
  id.update(model_identity(model));
  return id;
}

}  // namespace

std::vector<SplitData> select_splits(const std::string& data, const std::vector<std::string>& tasks_given,
                                     const std::vector<std::string>& lengths_given, int64_t limit) {
  const Definitions& defs = definitions();
  const std::vector<std::string> tasks = tasks_given.empty() ? defs.default_tasks : tasks_given;
  for (const std::string& t : tasks) task_def(t);
  for (const std::string& l : lengths_given)
    if (std::find(defs.lengths.begin(), defs.lengths.end(), l) == defs.lengths.end())
      throw Error(fmt::format("--lengths: unknown length '{}' (the dataset's configs: {})", l, fmt::join(defs.lengths, ", ")));
  const std::vector<std::string>& lengths = lengths_given.empty() ? defs.lengths : lengths_given;
  std::vector<SplitData> out;
  std::vector<std::string> looked;
  for (const std::string& length : lengths) {
    std::vector<SplitData> here;
    std::vector<std::string> missing, looked_here;
    for (const std::string& t : tasks) {
      const TaskDef& def = task_def(t);
      if (std::find(def.lengths.begin(), def.lengths.end(), length) == def.lengths.end()) continue;  // not in the dataset
      if (auto sp = find_split(data, length, t, &looked_here)) here.push_back(std::move(*sp));
      else missing.push_back(t);
    }
    looked.insert(looked.end(), looked_here.begin(), looked_here.end());
    if (here.empty()) {
      if (!lengths_given.empty())
        throw Error(fmt::format("babilong: length {} (--lengths) is not in --data {}. Looked in:{}\nFetch it on a machine "
                                "with network:\n  {}", length, data, places(looked_here), fetch_command(length, tasks[0])));
      continue;
    }
    if (!missing.empty())
      throw Error(fmt::format("babilong: length {} holds {} but not {} (an incomplete copy?). Looked in:{}\nFetch it:\n  {}",
                              length, here[0].task, fmt::join(missing, ", "), places(looked_here),
                              fetch_command(length, missing[0])));
    for (SplitData& sp : here) {
      if (limit > 0 && static_cast<int64_t>(sp.docs.size()) > limit) sp.docs.resize(limit);
      out.push_back(std::move(sp));
    }
  }
  if (out.empty())
    throw Error(fmt::format("babilong: none of {} is in --data {} at any length (foxeval never downloads). Looked in:{}\n"
                            "Fetch a length on a machine with network (into the same cache, or copy the cache here):\n  {}",
                            fmt::join(tasks, ", "), data, places(looked), fetch_command("0k", tasks[0])));
  return out;
}

nlohmann::json request_json(const SplitData& split, size_t doc_id) {
  return {{"length", split.length}, {"task", split.task}, {"doc_id", doc_id},
          {"context", context(task_def(split.task), split.docs[doc_id])}, {"gen_kwargs", gen_kwargs()}};
}

nlohmann::json build_result(const nlohmann::json& identity, const std::vector<nlohmann::json>& records) {
  // Sums per (task, length) and per length, in the dataset's orders.
  std::map<std::string, std::map<std::string, std::pair<double, int64_t>>> by;  // task -> length -> (sum, n)
  std::map<std::string, std::pair<double, int64_t>> by_length;
  std::vector<std::string> lengths, tasks;
  for (const nlohmann::json& r : records) {
    const std::string t = r.at("task").get<std::string>(), l = r.at("length").get<std::string>();
    const double acc = r.at("acc").get<double>();
    by[t][l].first += acc;
    by[t][l].second += 1;
    by_length[l].first += acc;
    by_length[l].second += 1;
    if (std::find(lengths.begin(), lengths.end(), l) == lengths.end()) lengths.push_back(l);
    if (std::find(tasks.begin(), tasks.end(), t) == tasks.end()) tasks.push_back(t);
  }
  const Definitions& defs = definitions();
  auto order = [](const std::vector<std::string>& canon, std::vector<std::string>& v) {
    std::sort(v.begin(), v.end(), [&](const std::string& a, const std::string& b) {
      return std::find(canon.begin(), canon.end(), a) < std::find(canon.begin(), canon.end(), b);
    });
  };
  order(defs.lengths, lengths);
  order(defs.task_order, tasks);
  nlohmann::ordered_json scores = nlohmann::ordered_json::object(), counts = nlohmann::ordered_json::object(),
                         mean = nlohmann::ordered_json::object();
  for (const std::string& t : tasks)
    for (const std::string& l : lengths)
      if (by[t].count(l)) {
        scores[t][l] = by[t][l].first / static_cast<double>(by[t][l].second);
        counts[t][l] = by[t][l].second;
      }
  for (const std::string& l : lengths) mean[l] = by_length[l].first / static_cast<double>(by_length[l].second);
  // Each document's accuracy (0/1) per metric, for n, standard errors and `foxeval compare`'s pairing
  // (tasks/results/item_stats.h): acc/{task}/{length} over its documents, mean_by_length/{length} over every
  // document at that length (the group's mean is weighted by documents: a plain mean over them).
  std::map<std::string, ItemScores> items;
  for (const nlohmann::json& r : records) {
    const std::string t = r.at("task").get<std::string>(), l = r.at("length").get<std::string>();
    const std::string id = fmt::format("{}/{}/{}", t, l, r.at("doc_id").get<int64_t>());
    for (const std::string& metric : {"acc/" + t + "/" + l, "mean_by_length/" + l}) {
      items[metric].ids.push_back(id);
      items[metric].values.push_back(r.at("acc").get<double>());
    }
  }
  nlohmann::json per_item = nlohmann::json::object();
  for (const auto& [metric, its] : items) per_item[metric] = per_item_entry(its);
  nlohmann::json result = {{"kind", "foxeval-babilong"},
                           {"identity", identity},
                           {"tasks", tasks},
                           {"lengths", lengths},
                           {"acc", nlohmann::json::parse(scores.dump())},
                           {"n", nlohmann::json::parse(counts.dump())},
                           {"mean_by_length", nlohmann::json::parse(mean.dump())},
                           {"per_item", per_item},
                           {"samples", records}};
  return result;
}

nlohmann::json run_babilong(const RunSettings& s) {
  if (s.limit < 0) throw Error(fmt::format("--limit {}: must be >= 1", s.limit));
  if (s.max_length != 0 && s.max_length <= definitions().max_gen_toks)
    throw Error(fmt::format("--max-length {}: must be more than max_gen_toks ({})", s.max_length, definitions().max_gen_toks));
  // Data and prompts first: a missing split fails before the model is loaded.
  const std::vector<SplitData> splits = select_splits(s.data, s.tasks, s.lengths, s.limit);
  const ModelFiles files = task_model_files(s.model, s.model_dir);
  const Gpt2Tokenizer tok = Gpt2Tokenizer::load(files);
  struct Prompt {
    size_t split, doc;
    std::vector<int64_t> ids;
    bool truncated = false;
  };
  std::vector<Prompt> prompts;
  std::vector<WorkItem> items;
  const int64_t max_new = definitions().max_gen_toks;
  for (size_t i = 0; i < splits.size(); ++i)
    for (size_t d = 0; d < splits[i].docs.size(); ++d) {
      Prompt p{i, d, tok.encode(context(task_def(splits[i].task), splits[i].docs[d])), false};
      p.truncated = hflm_left_truncate(p.ids, s.max_length, max_new);
      items.push_back({fmt::format("{}/{}/{}", splits[i].length, splits[i].task, d), static_cast<double>(p.ids.size() + max_new)});
      prompts.push_back(std::move(p));
    }
  std::fprintf(stderr, "[babilong] %zu documents: %zu task x length splits\n", prompts.size(), splits.size());
  const std::shared_ptr<const LoadedModel> loaded = task_model(s.model, files, s.run);
  CausalLM* model = loaded->get();

  GenerationLoop loop("babilong", s.generation, s.stop_after, s.run.device);
  loop.unit = "documents";
  loop.shorten = "--limit, --lengths or --tasks";
  // header.generation among the run statistics: what the loop generated.
  const RunnerSettings rs = with_generation_stats(
      task_runner_settings(s, s.out_path, model), loop);
  RecordRunner runner(rs, "babilong", identity(s, splits, *loaded, tok), items);
  run_generation_loop(
      runner, *model, loop,
      [&](size_t i) { return OpenTokens{static_cast<int64_t>(prompts[i].ids.size()), max_new}; },
      [&](size_t i) { return GenerationRequest{prompts[i].ids, max_new, {tok.eos_id()}}; },
      [&](size_t i, const GenerationRequest&, const GenerationAnswer& answer) {
        const Prompt& p = prompts[i];
        const SplitData& sp = splits[p.split];
        const Doc& doc = sp.docs[p.doc];
        const std::string pred = tok.decode(answer.ids, /*json_unescape=*/true, /*skip_special=*/true);
        return nlohmann::json{{"length", sp.length},
                              {"task", sp.task},
                              {"doc_id", p.doc},
                              {"target", doc.target},
                              {"prediction", pred},
                              {"acc", score(doc.target, pred, items[i].id + " prediction")},
                              {"prompt_tokens", p.ids.size()},
                              {"new_tokens", answer.ids.size()},
                              {"truncated", p.truncated}};
      });
  return runner.complete(build_result);
}

}  // namespace foxeval::babilong
