// What a result was made from, by content: every task's identity (the settings a journal, a
// state file, a shard part and `foxeval check` compare) names its model and data by SHA-256
// digests (data/content_digest.h); paths stay beside them as information only.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "models/registry.h"

namespace foxeval {

// The model part of every task's identity:
//   model               the resolved folder (information: where it was, not what it is)
//   model_digest        "sha256:..." over the files foxeval reads from it (weights, config, tokenizer)
//   model_digest_source how the files' SHA-256 were found (hub cache blob names, or hashed)
//   model_type, num_parameters, and log_pruning_tolerance when pruning is on (it changes numbers).
// All read from the LoadedModel (models/registry.h): its files, the digest load_model took, its info.
nlohmann::json model_identity(const LoadedModel& model);

// A digest of files by content ("sha256:..."): each file's SHA-256 under its name (the file name
// of a file given; for a folder, every regular file below it under its path relative to the
// folder, in code-point order), so a moved copy gives the same digest, a renamed or changed file
// another one. Files are hashed in parallel.
std::string digest_paths(const std::vector<std::string>& paths);

// Identity keys that say where things were, or how a digest was found, rather than what was
// computed: check and the comparable-settings rules leave them out.
const std::vector<std::string>& identity_information_keys();

}  // namespace foxeval
