// Arrow IPC stream/file -> ParquetValueSink. Compiled as C++20 on its own (see arrow_ipc_reader.h):
// nothing here may include LibTorch or nlohmann::json.
#include "data/arrow_ipc_reader.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <arrow/ipc/reader.h>

#include <fstream>

#include "data/arrow_values.h"
#include "data/errors.h"

namespace foxeval {
namespace {

// The IPC file format starts with the 6 bytes "ARROW1"; a stream starts with a message.
bool is_ipc_file_format(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[6] = {};
  return in.read(magic, 6) && std::string(magic, 6) == "ARROW1";
}

}  // namespace

int64_t read_arrow_ipc(const std::string& path, ParquetValueSink& sink) {
  auto file = arrow::io::ReadableFile::Open(path);
  if (!file.ok()) throw Error(path + ": cannot open (" + file.status().ToString() + ")");
  int64_t rows = 0;
  if (is_ipc_file_format(path)) {
    auto opened = arrow::ipc::RecordBatchFileReader::Open(*file);
    if (!opened.ok()) throw Error(path + ": not an Arrow IPC file Arrow can read (" + opened.status().ToString() + ")");
    arrow::ipc::RecordBatchFileReader& reader = **opened;
    arrow_values::check_schema(*reader.schema(), path);
    for (int b = 0; b < reader.num_record_batches(); ++b) {
      auto batch = reader.ReadRecordBatch(b);
      if (!batch.ok()) throw Error(path + ": reading record batch " + std::to_string(b) + " failed (" + batch.status().ToString() + ")");
      arrow_values::emit_rows(**batch, rows, sink, path);
      rows += (*batch)->num_rows();
    }
    return rows;
  }
  auto opened = arrow::ipc::RecordBatchStreamReader::Open(*file);
  if (!opened.ok()) throw Error(path + ": not an Arrow IPC stream Arrow can read (" + opened.status().ToString() + ")");
  arrow::ipc::RecordBatchStreamReader& reader = **opened;
  // The schema is the stream's first message: every column is checked before any row is read.
  arrow_values::check_schema(*reader.schema(), path);
  for (;;) {
    std::shared_ptr<arrow::RecordBatch> batch;
    const arrow::Status st = reader.ReadNext(&batch);
    if (!st.ok()) throw Error(path + ": reading a record batch after row " + std::to_string(rows) + " failed (" + st.ToString() + ")");
    if (!batch) break;
    arrow_values::emit_rows(*batch, rows, sink, path);
    rows += batch->num_rows();
  }
  return rows;
}

}  // namespace foxeval
