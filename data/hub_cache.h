// Models by name, as users have them: a Hugging Face repo id ("org/name" or "name", optionally
// "@revision") found in the local Hugging Face cache that `hf download` (formerly `huggingface-cli
// download`) fills. foxeval never downloads.
#pragma once
#include <string>

namespace foxeval {

// `spec` as given to --model. An existing directory is returned as is. Otherwise "org/name[@rev]" or
// "name[@rev]" is looked up in the hub cache (hub_cache_dir()): models--{org}--{name} (models--{name}
// without an organisation)/refs/{rev} (default "main") holds a commit hash whose snapshots/{hash}/
// folder is the model (a 40-hex revision may also name snapshots/{rev}/ directly). A spec that is
// neither a directory nor a valid repo id (huggingface_hub's validate_repo_id: nothing that could
// leave the cache) throws Error saying why. When the model is not in the cache, the error names every
// path searched and the `hf download` command that fetches it.
std::string resolve_model_dir(const std::string& spec);

// The hub cache folder exactly as huggingface_hub picks it: $HF_HUB_CACHE, else the legacy
// $HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub, where HF_HOME defaults to $XDG_CACHE_HOME/huggingface
// and XDG_CACHE_HOME to ~/.cache; a leading ~ and $VAR/${VAR} are expanded (unset variables stay as
// written). One deviation: a variable set to the empty string counts as unset.
std::string hub_cache_dir();

// Python's os.path.expanduser: a leading "~" or "~user" becomes that home folder ($HOME for "~",
// else the password database); a user that cannot be found leaves the path as written. (The
// datasets cache, data/datasets_cache.h, expands only this, where huggingface_hub also expands $VAR.)
std::string python_expanduser(const std::string& path);

// Why `repo_id` is not a valid Hugging Face repo id ("name" or "namespace/name"; each part of
// [A-Za-z0-9_.-], 1 to 96 characters, starting and ending with a letter, digit or '_'; no "--" or
// "..", no ".git" ending), or "" when it is one.
std::string repo_id_problem(const std::string& repo_id);

// Repo id ("org/name" or "name") and revision of a spec that names a hub repo, or empty strings for
// a local path or anything that is not a valid repo id.
struct HubModelId {
  std::string repo_id, revision;
};
HubModelId parse_hub_model_id(const std::string& spec);

// What result identities record as "model": the resolved directory, made absolute (a repo id
// becomes its snapshot folder, which names the commit).
std::string model_identity_path(const std::string& spec);

// The repo id and commit of a snapshot folder of the hub cache (".../models--org--name/snapshots/
// <commit>" or ".../models--name/snapshots/<commit>"), or empty strings for any other folder: result
// headers record them.
HubModelId hub_model_of_path(const std::string& path);

}  // namespace foxeval
