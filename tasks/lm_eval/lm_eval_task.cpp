#include "tasks/lm_eval/lm_eval_task.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "data/errors.h"
#include "data/hub_cache.h"
#include "data/json_file.h"
#include "data/dataset_rows.h"
#include "data/records.h"
#include "data/tokenizer.h"
#include "models/registry.h"
#include "models/requests.h"
#include "tasks/lm_eval/hflm.h"
#include "tasks/lm_eval/lm_eval_output.h"
#include "tasks/lm_eval/metrics.h"
#include "tasks/lm_eval/pystr.h"
#include "tasks/lm_eval/task_data.h"
#include "tasks/run/identity.h"
#include "tasks/run/runner.h"
#include "tasks/run/task_runner_settings.h"

namespace foxeval::lm_eval {
namespace fs = std::filesystem;
using nlohmann::json;

std::string task_data_file(const std::string& data_dir, const std::string& task) {
  const std::string jsonl = (fs::path(data_dir) / (task + ".jsonl")).string();
  const std::string parquet = (fs::path(data_dir) / (task + ".parquet")).string();
  const bool has_jsonl = fs::is_regular_file(jsonl), has_parquet = fs::is_regular_file(parquet);
  if (has_jsonl && has_parquet)
    throw Error(fmt::format("{}: both {} and {} exist; keep one", task, jsonl, parquet));
  if (!has_jsonl && !has_parquet) {
    const TaskConfig& c = task_config(task);
    throw Error(fmt::format("{}: no data file: tried {} and {} (the '{}' split of the Hugging Face dataset {}{})", task,
                            jsonl, parquet, c.split, c.dataset_path,
                            c.dataset_name.empty() ? "" : " (" + c.dataset_name + ")"));
  }
  return has_jsonl ? jsonl : parquet;
}

TaskDocs load_task_docs(const TaskConfig& config, const std::string& data, int64_t limit, double limit_fraction) {
  const TaskData where = locate_task_data(config, data);
  TaskDocs t;
  t.config = config;
  t.path = where.description;
  t.data_identity = where.identity;
  std::vector<size_t> sizes;
  std::vector<nlohmann::ordered_json> records = read_dataset_rows(where.files, &sizes);
  if (records.empty()) throw Error(fmt::format("{}: {} holds no documents", config.name, where.description));
  if (where.expected_rows >= 0 && static_cast<int64_t>(records.size()) != where.expected_rows)
    throw Error(fmt::format("{}: {} holds {} documents, but the cache's dataset_info.json says {} (an incomplete copy?)",
                            config.name, where.description, records.size(), where.expected_rows));
  t.total = static_cast<int64_t>(records.size());
  // lm-eval's get_sample_size: int(math.ceil(len(docs) * limit)) for a limit below 1.
  if (limit_fraction > 0) limit = static_cast<int64_t>(std::ceil(static_cast<double>(records.size()) * limit_fraction));
  const size_t n = limit < 0 ? records.size() : std::min(records.size(), static_cast<size_t>(limit));
  const DocFunction fn = doc_function(config.name);
  for (size_t i = 0; i < n; ++i) {
    t.docs.push_back(fn(sorted_json(records[i]), DocPlace{config.name, dataset_row_where(where.files, sizes, i)}));
    t.raw.push_back(std::move(records[i]));
  }
  return t;
}

std::vector<json> request_lines(const TaskDocs& docs) {
  std::vector<json> out;
  for (size_t d = 0; d < docs.docs.size(); ++d)
    for (const TaskRequest& r : build_requests(docs.config.output_type, docs.config.target_delimiter, docs.docs[d])) {
      json j = {{"task", docs.config.name}, {"doc_id", d}, {"index", r.index}, {"kind", r.kind}};
      if (r.kind == "loglikelihood_rolling") {
        j["text"] = r.text;
      } else {
        j["context"] = r.context;
        j["continuation"] = r.continuation;
      }
      out.push_back(std::move(j));
    }
  return out;
}

void record_answers(const json& r, DocScoring* s, std::vector<Answer>* answers) {
  s->gold = r.value("gold", int64_t{-1});
  if (r.contains("choice_len")) s->choice_len = r.at("choice_len").get<std::vector<int64_t>>();
  s->words = r.value("words", int64_t{0});
  s->bytes = r.value("bytes", int64_t{0});
  for (const json& a : r.at("answers")) answers->push_back({a.at("logprob").get<double>(), a.at("is_greedy").get<bool>()});
}

DocScoring scoring_of(const DocParts& d) {
  DocScoring s;
  s.gold = d.gold;
  for (const std::string& c : d.choices) s.choice_len.push_back(py_len(c));
  s.words = d.words;
  s.bytes = d.bytes;
  return s;
}

namespace {


// The record of a finished document: its answers (in request order; rolling: window order) and
// the scoring facts of its data, so results are rebuilt from records alone.
json make_record(const std::string& task, size_t doc_id, const DocScoring& s, const std::vector<Answer>& answers) {
  json a = json::array();
  for (const Answer& x : answers) a.push_back({{"logprob", x.logprob}, {"is_greedy", x.is_greedy}});
  json r = {{"task", task}, {"doc_id", doc_id}, {"answers", a}};
  if (s.gold >= 0) {
    r["gold"] = s.gold;
    r["choice_len"] = s.choice_len;
  }
  if (s.words > 0 || s.bytes > 0) {
    r["words"] = s.words;
    r["bytes"] = s.bytes;
  }
  return r;
}


json make_identity(const LmEvalSettings& s, const LoadedModel& model, const std::vector<TaskDocs>& tasks) {
  json data = json::object();
  json names = json::array();
  for (const TaskDocs& t : tasks) {
    names.push_back(t.config.name);
    json d = t.data_identity;  // file name(s) and the digest that says what they hold
    d["docs_total"] = t.total;
    d["docs_evaluated"] = t.docs.size();
    data[t.config.name] = std::move(d);
  }
  nlohmann::json id = {{"tasks", names},
          {"data", data},
          {"limit", s.limit},
          {"max_length", s.max_length},
          {"add_bos_token", true},
          {"num_fewshot", 0},
          {"dtype", s.run.dtype},
          {"device_type", s.run.device.rfind("cuda", 0) == 0 ? "cuda" : "cpu"},
          {"batch_size", s.batch_size},
          {"max_batch_tokens", s.max_batch_tokens},
          {"num_shards", s.num_shards}};
  if (s.limit_fraction > 0) id["limit_fraction"] = s.limit_fraction;
  id.update(model_identity(model));  // model, type, size, numerics options
  return id;
}

// --log-samples: one line per document, lm-eval's sample fields where they apply. Written
// atomically, as results are.
void write_log_samples(const std::string& path, const std::vector<TaskDocs>& tasks, const std::vector<json>& records) {
  std::map<std::string, const TaskDocs*> by_name;
  for (const TaskDocs& t : tasks) by_name[t.config.name] = &t;
  std::string text;
  for (const json& r : records) {
    const TaskDocs& t = *by_name.at(r.at("task").get<std::string>());
    const size_t d = r.at("doc_id").get<size_t>();
    DocScoring s;
    std::vector<Answer> answers;
    record_answers(r, &s, &answers);
    json args = json::array(), resps = json::array();
    for (const TaskRequest& q : build_requests(t.config.output_type, t.config.target_delimiter, t.docs[d])) {
      json a = json::array();
      if (q.kind == "loglikelihood_rolling") {
        a.push_back(q.text);
      } else {
        a.push_back(q.context);
        a.push_back(q.continuation);
      }
      args.push_back(std::move(a));
    }
    for (const Answer& a : answers) {
      json pair = json::array();
      pair.push_back(a.logprob);
      pair.push_back(a.is_greedy);
      resps.push_back(std::move(pair));
    }
    json line = {{"task", t.config.name}, {"doc_id", d},         {"doc", sorted_json(t.raw[d])},
                 {"target", t.docs[d].target}, {"arguments", args}, {"resps", resps}};
    if (s.gold >= 0) line["gold"] = s.gold;
    const json metrics = process_results(t.config, s, answers);  // named: items() must not outlive it
    for (auto& [k, v] : metrics.items()) line[k] = v;
    text += line.dump() + "\n";
  }
  write_text_atomic(path, text);
}

}  // namespace

json build_lm_eval_result(const json& identity, const std::vector<json>& records) {
  std::map<std::string, std::vector<json>> doc_metrics;
  std::map<std::string, std::vector<std::string>> doc_ids;
  for (const json& r : records) {
    const std::string task = r.at("task").get<std::string>();
    DocScoring s;
    std::vector<Answer> answers;
    record_answers(r, &s, &answers);
    doc_metrics[task].push_back(process_results(task_config(task), s, answers));
    doc_ids[task].push_back(r.at("doc_id").dump());
  }
  json results = json::object(), n_samples = json::object(), versions = json::object(), n_shot = json::object(),
       higher = json::object(), subtasks = json::object(), delta = json::object(), sources = json::object(),
       per_item = json::object();
  for (const json& name_j : identity.at("tasks")) {
    const std::string name = name_j.get<std::string>();
    const TaskConfig& c = task_config(name);
    const std::vector<json>& dm = doc_metrics[name];
    const json& data = identity.at("data").at(name);
    if (static_cast<int64_t>(dm.size()) != data.at("docs_evaluated").get<int64_t>())
      throw Error(fmt::format("lm-eval result: {} has {} documents scored of {}", name, dm.size(),
                              data.at("docs_evaluated").get<int64_t>()));
    results[name] = task_results(c, dm);
    n_samples[name] = {{"original", data.at("docs_total")}, {"effective", data.at("docs_evaluated")}};
    versions[name] = c.version;
    n_shot[name] = 0;
    subtasks[name] = json::array();
    sources[name] = {{"yaml", c.yaml}, {"dataset_path", c.dataset_path}, {"dataset_name", c.dataset_name},
                     {"split", c.split}, {"output_type", c.output_type}};
    for (const MetricSpec& m : c.metrics) {
      higher[name][m.metric] = m.higher_is_better;
      if (!dm.empty()) {
        // The results' stderr, where lm-eval gives one, is the per_item one (same items, same method).
        const json& se = results[name][m.metric + "_stderr,none"];
        per_item["results/" + name + "/" + m.metric + ",none"] = per_item_entry(
            metric_items(m, doc_ids[name], dm), se.is_number() ? std::optional<double>(se.get<double>()) : std::nullopt);
      }
      if (m.aggregation == "perplexity") {
        std::vector<json> items;
        for (const json& d : dm) items.push_back(d.at(m.metric));
        const double se = perplexity_stderr_delta_method(items);
        delta[name][m.metric + "_stderr_delta_method,none"] = std::isnan(se) ? json("N/A") : json(se);
      }
    }
  }
  return {{"results", results},
          {"group_subtasks", subtasks},
          {"versions", versions},
          {"n-shot", n_shot},
          {"higher_is_better", higher},
          {"n-samples", n_samples},
          {"task_definitions", sources},
          {"stderr_note",
           "as lm-eval 0.4.4: <metric>_stderr is the closed-form sample_stddev/sqrt(n) for mean metrics (acc, "
           "acc_norm) and lm-eval's seeded 100000-sample bootstrap for lambada's perplexity; \"N/A\" for "
           "weighted_perplexity and bits_per_byte (lm-eval has none; per_item gives one by the same bootstrap). "
           "The first-order (delta method) estimate perplexity * stderr(mean loglikelihood) is under "
           "perplexity_stderr_delta_method"},
          {"perplexity_stderr_delta_method", delta},
          {"per_item", per_item},
          {"model", identity.at("model")}};
}

json run_lm_eval(const LmEvalSettings& s) {
  if (s.max_length < 2) throw Error(fmt::format("--max-length {} must be >= 2", s.max_length));
  if (s.limit == 0 || s.limit < -1) throw Error(fmt::format("--limit {}: must be positive", s.limit));
  if (!s.log_samples_path.empty() && s.num_shards > 1)
    throw Error("--log-samples: not available with --num-shards > 1 (each shard has only its documents; "
                "run the samples without shards)");
  if (!s.output_path.empty() && s.num_shards > 1)
    throw Error("--output_path: not available with --num-shards > 1 (a shard writes a part, not lm-eval's results; "
                "merge the parts with `foxeval merge`, or run without shards)");
  const double start_time = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::vector<TaskConfig> configs = parse_task_list(s.tasks);
  check_data_for_tasks(s.data_dir, configs.size());
  std::vector<TaskDocs> tasks;
  for (const TaskConfig& c : configs) tasks.push_back(load_task_docs(c, s.data_dir, s.limit, s.limit_fraction));

  const ModelFiles files = task_model_files(s.model, s.model_dir);
  const std::shared_ptr<const LoadedModel> loaded = task_model(s.model, files, s.run);
  CausalLM* model = loaded->get();
  const Gpt2Tokenizer tok = Gpt2Tokenizer::load(files);

  std::vector<WorkItem> items;
  for (const TaskDocs& t : tasks)
    for (size_t d = 0; d < t.docs.size(); ++d) {
      double cost = 0;  // bytes of the request strings: deterministic, so every shard splits alike
      for (const TaskRequest& r : build_requests(t.config.output_type, t.config.target_delimiter, t.docs[d]))
        cost += static_cast<double>(r.context.size() + r.continuation.size() + r.text.size());
      items.push_back({fmt::format("{}/{}", t.config.name, d), cost});
    }
  std::vector<std::pair<size_t, size_t>> item_doc;  // item -> (task, doc)
  for (size_t t = 0; t < tasks.size(); ++t)
    for (size_t d = 0; d < tasks[t].docs.size(); ++d) item_doc.emplace_back(t, d);

  const RunnerSettings rs = task_runner_settings(s, s.out_path, model);
  RecordRunner run(rs, "lm-eval", make_identity(s, *loaded, tasks), items);

  LoglikelihoodOptions opt;
  opt.max_length = s.max_length;
  opt.batch_size = s.batch_size;
  opt.max_batch_tokens = s.max_batch_tokens;

  // The requests of every document this run may hand out (all ranks' in a distributed run, this
  // shard's with --num-shards) that no journal holds, tokenized once; a document's stay together.
  std::vector<std::vector<LoglikelihoodRequest>> doc_requests(items.size());
  std::vector<double> doc_tokens(items.size(), 0.0);
  double open_docs = 0, open_requests = 0, open_tokens = 0;
  for (size_t i : shard_items(items, s.num_shards, s.shard_index)) {
    if (run.done(items[i].id)) continue;
    const auto [t, d] = item_doc[i];
    for (const TaskRequest& r : build_requests(tasks[t].config.output_type, tasks[t].config.target_delimiter, tasks[t].docs[d])) {
      if (r.kind == "loglikelihood_rolling") {
        for (LoglikelihoodRequest& w : rolling_requests(tok, r.text, s.max_length)) doc_requests[i].push_back(std::move(w));
      } else {
        doc_requests[i].push_back(encode_pair(tok, r.context, r.continuation));
      }
    }
    for (const LoglikelihoodRequest& q : doc_requests[i])
      doc_tokens[i] += static_cast<double>(q.context.size() + q.continuation.size());
    open_docs += 1;
    open_requests += static_cast<double>(doc_requests[i].size());
    open_tokens += doc_tokens[i];
  }

  // Documents are handed out in batches of n (Runner::claim_batch: longest first by the bytes of
  // their requests; in a distributed run from the shared counter in the store, so no GPU idles
  // while another works through a long tail). All requests of a batch's documents go to one
  // loglikelihood() call, which orders them by length and cuts them into forwards; a document is
  // journaled once all its answers are in. n: about kForwardsPerBatch forwards at the open
  // documents' mean size (requests with --batch-size, else tokens of --max-batch-tokens), enough
  // for full forwards of similar lengths, while the last batch (the shortest documents), which
  // one rank may still run when the others have nothing left, stays a few forwards. n is the same
  // on every rank and fixed for the run, so the k-th batch holds the same documents whichever rank
  // takes it (one process included): a request meets the same neighbours in the same forwards,
  // and the numbers are bit for bit those of one process (on a CPU a forward's padding width
  // changes the last bits of a log-likelihood).
  constexpr double kForwardsPerBatch = 8;
  const double per_forward = s.batch_size > 0 ? static_cast<double>(s.batch_size) : static_cast<double>(s.max_batch_tokens);
  const double per_doc = (s.batch_size > 0 ? open_requests : open_tokens) / std::max(1.0, open_docs);
  const size_t per_batch = static_cast<size_t>(std::max(1.0, std::ceil(kForwardsPerBatch * per_forward / std::max(1.0, per_doc))));
  int64_t finished_here = 0;
  for (;;) {
    if (run.should_stop()) run.interrupt();
    const std::vector<size_t> batch = run.claim_batch(per_batch);
    if (batch.empty()) break;
    struct Pending {
      size_t item;
      std::vector<Answer> answers;
      size_t remaining = 0;
    };
    std::vector<Pending> pending;
    std::vector<LoglikelihoodRequest> requests;
    std::vector<std::pair<size_t, size_t>> request_slot;  // request -> (pending, answer index)
    for (size_t i : batch) {
      std::vector<LoglikelihoodRequest>& mine = doc_requests[i];
      Pending p{i, std::vector<Answer>(mine.size()), mine.size()};
      for (size_t k = 0; k < mine.size(); ++k) {
        request_slot.emplace_back(pending.size(), k);
        requests.push_back(std::move(mine[k]));
      }
      mine = {};
      pending.push_back(std::move(p));
    }

    loglikelihood(*model, requests, opt, [&](size_t i, const LoglikelihoodAnswer& a) {
      const auto [pi, k] = request_slot[i];
      Pending& p = pending[pi];
      p.answers[k] = {a.logprob, a.is_greedy};
      if (--p.remaining > 0) return;
      const auto [t, d] = item_doc[p.item];
      run.finish(items[p.item].id, make_record(tasks[t].config.name, d, scoring_of(tasks[t].docs[d]), p.answers),
                 doc_tokens[p.item]);
      ++finished_here;
      if (run.should_stop() || (s.stop_after_docs >= 0 && finished_here >= s.stop_after_docs)) run.interrupt();
    });
  }

  std::vector<json> all_records;
  const json result = run.complete([&](const json& identity, const std::vector<json>& records) {
    all_records = records;
    return build_lm_eval_result(identity, records);
  });
  // Only the process that wrote the result holds every record (one shared run: rank 0).
  if (!s.log_samples_path.empty() && run.writes_result()) write_log_samples(s.log_samples_path, tasks, all_records);
  if (!s.output_path.empty() && run.writes_result() && result.contains("results")) {
    OutputTree tree{s.output_path, s.output_log_samples, s.model_args, s.batch_size_given, s.run.device,
                    s.limit,       s.limit_fraction,     start_time};
    const std::string path = write_output_tree(tree, result, tasks, all_records);
    std::fprintf(stderr, "[lm-eval] lm-eval's output tree: %s\n", path.c_str());
  }
  return result;
}

}  // namespace foxeval::lm_eval
