// config.json's model_type -> family, and the model loaded once (LoadedModel).
// Adding a family = one folder in models/ whose model file registers it with one statement:
//   const FamilyRegistrar registered({"samba-project_fox", make_samba});
// (the build links the models layer whole, so no registration is dropped and no list is kept).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "data/content_digest.h"
#include "data/model_files.h"
#include "models/checkpoint/checkpoint.h"
#include "models/model.h"

namespace foxeval {

using FamilyFactory = std::unique_ptr<CausalLM> (*)(Checkpoint& checkpoint, const RunOptions& options);

struct FamilyEntry {
  const char* model_type;
  FamilyFactory make;
};

// Registers a family at static initialization; a second family of the same model_type is a
// logic_error (a programming error, found when the binary starts).
struct FamilyRegistrar {
  explicit FamilyRegistrar(FamilyEntry entry);
};

const std::vector<FamilyEntry>& model_families();  // every registered family, by model_type

// A model made once by load_model and read everywhere after: its files as resolved from --model
// (folder, repo@revision, tokenizer files), the digest of what foxeval reads from them, and the
// weights on options.device. Used as a pointer to its CausalLM (model->info(), *model, get()).
struct LoadedModel {
  ModelFiles files;
  ModelDigest digest;  // taken while the weights loaded (the same files, read once from disk)
  std::unique_ptr<CausalLM> model;

  CausalLM* get() const { return model.get(); }
  CausalLM* operator->() const { return model.get(); }
  CausalLM& operator*() const { return *model; }
  explicit operator bool() const { return model != nullptr; }
};

// Loads a Hugging Face checkpoint folder onto options.device and takes its digest meanwhile
// (`known`: a digest the caller took already, e.g. the suite's resume check; not taken again).
// Every error names the directory, file, field or tensor; unknown model_type lists the known ones.
LoadedModel load_model(const ModelFiles& files, const RunOptions& options, const ModelDigest* known = nullptr);
// The same for `model` as given (find_model_files first): for callers that resolve nothing else from it.
LoadedModel load_model(const std::string& model, const RunOptions& options);

// A task's model files: those of the model its caller loaded (`given`: a suite, once for all its
// tasks), else `model` (the task's --model) resolved now, once.
ModelFiles task_model_files(const std::shared_ptr<const LoadedModel>& given, const std::string& model);
// A task's model: `given`, else loaded now from `files`.
std::shared_ptr<const LoadedModel> task_model(const std::shared_ptr<const LoadedModel>& given, const ModelFiles& files,
                                              const RunOptions& options);

}  // namespace foxeval
