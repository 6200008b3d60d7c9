// A 2-D array of token ids, one document per row, read by windows (npy or zarr).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace foxeval {

class TokenRows {
 public:
  virtual ~TokenRows() = default;
  virtual int64_t num_rows() const = 0;
  virtual int64_t row_length() const = 0;
  // Reads rows [row0, row0 + nrows) and columns [col0, col0 + ncols) as int64, row-major.
  // Throws foxeval::Error naming the file/chunk on any read problem.
  virtual std::vector<int64_t> read(int64_t row0, int64_t nrows, int64_t col0, int64_t ncols) const = 0;
  // Human-readable identity (path, dtype, shape) recorded in result files.
  virtual std::string describe() const = 0;
  // The data as read, by content ("sha256:..."): what reading rows [0, nrows) takes from disk
  // (npy: the header and those rows' bytes; zarr: .zarray and every chunk file those rows touch).
  // The same bytes under another path give the same digest. This default hashes the values read.
  virtual std::string content_digest(int64_t nrows) const;
};

// Opens `path`: a `.npy` file, or a zarr v2 array directory (with a `.zarray` file).
std::unique_ptr<TokenRows> open_token_rows(const std::string& path);

// The .npy reader alone (uint16, int32, int64; C order; memory-mapped).
std::unique_ptr<TokenRows> open_npy_rows(const std::string& path);
// The zarr v2 reader alone (see data/zarr.h).
std::unique_ptr<TokenRows> open_zarr_rows(const std::string& path);

}  // namespace foxeval
