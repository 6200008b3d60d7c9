#include "tasks/suite/suite_run.h"

#include <c10/core/Device.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "data/content_digest.h"
#include "data/errors.h"
#include "data/hub_cache.h"
#include "data/json_file.h"
#include "models/registry.h"
#include "tasks/run/identity.h"
#include "tasks/run/pruning_header.h"
#include "tasks/results/report.h"
#include "tasks/run/result_file.h"
#include "tasks/results/results_table.h"

namespace fs = std::filesystem;

namespace foxeval::suite {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string output_path(const std::string& out_dir, const std::string& label, const SuiteEntry& e) {
  return (fs::path(out_dir) / label / (e.name + e.prepared.out_suffix)).string();
}

// A task is finished when its result file exists and nothing of a run is left beside it: the
// runner writes the result atomically and removes its journals (states) after it.
bool finished(const std::string& out_dir, const std::string& label, const SuiteEntry& e) {
  const fs::path result = fs::path(out_dir) / result_file(label, e);
  if (!fs::is_regular_file(result)) return false;
  const fs::path dir = result.parent_path();
  const std::string stem = result.filename().string();
  for (const auto& f : fs::directory_iterator(dir)) {
    const std::string n = f.path().filename().string();
    if (n.rfind(stem + ".journal", 0) == 0 || n.rfind(stem + ".state", 0) == 0) return false;
  }
  return true;
}

// What a task's result is made from, as the suite can say without running it: the entry's settings
// (those read as paths by their content's digest, so the same data elsewhere is the same), the cap,
// the device type, dtype, pruning tolerance and the model's digest. suite.json records it for each
// task; --resume refuses to keep a finished result whose record differs from what the entry gives now.
nlohmann::json entry_identity(const SuitePlan& plan, const SuiteEntry& e, const RunOptions& run,
                              const std::string& model_digest, std::map<std::string, std::string>& digests) {
  nlohmann::json id = e.settings;
  id.erase("name");    // where the result goes, not what it is
  id.erase("models");  // which models run it
  for (const auto& [key, path] : e.paths) {
    auto it = digests.find(path);
    if (it == digests.end()) it = digests.emplace(path, digest_paths({path})).first;
    id[key] = it->second;
  }
  id["cap"] = plan.cap;
  id["device_type"] = c10::Device(run.device).is_cuda() ? "cuda" : "cpu";
  id["dtype"] = run.dtype;
  id["log_pruning_tolerance"] = run.log_pruning_tolerance;
  id["model_digest"] = model_digest;
  return id;
}

// The task rows of an earlier run of this folder's suite.json that carry an identity, by
// "{label}/{name}" (none when the folder has no suite.json).
std::map<std::string, nlohmann::json> recorded_rows(const std::string& out_dir) {
  std::map<std::string, nlohmann::json> out;
  const fs::path p = fs::path(out_dir) / "suite.json";
  if (!fs::is_regular_file(p)) return out;
  const nlohmann::json s = read_json(p.string());
  for (const auto& t : s.value("tasks", nlohmann::json::array()))
    if (t.is_object() && t.contains("identity") && t.value("label", "") != "")
      out[t.value("label", "") + "/" + t.value("name", "")] = t;
  return out;
}

// --resume keeps a finished result only when it was made from what the entry gives now, as the
// runner keeps a journal only for the same identity: the suite.json record of the earlier run must
// equal `now`, and the result's own header must name the same model (by digest) and dtype.
void check_finished_result(const std::string& out_dir, const std::string& label, const SuiteEntry& e,
                           const nlohmann::json& now, const std::map<std::string, nlohmann::json>& recorded,
                           const std::string& plan_file) {
  const std::string what = label + "/" + e.name;
  const std::string result = (fs::path(out_dir) / result_file(label, e)).string();
  const std::string way_out = fmt::format(
      "To keep it, run with the suite file and flags it was made with; to run the task again with these settings, delete "
      "{} (or give another --out)",
      (fs::path(out_dir) / label / (e.name + e.prepared.out_suffix)).string());
  const auto it = recorded.find(what);
  if (it == recorded.end())
    throw Error(fmt::format("--resume: {} is finished, but {}/suite.json holds no record of the settings it was made with, "
                            "so it cannot be kept as the result of {}'s entry '{}'. {}",
                            result, out_dir, plan_file, e.name, way_out));
  nlohmann::json header_said = nlohmann::json::object(), header_now = nlohmann::json::object();
  const nlohmann::json r = read_json(result);
  const nlohmann::json hs = r.contains("header") ? r["header"].value("settings", nlohmann::json::object()) : nlohmann::json::object();
  for (const char* key : {"model_digest", "dtype"})
    if (hs.contains(key) && hs[key] != now[key]) header_said[key] = hs[key], header_now[key] = now[key];
  const nlohmann::json& then = it->second.at("identity");
  if (then == now && header_said.empty()) return;
  const nlohmann::json diff = then != now ? diff_fields(then, now) : diff_fields(header_said, header_now);
  std::string fields;
  for (const auto& d : diff) fields += (fields.empty() ? "" : "; ") + d.get<std::string>();
  throw Error(fmt::format("--resume: {} was made with other settings, model or data than {}'s entry '{}' gives now "
                          "(then vs now: {}); refusing to keep it. {}",
                          result, plan_file, e.name, fields, way_out));
}

}  // namespace

std::string result_file(const std::string& label, const SuiteEntry& e) {
  const std::string out = label + "/" + e.name + e.prepared.out_suffix;
  return e.prepared.result_in_folder.empty() ? out : out + "/" + e.prepared.result_in_folder;
}

nlohmann::json run_suite(const SuitePlan& plan, const SuiteRunSettings& s) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto runs_for = [](const SuiteEntry& e, const std::string& label) {
    return e.models.empty() || std::find(e.models.begin(), e.models.end(), label) != e.models.end();
  };
  size_t total = 0;
  for (const SuiteModel& m : plan.models)
    for (const SuiteEntry& e : plan.tasks) total += runs_for(e, m.label);
  // Before any model loads: every finished task that --resume would keep is checked against its entry.
  // Each model resolved and digested once: the resume check reads the digest, load_model takes both.
  std::map<std::string, std::string> model_digests, digests;
  std::map<std::string, ModelFiles> model_files;
  std::map<std::string, ModelDigest> model_full_digests;
  for (const SuiteModel& m : plan.models) {
    model_files[m.label] = find_model_files(m.model);
    model_full_digests[m.label] = model_digest(model_files[m.label].dir);
    model_digests[m.label] = model_full_digests[m.label].digest;
  }
  const auto identity_of = [&](const SuiteModel& m, const SuiteEntry& e) {
    return entry_identity(plan, e, s.run, model_digests.at(m.label), digests);
  };
  // An earlier run's rows (--resume): each finished task is checked against its row, and rows this
  // run has not reached yet are carried into every suite.json it writes before the end, so a second
  // stop (or another rank reading the file while rank 0 rewrites it) loses no record.
  const std::map<std::string, nlohmann::json> recorded = s.resume ? recorded_rows(s.out_dir) : std::map<std::string, nlohmann::json>{};
  if (s.resume) {
    for (const SuiteModel& m : plan.models)
      for (const SuiteEntry& e : plan.tasks)
        if (runs_for(e, m.label) && finished(s.out_dir, m.label, e))
          check_finished_result(s.out_dir, m.label, e, identity_of(m, e), recorded, plan.file);
  }
  size_t index = 0;
  nlohmann::json models = nlohmann::json::array(), tasks = nlohmann::json::array();
  std::vector<std::string> files, labels;
  // suite.json after every task (complete: false until the end), so a stopped suite's finished
  // tasks keep the record --resume checks them by.
  const auto suite_json = [&](bool complete) {
    nlohmann::json listed = tasks;
    if (!complete) {
      std::set<std::string> here;
      for (const auto& t : tasks) here.insert(t.value("label", "") + "/" + t.value("name", ""));
      for (const auto& [key, row] : recorded)
        if (!here.count(key)) listed.push_back(row);
    }
    nlohmann::json out = {{"header", result_header("suite", plan.settings, seconds_since(t0))},
                          {"kind", "foxeval-suite"},
                          {"suite", plan.file},
                          {"complete", complete},
                          {"models", models},
                          {"tasks", listed},
                          {"device", s.run.device},
                          {"dtype", s.run.dtype},
                          {"wall_s", seconds_since(t0)}};
    if (s.writes_outputs) write_json_atomic((fs::path(s.out_dir) / "suite.json").string(), out);
    return out;
  };
  for (const SuiteModel& m : plan.models) {
    // A model whose tasks are all finished is not loaded at all.
    bool all_done = s.resume;
    for (const SuiteEntry& e : plan.tasks) all_done = all_done && (!runs_for(e, m.label) || finished(s.out_dir, m.label, e));
    std::shared_ptr<const LoadedModel> model;
    double load_s = 0;
    if (!all_done) {
      const auto tl = std::chrono::steady_clock::now();
      std::fprintf(stderr, "[suite] model %s: loading %s\n", m.label.c_str(), m.model.c_str());
      model = std::make_shared<const LoadedModel>(load_model(model_files.at(m.label), s.run, &model_full_digests.at(m.label)));
      load_s = seconds_since(tl);
    }
    fs::create_directories(fs::path(s.out_dir) / m.label);
    models.push_back({{"label", m.label},
                      {"model", m.model},
                      {"model_digest", model_digests.at(m.label)},
                      {"load_s", load_s}});
    for (const SuiteEntry& e : plan.tasks) {
      if (!runs_for(e, m.label)) continue;
      ++index;
      const std::string out = output_path(s.out_dir, m.label, e);
      const std::string what = fmt::format("{}/{}", m.label, e.name);
      nlohmann::json row = {{"label", m.label}, {"task", e.task}, {"name", e.name}, {"result", result_file(m.label, e)},
                            {"identity", identity_of(m, e)}};
      files.push_back((fs::path(s.out_dir) / result_file(m.label, e)).string());
      labels.push_back(m.label);
      if (s.resume && finished(s.out_dir, m.label, e)) {
        std::fprintf(stderr, "[suite] %zu/%zu %s: finished earlier, skipped\n", index, total, what.c_str());
        row["status"] = "finished earlier";
        tasks.push_back(row);
        suite_json(false);
        continue;
      }
      std::fprintf(stderr, "[suite] %zu/%zu %s: %s (%.1f s into the suite)\n", index, total, what.c_str(), e.task.c_str(),
                   seconds_since(t0));
      std::fflush(stderr);
      TaskContext c;
      c.label = m.label;
      c.model_dir = m.model;
      c.model = model;
      c.run = s.run;
      c.out_path = out;
      c.resume = s.resume;
      c.num_shards = s.num_shards;
      c.shard_index = s.shard_index;
      c.ranks = s.ranks;
      c.stop_after = s.stop_at == what ? s.stop_after : -1;
      set_pruning_origin(model ? model->get() : nullptr);  // each task's header counts its own pruning only
      const auto tt = std::chrono::steady_clock::now();
      e.prepared.run(c);
      row["status"] = "ran";
      row["wall_s"] = seconds_since(tt);
      std::fprintf(stderr, "[suite] %zu/%zu %s: done in %.1f s\n", index, total, what.c_str(), row["wall_s"].get<double>());
      tasks.push_back(row);
      suite_json(false);
    }
  }
  if (s.writes_outputs && s.num_shards == 1) {
    const std::vector<std::pair<const char*, results::Format>> formats = {
        {"md", results::Format::Markdown}, {"tex", results::Format::Latex}, {"csv", results::Format::Csv}};
    for (const auto& [ext, format] : formats)
      write_text_atomic((fs::path(s.out_dir) / fmt::format("tables.{}", ext)).string(),
                        results::table_from_files(files, labels, format, false));
    report::ReportOptions ro;
    ro.title = plan.title;
    report::write_report(files, labels, (fs::path(s.out_dir) / "report.html").string(), ro);
  }
  const nlohmann::json out = suite_json(true);
  std::fprintf(stderr, "[suite] %zu tasks of %zu models in %.1f s: %s\n", total, plan.models.size(), seconds_since(t0),
               s.out_dir.c_str());
  return out;
}

}  // namespace foxeval::suite
