#include "data/content_digest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "data/errors.h"
#include "data/json_file.h"
#include "data/model_files.h"
#include "data/read_stamps.h"

namespace fs = std::filesystem;

namespace foxeval {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  if (!impl_->ctx || EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) != 1)
    throw Error("SHA-256: OpenSSL could not start a digest");
}

Sha256::~Sha256() {
  if (impl_ && impl_->ctx) EVP_MD_CTX_free(impl_->ctx);
}

void Sha256::update(const void* data, size_t n) {
  if (n > 0 && EVP_DigestUpdate(impl_->ctx, data, n) != 1) throw Error("SHA-256: OpenSSL digest update failed");
}

std::string Sha256::hex() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(impl_->ctx, md, &len) != 1 || len != 32) throw Error("SHA-256: OpenSSL digest failed");
  static const char* kHex = "0123456789abcdef";
  std::string out(64, '0');
  for (unsigned i = 0; i < 32; ++i) {
    out[2 * i] = kHex[md[i] >> 4];
    out[2 * i + 1] = kHex[md[i] & 15];
  }
  return out;
}

std::string sha256_hex(const void* data, size_t n) {
  Sha256 h;
  h.update(data, n);
  return h.hex();
}

namespace {

// What every digested file was when its digest was taken: a file changed during a run (a write
// moves its ctime, which no user can set back) would give numbers from bytes the digest never saw.
struct FileStamp {
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime, ctime;
};
std::mutex g_stamps_mu;
std::map<std::string, FileStamp> g_stamps;

FileStamp stamp_of(const struct stat& st) { return {st.st_dev, st.st_ino, st.st_size, st.st_mtim, st.st_ctim}; }

bool same_stamp(const FileStamp& a, const FileStamp& b) {
  return a.dev == b.dev && a.ino == b.ino && a.size == b.size && a.mtime.tv_sec == b.mtime.tv_sec &&
         a.mtime.tv_nsec == b.mtime.tv_nsec && a.ctime.tv_sec == b.ctime.tv_sec && a.ctime.tv_nsec == b.ctime.tv_nsec;
}

}  // namespace

void check_digested_files_unchanged() {
  std::lock_guard<std::mutex> lock(g_stamps_mu);
  for (const auto& [path, then] : g_stamps) {
    struct stat st {};
    // A file removed since is not a change of what was read (the readers hold it open); a file
    // put in its place is (another inode).
    if (::stat(path.c_str(), &st) != 0) continue;
    if (!same_stamp(stamp_of(st), then))
      throw Error(fmt::format("{}: changed (or was replaced) during the run, after its digest was taken; the numbers "
                              "may come from other bytes than the identity names, so no result is written; run again "
                              "on a file that stays as it is",
                              path));
  }
}

std::string sha256_file(const std::string& path, int64_t offset, int64_t length) {
  // O_NONBLOCK: a FIFO where a file should be is refused at once instead of waiting for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw Error(fmt::format("{}: cannot read to take its digest: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(fmt::format("{}: not a regular file (a FIFO, device or folder); refusing to read it", path));
  }
  {
    std::lock_guard<std::mutex> lock(g_stamps_mu);
    g_stamps[path] = stamp_of(st);
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  Sha256 h;
  // One buffer per thread, reused (zarr arrays hash thousands of small chunk files), sized to
  // what the file holds up to 8 MiB.
  thread_local std::vector<char> buf;
  const int64_t size = static_cast<int64_t>(st.st_size) - offset;
  const int64_t need = std::clamp<int64_t>(length < 0 ? size : std::min(length, size), 1, int64_t(8) << 20);
  if (static_cast<int64_t>(buf.size()) < need) buf.resize(static_cast<size_t>(need));
  int64_t pos = offset, left = length;
  while (length < 0 || left > 0) {
    const size_t want = length < 0 ? buf.size() : static_cast<size_t>(std::min<int64_t>(left, static_cast<int64_t>(buf.size())));
    const ssize_t got = ::pread(fd, buf.data(), want, pos);
    if (got < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      ::close(fd);
      throw Error(fmt::format("{}: read error while taking its digest: {}", path, std::strerror(e)));
    }
    if (got == 0) break;
    h.update(buf.data(), static_cast<size_t>(got));
    pos += got;
    if (length >= 0) left -= got;
  }
  ::close(fd);
  if (length >= 0 && left > 0)
    throw Error(fmt::format("{}: ends before byte {} (taking the digest of bytes [{}, {}))", path, offset + length, offset,
                            offset + length));
  return h.hex();
}

std::vector<std::string> sha256_files(const std::vector<std::string>& paths) {
  std::vector<std::string> out(paths.size());
  std::vector<std::exception_ptr> errors(paths.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < paths.size();) {
      try {
        out[i] = sha256_file(paths[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const size_t threads = std::min<size_t>(paths.size(), std::max(1u, std::thread::hardware_concurrency()));
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (size_t t = 0; t < threads; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);  // the first file (in the order given) that failed
  return out;
}

std::string combine_digests(const std::vector<std::pair<std::string, std::string>>& named_hex) {
  Sha256 h;
  for (const auto& [name, hex] : named_hex) h.update(name + "\t" + hex + "\n");
  return "sha256:" + h.hex();
}

bool is_sha256_hex(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

namespace {

// The files of a model folder foxeval reads (models/checkpoint/checkpoint.cpp, data/tokenizer_load.cpp).
std::vector<std::string> model_file_names(const std::string& dir) {
  std::set<std::string> names = {"config.json"};
  const fs::path index = fs::path(dir) / "model.safetensors.index.json";
  std::error_code ec;
  if (fs::exists(fs::symlink_status(index, ec))) {
    names.insert(index.filename().string());
    const nlohmann::json j = read_json(model_file(dir, index.filename().string(), dir));
    if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
      throw Error(fmt::format("{}: field \"weight_map\" missing or not an object", index.string()));
    for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it) {
      if (!it.value().is_string())
        throw Error(fmt::format("{}: weight_map[\"{}\"] must be a file name", index.string(), it.key()));
      names.insert(it.value().get<std::string>());
    }
  } else {
    names.insert("model.safetensors");
  }
  for (const char* optional : {"vocab.json", "merges.txt"})
    if (fs::exists(fs::path(dir) / optional, ec)) names.insert(optional);
  return {names.begin(), names.end()};
}

// The SHA-256 the hub cache names `path` by: a file of models--org--name/snapshots/<commit>/
// linking to that repo's own blobs/<64 hex>. Empty for anything else (a plain file, a git blob
// named by its SHA-1, a folder of links assembled elsewhere: those are hashed, never trusted by name).
std::string hub_blob_sha256(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_symlink(path, ec)) return "";
  const fs::path target = fs::canonical(path, ec);
  if (ec) return "";
  const std::string name = target.filename().string();
  const fs::path snapshot = fs::canonical(path.parent_path(), ec);
  if (ec || !is_sha256_hex(name) || snapshot.parent_path().filename() != "snapshots" ||
      snapshot.parent_path().parent_path().filename().string().rfind("models--", 0) != 0 ||
      target.parent_path() != snapshot.parent_path().parent_path() / "blobs")
    return "";
  if (!fs::is_regular_file(path, ec)) return "";  // a dangling link: let the reader say so
  return name;
}

ModelDigest compute_model_digest(const std::string& dir) {
  ModelDigest d;
  std::vector<std::string> to_hash, hash_names;
  size_t from_blobs = 0;
  for (const std::string& name : model_file_names(dir)) {
    const std::string path = model_file(dir, name, dir);  // inside the folder, links resolved
    std::error_code ec;
    if (!fs::exists(fs::status(path, ec))) throw Error(fmt::format("{}: {} is missing (taking the model's digest)", dir, name));
    const std::string blob = hub_blob_sha256(path);
    if (!blob.empty()) {
      d.files.emplace_back(name, blob);
      ++from_blobs;
    } else {
      to_hash.push_back(path);
      hash_names.push_back(name);
    }
  }
  const std::vector<std::string> hashed = sha256_files(to_hash);
  for (size_t i = 0; i < hashed.size(); ++i) d.files.emplace_back(hash_names[i], hashed[i]);
  std::sort(d.files.begin(), d.files.end());
  d.digest = combine_digests(d.files);
  d.source = from_blobs == 0 ? "hashed"
             : to_hash.empty() ? "hub cache blob names"
                               : "hub cache blob names (large files) and hashed (small files)";
  return d;
}

}  // namespace

ModelDigest model_digest(const std::string& model_dir) { return compute_model_digest(model_dir); }

}  // namespace foxeval
