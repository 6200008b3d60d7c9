#include "tasks/suite/suite_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "data/content_digest.h"
#include "data/errors.h"
#include "data/hub_cache.h"
#include "data/json_file.h"
#include "models/registry.h"
#include "tasks/pruning_header.h"
#include "tasks/report.h"
#include "tasks/result_file.h"
#include "tasks/results_table.h"

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
  size_t index = 0;
  nlohmann::json models = nlohmann::json::array(), tasks = nlohmann::json::array();
  std::vector<std::string> files, labels;
  for (const SuiteModel& m : plan.models) {
    // A model whose tasks are all finished is not loaded at all.
    bool all_done = s.resume;
    for (const SuiteEntry& e : plan.tasks) all_done = all_done && (!runs_for(e, m.label) || finished(s.out_dir, m.label, e));
    std::unique_ptr<CausalLM> model;
    double load_s = 0;
    if (!all_done) {
      const auto tl = std::chrono::steady_clock::now();
      std::fprintf(stderr, "[suite] model %s: loading %s\n", m.label.c_str(), m.model.c_str());
      model = load_model(m.model, s.run);
      load_s = seconds_since(tl);
    }
    fs::create_directories(fs::path(s.out_dir) / m.label);
    models.push_back({{"label", m.label},
                      {"model", m.model},
                      {"model_digest", model_digest(resolve_model_dir(m.model)).digest},
                      {"load_s", load_s}});
    for (const SuiteEntry& e : plan.tasks) {
      if (!runs_for(e, m.label)) continue;
      ++index;
      const std::string out = output_path(s.out_dir, m.label, e);
      const std::string what = fmt::format("{}/{}", m.label, e.name);
      nlohmann::json row = {{"label", m.label}, {"task", e.task}, {"name", e.name}, {"result", result_file(m.label, e)}};
      files.push_back((fs::path(s.out_dir) / result_file(m.label, e)).string());
      labels.push_back(m.label);
      if (s.resume && finished(s.out_dir, m.label, e)) {
        std::fprintf(stderr, "[suite] %zu/%zu %s: finished earlier, skipped\n", index, total, what.c_str());
        row["status"] = "finished earlier";
        tasks.push_back(row);
        continue;
      }
      std::fprintf(stderr, "[suite] %zu/%zu %s: %s (%.1f s into the suite)\n", index, total, what.c_str(), e.task.c_str(),
                   seconds_since(t0));
      std::fflush(stderr);
      TaskContext c;
      c.label = m.label;
      c.model_dir = m.model;
      c.model = model.get();
      c.run = s.run;
      c.out_path = out;
      c.resume = s.resume;
      c.num_shards = s.num_shards;
      c.shard_index = s.shard_index;
      c.stop_after = s.stop_at == what ? s.stop_after : -1;
      set_pruning_origin(model.get());  // each task's header counts its own pruning only
      const auto tt = std::chrono::steady_clock::now();
      e.prepared.run(c);
      row["status"] = "ran";
      row["wall_s"] = seconds_since(tt);
      std::fprintf(stderr, "[suite] %zu/%zu %s: done in %.1f s\n", index, total, what.c_str(), row["wall_s"].get<double>());
      tasks.push_back(row);
    }
  }
  nlohmann::json suite = {{"kind", "foxeval-suite"},
                          {"suite", plan.file},
                          {"models", models},
                          {"tasks", tasks},
                          {"device", s.run.device},
                          {"dtype", s.run.dtype}};
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
  nlohmann::json out = {{"header", result_header("suite", plan.settings, seconds_since(t0))}};
  out.update(suite);
  out["wall_s"] = seconds_since(t0);
  if (s.writes_outputs) write_json_atomic((fs::path(s.out_dir) / "suite.json").string(), out);
  std::fprintf(stderr, "[suite] %zu tasks of %zu models in %.1f s: %s\n", total, plan.models.size(), seconds_since(t0),
               s.out_dir.c_str());
  return out;
}

}  // namespace foxeval::suite
