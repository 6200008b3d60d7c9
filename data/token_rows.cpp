// open_token_rows: picks the reader from the path (a `.npy` file, or a zarr v2 directory).
#include <sys/stat.h>

#include <fmt/format.h>

#include "data/content_digest.h"
#include "data/errors.h"
#include "data/token_rows.h"
#include "data/zarr.h"

namespace foxeval {

std::string TokenRows::content_digest(int64_t nrows) const {
  Sha256 h;
  for (int64_t r = 0; r < nrows; ++r) {
    const std::vector<int64_t> row = read(r, 1, 0, row_length());
    h.update(row.data(), row.size() * sizeof(int64_t));
  }
  return combine_digests({{fmt::format("int64 rows [0, {}) of {} tokens", nrows, row_length()), h.hex()}});
}

std::unique_ptr<TokenRows> open_token_rows(const std::string& path) {
  const auto ends_with = [&](const std::string& suffix) {
    return path.size() >= suffix.size() &&
           path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".npy")) return open_npy_rows(path);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    throw Error(
        fmt::format("token data '{}' does not exist (need a .npy file or a zarr v2 "
                    "array directory)",
                    path));
  }
  if (S_ISDIR(st.st_mode)) {
    struct stat meta;
    const std::string zarray = path + "/.zarray";
    if (::stat(zarray.c_str(), &meta) == 0) return open_zarr_rows(path);
    throw Error(
        fmt::format("token data '{}' is a directory without a .zarray file (need a zarr "
                    "v2 array, not a group or a zarr v3 store)",
                    path));
  }
  throw Error(
      fmt::format("token data '{}' is neither a .npy file nor a zarr v2 array directory", path));
}

}  // namespace foxeval
