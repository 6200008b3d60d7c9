// Parquet -> ParquetValueSink through Arrow C++. Compiled as C++20 on its own (see parquet_reader.h):
// nothing here may include LibTorch or nlohmann::json.
#include "data/parquet_reader.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>

#include "data/arrow_values.h"
#include "data/errors.h"

namespace foxeval {

void read_parquet(const std::string& path, ParquetValueSink& sink) {
  auto file = arrow::io::ReadableFile::Open(path);
  if (!file.ok()) throw Error(path + ": cannot open (" + file.status().ToString() + ")");
  auto opened = parquet::arrow::OpenFile(*file, arrow::default_memory_pool());
  if (!opened.ok()) throw Error(path + ": not a Parquet file Arrow can read (" + opened.status().ToString() + ")");
  parquet::arrow::FileReader& reader = **opened;

  // Every column is checked before any data is read.
  std::shared_ptr<arrow::Schema> schema;
  arrow::Status st = reader.GetSchema(&schema);
  if (!st.ok()) throw Error(path + ": cannot read the Parquet schema (" + st.ToString() + ")");
  arrow_values::check_schema(*schema, path);

  // One row group at a time: Arrow cannot read nested columns of several row groups into one
  // table ("Nested data conversions not implemented for chunked array outputs").
  int64_t first_row = 0;
  for (int g = 0; g < reader.num_row_groups(); ++g) {
    auto table = reader.ReadRowGroup(g);
    if (!table.ok())
      throw Error(path + ": reading row group " + std::to_string(g) + " failed (" + table.status().ToString() + ")");
    arrow::TableBatchReader batches(**table);
    std::shared_ptr<arrow::RecordBatch> batch;
    while (true) {
      st = batches.ReadNext(&batch);
      if (!st.ok()) throw Error(path + ": reading row group " + std::to_string(g) + " failed (" + st.ToString() + ")");
      if (!batch) break;
      arrow_values::emit_rows(*batch, first_row, sink, path);
      first_row += batch->num_rows();
    }
  }
}

}  // namespace foxeval
