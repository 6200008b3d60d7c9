// One split of a Hugging Face dataset, found where researchers already have it: the `datasets`
// Arrow cache, the huggingface_hub cache, or a folder written by `Dataset(Dict).save_to_disk`.
// foxeval never downloads: a lookup either names the files or says where it looked.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace foxeval {

// The dataset, config ("" when the loader names none: datasets' default) and split to find.
struct HfSplit {
  std::string repo_id, config, split;
};

// The files that hold the split, in shard order, and where they were found.
struct HfSplitFiles {
  std::string kind;    // "datasets cache", "hub cache" or "save_to_disk"
  std::string folder;  // the hash folder, the snapshot folder or the save_to_disk folder
  std::string config;  // the config folder used ("" for save_to_disk and config-less hub repos)
  std::vector<std::string> files;
  int64_t num_rows = -1;  // what dataset_info.json / state.json say the split holds; -1: unknown
};

// A cache root and the setting that chose it, for messages.
struct CacheRoot {
  std::string path, from;
};

// The `datasets` cache as datasets (2.x to 5.x, config.py) picks it: $HF_DATASETS_CACHE, else
// $HF_HOME/datasets, with HF_HOME defaulting to $XDG_CACHE_HOME/huggingface and XDG_CACHE_HOME to
// ~/.cache. Only a leading ~ is expanded (datasets calls expanduser, never expandvars). A variable
// set to the empty string counts as unset (as data/hub_cache.h).
CacheRoot datasets_cache_root();

// The split in the datasets Arrow cache: {root}/{name} or {root}/{org}___{name} (name through
// datasets' camelcase_to_snakecase) / {config} / {version} / {hash} / {prefix}-{split}.arrow or
// {prefix}-{split}-NNNNN-of-NNNNN.arrow. As datasets' offline reload (packaged_modules/cache,
// _find_hash_in_cache): the config folders whose dataset_info.json names the same config, then the
// newest version/hash folder by modification time; with no config, any config folder, and several
// configs at that newest version/hash are refused as datasets refuses them. Each place tried is
// appended to `looked` (with why it did not do).
std::optional<HfSplitFiles> find_in_datasets_cache(const HfSplit& want, std::vector<std::string>* looked);

// The split in the hub cache (data/hub_cache.h hub_cache_dir()): datasets--{org}--{name}
// (datasets--{name})/refs/main -> snapshots/{commit}/, then under {config}/ when the config has a
// folder (else the snapshot itself, for no config or "default"), the first of Hugging Face's
// split-file conventions that matches: data/{split}-NNNNN-of-NNNNN.parquet, {split}-NNNNN-of-NNNNN.parquet,
// {split}.parquet, {split}-*.parquet, {split}/*.parquet, data/{split}.parquet, data/{split}-*.parquet;
// files in name order (the zero-padded shard order).
std::optional<HfSplitFiles> find_in_hub_cache(const HfSplit& want, std::vector<std::string>* looked);

// True when `dir` was written by save_to_disk: a Dataset (state.json) or a DatasetDict
// (dataset_dict.json and a folder per split).
bool is_saved_dataset(const std::string& dir);

// The split of a save_to_disk folder: a DatasetDict's {split}/ folder, or a Dataset folder whose
// state.json names that split (or none). Files from state.json's _data_files, in order.
std::optional<HfSplitFiles> find_in_saved_dataset(const std::string& dir, const std::string& split,
                                                  std::vector<std::string>* looked);

// datasets' camelcase_to_snakecase ("SuperGLUE" -> "super_glue").
std::string camelcase_to_snakecase(const std::string& name);

}  // namespace foxeval
