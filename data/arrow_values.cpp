// See data/arrow_values.h. Compiled as C++20 (Arrow's headers need it).
#include "data/arrow_values.h"

#include <arrow/util/float16.h>

#include <set>
#include <string_view>

#include "data/errors.h"

namespace foxeval::arrow_values {
namespace {

// The Arrow types a JSON value can hold without loss of meaning. `where` names the column path
// ("choices.text[]") for the error.
void check_supported(const arrow::DataType& type, const std::string& path, const std::string& where) {
  switch (type.id()) {
    case arrow::Type::NA:
    case arrow::Type::BOOL:
    case arrow::Type::INT8:
    case arrow::Type::INT16:
    case arrow::Type::INT32:
    case arrow::Type::INT64:
    case arrow::Type::UINT8:
    case arrow::Type::UINT16:
    case arrow::Type::UINT32:
    case arrow::Type::UINT64:
    case arrow::Type::HALF_FLOAT:
    case arrow::Type::FLOAT:
    case arrow::Type::DOUBLE:
    case arrow::Type::STRING:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::STRING_VIEW:
      return;
    case arrow::Type::LIST:
    case arrow::Type::LARGE_LIST:
    case arrow::Type::FIXED_SIZE_LIST:
      check_supported(*type.field(0)->type(), path + "[]", where);
      return;
    case arrow::Type::STRUCT: {
      std::set<std::string> names;
      for (const auto& f : type.fields()) {
        if (!names.insert(f->name()).second)
          throw Error(where + ": column '" + path + "' has two fields named '" + f->name() + "'");
        check_supported(*f->type(), path + "." + f->name(), where);
      }
      return;
    }
    case arrow::Type::DICTIONARY:
      check_supported(*static_cast<const arrow::DictionaryType&>(type).value_type(), path, where);
      return;
    default:
      throw Error(where + ": column '" + path + "' has Arrow type " + type.ToString() +
                  ", which foxeval does not map to JSON (supported: strings, integers, floats, bool, null, "
                  "lists, structs, dictionary-encoded values)");
  }
}

template <typename ArrayType>
const ArrayType& as(const arrow::Array& a) {
  return static_cast<const ArrayType&>(a);
}

template <typename ListArrayType>
void emit_list(const ListArrayType& a, int64_t i, ParquetValueSink& sink);

// Value i of `a` (types checked by check_supported first).
void emit(const arrow::Array& a, int64_t i, ParquetValueSink& sink) {
  if (a.IsNull(i)) {
    sink.null_value();
    return;
  }
  switch (a.type_id()) {
    case arrow::Type::NA: sink.null_value(); return;
    case arrow::Type::BOOL: sink.bool_value(as<arrow::BooleanArray>(a).Value(i)); return;
    case arrow::Type::INT8: sink.int_value(as<arrow::Int8Array>(a).Value(i)); return;
    case arrow::Type::INT16: sink.int_value(as<arrow::Int16Array>(a).Value(i)); return;
    case arrow::Type::INT32: sink.int_value(as<arrow::Int32Array>(a).Value(i)); return;
    case arrow::Type::INT64: sink.int_value(as<arrow::Int64Array>(a).Value(i)); return;
    case arrow::Type::UINT8: sink.uint_value(as<arrow::UInt8Array>(a).Value(i)); return;
    case arrow::Type::UINT16: sink.uint_value(as<arrow::UInt16Array>(a).Value(i)); return;
    case arrow::Type::UINT32: sink.uint_value(as<arrow::UInt32Array>(a).Value(i)); return;
    case arrow::Type::UINT64: sink.uint_value(as<arrow::UInt64Array>(a).Value(i)); return;
    case arrow::Type::HALF_FLOAT:
      sink.double_value(arrow::util::Float16::FromBits(as<arrow::HalfFloatArray>(a).Value(i)).ToDouble());
      return;
    case arrow::Type::FLOAT: sink.double_value(as<arrow::FloatArray>(a).Value(i)); return;
    case arrow::Type::DOUBLE: sink.double_value(as<arrow::DoubleArray>(a).Value(i)); return;
    case arrow::Type::STRING: {
      std::string_view s = as<arrow::StringArray>(a).GetView(i);
      sink.string_value(s.data(), s.size());
      return;
    }
    case arrow::Type::LARGE_STRING: {
      std::string_view s = as<arrow::LargeStringArray>(a).GetView(i);
      sink.string_value(s.data(), s.size());
      return;
    }
    case arrow::Type::STRING_VIEW: {
      std::string_view s = as<arrow::StringViewArray>(a).GetView(i);
      sink.string_value(s.data(), s.size());
      return;
    }
    case arrow::Type::LIST: emit_list(as<arrow::ListArray>(a), i, sink); return;
    case arrow::Type::LARGE_LIST: emit_list(as<arrow::LargeListArray>(a), i, sink); return;
    case arrow::Type::FIXED_SIZE_LIST: emit_list(as<arrow::FixedSizeListArray>(a), i, sink); return;
    case arrow::Type::STRUCT: {
      const auto& s = as<arrow::StructArray>(a);
      const auto& fields = s.struct_type()->fields();
      sink.begin_struct();
      for (int f = 0; f < s.num_fields(); ++f) {
        sink.key(fields[f]->name().data(), fields[f]->name().size());
        emit(*s.field(f), i, sink);  // field() is already sliced to the struct's offset
      }
      sink.end_struct();
      return;
    }
    case arrow::Type::DICTIONARY: {
      const auto& d = as<arrow::DictionaryArray>(a);
      emit(*d.dictionary(), d.GetValueIndex(i), sink);
      return;
    }
    default:
      throw Error("Arrow type " + a.type()->ToString() + " reached the reader unchecked");
  }
}

// value_offset(i) indexes the unsliced values() array, for every list kind.
template <typename ListArrayType>
void emit_list(const ListArrayType& a, int64_t i, ParquetValueSink& sink) {
  const arrow::Array& values = *a.values();
  const int64_t begin = a.value_offset(i), end = begin + a.value_length(i);
  sink.begin_list();
  for (int64_t k = begin; k < end; ++k) emit(values, k, sink);
  sink.end_list();
}

}  // namespace

void check_schema(const arrow::Schema& schema, const std::string& where) {
  std::set<std::string> names;
  for (const auto& f : schema.fields()) {
    if (!names.insert(f->name()).second) throw Error(where + ": two columns are named '" + f->name() + "'");
    check_supported(*f->type(), f->name(), where);
  }
}

void emit_rows(const arrow::RecordBatch& batch, int64_t first_row, ParquetValueSink& sink, const std::string& where) {
  // Arrow's readers leave buffer contents unchecked (offsets, dictionary indices): a damaged file
  // must be an error here, not reads out of bounds in emit(). Invalid UTF-8 alone (checked after a
  // string array's offsets) is left to emit(), whose error names the row and field.
  const auto& fields = batch.schema()->fields();
  for (int c = 0; c < batch.num_columns(); ++c)
    if (const arrow::Status st = batch.column(c)->ValidateFull(); !st.ok() && st.message().find("UTF8") == std::string::npos)
      throw Error(where + ": column '" + fields[c]->name() + "' of the record batch at row " + std::to_string(first_row) +
                  " is malformed (" + st.ToString() + ")");
  for (int64_t r = 0; r < batch.num_rows(); ++r) {
    try {
      sink.begin_row();
      for (int c = 0; c < batch.num_columns(); ++c) {
        sink.key(fields[c]->name().data(), fields[c]->name().size());
        emit(*batch.column(c), r, sink);
      }
      sink.end_row();
    } catch (const Error& e) {
      throw Error(where + " row " + std::to_string(first_row + r) + ": " + e.what());
    }
  }
}

}  // namespace foxeval::arrow_values
