#include "models/registry.h"

#include <fmt/format.h>

#include "data/errors.h"
#include "data/hub_cache.h"
#include "models/delta_net/delta_net_model.h"
#include "models/fox/fox_model.h"
#include "models/hgrn2/hgrn2_model.h"
#include "models/mamba2/mamba2_model.h"

namespace foxeval {

const std::vector<FamilyEntry>& model_families() {
  // model_type (config.json) -> family. One line per family.
  static const std::vector<FamilyEntry> families = {
      {"forgetting_transformer-project_fox", make_forgetting_transformer},
      {"transformer-project_fox", make_transformer},
      {"mamba2-project_fox", make_mamba2},
      {"hgrn2-project_fox", make_hgrn2},
      {"delta_net-project_fox", make_delta_net},
  };
  return families;
}

std::unique_ptr<CausalLM> load_model(const std::string& model, const RunOptions& options) {
  Checkpoint checkpoint(resolve_model_dir(model));
  const std::string model_type = checkpoint.model_type();
  std::string known;
  for (const auto& family : model_families()) {
    if (model_type == family.model_type) {
      std::unique_ptr<CausalLM> model = family.make(checkpoint, options);
      checkpoint.finish();
      return model;
    }
    known += (known.empty() ? "" : ", ") + std::string(family.model_type);
  }
  throw Error(fmt::format("{}: unknown model_type \"{}\" (known: {})", checkpoint.config().path(), model_type, known));
}

}  // namespace foxeval
