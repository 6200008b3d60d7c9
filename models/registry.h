// The one place that maps config.json's model_type to a family.
// Adding a family = one folder in models/ plus one line in registry.cpp.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "models/checkpoint.h"
#include "models/model.h"

namespace foxeval {

using FamilyFactory = std::unique_ptr<CausalLM> (*)(Checkpoint& checkpoint, const RunOptions& options);

struct FamilyEntry {
  const char* model_type;
  FamilyFactory make;
};

const std::vector<FamilyEntry>& model_families();

// Loads a Hugging Face checkpoint directory onto options.device. Every error names the
// directory, file, field or tensor; unknown model_type lists the known ones.
std::unique_ptr<CausalLM> load_model(const std::string& directory, const RunOptions& options);

}  // namespace foxeval
