// Models by name, as users have them: a Hugging Face repo id ("org/name", optionally
// "org/name@revision") found in the local Hugging Face cache that `huggingface-cli download` fills.
// foxeval never downloads.
#pragma once
#include <string>

namespace foxeval {

// `spec` as given to --model. An existing directory is returned as is. Otherwise "org/name[@rev]"
// is looked up in the hub cache: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub;
// models--{org}--{name}/refs/{rev} (default "main") holds a commit hash whose snapshots/{hash}/
// folder is the model (a 40-hex revision may also name snapshots/{rev}/ directly). When nothing is
// found, the error names every path searched and the command that fetches the model.
std::string resolve_model_dir(const std::string& spec);

// "org/name" and revision of a spec that names a hub repo, or empty strings for a local path.
struct HubModelId {
  std::string repo_id, revision;
};
HubModelId parse_hub_model_id(const std::string& spec);

// What result identities record as "model": the resolved directory, made absolute (a repo id
// becomes its snapshot folder, which names the commit).
std::string model_identity_path(const std::string& spec);

// The repo id and commit of a snapshot folder of the hub cache (".../models--org--name/snapshots/
// <commit>"), or empty strings for any other folder: result headers record them.
HubModelId hub_model_of_path(const std::string& path);

}  // namespace foxeval
