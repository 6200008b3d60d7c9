// zarr v2 reader: `.zarray` validation, chunk decoding (blosc via its thread-safe context API,
// or raw), and cropping decoded chunks into a window. See zarr.h for why a missing chunk is an
// error rather than fill values.
#include "data/zarr.h"

#include <blosc.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "data/content_digest.h"
#include "data/errors.h"
#include "data/json_file.h"

namespace foxeval {
namespace {

using nlohmann::json;

[[noreturn]] void bad_field(const std::string& where, const std::string& field,
                            const std::string& what) {
  throw Error(fmt::format("zarr metadata '{}': field '{}' {}", where, field, what));
}

const json& require(const json& j, const std::string& where, const std::string& field) {
  auto it = j.find(field);
  if (it == j.end()) bad_field(where, field, "is missing");
  return *it;
}

// A 2-element list of integers, each >= min_value.
void read_pair(const json& j, const std::string& where, const std::string& field, int64_t min_value,
               int64_t out[2]) {
  const json& v = require(j, where, field);
  if (!v.is_array() || v.size() != 2) {
    bad_field(where, field,
              fmt::format("must be a list of 2 integers (a 2-D array), got {}", v.dump()));
  }
  for (int k = 0; k < 2; ++k) {
    if (!v[k].is_number_integer() || v[k].get<int64_t>() < min_value) {
      bad_field(where, field, fmt::format("must hold integers >= {}, got {}", min_value, v.dump()));
    }
    out[k] = v[k].get<int64_t>();
  }
}

// Host byte order must match the stored little-endian data (true on x86-64 and aarch64).
bool host_is_little_endian() {
  const uint16_t one = 1;
  uint8_t b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

// Reads a whole file. On failure returns false with `error` = what happened ("is missing"
// for ENOENT, so the caller can say why a missing chunk is not read as fill values).
// At most `max_bytes`: the size is checked before anything is read (a 12 GB file where a chunk of
// a few MB belongs is refused at once), and only a regular file is read (O_NONBLOCK: a FIFO is
// refused without waiting for a writer).
bool read_file(const std::string& path, std::vector<uint8_t>& out, std::string& error, size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error =
        errno == ENOENT ? "is missing" : fmt::format("cannot be opened: {}", std::strerror(errno));
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    error = fmt::format("cannot be stat'ed: {}", std::strerror(errno));
    ::close(fd);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    error = "is not a regular file (a FIFO, device or folder)";
    ::close(fd);
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    error = fmt::format("is {} bytes, more than the {} it can hold", static_cast<uint64_t>(st.st_size), max_bytes);
    ::close(fd);
    return false;
  }
  out.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = fmt::format("cannot be read: {}", n < 0 ? std::strerror(errno) : "short read");
      ::close(fd);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return true;
}

template <typename T>
void copy_rect(const uint8_t* chunk, int64_t chunk_cols, int64_t r0, int64_t c0, int64_t nr,
               int64_t nc, int64_t* dst, int64_t dst_stride) {
  for (int64_t r = 0; r < nr; ++r) {
    const uint8_t* src = chunk + ((r0 + r) * chunk_cols + c0) * static_cast<int64_t>(sizeof(T));
    int64_t* d = dst + r * dst_stride;
    for (int64_t c = 0; c < nc; ++c) {
      T v;
      std::memcpy(&v, src + c * static_cast<int64_t>(sizeof(T)), sizeof(T));
      d[c] = static_cast<int64_t>(v);
    }
  }
}

}  // namespace

ZarrMeta parse_zarray(const std::string& json_text, const std::string& where) {
  check_json_depth(json_text, fmt::format("zarr metadata '{}'", where));  // messages dump fields (recursively)
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {
    throw Error(fmt::format("zarr metadata '{}': not valid JSON: {}", where, e.what()));
  }
  if (!j.is_object()) throw Error(fmt::format("zarr metadata '{}': not a JSON object", where));
  ZarrMeta m;

  const json& fmt_v = require(j, where, "zarr_format");
  if (!fmt_v.is_number_integer() || fmt_v.get<int64_t>() != 2) {
    bad_field(where, "zarr_format", fmt::format("must be 2, got {}", fmt_v.dump()));
  }
  read_pair(j, where, "shape", 0, m.shape);
  read_pair(j, where, "chunks", 1, m.chunks);

  const json& dt = require(j, where, "dtype");
  if (!dt.is_string())
    bad_field(where, "dtype", fmt::format("must be a string, got {}", dt.dump()));
  m.dtype = dt.get<std::string>();
  if (m.dtype == "<u2")
    m.itemsize = 2;
  else if (m.dtype == "<i4")
    m.itemsize = 4;
  else if (m.dtype == "<i8")
    m.itemsize = 8;
  else
    bad_field(where, "dtype", fmt::format("'{}' is not supported (need <u2, <i4 or <i8)", m.dtype));

  // One decoded chunk lives in memory at a time per cache slot, and blosc 1.x buffers are
  // limited to 2 GiB: refuse chunk shapes beyond that (and any overflow of the product).
  if (m.chunks[0] > (int64_t{BLOSC_MAX_BUFFERSIZE} / m.itemsize) / m.chunks[1]) {
    bad_field(where, "chunks",
              fmt::format("[{}, {}] x {} bytes exceeds blosc's {} byte buffer limit", m.chunks[0],
                          m.chunks[1], m.itemsize, BLOSC_MAX_BUFFERSIZE));
  }

  const json& order = require(j, where, "order");
  if (order != "C") bad_field(where, "order", fmt::format("must be \"C\", got {}", order.dump()));

  // Integer arrays: fill_value is an integer or null. It is never used: missing chunks are errors.
  const json& fill = require(j, where, "fill_value");
  if (!fill.is_null() && !fill.is_number_integer()) {
    bad_field(where, "fill_value", fmt::format("must be an integer or null, got {}", fill.dump()));
  }

  auto filters = j.find("filters");
  if (filters != j.end() && !filters->is_null() && !(filters->is_array() && filters->empty())) {
    bad_field(where, "filters",
              fmt::format("must be null (no filters supported), got {}", filters->dump()));
  }

  m.separator = ".";
  auto sep = j.find("dimension_separator");
  if (sep != j.end() && !sep->is_null()) {
    if (*sep != "." && *sep != "/") {
      bad_field(where, "dimension_separator",
                fmt::format("must be \".\" or \"/\", got {}", sep->dump()));
    }
    m.separator = sep->get<std::string>();
  }

  const json& comp = require(j, where, "compressor");
  if (!comp.is_null()) {
    if (!comp.is_object())
      bad_field(where, "compressor", fmt::format("must be an object or null, got {}", comp.dump()));
    auto id = comp.find("id");
    if (id == comp.end() || *id != "blosc") {
      bad_field(where, "compressor", fmt::format("only blosc is supported, got {}", comp.dump()));
    }
    m.blosc = true;
    auto cname = comp.find("cname");
    static const char* kNames[] = {"lz4", "lz4hc", "zstd", "blosclz", "zlib", "snappy"};
    if (cname == comp.end() || !cname->is_string() ||
        std::none_of(std::begin(kNames), std::end(kNames),
                     [&](const char* n) { return *cname == n; })) {
      bad_field(where, "compressor.cname",
                fmt::format("must be one of lz4, lz4hc, zstd, blosclz, zlib, snappy; got {}",
                            cname == comp.end() ? "nothing" : cname->dump()));
    }
    m.cname = cname->get<std::string>();
    auto clevel = comp.find("clevel");
    if (clevel == comp.end() || !clevel->is_number_integer() || *clevel < 0 || *clevel > 9) {
      bad_field(where, "compressor.clevel", "must be an integer in 0..9");
    }
    m.clevel = clevel->get<int>();
    // -1 is numcodecs' AUTOSHUFFLE; blosc records the shuffle it used in each chunk's header.
    auto shuffle = comp.find("shuffle");
    if (shuffle == comp.end() || !shuffle->is_number_integer() || *shuffle < -1 || *shuffle > 2) {
      bad_field(where, "compressor.shuffle", "must be -1, 0, 1 or 2");
    }
    m.shuffle = shuffle->get<int>();
  }
  return m;
}

ZarrRows::ZarrRows(const std::string& dir, const ZarrOptions& options) : dir_(dir) {
  while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
  if (!host_is_little_endian()) throw Error("zarr reader: big-endian hosts are not supported");
  const std::string meta_path = dir_ + "/.zarray";
  std::vector<uint8_t> meta_bytes;
  std::string error;
  constexpr size_t kMaxMeta = size_t{1} << 20;  // a .zarray is a few hundred bytes
  if (!read_file(meta_path, meta_bytes, error, kMaxMeta))
    throw Error(fmt::format("zarr array '{}': '{}' {}", dir_, meta_path, error));
  meta_ = parse_zarray(std::string(meta_bytes.begin(), meta_bytes.end()), meta_path);
  col_chunks_ = std::max<int64_t>(1, (meta_.shape[1] + meta_.chunks[1] - 1) / meta_.chunks[1]);
  chunk_bytes_ = static_cast<size_t>(meta_.chunks[0] * meta_.chunks[1] * meta_.itemsize);
  cache_capacity_ = options.cache_chunks > 0
                        ? options.cache_chunks
                        : std::max<size_t>(4, static_cast<size_t>(col_chunks_) + 1);
  // Decoded chunks held at once stay under kMaxCacheBytes (at least 2): a .zarray of a few large
  // chunks (a blosc bomb: tiny files that inflate to 2 GiB each) cannot fill memory through the cache.
  constexpr size_t kMaxCacheBytes = size_t{1} << 30;
  cache_capacity_ = std::max<size_t>(2, std::min(cache_capacity_, kMaxCacheBytes / std::max<size_t>(1, chunk_bytes_)));
}

std::string ZarrRows::chunk_path(int64_t i, int64_t j) const {
  return fmt::format("{}/{}{}{}", dir_, i, meta_.separator, j);
}

std::string ZarrRows::describe() const {
  const std::string comp = meta_.blosc ? fmt::format("blosc({}, clevel {}, shuffle {})",
                                                     meta_.cname, meta_.clevel, meta_.shuffle)
                                       : std::string("none");
  return fmt::format("zarr:{} dtype={} shape=[{}, {}] chunks=[{}, {}] compressor={}", dir_,
                     meta_.dtype, meta_.shape[0], meta_.shape[1], meta_.chunks[0], meta_.chunks[1],
                     comp);
}

std::string ZarrRows::content_digest(int64_t nrows) const {
  if (nrows < 0 || nrows > meta_.shape[0])
    throw Error(fmt::format("zarr array '{}': digest of rows [0, {}): the array has {} rows", dir_, nrows, meta_.shape[0]));
  const int64_t chunk_rows = (nrows + meta_.chunks[0] - 1) / meta_.chunks[0];
  // One path string per chunk: the count is bounded before any is made (a 200-byte .zarray can
  // declare 10^18 chunks).
  constexpr int64_t kMaxDigestChunks = int64_t{1} << 24;
  if (chunk_rows > kMaxDigestChunks / col_chunks_)
    throw Error(fmt::format("zarr array '{}': rows [0, {}) span {} x {} chunk files, more than the {} foxeval reads; "
                            "rechunk the array into larger chunks",
                            dir_, nrows, chunk_rows, col_chunks_, kMaxDigestChunks));
  std::vector<std::string> names, paths;
  for (int64_t i = 0; i < chunk_rows; ++i)
    for (int64_t j = 0; j < col_chunks_; ++j) {
      paths.push_back(chunk_path(i, j));
      names.push_back(paths.back().substr(dir_.size() + 1));
    }
  for (const std::string& p : paths) {  // the message a read would give, not a file-system error
    std::error_code ec;
    const auto st = std::filesystem::status(p, ec);
    if (!std::filesystem::exists(st))
      throw Error(fmt::format("zarr chunk '{}' is missing (zarr would read fill values there)", p));
    if (!std::filesystem::is_regular_file(st))
      throw Error(fmt::format("zarr chunk '{}' is not a regular file (a FIFO, device or folder)", p));
  }
  const std::vector<std::string> hashed = sha256_files(paths);
  std::vector<std::pair<std::string, std::string>> parts = {{".zarray", sha256_file(dir_ + "/.zarray")}};
  for (size_t k = 0; k < paths.size(); ++k) parts.emplace_back(names[k], hashed[k]);
  return combine_digests(parts);
}

ZarrRows::Chunk ZarrRows::decode_chunk(int64_t i, int64_t j) const {
  const std::string path = chunk_path(i, j);
  std::vector<uint8_t> raw;
  std::string error;
  // A blosc chunk is at most its decoded size plus blosc's header overhead; a raw one exactly its size.
  if (!read_file(path, raw, error, chunk_bytes_ + (meta_.blosc ? BLOSC_MAX_OVERHEAD : 0))) {
    throw Error(
        fmt::format("zarr chunk '{}' {}{}", path, error,
                    error == "is missing" ? " (zarr would read it as fill values; refusing)" : ""));
  }
  std::shared_ptr<uint8_t[]> out(new uint8_t[chunk_bytes_]);
  if (!meta_.blosc) {
    if (raw.size() != chunk_bytes_) {
      throw Error(fmt::format("zarr chunk '{}': {} bytes, expected {} (uncompressed chunk)", path,
                              raw.size(), chunk_bytes_));
    }
    std::memcpy(out.get(), raw.data(), chunk_bytes_);
  } else {
    // blosc 1.x's decompressor trusts the header's compressed size, so check it against the
    // file first: a truncated chunk must be an error, never a read past the buffer.
    size_t nbytes = 0, cbytes = 0, blocksize = 0;
    if (raw.size() < BLOSC_MIN_HEADER_LENGTH) {
      throw Error(fmt::format("zarr chunk '{}': {} bytes is too short for a blosc header", path,
                              raw.size()));
    }
    blosc_cbuffer_sizes(raw.data(), &nbytes, &cbytes, &blocksize);
    if (cbytes != raw.size()) {
      throw Error(
          fmt::format("zarr chunk '{}': blosc header says {} compressed bytes, file has {} "
                      "(truncated or corrupt)",
                      path, cbytes, raw.size()));
    }
    if (nbytes != chunk_bytes_) {
      throw Error(fmt::format(
          "zarr chunk '{}': decompresses to {} bytes, expected {} (chunk "
          "shape [{}, {}] x {} bytes)",
          path, nbytes, chunk_bytes_, meta_.chunks[0], meta_.chunks[1], meta_.itemsize));
    }
    size_t checked = 0;
    if (blosc_cbuffer_validate(raw.data(), raw.size(), &checked) != 0 || checked != chunk_bytes_) {
      throw Error(fmt::format("zarr chunk '{}': not a valid blosc buffer", path));
    }
    const int n = blosc_decompress_ctx(raw.data(), out.get(), chunk_bytes_, 1);
    if (n < 0 || static_cast<size_t>(n) != chunk_bytes_) {
      throw Error(
          fmt::format("zarr chunk '{}': blosc decompression failed (returned {}, "
                      "expected {} bytes)",
                      path, n, chunk_bytes_));
    }
  }
  chunks_decoded_.fetch_add(1);
  return out;
}

ZarrRows::Chunk ZarrRows::get_chunk(int64_t i, int64_t j) const {
  const int64_t key = i * col_chunks_ + j;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);  // mark most recent
      return it->second->second;
    }
  }
  // Decode without the lock: a concurrent reader of the same chunk may decode it twice, which
  // wastes time but stays correct.
  Chunk chunk = decode_chunk(i, j);
  std::lock_guard<std::mutex> lock(mu_);
  if (index_.find(key) == index_.end()) {
    lru_.emplace_front(key, chunk);
    index_[key] = lru_.begin();
    while (lru_.size() > cache_capacity_) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }
  return chunk;
}

std::vector<int64_t> ZarrRows::read(int64_t row0, int64_t nrows, int64_t col0,
                                    int64_t ncols) const {
  if (row0 < 0 || nrows < 0 || col0 < 0 || ncols < 0 || row0 + nrows > meta_.shape[0] ||
      col0 + ncols > meta_.shape[1]) {
    throw Error(
        fmt::format("zarr array '{}': window rows [{}, {}) x cols [{}, {}) is outside "
                    "the array's shape [{}, {}]",
                    dir_, row0, row0 + nrows, col0, col0 + ncols, meta_.shape[0], meta_.shape[1]));
  }
  std::vector<int64_t> out(static_cast<size_t>(nrows * ncols));
  if (nrows == 0 || ncols == 0) return out;
  const int64_t cr = meta_.chunks[0], cc = meta_.chunks[1];
  // Chunk rows outer, chunk columns inner: each touched chunk is fetched once per read, and
  // the LRU then holds the latest chunk row for the next window.
  for (int64_t i = row0 / cr; i <= (row0 + nrows - 1) / cr; ++i) {
    const int64_t r_lo = std::max(row0, i * cr), r_hi = std::min(row0 + nrows, (i + 1) * cr);
    for (int64_t j = col0 / cc; j <= (col0 + ncols - 1) / cc; ++j) {
      const int64_t c_lo = std::max(col0, j * cc), c_hi = std::min(col0 + ncols, (j + 1) * cc);
      const Chunk chunk = get_chunk(i, j);
      int64_t* dst = out.data() + (r_lo - row0) * ncols + (c_lo - col0);
      // Edge chunks are stored full-size; the crop to the array's shape happens here.
      switch (meta_.itemsize) {
        case 2:
          copy_rect<uint16_t>(chunk.get(), cc, r_lo - i * cr, c_lo - j * cc, r_hi - r_lo,
                              c_hi - c_lo, dst, ncols);
          break;
        case 4:
          copy_rect<int32_t>(chunk.get(), cc, r_lo - i * cr, c_lo - j * cc, r_hi - r_lo,
                             c_hi - c_lo, dst, ncols);
          break;
        default:
          copy_rect<int64_t>(chunk.get(), cc, r_lo - i * cr, c_lo - j * cc, r_hi - r_lo,
                             c_hi - c_lo, dst, ncols);
          break;
      }
    }
  }
  return out;
}

std::unique_ptr<TokenRows> open_zarr_rows(const std::string& path, const ZarrOptions& options) {
  return std::make_unique<ZarrRows>(path, options);
}

std::unique_ptr<TokenRows> open_zarr_rows(const std::string& path) {
  return open_zarr_rows(path, ZarrOptions{});
}

}  // namespace foxeval
