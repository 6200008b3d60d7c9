// Which files a model folder may have foxeval read: only plain file names (no '/', '..' or
// absolute paths, whatever an index file or a config names), and only files that, with every
// symlink resolved, lie inside the folder. A snapshot of the Hugging Face hub cache
// (models--org--name/snapshots/<commit>/) links its files to ../../blobs/: there the repo's own
// folder (models--org--name/) is the boundary.
//
// ModelFiles: a model as given (--model: a folder, or a hub repo id "org/name[@revision]") resolved
// once into where its files are. models/registry.h's load_model takes it and keeps it in the
// LoadedModel it makes (with the digest and the weights); the tokenizer (data/tokenizer.h) and the
// tasks read it instead of resolving the string again.
#pragma once
#include <string>

#include "data/hub_cache.h"

namespace foxeval {

// True for a name that is one path component: not empty, no '/', not "." or "..", no control characters.
bool is_plain_file_name(const std::string& name);

// dir/name after the checks above; throws foxeval::Error naming `where` (e.g. the index file and
// its field) otherwise. A file that does not exist is returned as is (the caller says it is missing).
std::string model_file(const std::string& dir, const std::string& name, const std::string& where);

struct ModelFiles {
  std::string spec;           // as given (--model, a suite's model)
  std::string dir;            // resolve_model_dir(spec): the folder every file is read from
  std::string identity_path;  // model_identity_path(spec): what result identities record as "model"
  HubModelId hub;             // repo id and revision as given; empty strings for a local folder
  // The folder's GPT-2 tokenizer pair, each "" where the folder has no such regular file (then the
  // bundled files serve, data/tokenizer.h: Gpt2Tokenizer::load).
  std::string vocab_json, merges_txt;
};

// Resolves `spec` (data/hub_cache.h resolve_model_dir: its errors name what was searched) and looks
// for the tokenizer pair. Reads no file's content.
ModelFiles find_model_files(const std::string& spec);

}  // namespace foxeval
