// `foxeval info --model DIR`: family, the config that matters, parameter count.
#include <fmt/format.h>

#include <cstdio>

#include "cli/command.h"
#include "data/content_digest.h"
#include "data/hub_cache.h"
#include "models/registry.h"

namespace foxeval {
namespace {

CommandRegistrar info_command([](CLI::App& root) {
  auto dir = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = root.add_subcommand("info", "Describe a checkpoint (loads and checks every tensor)");
  cmd->add_option("--model", *dir, "checkpoint folder, or Hugging Face repo id (org/name[@revision]) in the local cache")->required();
  cmd->add_flag("--json", *json, "print JSON");
  cmd->callback([dir, json] {
    auto model = load_model(*dir, RunOptions{});
    const ModelInfo& i = model->info();
    const ModelDigest d = model_digest(resolve_model_dir(*dir));  // taken while it loaded
    if (*json) {
      nlohmann::json j = {{"directory", i.directory}, {"model_type", i.model_type}, {"family", i.family},
                          {"hidden_size", i.hidden_size}, {"num_layers", i.num_layers},
                          {"vocab_size", i.vocab_size}, {"num_parameters", i.num_parameters}};
      for (const auto& [k, v] : i.settings) j["settings"][k] = v;
      j["digest"] = d.digest;
      j["digest_source"] = d.source;
      for (const auto& [name, hex] : d.files) j["files"][name] = "sha256:" + hex;
      std::printf("%s\n", j.dump(2).c_str());
      return;
    }
    std::printf("%s\n", fmt::format("{}\n  family       {}\n  model_type   {}\n  parameters   {} ({:.1f}M)\n"
                                    "  hidden_size  {}\n  layers       {}\n  vocab_size   {}",
                                    i.directory, i.family, i.model_type, i.num_parameters, i.num_parameters / 1e6,
                                    i.hidden_size, i.num_layers, i.vocab_size)
                            .c_str());
    for (const auto& [k, v] : i.settings) std::printf("  %-12s %s\n", k.c_str(), v.c_str());
    std::printf("  digest       %s (%s)\n", d.digest.c_str(), d.source.c_str());
  });
});

}  // namespace
}  // namespace foxeval
