// Rows of a Hugging Face dataset split as Python sees them (`ds[i]`): one JSON object per row with
// its keys in column order (nlohmann::ordered_json), read from the files a split is stored in:
// .arrow (the datasets cache and save_to_disk: Arrow IPC streams), .parquet (the hub), .jsonl.
// Values are the Arrow values as datasets' formatter returns them for the features these tasks
// have (Value, ClassLabel: its int64 index, List/Sequence, dict): strings, ints (int64 stays an
// integer), floats, bools, None as null, lists as arrays, structs as objects.
#pragma once
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace foxeval {

// Every row of the files, in the order given (shards in order), then in file order. The extension
// of each file (.arrow, .parquet, .jsonl) picks its reader. Errors name the file and the row
// (.arrow, .parquet: 0-based) or line (.jsonl: 1-based). `sizes`, when given, receives the row
// count of each file.
std::vector<nlohmann::ordered_json> read_dataset_rows(const std::vector<std::string>& files,
                                                      std::vector<size_t>* sizes = nullptr);

// Where row `index` of the files is, for messages: "FILE row N" (N within that file) or "FILE line N".
// `sizes` are the row counts of each file, as read.
std::string dataset_row_where(const std::vector<std::string>& files, const std::vector<size_t>& sizes, size_t index);

// The same rows with keys sorted (nlohmann::json), for code that reads fields by name.
nlohmann::json sorted_json(const nlohmann::ordered_json& value);

}  // namespace foxeval
