// .npy reader: parses the header (format versions 1.0, 2.0 and 3.0), checks that the file is
// a 2-D, C-ordered array of <u2, <i4 or <i8 whose data fits in the file, then memory-maps it so
// a window read touches only the pages it needs (held-out arrays are gigabytes).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <map>

#include "data/content_digest.h"
#include "data/errors.h"
#include "data/token_rows.h"

namespace foxeval {
namespace {

// The header is a Python dict literal, e.g.
//   {'descr': '<u2', 'fortran_order': False, 'shape': (5, 700), }
// numpy writes only strings, booleans and tuples of ints into it; this parses just that.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  NpyHeader parse() {
    NpyHeader h;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') break;
      const std::string key = parse_string();
      expect(':');
      skip_ws();
      if (key == "descr") {
        h.descr = parse_string();
        have_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = parse_bool();
        have_order = true;
      } else if (key == "shape") {
        h.shape = parse_int_tuple();
        have_shape = true;
      } else {
        fail(fmt::format("unexpected key '{}'", key));
      }
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      --pos_;  // let the loop head see the closing brace
    }
    if (!have_descr) fail("missing 'descr'");
    if (!have_order) fail("missing 'fortran_order'");
    if (!have_shape) fail("missing 'shape'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("npy file '{}': bad header ({}): {}", path_, what, s_));
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skip_ws();
    if (peek() != c) fail(fmt::format("expected '{}' at offset {}", c, pos_));
    ++pos_;
  }
  std::string parse_string() {
    skip_ws();
    const char q = peek();
    if (q != '\'' && q != '"') fail(fmt::format("expected a string at offset {}", pos_));
    const size_t end = s_.find(q, pos_ + 1);
    if (end == std::string::npos) fail("unterminated string");
    std::string out = s_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return out;
  }
  bool parse_bool() {
    if (s_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (s_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    fail("'fortran_order' is not True or False");
  }
  std::vector<int64_t> parse_int_tuple() {
    expect('(');
    std::vector<int64_t> out;
    while (true) {
      skip_ws();
      if (peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("'shape' is not a tuple of ints");
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (v > (INT64_MAX - 9) / 10) fail("'shape' entry too large");
        v = v * 10 + (s_[pos_++] - '0');
      }
      out.push_back(v);
      skip_ws();
      if (peek() == ',')
        ++pos_;
      else if (peek() != ')')
        fail("'shape' is not a tuple of ints");
    }
    ++pos_;
    return out;
  }

  const std::string& s_;
  const std::string& path_;
  size_t pos_ = 0;
};

// Read with pread, never through a mapping: a file that shrinks under a run (truncated, rewritten)
// then gives a clear error for the rows that are gone, not a SIGBUS.
class NpyRows final : public TokenRows {
 public:
  explicit NpyRows(const std::string& path) : path_(path) { open(); }
  ~NpyRows() override {
    if (fd_ >= 0) ::close(fd_);
  }
  NpyRows(const NpyRows&) = delete;
  NpyRows& operator=(const NpyRows&) = delete;

  int64_t num_rows() const override { return rows_; }
  int64_t row_length() const override { return cols_; }

  std::vector<int64_t> read(int64_t row0, int64_t nrows, int64_t col0,
                            int64_t ncols) const override {
    if (row0 < 0 || nrows < 0 || col0 < 0 || ncols < 0 || row0 + nrows > rows_ ||
        col0 + ncols > cols_) {
      throw Error(
          fmt::format("npy file '{}': window rows [{}, {}) x cols [{}, {}) is outside "
                      "the array's shape [{}, {}]",
                      path_, row0, row0 + nrows, col0, col0 + ncols, rows_, cols_));
    }
    std::vector<int64_t> out(static_cast<size_t>(nrows * ncols));
    // Whole rows are one contiguous block: one read; a column window is read row by row.
    const bool whole = col0 == 0 && ncols == cols_;
    const int64_t block_rows = whole ? nrows : 1;
    std::vector<uint8_t> buf(static_cast<size_t>(block_rows * ncols * itemsize_));
    for (int64_t r = 0; r < nrows; r += block_rows) {
      read_exactly(buf.data(), buf.size(), data_offset_ + ((row0 + r) * cols_ + col0) * itemsize_);
      for (int64_t k = 0; k < block_rows; ++k) {
        const uint8_t* src = buf.data() + k * ncols * itemsize_;
        int64_t* dst = out.data() + (r + k) * ncols;
        switch (itemsize_) {  // the dtype is fixed by the itemsize: u2, i4 or i8
          case 2:
            copy_row<uint16_t>(src, dst, ncols);
            break;
          case 4:
            copy_row<int32_t>(src, dst, ncols);
            break;
          default:
            copy_row<int64_t>(src, dst, ncols);
            break;
        }
      }
    }
    return out;
  }

  std::string describe() const override {
    return fmt::format("npy:{} dtype={} shape=[{}, {}]", path_, descr_, rows_, cols_);
  }

  std::string content_digest(int64_t nrows) const override {
    if (nrows < 0 || nrows > rows_) fail(fmt::format("digest of rows [0, {}): the array has {} rows", nrows, rows_));
    const int64_t bytes = nrows * cols_ * itemsize_;
    return combine_digests({{"npy header", sha256_file(path_, 0, data_offset_)},
                            {fmt::format("rows [0, {})", nrows), sha256_file(path_, data_offset_, bytes)}});
  }

 private:
  template <typename T>
  static void copy_row(const uint8_t* src, int64_t* dst, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, src + i * sizeof(T), sizeof(T));  // data is not aligned in general
      dst[i] = static_cast<int64_t>(v);
    }
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(fmt::format("npy file '{}': {}", path_, what));
  }

  void read_exactly(uint8_t* dst, size_t n, int64_t offset) const {
    size_t done = 0;
    while (done < n) {
      const ssize_t got = ::pread(fd_, dst + done, n - done, static_cast<off_t>(offset) + static_cast<off_t>(done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail(fmt::format("read error at byte {}: {}", offset + static_cast<int64_t>(done), std::strerror(errno)));
      if (got == 0)
        fail(fmt::format("ends at byte {}, before the {} bytes its header promised (the file changed during the run?)",
                         offset + static_cast<int64_t>(done), file_size_));
      done += static_cast<size_t>(got);
    }
  }

  void open() {
    // O_NONBLOCK: a FIFO is refused at once below instead of waiting for a writer.
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd_ < 0) fail(fmt::format("cannot open: {}", std::strerror(errno)));
    struct stat st;
    if (fstat(fd_, &st) != 0) fail(fmt::format("cannot stat: {}", std::strerror(errno)));
    if (!S_ISREG(st.st_mode)) fail("not a regular file (a FIFO, device or folder)");
    file_size_ = static_cast<int64_t>(st.st_size);
    parse();
  }

  void parse() {
    const size_t map_size = static_cast<size_t>(file_size_);
    uint8_t b[12] = {0};
    static const char kMagic[] = "\x93NUMPY";
    if (map_size < 10) fail("not an .npy file (bad magic)");
    read_exactly(b, std::min<size_t>(12, map_size), 0);
    if (std::memcmp(b, kMagic, 6) != 0) fail("not an .npy file (bad magic)");
    const int major = b[6], minor = b[7];
    size_t header_len = 0, prefix = 0;
    if (major == 1 && minor == 0) {
      header_len = b[8] | (size_t{b[9]} << 8);  // little-endian uint16
      prefix = 10;
    } else if ((major == 2 || major == 3) && minor == 0) {
      if (map_size < 12) fail("truncated header");
      header_len = b[8] | (size_t{b[9]} << 8) | (size_t{b[10]} << 16) | (size_t{b[11]} << 24);
      prefix = 12;
    } else {
      fail(fmt::format("unsupported format version {}.{}", major, minor));
    }
    if (prefix + header_len > map_size) {
      fail(fmt::format("truncated header ({} bytes declared, file has {})", header_len,
                       map_size - prefix));
    }
    std::string text(header_len, '\0');
    read_exactly(reinterpret_cast<uint8_t*>(text.data()), header_len, static_cast<int64_t>(prefix));
    const NpyHeader h = HeaderParser(text, path_).parse();
    descr_ = h.descr;
    if (h.descr == "<u2")
      itemsize_ = 2;
    else if (h.descr == "<i4")
      itemsize_ = 4;
    else if (h.descr == "<i8")
      itemsize_ = 8;
    else
      fail(fmt::format("dtype '{}' is not supported (need <u2, <i4 or <i8)", h.descr));
    if (h.fortran_order) fail("fortran_order is True; only C-ordered arrays are supported");
    if (h.shape.size() != 2)
      fail(fmt::format("expected a 2-D array, got {} dimensions", h.shape.size()));
    rows_ = h.shape[0];
    cols_ = h.shape[1];
    const size_t data_offset = prefix + header_len;
    // Guard the multiplication: shapes come from the file.
    uint64_t need = 0;
    const bool overflow =
        __builtin_mul_overflow(static_cast<uint64_t>(rows_), static_cast<uint64_t>(cols_), &need) ||
        __builtin_mul_overflow(need, static_cast<uint64_t>(itemsize_), &need);
    if (overflow || need > map_size - data_offset) {
      fail(fmt::format("truncated data: shape [{}, {}] of {} needs {} bytes, file has {}", rows_,
                       cols_, descr_,
                       overflow ? std::string("more than 2^64") : std::to_string(need),
                       map_size - data_offset));
    }
    data_offset_ = static_cast<int64_t>(data_offset);
  }

  std::string path_;
  std::string descr_;
  int fd_ = -1;
  int64_t file_size_ = 0, data_offset_ = 0;
  int64_t rows_ = 0, cols_ = 0, itemsize_ = 0;
};

}  // namespace

std::unique_ptr<TokenRows> open_npy_rows(const std::string& path) {
  return std::make_unique<NpyRows>(path);
}

}  // namespace foxeval
