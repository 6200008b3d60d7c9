#include "data/hub_cache.h"

#include <fmt/format.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "data/errors.h"
#include "data/hf_env.h"
#include "data/hub_ref.h"

namespace fs = std::filesystem;

namespace foxeval {
namespace {

// Rules matched: huggingface_hub 2.4.0 (constants.py: HF_HOME, HUGGINGFACE_HUB_CACHE, HF_HUB_CACHE;
// utils/_validators.py: validate_repo_id; file_download.py: repo_folder_name, refs/ and snapshots/).
// The same rules hold unchanged since huggingface_hub 0.21 (where HF_HUB_CACHE became the name).

// posixpath.expanduser: a leading "~" or "~user" becomes that home folder ($HOME for "~", else the
// password database); a user that cannot be found leaves the path as written.
std::string expand_user(const std::string& path) {
  if (path.empty() || path[0] != '~') return path;
  size_t i = path.find('/', 1);
  if (i == std::string::npos) i = path.size();
  std::string home;
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (i == 1) {
    if (const char* h = std::getenv("HOME")) {
      home = h;
    } else {
      if (getpwuid_r(getuid(), &pw, buf.data(), buf.size(), &found) != 0 || !found) return path;
      home = found->pw_dir;
    }
  } else {
    const std::string user = path.substr(1, i - 1);
    if (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || !found) return path;
    home = found->pw_dir;
  }
  while (!home.empty() && home.back() == '/') home.pop_back();
  const std::string out = home + path.substr(i);
  return out.empty() ? "/" : out;
}

// Python's \w with re.ASCII.
bool is_word(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

// posixpath.expandvars: $NAME and ${NAME} (NAME of [A-Za-z0-9_] in the first form) become the
// variable's value; unset variables are left as written.
std::string expand_vars(std::string path) {
  size_t i = 0;
  while ((i = path.find('$', i)) != std::string::npos) {
    const size_t k = i + 1;
    size_t end;
    std::string name;
    if (k < path.size() && is_word(path[k])) {
      end = k;
      while (end < path.size() && is_word(path[end])) ++end;
      name = path.substr(k, end - k);
    } else if (k < path.size() && path[k] == '{' && path.find('}', k + 1) != std::string::npos) {
      end = path.find('}', k + 1) + 1;
      name = path.substr(k + 1, end - k - 2);
    } else {
      i = k;
      continue;
    }
    const char* value = name.empty() || name.find('=') != std::string::npos ? nullptr : std::getenv(name.c_str());
    if (!value) {
      i = end;
      continue;
    }
    path = path.substr(0, i) + value + path.substr(end);
    i += std::string(value).size();
  }
  return path;
}

std::string expand(const std::string& path) { return expand_vars(expand_user(path)); }

struct CacheDir {
  std::string path, from;  // `from`: which setting chose it, for error messages
};

CacheDir find_cache_dir() {
  std::string hf_home, home_from;
  if (const char* v = env_set("HF_HOME")) {
    hf_home = v, home_from = "$HF_HOME/hub";
  } else if (const char* x = env_set("XDG_CACHE_HOME")) {
    hf_home = path_join(x, "huggingface"), home_from = "$XDG_CACHE_HOME/huggingface/hub";
  } else {
    hf_home = path_join(path_join(expand_user("~"), ".cache"), "huggingface"), home_from = "the default ~/.cache/huggingface/hub";
  }
  hf_home = expand(hf_home);
  if (const char* v = env_set("HF_HUB_CACHE")) return {expand(v), "$HF_HUB_CACHE"};
  if (const char* v = env_set("HUGGINGFACE_HUB_CACHE")) return {expand(v), "the legacy $HUGGINGFACE_HUB_CACHE"};
  return {expand(path_join(hf_home, "hub")), home_from};  // expanded twice, as huggingface_hub does
}

// Why a revision ("main", a tag, "refs/pr/1", a commit hash) could leave refs/, or "".
std::string revision_problem(const std::string& rev) {
  if (rev.empty()) return "the revision after '@' is empty";
  if (rev.find('\\') != std::string::npos || rev.find('\0') != std::string::npos)
    return fmt::format("revision '{}' has a backslash or NUL", rev);
  if (rev[0] == '/') return fmt::format("revision '{}' is an absolute path", rev);
  std::stringstream parts(rev);
  for (std::string part; std::getline(parts, part, '/');)
    if (part.empty() || part == "." || part == "..") return fmt::format("revision '{}' has an empty, '.' or '..' part", rev);
  if (rev.back() == '/') return fmt::format("revision '{}' has an empty part", rev);
  return "";
}

// One folder name (a commit hash as refs/ holds it): nothing that could leave snapshots/.
bool is_plain_name(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find_first_of("/\\") == std::string::npos && s.find('\0') == std::string::npos;
}

bool is_commit_hash(const std::string& s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

struct ParsedSpec {
  std::string repo_id, revision, problem;
};

ParsedSpec parse_spec(const std::string& spec) {
  const size_t at = spec.find('@');
  ParsedSpec p{spec.substr(0, at), at == std::string::npos ? "main" : spec.substr(at + 1), ""};
  p.problem = repo_id_problem(p.repo_id);
  if (p.problem.empty()) p.problem = revision_problem(p.revision);
  return p;
}

// huggingface_hub's repo_folder_name: "models--org--name", or "models--name" without an organisation.
std::string repo_folder_name(const std::string& repo_id) {
  std::string out = "models";
  std::stringstream parts(repo_id);
  for (std::string part; std::getline(parts, part, '/');) out += "--" + part;
  return out;
}

}  // namespace

std::string hub_cache_dir() { return find_cache_dir().path; }

std::string python_expanduser(const std::string& path) { return expand_user(path); }

std::string repo_id_problem(const std::string& repo_id) {
  const std::string q = "'" + repo_id + "'";
  if (repo_id.empty()) return "the repo id is empty";
  if (repo_id[0] == '/') return q + " is an absolute path";
  if (repo_id[0] == '~' || repo_id.rfind("./", 0) == 0 || repo_id.rfind("../", 0) == 0) return q + " is a path";
  if (std::count(repo_id.begin(), repo_id.end(), '/') > 1) return q + " has more than one '/' (a repo id is 'name' or 'namespace/name')";
  std::stringstream parts(repo_id);
  std::vector<std::string> names;
  for (std::string part; std::getline(parts, part, '/');) names.push_back(part);
  if (repo_id.back() == '/') names.push_back("");
  for (const std::string& part : names) {
    if (part.empty()) return q + " has an empty part";
    if (part.size() > 96) return q + " has a part longer than 96 characters";
    for (char c : part)
      if (!is_word(c) && c != '-' && c != '.')
        return fmt::format("{} has '{}' (only letters, digits, '-', '_' and '.' are allowed)", q,
                           std::isprint(static_cast<unsigned char>(c)) ? std::string(1, c) : fmt::format("\\x{:02x}", c & 0xff));
    if (!is_word(part.front()) || !is_word(part.back())) return q + " has a part that starts or ends with '-' or '.'";
  }
  if (repo_id.find("--") != std::string::npos || repo_id.find("..") != std::string::npos) return q + " has '--' or '..'";
  if (repo_id.size() >= 4 && repo_id.compare(repo_id.size() - 4, 4, ".git") == 0) return q + " ends with '.git'";
  return "";
}

HubModelId parse_hub_model_id(const std::string& spec) {
  std::error_code ec;
  if (spec.empty() || fs::exists(spec, ec)) return {};
  const ParsedSpec p = parse_spec(spec);
  if (!p.problem.empty()) return {};
  return {p.repo_id, p.revision};
}

std::string resolve_model_dir(const std::string& spec) {
  std::error_code ec;
  if (fs::is_directory(spec, ec)) return spec;
  if (!spec.empty() && fs::exists(spec, ec)) throw Error(fmt::format("model {} is a file, not a checkpoint directory", spec));
  const ParsedSpec id = parse_spec(spec);
  if (!id.problem.empty())
    throw Error(fmt::format(
        "model directory {} does not exist, and it is not a Hugging Face repo id ('org/name' or 'name', optionally "
        "'@revision'): {}",
        spec.empty() ? "''" : spec, id.problem));
  const CacheDir cache = find_cache_dir();
  const fs::path repo_dir = fs::path(cache.path) / repo_folder_name(id.repo_id);
  std::vector<std::string> searched;
  const fs::path ref = repo_dir / "refs" / id.revision;
  std::string commit;
  if (fs::exists(fs::symlink_status(ref, ec))) {
    commit = read_hub_ref(ref.string());
    if (!is_plain_name(commit)) throw Error(fmt::format("{} holds '{}', which is not a commit hash", ref.string(), commit));
    searched.push_back(ref.string() + " (-> " + commit + ")");
  } else {
    searched.push_back(ref.string() + (fs::is_directory(repo_dir, ec) ? " (missing)" : " (no " + repo_dir.filename().string() + " folder)"));
    if (is_commit_hash(id.revision)) commit = id.revision;
  }
  if (!commit.empty()) {
    const fs::path snapshot = repo_dir / "snapshots" / commit;
    if (fs::is_directory(snapshot, ec)) return snapshot.string();
    searched.push_back(snapshot.string() + " (missing)");
  }
  std::string paths;
  for (const auto& p : searched) paths += "\n  " + p;
  const std::string rev = id.revision == "main" ? "" : " --revision " + id.revision;
  throw Error(fmt::format(
      "model {} is neither a directory nor in the Hugging Face cache {} (from {}); looked in:{}\n"
      "foxeval never downloads. Fetch it on a machine with network, into the same cache (or copy the cache here):\n"
      "  hf download {}{}\n"
      "or, with an older huggingface_hub:\n"
      "  huggingface-cli download {}{}",
      spec, cache.path, cache.from, paths, id.repo_id, rev, id.repo_id, rev));
}

std::string model_identity_path(const std::string& spec) {
  return fs::weakly_canonical(resolve_model_dir(spec)).string();
}

HubModelId hub_model_of_path(const std::string& path) {
  fs::path p = fs::path(path).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();  // a trailing '/'
  const fs::path commit = p.filename(), snapshots = p.parent_path().filename(), repo = p.parent_path().parent_path().filename();
  const std::string r = repo.string();
  if (snapshots != "snapshots" || r.rfind("models--", 0) != 0 || !is_plain_name(commit.string())) return {};
  std::string id = r.substr(8);
  const auto sep = id.find("--");
  if (sep != std::string::npos) id.replace(sep, 2, "/");  // models--org--name; models--name has no organisation
  if (!repo_id_problem(id).empty()) return {};
  return {id, commit.string()};
}

std::string read_hub_ref(const std::string& ref_path) {
  const int fd = ::open(ref_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int err = errno;
    struct stat link {};
    // A name that is there but leads nowhere is not a missing ref: say where it points.
    if (err == ENOENT && ::lstat(ref_path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
      std::error_code ec;
      throw Error(fmt::format("{}: a symbolic link to {}, which does not exist; a ref file holds one commit hash",
                              ref_path, fs::read_symlink(ref_path, ec).string()));
    }
    if (err == ENOENT) return "";
    throw Error(fmt::format("{}: cannot read ({})", ref_path, std::strerror(err)));
  }
  struct stat st {};
  constexpr off_t kMaxRef = 1024;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kMaxRef) {
    const bool regular = S_ISREG(st.st_mode);
    ::close(fd);
    throw Error(fmt::format("{}: {}; a ref file holds one commit hash", ref_path,
                            regular ? fmt::format("{} bytes", static_cast<long long>(st.st_size))
                                    : std::string("not a regular file (a FIFO, device or folder)")));
  }
  char buf[kMaxRef + 1];
  ssize_t n;
  do n = ::pread(fd, buf, kMaxRef, 0); while (n < 0 && errno == EINTR);
  ::close(fd);
  if (n < 0) throw Error(fmt::format("{}: cannot read ({})", ref_path, std::strerror(errno)));
  std::string commit(buf, static_cast<size_t>(n));
  commit = commit.substr(0, commit.find('\n'));
  while (!commit.empty() && std::isspace(static_cast<unsigned char>(commit.back()))) commit.pop_back();
  return commit;
}

}  // namespace foxeval
