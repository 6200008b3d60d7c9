#include "data/path_overlap.h"

#include <fmt/format.h>

#include <filesystem>
#include <mutex>
#include <system_error>

#include "data/errors.h"

namespace fs = std::filesystem;

namespace foxeval {
namespace {

// At most this many entries of an input folder are looked at for symbolic links (a checkpoint or
// data folder has a few dozen; a huge folder is not scanned past this).
constexpr int kMaxFolderEntries = 4096;

// `inner` is `outer` or lies under it (both resolved). The root folder holds everything; it is
// never an input worth the name, so it holds nothing here.
bool within(const std::string& inner, const std::string& outer) {
  if (outer.empty() || outer == "/") return false;
  if (inner == outer) return true;
  return inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 && inner[outer.size()] == '/';
}

// The names a run writes beside its result OUT (tasks/run/runner.h, tasks/run/output_lock.h, the atomic
// writer's temp files): OUT.journal*.jsonl, OUT.state*.json, OUT.lock, OUT.tmp.*.
bool written_beside(const std::string& input, const std::string& out) {
  const fs::path i(input), o(out);
  if (i.parent_path() != o.parent_path()) return false;
  const std::string name = i.filename().string(), stem = o.filename().string() + ".";
  if (name.compare(0, stem.size(), stem) != 0) return false;
  const std::string rest = name.substr(stem.size());
  for (const char* p : {"journal.", "state.", "lock", "tmp."})
    if (rest.compare(0, std::string(p).size(), p) == 0) return true;
  return false;
}

struct Input {
  NamedPath named;
  std::string where;  // resolved
};

void add_input(std::vector<Input>& out, const NamedPath& named) {
  std::error_code ec;
  if (named.path.empty() || !fs::exists(fs::symlink_status(named.path, ec))) return;
  const std::string where = resolved_path(named.path);
  out.push_back({named, where});
  if (!fs::is_directory(where, ec)) return;
  // A folder's own entries that are links (a Hugging Face snapshot, a checkpoint assembled from
  // elsewhere): what they point at is read too.
  int seen = 0;
  for (auto it = fs::directory_iterator(where, ec); !ec && it != fs::directory_iterator() && seen < kMaxFolderEntries;
       it.increment(ec), ++seen) {
    std::error_code lec;
    if (!it->is_symlink(lec)) continue;
    const fs::path target = fs::canonical(it->path(), lec);
    if (!lec) out.push_back({{named.flag, it->path().string()}, target.string()});
  }
}

std::mutex g_inputs_mu;
std::vector<Input> g_inputs;  // every input refuse_output_over_input saw, for refuse_writing_over_input

}  // namespace

void refuse_writing_over_input(const std::string& path) {
  const std::string out = resolved_path(path);
  std::lock_guard<std::mutex> lock(g_inputs_mu);
  for (const Input& i : g_inputs)
    if (within(out, i.where))
      throw Error(fmt::format("{}: would replace the input {} {}{}; an output never replaces an input", path,
                              i.named.flag, i.named.path, out == i.where ? "" : " (it is inside it)"));
}

std::string resolved_path(const std::string& path) {
  if (path.empty()) return {};
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  if (ec) return fs::path(path).lexically_normal().string();
  fs::path w = fs::weakly_canonical(abs, ec);
  if (ec) w = abs.lexically_normal();
  std::string s = w.string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

void refuse_output_over_input(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  std::vector<Input> in;
  for (const NamedPath& i : inputs) add_input(in, i);
  {
    std::lock_guard<std::mutex> lock(g_inputs_mu);
    g_inputs.insert(g_inputs.end(), in.begin(), in.end());
  }
  for (const NamedPath& o : outputs) {
    if (o.path.empty()) continue;
    const std::string out = resolved_path(o.path);
    for (const Input& i : in) {
      const std::string shown_in = i.named.path == i.where ? i.named.path : fmt::format("{} (= {})", i.named.path, i.where);
      const std::string shown_out = o.path == out ? o.path : fmt::format("{} (= {})", o.path, out);
      std::string why;
      if (out == i.where) {
        why = fmt::format("is the input {} {}", i.named.flag, shown_in);
      } else if (within(out, i.where)) {
        why = fmt::format("is inside the input {} {}", i.named.flag, shown_in);
      } else if (written_beside(i.where, out)) {
        why = fmt::format("writes files named {}.* beside it, and the input {} {} is one", fs::path(out).filename().string(),
                          i.named.flag, shown_in);
      }
      if (!why.empty())
        throw Error(fmt::format("{} {}: {}; an output never replaces an input: give another {}", o.flag, shown_out, why,
                                o.flag));
    }
  }
}

}  // namespace foxeval
