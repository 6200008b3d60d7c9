#include "models/registry.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <future>

#include "data/content_digest.h"
#include "data/errors.h"
#include "data/switches.h"
#include "data/hub_cache.h"
#include "data/named_registry.h"
#include "models/cpu_threads.h"

namespace fs = std::filesystem;

namespace foxeval {

namespace {

NamedRegistry<FamilyEntry>& families() {
  static NamedRegistry<FamilyEntry> r("model family", [](const FamilyEntry& f) { return std::string(f.model_type); });
  return r;
}

}  // namespace

FamilyRegistrar::FamilyRegistrar(FamilyEntry entry) { families().add(entry); }

const std::vector<FamilyEntry>& model_families() { return families().entries(); }

namespace {

// "760.3M", "13.99M", "174.3K": parameters as a reader compares them.
std::string parameter_count(int64_t n) {
  if (n >= 1000000000) return fmt::format("{:.2f}B", n / 1e9);
  if (n >= 1000000) return fmt::format("{:.1f}M", n / 1e6);
  if (n >= 1000) return fmt::format("{:.1f}K", n / 1e3);
  return std::to_string(n);
}

// One line on stderr before a run's work: what runs, where, and with which numerics.
void announce(const std::string& dir, const ModelDigest& digest, const CausalLM& model, const RunOptions& options) {
  const ModelInfo& info = model.info();
  std::string pruning;
  for (const auto& [key, value] : info.settings)
    if (key == "log_pruning_tolerance") pruning = value;
  // The CPU threads as set (cli --threads, OMP_NUM_THREADS or the usable cores), not as asked.
  std::string numerics = fmt::format("device {}, dtype {}, threads {}", options.device, options.dtype, cpu_threads());
  if (!options.chosen.empty()) numerics += " (" + options.chosen + ")";
  if (info.family.rfind("FoX", 0) == 0)
    numerics += pruning.empty() ? ", pruning off" : ", log_pruning_tolerance " + pruning;
  // Every FOXEVAL_* switch off its default (data/switches.h), numerics or not.
  const std::string switches = nondefault_switches_text();
  std::fprintf(stderr, "[foxeval] model %s (%s, %s): %s, %s parameters; %s%s%s\n", dir.c_str(), digest.digest.c_str(),
               digest.source.c_str(), info.family.c_str(), parameter_count(info.num_parameters).c_str(), numerics.c_str(),
               options.settings.empty() ? "" : ("; " + options.settings).c_str(),
               switches.empty() ? "" : ("; switches " + switches).c_str());
  std::fflush(stderr);
}

}  // namespace

LoadedModel load_model(const ModelFiles& files, const RunOptions& options, const ModelDigest* known) {
  const std::string& dir = files.dir;
  // The content digest (data/content_digest.h) is taken while the weights load: the same files, read
  // once from disk into the page cache; the LoadedModel keeps it for the identities.
  std::future<ModelDigest> digest;
  if (!known) digest = std::async(std::launch::async, [dir] { return model_digest(dir); });
  Checkpoint checkpoint(dir);
  const std::string model_type = checkpoint.model_type();
  std::string known_types;
  for (const auto& family : model_families()) {
    if (model_type == family.model_type) {
      LoadedModel loaded;
      loaded.model = family.make(checkpoint, options);
      checkpoint.finish();
      loaded.files = files;
      loaded.digest = known ? *known : digest.get();
      if (options.announce) announce(fs::weakly_canonical(dir).string(), loaded.digest, *loaded.model, options);
      return loaded;
    }
    known_types += (known_types.empty() ? "" : ", ") + std::string(family.model_type);
  }
  throw Error(fmt::format("{}: unknown model_type \"{}\" (known: {})", checkpoint.config().path(), model_type, known_types));
}

LoadedModel load_model(const std::string& model, const RunOptions& options) {
  return load_model(find_model_files(model), options);
}

ModelFiles task_model_files(const std::shared_ptr<const LoadedModel>& given, const std::string& model) {
  return given ? given->files : find_model_files(model);
}

std::shared_ptr<const LoadedModel> task_model(const std::shared_ptr<const LoadedModel>& given, const ModelFiles& files,
                                              const RunOptions& options) {
  return given ? given : std::make_shared<const LoadedModel>(load_model(files, options));
}

}  // namespace foxeval
