// zarr v2 reader against the same data saved as .npy (fixtures written by the real zarr
// library, tests/tools/make_zarr_fixtures.py): windows across chunk edges and the ragged edge,
// every supported codec/shuffle/dtype, the chunk cache, and the errors that must not turn
// into silent fill values.
#include <doctest/doctest.h>

#include "tests/temp_files.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "data/errors.h"
#include "data/token_rows.h"
#include "data/zarr.h"

namespace fs = std::filesystem;
using foxeval::Error;

namespace {

using TempDir = foxeval::test::TempDir;
using foxeval::test::error_of;

std::string fixture(const std::string& name) { return std::string(FOXEVAL_SOURCE_DIR) + "/tests/fixtures/zarr/" + name; }

// A copy of fixture NAME.zarr in a temp dir, to damage.
fs::path copy_fixture(const TempDir& tmp, const std::string& name) {
  const fs::path dst = tmp.path / (name + ".zarr");
  fs::copy(fixture(name + ".zarr"), dst, fs::copy_options::recursive);
  return dst;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

const char* const kFixtures[] = {
    "u2_lz4_shuffle", "i4_zstd_noshuffle", "i8_blosclz_bitshuffle", "u2_zlib",
    "u2_raw",         "u2_lz4_nested"};

}  // namespace

TEST_CASE("zarr: windows equal the npy data for every fixture") {
  for (const char* name : kFixtures) {
    CAPTURE(name);
    auto z = foxeval::open_zarr_rows(fixture(std::string(name) + ".zarr"));
    auto n = foxeval::open_npy_rows(fixture(std::string(name) + ".npy"));
    const auto& meta = static_cast<const foxeval::ZarrRows&>(*z).meta();
    const int64_t R = n->num_rows(), C = n->row_length();
    REQUIRE(z->num_rows() == R);
    REQUIRE(z->row_length() == C);
    CHECK(z->read(0, R, 0, C) == n->read(0, R, 0, C));

    // Windows that straddle every chunk boundary (one element either side), the ragged last
    // row/column chunk, single elements, and full rows.
    std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> wins;
    for (int64_t cb = meta.chunks[1]; cb < C; cb += meta.chunks[1]) {
      wins.emplace_back(0, R, cb - 1, 2);
      wins.emplace_back(R - 1, 1, cb - 1, C - cb + 1);  // to the ragged column edge
    }
    for (int64_t rb = meta.chunks[0]; rb < R; rb += meta.chunks[0]) {
      wins.emplace_back(rb - 1, 2, 0, C);
      wins.emplace_back(rb - 1, R - rb + 1, C - 3, 3);  // ragged corner
    }
    wins.emplace_back(R - 1, 1, C - 1, 1);
    wins.emplace_back(0, 1, 0, 1);
    std::mt19937_64 rng(7);
    for (int k = 0; k < 200; ++k) {
      const int64_t r0 = rng() % R, c0 = rng() % C;
      wins.emplace_back(r0, 1 + rng() % (R - r0), c0, 1 + rng() % (C - c0));
    }
    for (const auto& [r0, nr, c0, nc] : wins) {
      CAPTURE(r0);
      CAPTURE(nr);
      CAPTURE(c0);
      CAPTURE(nc);
      REQUIRE(z->read(r0, nr, c0, nc) == n->read(r0, nr, c0, nc));
    }
    CHECK(z->describe().find(meta.dtype) != std::string::npos);
  }
}

TEST_CASE("zarr: the metadata of the fixtures is what the generator wrote") {
  foxeval::ZarrRows z(fixture("u2_lz4_shuffle.zarr"), {});
  CHECK(z.meta().dtype == "<u2");
  CHECK(z.meta().blosc);
  CHECK(z.meta().cname == "lz4");
  CHECK(z.meta().clevel == 5);
  CHECK(z.meta().shuffle == 1);
  CHECK(z.meta().chunks[0] == 2);
  CHECK(z.meta().chunks[1] == 256);
  foxeval::ZarrRows nested(fixture("u2_lz4_nested.zarr"), {});
  CHECK(nested.meta().separator == "/");
  CHECK(nested.chunk_path(1, 2) == fixture("u2_lz4_nested.zarr") + "/1/2");
  foxeval::ZarrRows raw(fixture("u2_raw.zarr"), {});
  CHECK_FALSE(raw.meta().blosc);
}

TEST_CASE("zarr: sequential window reads decode each chunk once") {
  // [5, 700] in [2, 256] chunks: 3 x 3 = 9 chunk files.
  foxeval::ZarrRows z(fixture("u2_lz4_shuffle.zarr"), {});
  for (int64_t r = 0; r < 5; ++r) z.read(r, 1, 0, 700);  // whole rows, one at a time
  CHECK(z.chunks_decoded() == 9);
  for (int64_t c = 0; c + 100 <= 700; c += 100) z.read(4, 1, c, 100);  // last chunk row: cached
  CHECK(z.chunks_decoded() == 9);

  // With a one-chunk cache the same row-by-row sweep decodes chunks again.
  foxeval::ZarrOptions small;
  small.cache_chunks = 1;
  foxeval::ZarrRows z1(fixture("u2_lz4_shuffle.zarr"), small);
  for (int64_t r = 0; r < 5; ++r) z1.read(r, 1, 0, 700);
  CHECK(z1.chunks_decoded() == 15);  // 3 chunks per row, 5 rows
}

TEST_CASE("zarr: a missing chunk is an error naming it, never fill values") {
  TempDir tmp;
  const fs::path dir = copy_fixture(tmp, "u2_lz4_shuffle");
  fs::remove(dir / "1.1");
  auto z = foxeval::open_zarr_rows(dir.string());
  // Windows that do not touch chunk (1, 1) still read.
  auto n = foxeval::open_npy_rows(fixture("u2_lz4_shuffle.npy"));
  CHECK(z->read(0, 2, 0, 700) == n->read(0, 2, 0, 700));
  CHECK(z->read(2, 2, 0, 256) == n->read(2, 2, 0, 256));
  const std::string msg = error_of([&] { z->read(3, 1, 250, 10); });
  CHECK(msg.find((dir / "1.1").string()) != std::string::npos);
  CHECK(msg.find("missing") != std::string::npos);

  // Nested layout: the chunk path uses "/".
  const fs::path nested = copy_fixture(tmp, "u2_lz4_nested");
  fs::remove(nested / "2" / "0");
  auto zn = foxeval::open_zarr_rows(nested.string());
  CHECK(error_of([&] { zn->read(4, 1, 0, 1); }).find((nested / "2" / "0").string()) !=
        std::string::npos);
}

TEST_CASE("zarr: truncated or corrupt chunks are errors naming the chunk") {
  TempDir tmp;
  const fs::path dir = copy_fixture(tmp, "i4_zstd_noshuffle");
  const fs::path chunk = dir / "1.2";
  auto z = foxeval::open_zarr_rows(dir.string());

  fs::resize_file(chunk, fs::file_size(chunk) - 5);
  std::string msg = error_of([&] { z->read(3, 1, 256, 1); });
  CHECK(msg.find(chunk.string()) != std::string::npos);
  CHECK(msg.find("truncated") != std::string::npos);

  fs::resize_file(chunk, 7);  // shorter than a blosc header
  msg = error_of([&] { z->read(3, 1, 256, 1); });
  CHECK(msg.find(chunk.string()) != std::string::npos);
  CHECK(msg.find("blosc header") != std::string::npos);

  // Header claims another uncompressed size (bytes 4..7 are nbytes, little-endian).
  const fs::path chunk2 = dir / "0.0";
  std::string bytes = slurp(chunk2);
  bytes[4] = static_cast<char>(bytes[4] + 4);
  std::ofstream(chunk2, std::ios::binary | std::ios::trunc) << bytes;
  msg = error_of([&] { z->read(0, 1, 0, 1); });
  CHECK(msg.find(chunk2.string()) != std::string::npos);
  CHECK(msg.find("decompresses to") != std::string::npos);

  // Raw (compressor null) chunk of the wrong size.
  const fs::path raw = copy_fixture(tmp, "u2_raw");
  fs::resize_file(raw / "0.1", fs::file_size(raw / "0.1") - 2);
  auto zr = foxeval::open_zarr_rows(raw.string());
  msg = error_of([&] { zr->read(0, 1, 40, 1); });
  CHECK(msg.find((raw / "0.1").string()) != std::string::npos);
}

TEST_CASE("zarr: bad .zarray is an error naming the field") {
  const std::string good = slurp(fixture("u2_lz4_shuffle.zarr/.zarray"));
  CHECK_NOTHROW(foxeval::parse_zarray(good, "good"));
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const size_t at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
  };
  struct Case {
    std::string from, to, field;
  };
  const Case cases[] = {
      {"\"zarr_format\": 2", "\"zarr_format\": 3", "'zarr_format'"},
      {"\"dtype\": \"<u2\"", "\"dtype\": \"<f4\"", "'dtype'"},
      {"\"dtype\": \"<u2\"", "\"dtype\": \">u2\"", "'dtype'"},
      {"\"order\": \"C\"", "\"order\": \"F\"", "'order'"},
      {"\"filters\": null", "\"filters\": [{\"id\": \"delta\"}]", "'filters'"},
      {"\"id\": \"blosc\"", "\"id\": \"zlib\"", "'compressor'"},
      {"\"cname\": \"lz4\"", "\"cname\": \"brotli\"", "'compressor.cname'"},
      {"\"shuffle\": 1", "\"shuffle\": 7", "'compressor.shuffle'"},
      {"\"fill_value\": 0", "\"fill_value\": \"NaN\"", "'fill_value'"},
      {"\"order\": \"C\",", "", "'order' is missing"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.to);
    const std::string msg =
        error_of([&] { foxeval::parse_zarray(with(c.from, c.to), "X/.zarray"); });
    CHECK(msg.find(c.field) != std::string::npos);
    CHECK(msg.find("X/.zarray") != std::string::npos);
  }
  // Shapes: 3-D, negative, and zero-sized chunks.
  std::string s = good;
  s.replace(s.find("\"shape\": ["), 10, "\"shape\": [1, ");
  CHECK(error_of([&] { foxeval::parse_zarray(s, "X"); }).find("'shape'") != std::string::npos);
  s = good;
  s.replace(s.find("\"chunks\": ["), 11, "\"chunks\": [0, 0], \"x\": [");
  CHECK(error_of([&] { foxeval::parse_zarray(s, "X"); }).find("'chunks'") != std::string::npos);
  CHECK(error_of([&] { foxeval::parse_zarray("{not json", "X"); }).find("JSON") !=
        std::string::npos);
  s = good;  // 100000 x 100000 x 2 bytes: beyond blosc's 2 GiB buffers
  s.replace(s.find("\"chunks\": ["), 11, "\"chunks\": [100000, 100000], \"x\": [");
  CHECK(error_of([&] { foxeval::parse_zarray(s, "X"); }).find("'chunks'") != std::string::npos);

  // Through the directory: the message names the .zarray file.
  TempDir tmp;
  const fs::path dir = copy_fixture(tmp, "u2_zlib");
  std::ofstream(dir / ".zarray", std::ios::trunc) << with("\"order\": \"C\"", "\"order\": \"F\"");
  const std::string msg = error_of([&] { foxeval::open_zarr_rows(dir.string()); });
  CHECK(msg.find((dir / ".zarray").string()) != std::string::npos);
  CHECK(msg.find("'order'") != std::string::npos);
}

TEST_CASE("zarr: a window outside the array is an error") {
  auto z = foxeval::open_zarr_rows(fixture("u2_lz4_shuffle.zarr"));
  CHECK(error_of([&] { z->read(4, 2, 0, 1); }).find("outside") != std::string::npos);
  CHECK(error_of([&] { z->read(0, 1, 690, 11); }).find("outside") != std::string::npos);
  CHECK(z->read(0, 0, 0, 0).empty());
}

TEST_CASE("zarr: concurrent readers sharing one small cache agree with the npy data") {
  foxeval::ZarrOptions opts;
  opts.cache_chunks = 2;  // force evictions while another thread holds a chunk
  auto z = foxeval::open_zarr_rows(fixture("u2_lz4_shuffle.zarr"), opts);
  auto n = foxeval::open_npy_rows(fixture("u2_lz4_shuffle.npy"));
  std::atomic<int> mismatches{0};
  auto work = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (int k = 0; k < 300; ++k) {
      const int64_t r0 = rng() % 5, c0 = rng() % 700;
      const int64_t nr = 1 + rng() % (5 - r0), nc = 1 + rng() % (700 - c0);
      if (z->read(r0, nr, c0, nc) != n->read(r0, nr, c0, nc)) ++mismatches;
    }
  };
  std::thread a(work, 1), b(work, 2);
  a.join();
  b.join();
  CHECK(mismatches.load() == 0);
}
