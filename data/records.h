// Benchmark records: one JSON object per record, from a .jsonl file or a .parquet file (the two
// forms benchmark data sets come in: LongBench's released data/ folder, Hugging Face parquet).
//
// .jsonl: every line is one JSON object. A blank line is an error (it would shift the line number of
// every later record); only the file's final newline may end it. So record i is line i + 1.
// .parquet: read through Apache Arrow C++ (data/parquet_reader.h); each row becomes an object
// {column: value}: strings, integers, floats, bools and nulls as themselves, lists as arrays,
// structs as objects (ARC's "choices": {"text": [...], "label": [...]}), dictionary-encoded
// values as their decoded value. Record i is row i (0-based, as datasets' ds[i]).
#pragma once
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "data/data_source.h"

namespace foxeval {

// Every record of the whole file, in file order. The extension (.jsonl or .parquet) picks the
// format. A .zip member (data/data_source.h) is read in place and must be .jsonl. Errors are
// foxeval::Error naming the file (or archive and member) and the line (jsonl, 1-based) or row (parquet).
std::vector<nlohmann::json> read_records(const DataSource& source);
inline std::vector<nlohmann::json> read_records(const std::string& path) { return read_records(DataSource::on_disk(path)); }

// Where record `index` is, for messages: "FILE line N" (.jsonl) or "FILE row N" (.parquet); FILE is
// "ARCHIVE:MEMBER" for a member.
std::string record_where(const DataSource& source, size_t index);
inline std::string record_where(const std::string& path, size_t index) { return record_where(DataSource::on_disk(path), index); }

// The record's field, or Error("WHERE: missing field 'x'"), with `where` from record_where.
const nlohmann::json& record_field(const nlohmann::json& record, std::string_view field, const std::string& where);
// The record's string field, or Error naming the field and the type it has instead.
const std::string& record_string(const nlohmann::json& record, std::string_view field, const std::string& where);

}  // namespace foxeval
