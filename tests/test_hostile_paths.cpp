// Hostile paths and files, one root per class (issue #55): an output never replaces an input
// (data/path_overlap.h), nothing is written through a link (data/json_file.h's one writer, the
// runner's journal), names inside files stay inside their folder (zip members), no secret in a
// result (data/url_secrets.h), bounded reads that never block or crash (FIFOs, refs/main, .npy that
// shrinks, .zarray chunk counts), a file changed during a run is caught (content_digest.h), launcher
// variables are range-checked. The command-line side is tests/cli_hostile_test.sh.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "data/content_digest.h"
#include "data/errors.h"
#include "data/hub_ref.h"
#include "data/new_file.h"
#include "data/read_stamps.h"
#include "data/safetensors.h"
#include "data/json_file.h"
#include "data/path_overlap.h"
#include "data/token_rows.h"
#include "data/url_secrets.h"
#include "data/zarr.h"
#include "data/zip_archive.h"
#include "tasks/run/launcher_env.h"
#include "tasks/run/runner.h"
#include "tests/temp_files.h"
#include "tests/test_support.h"

using namespace foxeval;
using foxeval::test::error_of;
using foxeval::test::TempDir;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string overlap(const std::string& out, const std::string& in) {
  return error_of<Error>([&] { refuse_output_over_input({{"--out", out}}, {{"--data", in}}); });
}

}  // namespace

TEST_CASE("an output never replaces an input, whatever the spelling") {
  TempDir dir("overlap");
  write(dir.path / "data" / "tokens.npy", "x");
  write(dir.path / "model" / "config.json", "{}");
  const std::string data = (dir.path / "data").string(), npy = (dir.path / "data" / "tokens.npy").string();
  // The same file: as given, through "..", through a link to it, through a linked folder.
  CHECK(overlap(npy, npy).find("is the input --data") != std::string::npos);
  CHECK(overlap((dir.path / "model" / ".." / "data" / "tokens.npy").string(), npy).find("is the input") != std::string::npos);
  fs::create_symlink(dir.path / "data" / "tokens.npy", dir.path / "link.npy");
  CHECK(overlap((dir.path / "link.npy").string(), npy).find("is the input") != std::string::npos);
  CHECK(overlap(npy, (dir.path / "link.npy").string()).find("is the input") != std::string::npos);
  fs::create_directory_symlink(dir.path / "data", dir.path / "datalink");
  CHECK(overlap((dir.path / "datalink" / "tokens.npy").string(), npy).find("is the input") != std::string::npos);
  // Inside an input folder (the model's config.json, a new file in the data folder).
  CHECK(overlap((dir.path / "model" / "config.json").string(), (dir.path / "model").string()).find("is inside the input") !=
        std::string::npos);
  CHECK(overlap((dir.path / "data" / "new.json").string(), data).find("is inside the input") != std::string::npos);
  // A folder of outputs may hold an input (`longbench export lb/merged.json --out lb`): each file
  // written into it is checked as it is written, by the one writer.
  CHECK(overlap(dir.path.string(), npy) == "");
  CHECK(error_of<Error>([&] { write_text_atomic(npy, "replaced"); }).find("would replace the input --data") !=
        std::string::npos);
  CHECK(error_of<Error>([&] { write_text_atomic((dir.path / "datalink" / "x.json").string(), "{}"); })
            .find("would replace the input --data") != std::string::npos);
  CHECK(read(dir.path / "data" / "tokens.npy") == "x");
  // An input named as a file written beside the result.
  write(dir.path / "data" / "tokens.journal.jsonl", "");
  CHECK(overlap((dir.path / "data" / "tokens").string(), (dir.path / "data" / "tokens.journal.jsonl").string())
            .find("writes files named tokens.* beside it") != std::string::npos);
  write(dir.path / "r.json.lock", "");
  CHECK(overlap((dir.path / "r.json").string(), (dir.path / "r.json.lock").string()).find("beside it") != std::string::npos);
  // Relative spellings resolve from the working folder.
  const fs::path cwd = fs::current_path();
  fs::current_path(dir.path / "model");
  CHECK(overlap("../data/tokens.npy", npy).find("is the input") != std::string::npos);
  fs::current_path(cwd);
  // A link among an input folder's entries: where it points is an input too.
  write(dir.path / "store" / "blob", "w");
  fs::create_symlink(dir.path / "store" / "blob", dir.path / "model" / "model.safetensors");
  CHECK(overlap((dir.path / "store" / "blob").string(), (dir.path / "model").string()).find("is the input") !=
        std::string::npos);
  // Apart: no refusal; inputs that do not exist replace nothing.
  CHECK(overlap((dir.path / "out" / "r.json").string(), npy) == "");
  CHECK(overlap((dir.path / "data2" / "r.json").string(), data) == "");
  CHECK(overlap((dir.path / "tokens.npy.json").string(), npy) == "");
  CHECK(overlap(npy, (dir.path / "missing").string()) == "");
}

TEST_CASE("one atomic writer: never through a link, temp names unpredictable, no temp left") {
  TempDir dir("atomic");
  write(dir.path / "target.txt", "keep");
  // A link at the result's name is replaced by the result, its target untouched.
  fs::create_symlink(dir.path / "target.txt", dir.path / "r.json");
  write_text_atomic((dir.path / "r.json").string(), "new");
  CHECK(read(dir.path / "target.txt") == "keep");
  CHECK_FALSE(fs::is_symlink(dir.path / "r.json"));
  CHECK(read(dir.path / "r.json") == "new");
  // The old predictable temp name planted as a link changes nothing; no temp file stays.
  fs::create_symlink(dir.path / "target.txt", dir.path / ("r.json.tmp." + std::to_string(::getpid())));
  write_text_atomic((dir.path / "r.json").string(), "again");
  CHECK(read(dir.path / "target.txt") == "keep");
  int temps = 0;
  for (const auto& e : fs::directory_iterator(dir.path))
    temps += e.path().filename().string().rfind("r.json.tmp.", 0) == 0 && !fs::is_symlink(e.symlink_status());
  CHECK(temps == 0);
  // create_new_file: never an existing file, never a link.
  CHECK(error_of<Error>([&] { create_new_file((dir.path / "r.json").string()); }).find("cannot create") != std::string::npos);
  fs::create_symlink(dir.path / "nowhere", dir.path / "dangling");
  CHECK(error_of<Error>([&] { create_new_file((dir.path / "dangling").string()); }).find("symbolic link") != std::string::npos);
  CHECK_FALSE(fs::exists(dir.path / "nowhere"));
}

TEST_CASE("a journal or state that is a link is refused, its target untouched") {
  TempDir dir("journal");
  write(dir.path / "elsewhere.txt", "precious\n");
  const std::string out = (dir.path / "r.json").string();
  fs::create_symlink(dir.path / "elsewhere.txt", out + ".journal.jsonl");
  std::vector<WorkItem> items = {{"a", 1.0}};
  RunnerSettings resume;
  resume.out_path = out;
  resume.resume = true;
  const std::string e = error_of<Error>([&] { RecordRunner run(resume, "niah", {{"x", 1}}, items); });
  CHECK(e.find("is a symbolic link") != std::string::npos);
  CHECK(read(dir.path / "elsewhere.txt") == "precious\n");
  CHECK_FALSE(fs::exists(out + ".lock"));
  // A damaged journal line names the file and the line.
  fs::remove(out + ".journal.jsonl");
  write(out + ".journal.jsonl", R"({"foxeval_journal": 1, "task": "niah", "identity": {"x": 1}})" "\n"
                                R"({"id": 5, "record": {}})" "\n" R"({"id": "a", "record": {}})" "\n");
  CHECK(error_of<Error>([&] { RecordRunner run(resume, "niah", {{"x", 1}}, items); })
            .find(out + ".journal.jsonl line 2: 'id' must be a string") != std::string::npos);
}

TEST_CASE("zip members: names inside the archive stay inside it; sizes are bounded") {
  CHECK(is_contained_member_name("data/trec.jsonl"));
  CHECK(is_contained_member_name("trec.jsonl"));
  CHECK_FALSE(is_contained_member_name("/trec.jsonl"));
  CHECK_FALSE(is_contained_member_name("data/../../trec.jsonl"));
  CHECK_FALSE(is_contained_member_name(".."));
  CHECK_FALSE(is_contained_member_name("a\nb"));
  CHECK_FALSE(is_contained_member_name(""));
  CHECK_FALSE(is_contained_member_name("..\\..\\trec.jsonl"));  // Windows separators
  CHECK_FALSE(is_contained_member_name("data\\trec.jsonl"));
  CHECK_FALSE(is_contained_member_name("C:/trec.jsonl"));
  CHECK_FALSE(is_contained_member_name("c:trec.jsonl"));
  CHECK(is_contained_member_name("data/./trec.jsonl"));
  TempDir dir("zip");
  const std::string zip = (dir.path / "data.zip").string();
  int code = 0;
  zip_t* z = zip_open(zip.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  REQUIRE(z);
  const std::string body = "{}\n";
  zip_source_t* src = zip_source_buffer(z, body.data(), body.size(), 0);
  REQUIRE(zip_file_add(z, "/trec.jsonl", src, ZIP_FL_ENC_UTF_8) >= 0);
  REQUIRE(zip_close(z) == 0);
  CHECK(error_of<Error>([&] { zip_member_names(zip); }).find("not a relative path inside the archive") != std::string::npos);
  CHECK(error_of<Error>([&] { read_zip_member(zip, "../x"); }).find("not a relative path") != std::string::npos);
  CHECK(kMaxZipMemberBytes <= (uint64_t{256} << 20));
}

TEST_CASE("no secret in a stored URL") {
  CHECK(url_without_secrets("https://user:pass@judge.example/v1/chat?api-key=sk-1&model=m") ==
        "https://judge.example/v1/chat?api-key=[redacted]&model=m");
  CHECK(url_without_secrets("http://127.0.0.1:8000/v1?token=abc;x=1#access_token=zzz") ==
        "http://127.0.0.1:8000/v1?token=[redacted];x=1");
  CHECK(url_without_secrets("http://h/v1?X-Amz-Signature=s&Key-Pair-Id=k&sig=q&ok=1") ==
        "http://h/v1?X-Amz-Signature=[redacted]&Key-Pair-Id=[redacted]&sig=[redacted]&ok=1");
  CHECK(url_without_secrets("http://h:1/v1") == "http://h:1/v1");
  CHECK(url_without_secrets("http://a@b@h/p?q") == "http://h/p?q");
  const nlohmann::json settings = {{"judge_url", "https://u:p@h/v1?apikey=k"}, {"n", 1}, {"l", {"http://x:y@h"}}};
  CHECK(without_url_secrets(settings).dump().find("u:p") == std::string::npos);
  CHECK(without_url_secrets(settings)["judge_url"] == "https://h/v1?apikey=[redacted]");
  CHECK(without_url_secrets(settings)["l"][0] == "http://h");
}

TEST_CASE("bounded reads: FIFOs refused at once, refs bounded, a shrinking .npy is an error, not SIGBUS") {
  TempDir dir("bounded");
  // refs/main: a FIFO and a large file are refused without reading; a good one gives its commit.
  REQUIRE(::mkfifo((dir.path / "fifo").c_str(), 0600) == 0);
  CHECK(error_of<Error>([&] { read_hub_ref((dir.path / "fifo").string()); }).find("not a regular file") != std::string::npos);
  write(dir.path / "big", std::string(4096, 'a'));
  CHECK(error_of<Error>([&] { read_hub_ref((dir.path / "big").string()); }).find("4096 bytes") != std::string::npos);
  write(dir.path / "main", "0123abcd\n");
  CHECK(read_hub_ref((dir.path / "main").string()) == "0123abcd");
  CHECK(read_hub_ref((dir.path / "none").string()) == "");
  // A link to nothing is not a missing ref: it is named as the link it is.
  fs::create_symlink(dir.path / "gone", dir.path / "dangling");
  CHECK(error_of<Error>([&] { read_hub_ref((dir.path / "dangling").string()); }).find("a symbolic link to") != std::string::npos);
  // A digest of a FIFO is refused, not waited on.
  CHECK(error_of<Error>([&] { sha256_file((dir.path / "fifo").string()); }).find("not a regular file") != std::string::npos);
  // A .npy that shrinks under a reader.
  const std::string npy = (dir.path / "t.npy").string();
  {
    std::string h = "{'descr': '<i4', 'fortran_order': False, 'shape': (64, 256), }";
    h += std::string((64 - (10 + h.size() + 1) % 64) % 64, ' ') + "\n";
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + char(h.size() & 255) + char(h.size() >> 8) + h;
    bytes += std::string(64 * 256 * 4, '\x01');
    write(npy, bytes);
  }
  auto rows = open_token_rows(npy);
  CHECK(rows->read(63, 1, 0, 256).size() == 256);
  fs::resize_file(npy, 1000);
  CHECK(error_of<Error>([&] { rows->read(63, 1, 0, 256); }).find("before the") != std::string::npos);
  // .zarray: a FIFO is refused; a tiny file declaring 10^12 chunks is refused before any list is made.
  fs::create_directories(dir.path / "z1");
  REQUIRE(::mkfifo((dir.path / "z1" / ".zarray").c_str(), 0600) == 0);
  CHECK(error_of<Error>([&] { ZarrRows z((dir.path / "z1").string(), ZarrOptions{}); }).find("not a regular file") != std::string::npos);
  write(dir.path / "z2" / ".zarray",
        R"({"zarr_format": 2, "shape": [1000000, 1000000], "chunks": [1, 1], "dtype": "<u2", "order": "C",)"
        R"( "fill_value": 0, "filters": null, "compressor": null})");
  ZarrRows z2((dir.path / "z2").string(), ZarrOptions{});
  CHECK(error_of<Error>([&] { z2.content_digest(1000000); }).find("chunk files, more than") != std::string::npos);
}

TEST_CASE("a file changed after its digest was taken is caught before a result is written") {
  TempDir dir("changed");
  write(dir.path / "d.bin", "abc");
  sha256_file((dir.path / "d.bin").string());
  CHECK_NOTHROW(check_digested_files_unchanged());
  write(dir.path / "d.bin", "abd");
  CHECK(error_of<Error>([] { check_digested_files_unchanged(); }).find("changed (or was replaced) during the run") !=
        std::string::npos);
  // Replaced by another file of the same bytes: another inode, caught too.
  write(dir.path / "d.bin", "abc");
  sha256_file((dir.path / "d.bin").string());
  fs::rename(dir.path / "d.bin", dir.path / "old.bin");
  write(dir.path / "d.bin", "abc");
  CHECK(error_of<Error>([] { check_digested_files_unchanged(); }) != "");
  // A new digest takes a new stamp; a file removed since is skipped (its readers hold it open).
  sha256_file((dir.path / "d.bin").string());
  CHECK_NOTHROW(check_digested_files_unchanged());
  fs::remove(dir.path / "d.bin");
  CHECK_NOTHROW(check_digested_files_unchanged());
}

TEST_CASE("launcher variables are range-checked as the flags they stand for") {
  struct Env {
    const char* name;
    ~Env() { ::unsetenv(name); }
  };
  Env w{"WORLD_SIZE"}, r{"RANK"};
  ::setenv("RANK", "0", 1);
  ::setenv("WORLD_SIZE", "1000000000", 1);
  CHECK(error_of<Error>([] { shard_from_environment(); }).find("WORLD_SIZE=1000000000 is not allowed: must be an integer in [1, 1048576]") !=
        std::string::npos);
  ::setenv("WORLD_SIZE", "99999999999999999999999", 1);
  CHECK(error_of<Error>([] { shard_from_environment(); }).find("is not allowed") != std::string::npos);
  ::setenv("WORLD_SIZE", "4", 1);
  ::setenv("RANK", "-1", 1);
  CHECK(error_of<Error>([] { shard_from_environment(); }).find("RANK=-1") != std::string::npos);
  ::setenv("RANK", "3", 1);
  CHECK(shard_from_environment().shard_index == 3);
}

TEST_CASE("a safetensors file that shrinks after it was opened gives an error, not SIGBUS") {
  // #55 class 6: weights are read with pread, never through a mapping (a truncated mapped page is SIGBUS).
  TempDir dir("shrink_safetensors");
  const fs::path st = dir.path / "model.safetensors";
  fs::copy_file(test::source_path("tests/fixtures/official/fox_pro/model.safetensors"), st);
  SafetensorsFile file(st.string());
  REQUIRE(!file.entries().empty());
  std::string name, last;
  uint64_t end = 0;
  for (const auto& [n, e] : file.entries()) {
    if (name.empty()) name = n;
    if (e.end > end) end = e.end, last = n;
  }
  const at::Tensor before = file.read(name);  // readable while whole
  CHECK(before.numel() > 0);
  REQUIRE(::truncate(st.c_str(), 64) == 0);
  const std::string err = error_of<Error>([&] { file.read(last); });
  CHECK(err.find("model.safetensors: tensor " + last) != std::string::npos);
  CHECK(err.find("the file ended at byte") != std::string::npos);
}
