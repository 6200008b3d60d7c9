// Parquet files read through Apache Arrow's C++ library (the pyarrow wheel's libarrow/libparquet).
//
// Why this boundary: Arrow's C++ headers need C++20 (std::span, std::bit_width) while foxeval is
// C++17 (LibTorch). Only data/parquet_reader.cpp includes Arrow, compiled as C++20 in its own object
// library (CMakeLists.txt: foxeval_parquet). This header holds no Arrow, no nlohmann::json and no
// type whose layout depends on the language mode: the reader hands every value to a sink through
// plain C types, and the caller (data/records.cpp) builds its JSON in C++17.
// Both sides use the cxx11 std::string ABI (_GLIBCXX_USE_CXX11_ABI=1), as LibTorch and the pyarrow
// wheel do; foxeval::Error crosses the boundary as a std::runtime_error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace foxeval {

// Receives the values of a Parquet file row by row, in column order, nested values depth first.
class ParquetValueSink {
 public:
  virtual ~ParquetValueSink() = default;
  virtual void begin_row() = 0;  // an object holding one value per top-level column
  virtual void end_row() = 0;
  virtual void key(const char* data, size_t size) = 0;  // column or struct field name, before its value
  virtual void null_value() = 0;
  virtual void bool_value(bool value) = 0;
  virtual void int_value(int64_t value) = 0;
  virtual void uint_value(uint64_t value) = 0;
  virtual void double_value(double value) = 0;
  virtual void string_value(const char* data, size_t size) = 0;  // UTF-8 as stored
  virtual void begin_list() = 0;
  virtual void end_list() = 0;
  virtual void begin_struct() = 0;
  virtual void end_struct() = 0;
};

// Reads the whole file `path` into `sink`. Columns of types JSON cannot hold (binary, decimal,
// dates, maps, ...) are refused before any row is read, naming the column and the Arrow type.
// Errors are foxeval::Error naming the file (and the row, 0-based, where a row is at fault).
void read_parquet(const std::string& path, ParquetValueSink& sink);

}  // namespace foxeval
