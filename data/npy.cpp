// .npy reader: parses the header (format versions 1.0, 2.0 and 3.0), checks that the file is
// a 2-D, C-ordered array of <u2, <i4 or <i8 whose data fits in the file, then memory-maps it so
// a window read touches only the pages it needs (held-out arrays are gigabytes).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
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

class NpyRows final : public TokenRows {
 public:
  explicit NpyRows(const std::string& path) : path_(path) { open(); }
  ~NpyRows() override {
    if (map_ != nullptr) munmap(map_, map_size_);
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
    for (int64_t r = 0; r < nrows; ++r) {
      const uint8_t* src = data_ + ((row0 + r) * cols_ + col0) * itemsize_;
      int64_t* dst = out.data() + r * ncols;
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
    return out;
  }

  std::string describe() const override {
    return fmt::format("npy:{} dtype={} shape=[{}, {}]", path_, descr_, rows_, cols_);
  }

  std::string content_digest(int64_t nrows) const override {
    if (nrows < 0 || nrows > rows_) fail(fmt::format("digest of rows [0, {}): the array has {} rows", nrows, rows_));
    const auto* base = static_cast<const uint8_t*>(map_);
    const size_t header = static_cast<size_t>(data_ - base);
    const size_t bytes = static_cast<size_t>(nrows * cols_ * itemsize_);
    return combine_digests({{"npy header", sha256_hex(base, header)},
                            {fmt::format("rows [0, {})", nrows), sha256_hex(data_, bytes)}});
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

  void open() {
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(fmt::format("cannot open: {}", std::strerror(errno)));
    struct stat st;
    if (fstat(fd, &st) != 0) {
      const int e = errno;
      ::close(fd);
      fail(fmt::format("cannot stat: {}", std::strerror(e)));
    }
    map_size_ = static_cast<size_t>(st.st_size);
    if (map_size_ > 0) {
      void* p = mmap(nullptr, map_size_, PROT_READ, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) {
        const int e = errno;
        ::close(fd);
        fail(fmt::format("cannot mmap: {}", std::strerror(e)));
      }
      map_ = p;
    }
    ::close(fd);  // the mapping keeps the file alive
    parse();
  }

  void parse() {
    const auto* b = static_cast<const uint8_t*>(map_);
    static const char kMagic[] = "\x93NUMPY";
    if (map_size_ < 10 || std::memcmp(b, kMagic, 6) != 0) fail("not an .npy file (bad magic)");
    const int major = b[6], minor = b[7];
    size_t header_len = 0, prefix = 0;
    if (major == 1 && minor == 0) {
      header_len = b[8] | (size_t{b[9]} << 8);  // little-endian uint16
      prefix = 10;
    } else if ((major == 2 || major == 3) && minor == 0) {
      if (map_size_ < 12) fail("truncated header");
      header_len = b[8] | (size_t{b[9]} << 8) | (size_t{b[10]} << 16) | (size_t{b[11]} << 24);
      prefix = 12;
    } else {
      fail(fmt::format("unsupported format version {}.{}", major, minor));
    }
    if (prefix + header_len > map_size_) {
      fail(fmt::format("truncated header ({} bytes declared, file has {})", header_len,
                       map_size_ - prefix));
    }
    const std::string text(reinterpret_cast<const char*>(b + prefix), header_len);
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
    if (overflow || need > map_size_ - data_offset) {
      fail(fmt::format("truncated data: shape [{}, {}] of {} needs {} bytes, file has {}", rows_,
                       cols_, descr_,
                       overflow ? std::string("more than 2^64") : std::to_string(need),
                       map_size_ - data_offset));
    }
    data_ = b + data_offset;
  }

  std::string path_;
  std::string descr_;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  const uint8_t* data_ = nullptr;
  int64_t rows_ = 0, cols_ = 0, itemsize_ = 0;
};

}  // namespace

std::unique_ptr<TokenRows> open_npy_rows(const std::string& path) {
  return std::make_unique<NpyRows>(path);
}

}  // namespace foxeval
