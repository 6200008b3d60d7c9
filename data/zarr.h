// zarr v2 reader for 2-D token arrays (LongCrawl64's heldout.zarr: [52131, 65536] <u2, chunks
// [2048, 2048], blosc lz4). Reads a window by decompressing only the chunks it touches, keeps
// the most recently used chunks, and treats a missing chunk file as an error: zarr itself
// would return fill values there, which would silently poison the loss numbers.
#pragma once
#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "data/token_rows.h"

namespace foxeval {

// The parts of `.zarray` the reader uses, validated (parse_zarray names the bad field).
struct ZarrMeta {
  int64_t shape[2] = {0, 0};
  int64_t chunks[2] = {1, 1};
  std::string dtype;      // "<u2", "<i4" or "<i8"
  int64_t itemsize = 0;   // 2, 4 or 8
  std::string separator;  // "." (default) or "/": chunk key "i.j" or "i/j"
  bool blosc = false;     // false: chunks are stored raw (compressor null)
  std::string cname;      // blosc only; informational (blosc reads the codec from the chunk)
  int clevel = 0;
  int shuffle = 0;
};

// Parses and validates `.zarray` text; `where` names the file in error messages.
ZarrMeta parse_zarray(const std::string& json_text, const std::string& where);

struct ZarrOptions {
  // Decompressed chunks kept in memory. 0 = enough for one full chunk row plus one chunk
  // (at least 4), so reading whole documents one batch at a time decompresses each chunk once
  // (heldout.zarr: 33 chunks x 8 MiB).
  size_t cache_chunks = 0;
};

class ZarrRows final : public TokenRows {
 public:
  ZarrRows(const std::string& dir, const ZarrOptions& options);

  int64_t num_rows() const override { return meta_.shape[0]; }
  int64_t row_length() const override { return meta_.shape[1]; }
  // Thread-safe: the chunk cache is guarded; decompression runs outside the lock.
  std::vector<int64_t> read(int64_t row0, int64_t nrows, int64_t col0,
                            int64_t ncols) const override;
  std::string describe() const override;
  // .zarray and the chunk files of the chunk rows that rows [0, nrows) touch, hashed in parallel.
  std::string content_digest(int64_t nrows) const override;

  const ZarrMeta& meta() const { return meta_; }
  // How many chunk files have been decoded so far (tests check that the cache works).
  int64_t chunks_decoded() const { return chunks_decoded_.load(); }
  // The path of chunk (i, j), as zarr names it.
  std::string chunk_path(int64_t i, int64_t j) const;

 private:
  // A decoded full-size chunk (chunk_bytes_ long); shared so eviction never frees one in use.
  using Chunk = std::shared_ptr<const uint8_t[]>;
  Chunk get_chunk(int64_t i, int64_t j) const;
  Chunk decode_chunk(int64_t i, int64_t j) const;

  std::string dir_;
  ZarrMeta meta_;
  int64_t col_chunks_ = 0;     // chunks along a row
  size_t chunk_bytes_ = 0;     // one full-size decoded chunk
  size_t cache_capacity_ = 0;  // in chunks

  mutable std::mutex mu_;
  // LRU: front = most recent. Key = i * col_chunks_ + j.
  mutable std::list<std::pair<int64_t, Chunk>> lru_;
  mutable std::unordered_map<int64_t, std::list<std::pair<int64_t, Chunk>>::iterator> index_;
  mutable std::atomic<int64_t> chunks_decoded_{0};
};

std::unique_ptr<TokenRows> open_zarr_rows(const std::string& path, const ZarrOptions& options);

}  // namespace foxeval
