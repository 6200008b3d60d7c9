// Documents of a text corpus, where researchers keep them: a .jsonl/.parquet/.arrow/.txt file or a
// folder of them, a folder written by datasets' save_to_disk, or a split in the local Hugging Face
// caches ("hf:ORG/NAME[:CONFIG]:SPLIT", found as data/datasets_cache.h does; never downloaded).
// `foxeval loss --text` tokenizes them (tasks/loss/loss_text.h).
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace foxeval {

struct TextSourceSpec {
  std::string source;  // as given to --text
  std::string field;   // the text field, a dotted path into structs ("document.text"); .txt files are whole documents
  std::string split;   // a save_to_disk DatasetDict's split ("" = its only split)
  std::string dedupe;  // a dotted field: keep the first document of each value ("" = keep all)
};

struct TextDocs {
  std::vector<std::string> docs;  // in file order (files in name order, shards in order)
  std::string description;        // for messages and the result: the file, folder or "ID (config, split) in the ... cache: FOLDER"
  nlohmann::json identity;        // where they came from: source kind, dataset, config, split, file names, field
  std::string digest;             // "sha256:..." of the text as read: each document's byte length (8 bytes, little endian) and bytes
  int64_t duplicates = 0;         // documents dropped by `dedupe`
};

// Reads every document. Errors (exit 2) name the file, the row or line and the field: a missing
// field, a value that is not a string, a source that is nowhere (listing the places looked at).
TextDocs read_text_docs(const TextSourceSpec& spec);

// The documents' digest as TextDocs::digest.
std::string text_docs_digest(const std::vector<std::string>& docs);

}  // namespace foxeval
