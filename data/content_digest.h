// SHA-256 digests of what a run reads (weights, config, data), so that result identities say what
// was evaluated, not where it lay: the same bytes under another path give the same digest, other
// bytes under the same path another one. SHA-256 because the Hugging Face hub cache already names
// its large files (LFS blobs) by their SHA-256: a model in the cache costs no hashing at all, and a
// copy of it elsewhere, hashed, gives the same digest. OpenSSL's libcrypto does the hashing (SHA-NI
// where the CPU has it: about disk speed).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace foxeval {

// Incremental SHA-256.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, size_t n);
  void update(const std::string& s) { update(s.data(), s.size()); }
  std::string hex();  // finishes: 64 lower-case hex digits

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string sha256_hex(const void* data, size_t n);
inline std::string sha256_hex(const std::string& s) { return sha256_hex(s.data(), s.size()); }

// SHA-256 (hex) of bytes [offset, offset + length) of a file (length < 0: to the end), read in
// large blocks. Errors name the file.
std::string sha256_file(const std::string& path, int64_t offset = 0, int64_t length = -1);

// SHA-256 (hex) of each file, several files at once (one thread per file, at most the machine's
// cores): a model's shards and a zarr array's chunks hash in parallel.
std::vector<std::string> sha256_files(const std::vector<std::string>& paths);

// One digest over named parts: "sha256:" + SHA-256 of the lines "name\thex\n" in the order given.
// Callers give a fixed order (sorted names), so listing order never changes a digest.
std::string combine_digests(const std::vector<std::pair<std::string, std::string>>& named_hex);

// True for 64 lower-case hex digits (a SHA-256 as the hub cache names its LFS blobs).
bool is_sha256_hex(const std::string& s);

// The digest of a model folder: the files foxeval reads from it (config.json, model.safetensors or
// model.safetensors.index.json and every shard it names, vocab.json and merges.txt when present).
struct ModelDigest {
  std::string digest;  // "sha256:..." = combine_digests over (file name, its SHA-256), sorted by name
  // How the files' SHA-256 were found: "hub cache blob names", "hashed" or "hub cache blob names
  // (large files) and hashed (small files)": the hub cache names its small git files by git's SHA-1,
  // so those are hashed (they are small).
  std::string source;
  std::vector<std::pair<std::string, std::string>> files;  // name -> SHA-256 hex
};

// Hashes (or reads from the hub cache's blob names) on every call: load_model (models/registry.h)
// takes it once, while the weights load, and its LoadedModel holds it for every later reader.
// Thread-safe; errors name the folder and file.
ModelDigest model_digest(const std::string& model_dir);

}  // namespace foxeval
