// Hostile and broken inputs at the library level: every one a foxeval::Error that names
// the file, field or flag, never a crash, a silent acceptance or a read outside the named folder.
// The command-line side (exit codes, messages, time bounds, the judge, the output lock between
// processes) is tests/cli_hostile_test.sh.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "data/errors.h"
#include "data/model_files.h"
#include "data/safetensors.h"
#include "models/registry.h"
#include "tasks/loss/loss.h"
#include "tasks/niah/niah_judge.h"
#include "tasks/run/output_lock.h"
#include "tests/temp_files.h"
#include "tests/test_support.h"

using namespace foxeval;
using foxeval::test::error_of;
using foxeval::test::TempDir;
namespace fs = std::filesystem;

namespace {

const std::string kFox = test::source_path("tests/fixtures/official/fox_pro");

// A safetensors file from a header (as JSON) and a data section, written as is.
void write_raw_safetensors(const std::string& path, const nlohmann::json& header, const std::string& data,
                           int64_t header_len_override = -1) {
  std::string h = header.dump();
  while (h.size() % 8) h += ' ';
  const uint64_t n = header_len_override >= 0 ? static_cast<uint64_t>(header_len_override) : h.size();
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << h << data;
}

// Two F32 tensors of 4 values, tiled: a at [0, 16), b at [16, 32).
nlohmann::json good_header() {
  return {{"a", {{"dtype", "F32"}, {"shape", {4}}, {"data_offsets", {0, 16}}}},
          {"b", {{"dtype", "F32"}, {"shape", {2, 2}}, {"data_offsets", {16, 32}}}}};
}

std::string safetensors_error(const nlohmann::json& header, const std::string& data, int64_t len = -1) {
  TempDir dir("st");
  const std::string path = (dir.path / "x.safetensors").string();
  write_raw_safetensors(path, header, data, len);
  return error_of<Error>([&] { SafetensorsFile f(path); });
}

// A copy of the fox_pro fixture with its config changed by `edit`.
std::string model_error(const std::function<void(nlohmann::json&)>& edit) {
  TempDir dir("cfg");
  nlohmann::json config = nlohmann::json::parse(std::ifstream(kFox + "/config.json"));
  edit(config);
  std::ofstream(dir.path / "config.json") << config.dump(1);
  fs::copy_file(kFox + "/model.safetensors", dir.path / "model.safetensors");
  return error_of<Error>([&] { load_model(dir.path.string(), RunOptions{}); });
}

}  // namespace

TEST_CASE("hostile safetensors: offsets tile the data section exactly, types and sizes are checked") {
  const std::string data(32, '\0');
  CHECK(safetensors_error(good_header(), data).empty());

  nlohmann::json h = good_header();
  h["b"]["data_offsets"] = {8, 24};  // overlaps a, leaves 8 bytes at the end
  h["b"]["shape"] = {4};
  std::string e = safetensors_error(h, data);
  CHECK(e.find("overlaps") != std::string::npos);
  CHECK(e.find("x.safetensors") != std::string::npos);

  h = good_header();
  h["a"]["data_offsets"] = {0.0, 16.0};  // not integers
  e = safetensors_error(h, data);
  CHECK(e.find("tensor \"a\"") != std::string::npos);
  CHECK(e.find("data_offsets") != std::string::npos);

  h = good_header();
  h["a"]["data_offsets"] = {-16, 16};
  CHECK(safetensors_error(h, data).find("data_offsets") != std::string::npos);

  h = good_header();
  h["b"]["shape"] = {-2, -2};  // product 4, as the size says: still refused
  e = safetensors_error(h, data);
  CHECK(e.find("tensor \"b\"") != std::string::npos);
  CHECK(e.find(">= 0") != std::string::npos);

  h = good_header();
  h["b"]["shape"] = {int64_t(1) << 32, int64_t(1) << 32, 4};  // the product overflows 64 bits
  CHECK(safetensors_error(h, data).find("more than 2^64") != std::string::npos);

  h = good_header();
  h["a"]["dtype"] = "F8_E9";
  CHECK(safetensors_error(h, data).find("unsupported dtype \"F8_E9\"") != std::string::npos);

  h = good_header();
  h["a"]["shape"] = {3};  // 12 bytes, offsets hold 16
  CHECK(safetensors_error(h, data).find("needs 12") != std::string::npos);

  h = good_header();
  h["b"]["data_offsets"] = {20, 36};  // a gap of 4 bytes
  CHECK(safetensors_error(h, std::string(36, '\0')).find("gap") != std::string::npos);

  CHECK(safetensors_error(good_header(), std::string(40, '\0')).find("trailing bytes") != std::string::npos);
  CHECK(safetensors_error(good_header(), data, int64_t(1) << 40).find("header says") != std::string::npos);
  CHECK(safetensors_error(nlohmann::json::array({1, 2}), data).find("not a JSON object") != std::string::npos);
  h = good_header();
  h["a"] = "F32";
  CHECK(safetensors_error(h, data).find("not an object") != std::string::npos);

  // Zero-sized tensors take no bytes and may sit anywhere in the tiling.
  h = good_header();
  h["empty"] = {{"dtype", "F32"}, {"shape", {0, 7}}, {"data_offsets", {16, 16}}};
  CHECK(safetensors_error(h, data).empty());
}

TEST_CASE("hostile model folders: index entries never reach outside the folder; links on disk are followed") {
  CHECK(is_plain_file_name("model-00001-of-00002.safetensors"));
  CHECK_FALSE(is_plain_file_name("../../../../etc/passwd"));
  CHECK_FALSE(is_plain_file_name("/etc/passwd"));
  CHECK_FALSE(is_plain_file_name(".."));
  CHECK_FALSE(is_plain_file_name(""));
  CHECK_FALSE(is_plain_file_name(std::string("a\0b", 3)));

  TempDir dir("idx");
  fs::copy_file(kFox + "/config.json", dir.path / "config.json");
  fs::copy_file(kFox + "/model.safetensors", dir.path / "model.safetensors");
  CHECK_NOTHROW(load_model(dir.path.string(), RunOptions{}));

  SafetensorsFile f(kFox + "/model.safetensors");
  for (const std::string bad : {"../../../../etc/passwd", "/etc/passwd", "sub/../model.safetensors"}) {
    nlohmann::json index = {{"metadata", nlohmann::json::object()}, {"weight_map", nlohmann::json::object()}};
    for (const auto& [name, e] : f.entries()) index["weight_map"][name] = "model.safetensors";
    index["weight_map"][f.entries().begin()->first] = bad;
    std::ofstream(dir.path / "model.safetensors.index.json") << index.dump();
    const std::string e = error_of<Error>([&] { load_model(dir.path.string(), RunOptions{}); });
    CAPTURE(bad);
    CHECK(e.find("not a plain file name") != std::string::npos);
    CHECK(e.find("model.safetensors.index.json") != std::string::npos);
  }
  fs::remove(dir.path / "model.safetensors.index.json");

  // A checkpoint folder made of links to files elsewhere (as clusters assemble them) loads: links
  // on disk are the user's own and are followed for reading. Only what a file names is confined.
  TempDir outside("outside");
  fs::copy_file(kFox + "/model.safetensors", outside.path / "w.safetensors");
  fs::copy_file(kFox + "/config.json", outside.path / "c.json");
  TempDir links("links");
  fs::create_symlink(outside.path / "w.safetensors", links.path / "model.safetensors");
  fs::create_symlink(outside.path / "c.json", links.path / "config.json");
  CHECK_NOTHROW(load_model(links.path.string(), RunOptions{}));
  // A FIFO at the end of a link (or in place of a file) is refused at once, never waited on.
  REQUIRE(::mkfifo((outside.path / "fifo").c_str(), 0600) == 0);
  fs::remove(links.path / "config.json");
  fs::create_symlink(outside.path / "fifo", links.path / "config.json");
  CHECK(error_of<Error>([&] { load_model(links.path.string(), RunOptions{}); }).find("not a regular file (a FIFO)") !=
        std::string::npos);
  fs::remove(links.path / "config.json");
  fs::create_symlink(outside.path / "nothing-here", links.path / "config.json");
  CHECK(error_of<Error>([&] { load_model(links.path.string(), RunOptions{}); }).find("which cannot be read") !=
        std::string::npos);
  // A link that stays inside the folder is fine too.
  fs::remove(dir.path / "model.safetensors");
  fs::copy_file(kFox + "/model.safetensors", dir.path / "weights.bin");
  fs::create_symlink("weights.bin", dir.path / "model.safetensors");
  CHECK_NOTHROW(load_model(dir.path.string(), RunOptions{}));

  // The hub cache's layout (snapshots/<commit>/file -> ../../blobs/<hash>) is inside its repo folder.
  TempDir hub("hub");
  const fs::path repo = hub.path / "models--org--tiny", snap = repo / "snapshots" / "0123abc";
  fs::create_directories(repo / "blobs");
  fs::create_directories(snap);
  fs::copy_file(kFox + "/config.json", repo / "blobs" / "c1");
  fs::copy_file(kFox + "/model.safetensors", repo / "blobs" / "w1");
  fs::create_symlink("../../blobs/c1", snap / "config.json");
  fs::create_symlink("../../blobs/w1", snap / "model.safetensors");
  CHECK_NOTHROW(load_model(snap.string(), RunOptions{}));
}

TEST_CASE("hostile config.json: sizes and rates out of range are refused naming the file and field") {
  const auto refused = [](const std::string& key, const nlohmann::json& value, const std::string& text) {
    const std::string e = model_error([&](nlohmann::json& c) { c[key] = value; });
    CAPTURE(key);
    CAPTURE(e);
    CHECK(e.find("config.json") != std::string::npos);
    CHECK(e.find("\"" + key + "\"") != std::string::npos);
    CHECK(e.find(text) != std::string::npos);
  };
  refused("hidden_ratio", -3.5, "(0, 1024]");
  refused("hidden_ratio", 0, "(0, 1024]");
  refused("hidden_ratio", "4", "must be a number");
  refused("num_hidden_layers", 0, "[1, 4096]");
  refused("hidden_size", -64, "[1, 1048576]");
  refused("vocab_size", 1e12, "must be an integer");
  refused("vocab_size", uint64_t(1) << 63, "[1, 67108864]");
  refused("norm_eps", -1e-6, "(0, 1]");
  refused("rope_base", 0, "(0, 1000000000000]");
  refused("num_kv_heads", 0, "[1, 65536]");
  refused("intermediate_size", -1, "[1, 16777216]");
  CHECK(model_error([](nlohmann::json&) {}).empty());
}

TEST_CASE("hostile loss settings: degenerate arrays and out-of-range settings are refused, never a signal") {
  TempDir dir("loss");
  const auto npy = [&](const std::string& name, const std::string& shape) {
    std::string h = "{'descr': '<i4', 'fortran_order': False, 'shape': " + shape + ", }";
    while ((10 + h.size() + 1) % 64) h += ' ';
    h += '\n';
    std::ofstream f(dir.path / name, std::ios::binary);
    f.write("\x93NUMPY\x01\x00", 8);
    const uint16_t n = static_cast<uint16_t>(h.size());
    f.write(reinterpret_cast<const char*>(&n), 2);
    f << h;
    return (dir.path / name).string();
  };
  LossSettings s;
  s.model_dir = kFox;
  s.bos_id = 0;
  s.out_path = (dir.path / "out" / "r.json").string();
  s.data_path = npy("cols0.npy", "(6, 0)");  // was a SIGFPE (a modulo by zero)
  CHECK(error_of<Error>([&] { run_loss(s); }).find("6 rows of 0 tokens") != std::string::npos);
  s.data_path = npy("rows0.npy", "(0, 6)");
  CHECK(error_of<Error>([&] { run_loss(s); }).find("0 rows of 6 tokens") != std::string::npos);
  CHECK_FALSE(fs::exists(s.out_path + ".lock"));  // released on the error

  LossSettings t = s;
  t.seq_len = -1;
  CHECK(error_of<Error>([&] { run_loss(t); }).find("--seq-len -1") != std::string::npos);
  t = s;
  t.max_tokens = 0;
  CHECK(error_of<Error>([&] { run_loss(t); }).find("--tokens 0") != std::string::npos);
  t = s;
  t.num_shards = -2;
  t.shard_index = -1;
  CHECK(error_of<Error>([&] { run_loss(t); }).find("--shard-index -1") != std::string::npos);
  t = s;
  t.save_every_seconds = std::nan("");
  CHECK(error_of<Error>([&] { run_loss(t); }).find("--save-every") != std::string::npos);
}

TEST_CASE("output lock: one run per output, released on exit, a dead owner's lock taken over") {
  TempDir dir("lock");
  const std::string out = (dir.path / "sub" / "r.json").string();
  {
    OutputLock first(out);
    CHECK(fs::exists(out + ".lock"));
    const std::string e = error_of<Error>([&] { OutputLock second(out); });
    CHECK(e.find("another foxeval run") != std::string::npos);
    CHECK(e.find("pid " + std::to_string(::getpid())) != std::string::npos);
  }
  CHECK_FALSE(fs::exists(out + ".lock"));

  // A lock left by a process that is gone (its pid written, no flock held): taken over.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  std::ofstream(out + ".lock") << child << "\n";
  CHECK_NOTHROW(OutputLock{out});
  CHECK_FALSE(fs::exists(out + ".lock"));

  // A live process named in the file (a lock made by hand): kept, and the message says how to clear it.
  std::ofstream(out + ".lock") << ::getppid() << "\n";
  CHECK(error_of<Error>([&] { OutputLock l(out); }).find("delete") != std::string::npos);
  fs::remove(out + ".lock");

  // Outputs that cannot be files.
  std::ofstream(dir.path / "afile") << "x";
  CHECK(error_of<Error>([&] { OutputLock l((dir.path / "afile" / "x").string()); }).find("is not a folder") !=
        std::string::npos);
  CHECK(error_of<Error>([&] { OutputLock l(dir.path.string()); }).find("is a folder") != std::string::npos);
}

TEST_CASE("judge replies are printed cut, escaped and without the key") {
  const std::string key = "sk-secret-123";
  const std::string echoed = "POST /v1\r\nAuthorization: Bearer " + key + "\r\n\x1b[31m" + std::string(1000, 'x');
  const std::string shown = niah::printable_reply(echoed, key, 200);
  CHECK(shown.find(key) == std::string::npos);
  CHECK(shown.find("[redacted]") != std::string::npos);
  CHECK(shown.find('\x1b') == std::string::npos);
  CHECK(shown.find('\r') == std::string::npos);
  CHECK(shown.find("\\x1b") != std::string::npos);
  CHECK(shown.size() < 240);
  CHECK(shown.find("bytes)") != std::string::npos);

  // Settings are checked before any request: no server is needed to refuse them.
  std::vector<nlohmann::json> records = {{{"length", 1000}, {"depth", 0}, {"prediction", "x"}}};
  niah::JudgeSettings s;
  s.model = "m";
  s.url = "file:///etc/hostname";
  CHECK(error_of<Error>([&] { niah::judge_records(records, s, "q", "r"); }).find("only http:// and https://") !=
        std::string::npos);
  s.url = "http://127.0.0.1:9/v1";
  s.api_key_env = "FOXEVAL_TEST_SURELY_UNSET_KEY";
  s.api_key_required = true;
  CHECK(error_of<Error>([&] { niah::judge_records(records, s, "q", "r"); }).find("not set or empty") != std::string::npos);
  s.api_key_required = false;
  s.timeout_seconds = -1;
  CHECK(error_of<Error>([&] { niah::judge_records(records, s, "q", "r"); }).find("--judge-timeout") != std::string::npos);
  s.timeout_seconds = 1;
  s.backoff_seconds = -1;
  CHECK(error_of<Error>([&] { niah::judge_records(records, s, "q", "r"); }).find("--judge-backoff") != std::string::npos);
  s.backoff_seconds = std::nan("");
  CHECK(error_of<Error>([&] { niah::judge_records(records, s, "q", "r"); }).find("--judge-backoff") != std::string::npos);
}
