// .npy reader: header versions and dtypes against the expected values, and the errors for
// files it must refuse. Fixtures come from tests/tools/make_zarr_fixtures.py.
#include <doctest/doctest.h>

#include "tests/temp_files.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "data/errors.h"
#include "data/token_rows.h"

namespace fs = std::filesystem;

namespace {

using TempDir = foxeval::test::TempDir;
using foxeval::test::error_of;

std::string fixture(const std::string& name) { return std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/zarr/" + name; }

void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

// A version 1.0 .npy file with the given header dict and `data_bytes` zero bytes.
std::string npy_v1(const std::string& dict, size_t data_bytes) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + std::string(data_bytes, '\0');
}

}  // namespace

TEST_CASE("npy: versions 1.0/2.0/3.0 and dtypes u2/i4/i8 read the expected values") {
  auto expected = foxeval::open_npy_rows(fixture("npy_expected.npy"));
  REQUIRE(expected->num_rows() == 3);
  REQUIRE(expected->row_length() == 17);
  const auto all = expected->read(0, 3, 0, 17);
  for (const char* name :
       {"npy_u2_v1.npy", "npy_u2_v2.npy", "npy_u2_v3.npy", "npy_i4.npy", "npy_i8.npy"}) {
    CAPTURE(name);
    auto rows = foxeval::open_token_rows(fixture(name));
    CHECK(rows->num_rows() == 3);
    CHECK(rows->row_length() == 17);
    CHECK(rows->read(0, 3, 0, 17) == all);
    // A window in the middle: rows 1..2, columns 5..15.
    const auto win = rows->read(1, 2, 5, 11);
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 11; ++c) CHECK(win[r * 11 + c] == all[(1 + r) * 17 + 5 + c]);
    CHECK(rows->describe().find(name) != std::string::npos);
  }
}

TEST_CASE("npy: values >= 32768 in u2 and signed/64-bit values in i4/i8 survive") {
  // The zarr fixtures' twins are plain .npy files of every dtype with edge values.
  auto i4 = foxeval::open_npy_rows(fixture("i4_zstd_noshuffle.npy"));
  CHECK(i4->read(0, 1, 0, 3) == std::vector<int64_t>{-1, -2147483648LL, 2147483647LL});
  auto i8 = foxeval::open_npy_rows(fixture("i8_blosclz_bitshuffle.npy"));
  CHECK(i8->read(0, 1, 0, 3) == std::vector<int64_t>{-1, INT64_MIN, (int64_t{1} << 40) + 7});
  auto u2 = foxeval::open_npy_rows(fixture("u2_lz4_shuffle.npy"));
  const auto v = u2->read(0, u2->num_rows(), 0, u2->row_length());
  int64_t mx = 0;
  for (int64_t x : v) mx = std::max(mx, x);
  CHECK(mx >= 32768);
  CHECK(mx < 50257);
}

TEST_CASE("npy: files it must refuse name the file and the problem") {
  const std::string fortran = fixture("npy_fortran.npy");
  std::string msg = error_of([&] { foxeval::open_npy_rows(fortran); });
  CHECK(msg.find(fortran) != std::string::npos);
  CHECK(msg.find("fortran_order") != std::string::npos);

  msg = error_of([&] { foxeval::open_npy_rows(fixture("npy_f4.npy")); });
  CHECK(msg.find("dtype '<f4'") != std::string::npos);

  msg = error_of([&] { foxeval::open_npy_rows(fixture("npy_3d.npy")); });
  CHECK(msg.find("2-D") != std::string::npos);

  TempDir tmp;
  // Truncated data: one byte short.
  const fs::path trunc = tmp.path / "trunc.npy";
  fs::copy_file(fixture("npy_u2_v1.npy"), trunc);
  fs::resize_file(trunc, fs::file_size(trunc) - 1);
  msg = error_of([&] { foxeval::open_npy_rows(trunc.string()); });
  CHECK(msg.find(trunc.string()) != std::string::npos);
  CHECK(msg.find("truncated data") != std::string::npos);

  // Truncated header.
  fs::resize_file(trunc, 40);
  msg = error_of([&] { foxeval::open_npy_rows(trunc.string()); });
  CHECK(msg.find("truncated header") != std::string::npos);

  const fs::path bad = tmp.path / "bad.npy";
  write_bytes(bad, "not a numpy file at all");
  CHECK(error_of([&] { foxeval::open_npy_rows(bad.string()); }).find("magic") != std::string::npos);

  write_bytes(bad, npy_v1("{'descr': '<u2', 'fortran_order': False, 'shape': (2, x), }", 8));
  msg = error_of([&] { foxeval::open_npy_rows(bad.string()); });
  CHECK(msg.find("bad header") != std::string::npos);
  CHECK(msg.find("'shape'") != std::string::npos);

  write_bytes(bad, npy_v1("{'descr': '<u2', 'shape': (2, 2), }", 8));
  CHECK(error_of([&] { foxeval::open_npy_rows(bad.string()); }).find("missing 'fortran_order'") !=
        std::string::npos);

  write_bytes(bad, npy_v1("{'descr': '>u2', 'fortran_order': False, 'shape': (2, 2), }", 8));
  CHECK(error_of([&] { foxeval::open_npy_rows(bad.string()); }).find("dtype '>u2'") !=
        std::string::npos);

  // A hand-written header parses: (2, 2) u2 with 8 data bytes.
  write_bytes(bad, npy_v1("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 2), }", 8));
  CHECK(foxeval::open_npy_rows(bad.string())->read(0, 2, 0, 2) == std::vector<int64_t>(4, 0));

  const std::string missing = (tmp.path / "missing.npy").string();
  CHECK(error_of([&] { foxeval::open_npy_rows(missing); }).find(missing) != std::string::npos);
}

TEST_CASE("npy: a window outside the array is an error") {
  auto rows = foxeval::open_npy_rows(fixture("npy_u2_v1.npy"));
  CHECK(error_of([&] { rows->read(2, 2, 0, 1); }).find("outside") != std::string::npos);
  CHECK(error_of([&] { rows->read(0, 1, 10, 8); }).find("outside") != std::string::npos);
  CHECK(error_of([&] { rows->read(-1, 1, 0, 1); }).find("outside") != std::string::npos);
  CHECK(rows->read(1, 0, 3, 0).empty());
}

TEST_CASE("open_token_rows: dispatches on .npy vs zarr directory, refuses anything else") {
  CHECK(foxeval::open_token_rows(fixture("u2_raw.npy"))->describe().rfind("npy:", 0) == 0);
  CHECK(foxeval::open_token_rows(fixture("u2_raw.zarr"))->describe().rfind("zarr:", 0) == 0);
  TempDir tmp;
  std::string msg = error_of([&] { foxeval::open_token_rows(tmp.path.string()); });
  CHECK(msg.find(".zarray") != std::string::npos);
  const fs::path other = tmp.path / "tokens.bin";
  write_bytes(other, "x");
  msg = error_of([&] { foxeval::open_token_rows(other.string()); });
  CHECK(msg.find("neither") != std::string::npos);
  msg = error_of([&] { foxeval::open_token_rows((tmp.path / "nope").string()); });
  CHECK(msg.find("does not exist") != std::string::npos);
}
