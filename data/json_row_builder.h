// Builds one JSON object per row from a ParquetValueSink's callbacks (data/parquet_reader.h,
// data/arrow_ipc_reader.h). `Json` is nlohmann::json (keys sorted) or nlohmann::ordered_json (keys
// in column order, as Python's dict of a datasets row: lm-eval's doc_hash dumps that order).
#pragma once
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "data/errors.h"
#include "data/parquet_reader.h"
#include "data/utf8.h"

namespace foxeval {

template <typename Json>
class JsonRowBuilderT final : public ParquetValueSink {
 public:
  explicit JsonRowBuilderT(std::vector<Json>& rows) : rows_(rows) {}

  void begin_row() override { open(Json::object()); }
  void end_row() override {
    rows_.push_back(std::move(*stack_.back()));
    stack_.clear();
    row_.reset();
  }
  void key(const char* data, size_t size) override { key_.assign(data, size); }
  void null_value() override { put(nullptr); }
  void bool_value(bool v) override { put(v); }
  void int_value(int64_t v) override { put(v); }
  void uint_value(uint64_t v) override { put(v); }
  void double_value(double v) override { put(v); }
  void string_value(const char* data, size_t size) override {
    std::string_view s(data, size);
    // Parquet/Arrow declare strings UTF-8 but Arrow does not check; invalid bytes would only fail
    // later, far from the file, when the record is dumped.
    if (utf8::first_invalid(s) != std::string_view::npos)
      throw Error(fmt::format("field '{}': a string is not valid UTF-8", key_));
    put(std::string(s));
  }
  void begin_list() override { open(Json::array()); }
  void end_list() override { stack_.pop_back(); }
  void begin_struct() override { open(Json::object()); }
  void end_struct() override { stack_.pop_back(); }

 private:
  // Places `v` in the innermost open container (under the last key for objects) and returns it.
  Json* put(Json v) {
    Json& parent = *stack_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    Json& slot = parent[key_];
    slot = std::move(v);
    return &slot;
  }
  void open(Json container) {
    if (stack_.empty()) {
      row_ = std::make_unique<Json>(std::move(container));
      stack_.push_back(row_.get());
    } else {
      stack_.push_back(put(std::move(container)));
    }
  }

  std::vector<Json>& rows_;
  std::unique_ptr<Json> row_;
  std::vector<Json*> stack_;  // open containers, the row first
  std::string key_;
};

}  // namespace foxeval
