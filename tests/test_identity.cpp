// Identity by content: SHA-256 digests of models (hub cache blob names used as they are, other files
// hashed) and of data as read; `check` compares models and data by digest, not path; --device and
// --dtype "auto" resolve against the machine; bundled files are found in one place.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "data/content_digest.h"
#include "data/errors.h"
#include "data/resources.h"
#include "data/token_rows.h"
#include "models/run_options.h"
#include "tasks/results/check.h"
#include "tasks/run/identity.h"
#include "tests/sha256.h"
#include "tests/temp_files.h"

namespace fs = std::filesystem;

namespace foxeval {
namespace {

std::string source(const std::string& rel) { return std::string(FOXEVAL_SOURCE_DIR) + "/" + rel; }

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_all(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << s;
}

// Flips one byte of a file at `offset` from its end.
void flip_byte_from_end(const fs::path& p, size_t offset) {
  std::string s = read_all(p);
  REQUIRE(s.size() > offset);
  s[s.size() - 1 - offset] ^= 0x5a;
  write_all(p, s);
}

void copy_folder(const fs::path& from, const fs::path& to) {
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(from))
    if (e.is_regular_file()) fs::copy_file(e.path(), to / e.path().filename());
}

// A 2-D <u2 .npy of `rows` x `cols` with values i.
std::string npy_u2(int rows, int cols) {
  std::string header = "{'descr': '<u2', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                       std::to_string(cols) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);  // magic and version 1.0 (the NUL counted)
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  for (int i = 0; i < rows * cols; ++i) {
    out += static_cast<char>(i & 0xff);
    out += static_cast<char>((i >> 8) & 0xff);
  }
  return out;
}

// The one line compare_result_settings(changed, base) finds different once `field` of `changed`'s
// settings is `value` (a failed REQUIRE where it finds none or several).
std::string one_difference(nlohmann::json changed, const nlohmann::json& base, const std::string& field,
                           const std::string& value) {
  changed["header"]["settings"][field] = value;
  const SettingsComparison c = compare_result_settings(changed, base);
  REQUIRE(c.differ.size() == 1);
  return c.differ[0];
}

// compare_result_settings(a, b) finds nothing different and has nothing to note.
void check_same_settings(const nlohmann::json& a, const nlohmann::json& b) {
  const SettingsComparison c = compare_result_settings(a, b);
  CHECK(c.differ.empty());
  CHECK(c.notes.empty());
}

}  // namespace

TEST_CASE("identity: SHA-256 equals FIPS 180-4 (the test's own implementation) for buffers, files and byte ranges") {
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::string big(3 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 2654435761u) >> 13);
  CHECK(sha256_hex(big) == test::sha256_hex(big));
  test::TempDir dir("identity");
  write_all(dir.path / "f", big);
  CHECK(sha256_file((dir.path / "f").string()) == test::sha256_hex(big));
  CHECK(sha256_file((dir.path / "f").string(), 1000, 5000) == test::sha256_hex(big.substr(1000, 5000)));
  CHECK(sha256_files({(dir.path / "f").string(), (dir.path / "f").string()}) ==
        std::vector<std::string>{test::sha256_hex(big), test::sha256_hex(big)});
  CHECK(test::error_of<Error>([&] { sha256_file((dir.path / "f").string(), 10, int64_t(big.size())); }).find("ends before") !=
        std::string::npos);
  CHECK(test::error_of<Error>([&] { sha256_file((dir.path / "nope").string()); }).find("nope") != std::string::npos);
}

TEST_CASE("identity: a model's digest is its content: a copy elsewhere gives the same, a changed weight another") {
  test::TempDir dir("identity");
  const fs::path a = dir.path / "a", b = dir.path / "b", c = dir.path / "c";
  copy_folder(source("tests/fixtures/official/fox_pro"), a);
  copy_folder(source("tests/fixtures/official/fox_pro"), b);
  copy_folder(source("tests/fixtures/official/fox_pro"), c);
  write_all(b / "README.md", "not read by foxeval, so not in the digest");
  flip_byte_from_end(c / "model.safetensors", 3);  // a weight's byte (the data section is last)
  const ModelDigest da = model_digest(a.string()), db = model_digest(b.string()), dc = model_digest(c.string());
  CHECK(da.digest.rfind("sha256:", 0) == 0);
  CHECK(da.source == "hashed");
  CHECK(da.digest == db.digest);
  CHECK(da.digest != dc.digest);
  // config.json and model.safetensors (reference.safetensors is not read by foxeval)
  REQUIRE(da.files.size() == 2);
  CHECK(da.files[0].first == "config.json");
  CHECK(da.files[1].second == test::sha256_hex(read_all(a / "model.safetensors")));
  CHECK(model_digest(a.string()).digest == da.digest);  // asked again (hashed again: no memo), the same
}

TEST_CASE("identity: in the hub cache the digest comes from the blob names (LFS files); small git files are hashed") {
  test::TempDir dir("identity");
  const fs::path fixture = source("tests/fixtures/official/fox_pro");
  const fs::path repo = dir.path / "models--org--fox", blobs = repo / "blobs", snap = repo / "snapshots" / "0123abc";
  fs::create_directories(blobs);
  fs::create_directories(snap);
  // The weights' blob is named by the SHA-256 of its content, as the hub names LFS files; config.json
  // by a 40-hex git SHA-1, as the hub names small files.
  const std::string weights = read_all(fixture / "model.safetensors");
  const std::string weights_sha = test::sha256_hex(weights);
  write_all(blobs / weights_sha, weights);
  write_all(blobs / "0123456789abcdef0123456789abcdef01234567", read_all(fixture / "config.json"));
  fs::create_symlink("../../blobs/" + weights_sha, snap / "model.safetensors");
  fs::create_symlink("../../blobs/0123456789abcdef0123456789abcdef01234567", snap / "config.json");
  const ModelDigest hub = model_digest(snap.string());
  CHECK(hub.source == "hub cache blob names (large files) and hashed (small files)");
  CHECK(hub.digest == model_digest(fixture.string()).digest);  // the same content elsewhere, hashed

  // The name is what counts there, not a second hashing: a blob whose name is not its content's
  // SHA-256 gives the name's digest (the hub's own check of its downloads is what backs the name).
  const fs::path repo2 = dir.path / "models--org--fox2", snap2 = repo2 / "snapshots" / "0123abc";
  fs::create_directories(repo2 / "blobs");
  fs::create_directories(snap2);
  const std::string other_name(64, 'e');
  write_all(repo2 / "blobs" / other_name, weights);
  fs::create_symlink("../../blobs/" + other_name, snap2 / "model.safetensors");
  fs::copy_file(fixture / "config.json", snap2 / "config.json");
  const ModelDigest named = model_digest(snap2.string());
  CHECK(named.digest != hub.digest);
  bool found = false;
  for (const auto& [name, hex] : named.files) found = found || (name == "model.safetensors" && hex == other_name);
  CHECK(found);
}

TEST_CASE("identity: data as read: npy rows read are in the digest, rows not read are not; the path never is") {
  test::TempDir dir("identity");
  write_all(dir.path / "a.npy", npy_u2(4, 16));
  fs::create_directories(dir.path / "elsewhere");
  write_all(dir.path / "elsewhere" / "b.npy", npy_u2(4, 16));
  const std::string da = open_token_rows((dir.path / "a.npy").string())->content_digest(2);
  CHECK(da == open_token_rows((dir.path / "elsewhere" / "b.npy").string())->content_digest(2));
  flip_byte_from_end(dir.path / "elsewhere" / "b.npy", 1);  // in row 3: not read by a 2-row run
  CHECK(da == open_token_rows((dir.path / "elsewhere" / "b.npy").string())->content_digest(2));
  CHECK(da != open_token_rows((dir.path / "elsewhere" / "b.npy").string())->content_digest(4));
  std::string s = npy_u2(4, 16);
  s[s.size() - 3 * 32 + 1] ^= 1;  // row 1
  write_all(dir.path / "c.npy", s);
  CHECK(da != open_token_rows((dir.path / "c.npy").string())->content_digest(2));
}

TEST_CASE("identity: data as read: a zarr array's digest covers .zarray and the chunk files read") {
  test::TempDir dir("identity");
  const fs::path src = source("tests/fixtures/zarr/u2_lz4_shuffle.zarr");
  fs::copy(src, dir.path / "copy.zarr", fs::copy_options::recursive);
  auto rows = open_token_rows(src.string());
  const std::string d = rows->content_digest(rows->num_rows());
  CHECK(d.rfind("sha256:", 0) == 0);
  CHECK(d == open_token_rows((dir.path / "copy.zarr").string())->content_digest(rows->num_rows()));
  // Any chunk file of the array changed: another digest.
  fs::path chunk;
  for (const auto& e : fs::directory_iterator(dir.path / "copy.zarr"))
    if (e.is_regular_file() && e.path().filename().string()[0] != '.') chunk = e.path();
  REQUIRE(!chunk.empty());
  flip_byte_from_end(chunk, 0);
  CHECK(d != open_token_rows((dir.path / "copy.zarr").string())->content_digest(rows->num_rows()));
}

TEST_CASE("identity: digest_paths is by content and relative name: a moved copy gives the same digest") {
  test::TempDir dir("identity");
  fs::create_directories(dir.path / "x" / "sub");
  write_all(dir.path / "x" / "a.txt", "alpha");
  write_all(dir.path / "x" / "sub" / "b.txt", "beta");
  fs::copy(dir.path / "x", dir.path / "y", fs::copy_options::recursive);
  const std::string dx = digest_paths({(dir.path / "x").string()});
  CHECK(dx.rfind("sha256:", 0) == 0);
  CHECK(dx == digest_paths({(dir.path / "y").string()}));
  write_all(dir.path / "y" / "sub" / "b.txt", "betb");
  CHECK(dx != digest_paths({(dir.path / "y").string()}));
}

TEST_CASE("check: models and data by content: another path passes, other content under the same path does not") {
  const nlohmann::json base = {{"header",
                                {{"settings",
                                  {{"model", "/a/model"},
                                   {"model_digest", "sha256:1111"},
                                   {"model_digest_source", "hashed"},
                                   {"data", "npy:/a/data.npy dtype=<u2 shape=[4, 16]"},
                                   {"data_digest", "sha256:2222"},
                                   {"seq_len", 16}}}}}};
  nlohmann::json moved = base;
  moved["header"]["settings"]["model"] = "/b/elsewhere";
  moved["header"]["settings"]["model_digest_source"] = "hub cache blob names";
  moved["header"]["settings"]["data"] = "npy:/b/copy.npy dtype=<u2 shape=[4, 16]";
  check_same_settings(moved, base);

  CHECK(one_difference(base, base, "model_digest", "sha256:3333") == "model_digest: \"sha256:1111\" vs \"sha256:3333\"");
  CHECK(one_difference(base, base, "data_digest", "sha256:4444").rfind("data_digest:", 0) == 0);
}

TEST_CASE("check: data nested in the settings (inspect's source) counts by its digest too, not its path") {
  // What CI found: a baseline made in one checkout, checked in another, differed only in
  // source/data's path (inspect-gates records the tokens it read under "source").
  const nlohmann::json base = {{"header",
                                {{"settings",
                                  {{"model_digest", "sha256:1111"},
                                   {"source",
                                    {{"data", "npy:/a/repo/tokens.npy dtype=<u2 shape=[4, 16]"},
                                     {"data_digest", "sha256:2222"},
                                     {"bos_id", 0}}}}}}}};
  nlohmann::json moved = base;
  moved["header"]["settings"]["source"]["data"] = "npy:/b/clone/tokens.npy dtype=<u2 shape=[4, 16]";
  check_same_settings(moved, base);
  nlohmann::json other = moved;
  other["header"]["settings"]["source"]["data_digest"] = "sha256:3333";
  const SettingsComparison d = compare_result_settings(other, base);
  REQUIRE(d.differ.size() == 1);
  CHECK(d.differ[0].rfind("source/data_digest:", 0) == 0);
  nlohmann::json bos = moved;
  bos["header"]["settings"]["source"]["bos_id"] = 1;
  CHECK(compare_result_settings(bos, base).differ.size() == 1);
  // A nested description without a digest on one side is still compared (path included), with a note.
  nlohmann::json old = base;
  old["header"]["settings"]["source"].erase("data_digest");
  const SettingsComparison e = compare_result_settings(moved, old);
  CHECK(e.notes.size() == 1);
  CHECK(e.differ.size() == 1);
}

TEST_CASE("check: a file made before content digests is compared on what both record, with a note") {
  // An older loss baseline: no digests, the data described with its path.
  const nlohmann::json old = {{"header",
                               {{"settings",
                                 {{"model", "/a/model"}, {"model_type", "fox"}, {"data", "npy:d.npy dtype=<u2 shape=[4, 16]"},
                                  {"haystack_digest", "fnv1a64:0123456789abcdef"}}}}}};
  nlohmann::json now = old;
  now["header"]["settings"]["model_digest"] = "sha256:1111";
  now["header"]["settings"]["data_digest"] = "sha256:2222";
  now["header"]["settings"]["haystack_digest"] = "sha256:abcd";
  SettingsComparison c = compare_result_settings(now, old);
  CHECK(c.differ.empty());
  CHECK(c.notes.size() == 3);  // no model digest, no data digest, fnv1a64 against sha256
  // ... where the older file's own settings still count: its data by the description (path included).
  CHECK(one_difference(now, old, "data", "npy:other.npy dtype=<u2 shape=[4, 16]").rfind("data:", 0) == 0);
  // Two digests of one algorithm are compared as they are.
  CHECK(one_difference(old, old, "haystack_digest", "fnv1a64:fedcba9876543210").rfind("haystack_digest:", 0) == 0);
}

TEST_CASE("run options: auto is the GPU with bfloat16 when CUDA is present, else the CPU with float32") {
  const ResolvedDevice r = resolve_device("auto", "auto", -1);
  if (cuda_device_count() == 0) {
    CHECK(r.device == "cpu");
    CHECK(r.dtype == "float32");
    CHECK(r.chosen == "device auto: no CUDA device; dtype auto: float32 on the CPU");
    CHECK(test::error_of<Error>([] { resolve_device("cuda", "auto", -1); }).find("CUDA was asked for") != std::string::npos);
    CHECK(test::error_of<Error>([] { resolve_device("cuda:1", "float32", -1); }).find("--device cuda:1") != std::string::npos);
  } else {
    CHECK(r.device == "cuda:0");
    CHECK(r.dtype == "bfloat16");
    CHECK(resolve_device("auto", "auto", 0).device == "cuda:0");
  }
  const ResolvedDevice given = resolve_device("cpu", "bfloat16", -1);
  CHECK(given.device == "cpu");
  CHECK(given.dtype == "bfloat16");  // an explicit dtype keeps its meaning
  CHECK(given.chosen.empty());
  CHECK(resolve_device("cpu", "auto", -1).dtype == "float32");
  CHECK(test::error_of<Error>([] { resolve_device("tpu", "auto", -1); }).find("--device tpu") != std::string::npos);
  CHECK(test::error_of<Error>([] { resolve_device("cpu", "fp8", -1); }).find("--dtype fp8") != std::string::npos);
}

TEST_CASE("resources: one finder; a variable naming a place is the only place tried") {
  const Resource r{"the NIAH definition files", "tasks/niah", {"prompt.json"}, "FOXEVAL_TEST_RESOURCE", ""};
  ::unsetenv("FOXEVAL_TEST_RESOURCE");
  CHECK(fs::path(find_resource(r)) == fs::path(source("tasks/niah")).lexically_normal());
  test::TempDir dir("identity");
  ::setenv("FOXEVAL_TEST_RESOURCE", dir.path.c_str(), 1);
  const std::string err = test::error_of<Error>([&] { find_resource(r); });
  CHECK(err.find(dir.path.string()) != std::string::npos);
  CHECK(err.find("FOXEVAL_TEST_RESOURCE is set") != std::string::npos);
  write_all(dir.path / "prompt.json", "{}");
  CHECK(find_resource(r) == dir.path.lexically_normal().string());
  ::unsetenv("FOXEVAL_TEST_RESOURCE");
  const Resource missing{"a thing", "tasks/no_such_file.json", {}, "", ""};
  CHECK(test::error_of<Error>([&] { find_resource(missing); }).find("a thing (tasks/no_such_file.json) not found") !=
        std::string::npos);
}

}  // namespace foxeval
