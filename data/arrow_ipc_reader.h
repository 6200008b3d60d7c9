// Arrow IPC files through Apache Arrow's C++ library: the `.arrow` files of the Hugging Face
// `datasets` cache and of `Dataset.save_to_disk` (both IPC *streams*, written by datasets'
// ArrowWriter; the IPC file format, "ARROW1" magic, is read too).
//
// As data/parquet_reader.h: Arrow's headers need C++20, so only data/arrow_ipc_reader.cpp sees
// them; this header passes values through the plain-C++ ParquetValueSink.
#pragma once
#include <cstdint>
#include <string>

#include "data/parquet_reader.h"

namespace foxeval {

// Every row of the file at `path`, in order, into `sink` (values as read_parquet gives them:
// strings, integers, floats, bools, nulls, lists, structs, decoded dictionaries; other column
// types are refused before any row is read). Returns the number of rows. Errors are
// foxeval::Error naming the file (and the row, 0-based, where a row is at fault).
int64_t read_arrow_ipc(const std::string& path, ParquetValueSink& sink);

}  // namespace foxeval
