// Arrow values -> ParquetValueSink, shared by the Parquet reader and the Arrow IPC stream reader
// (datasets' cache files). Includes Arrow: only C++20 files (data/parquet_reader.cpp,
// data/arrow_*.cpp, see CMakeLists.txt) may include this header.
#pragma once
#include <arrow/api.h>

#include <cstdint>
#include <string>

#include "data/parquet_reader.h"

namespace foxeval::arrow_values {

// Every column of `schema` is a type JSON can hold (strings, integers, floats, bool, null, lists,
// structs, dictionary-encoded values), else Error naming `where`, the column and its Arrow type.
// Two columns (or two fields of a struct) of one name are refused too.
void check_schema(const arrow::Schema& schema, const std::string& where);

// Each row of `batch` as begin_row, key/value per column, end_row. Errors name `where` and the row
// (first_row + index in the batch).
void emit_rows(const arrow::RecordBatch& batch, int64_t first_row, ParquetValueSink& sink, const std::string& where);

}  // namespace foxeval::arrow_values
