#include "data/cpu_cores.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace foxeval {
namespace {

std::string read_small_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// One level's quota in cores, 0 when it sets none (or its files are not there).
double level_quota(const fs::path& dir, bool v2) {
  if (v2) {
    std::istringstream in(read_small_file(dir / "cpu.max"));
    std::string quota;
    double period = 0;
    if (!(in >> quota >> period) || quota == "max" || period <= 0) return 0.0;
    try {
      return std::stod(quota) / period;
    } catch (const std::exception&) {
      return 0.0;
    }
  }
  double quota = 0, period = 0;
  std::istringstream q(read_small_file(dir / "cpu.cfs_quota_us")), p(read_small_file(dir / "cpu.cfs_period_us"));
  if (!(q >> quota) || !(p >> period) || quota <= 0 || period <= 0) return 0.0;  // -1: no limit
  return quota / period;
}

// The smallest quota from `dir` (the process's cgroup, below `base`) up to `base` (the hierarchy's root).
double quota_up_to(fs::path dir, const fs::path& base, bool v2) {
  double best = 0.0;
  for (;;) {
    const double q = level_quota(dir, v2);
    if (q > 0 && (best == 0.0 || q < best)) best = q;
    if (dir == base || dir.parent_path() == dir) return best;
    dir = dir.parent_path();
  }
}

// A folder without its trailing separator ("/sys/fs/cgroup/" -> "/sys/fs/cgroup"), so walking up compares equal.
fs::path folder(const std::string& p) {
  fs::path f = fs::path(p).lexically_normal();
  return f.has_filename() || f.parent_path() == f ? f : f.parent_path();
}

}  // namespace

double cgroup_cpu_quota(const std::string& proc_self_cgroup, const std::string& root) {
  double best = 0.0;
  auto take = [&](double q) {
    if (q > 0 && (best == 0.0 || q < best)) best = q;
  };
  std::istringstream lines(proc_self_cgroup);
  for (std::string line; std::getline(lines, line);) {
    // "hierarchy-id:controllers:path"; v2 is "0::/path".
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    const std::string rel = path.empty() || path == "/" ? "" : path.substr(path[0] == '/' ? 1 : 0);
    if (controllers.empty()) {
      const fs::path base = folder(root);
      take(quota_up_to(rel.empty() ? base : base / rel, base, true));
      continue;
    }
    std::istringstream names(controllers);
    bool cpu = false;
    for (std::string n; std::getline(names, n, ',');) cpu = cpu || n == "cpu";
    if (!cpu) continue;
    // v1: the cpu controller's mount is named after its controllers ("cpu,cpuacct") or linked as "cpu".
    for (const std::string& mount : {controllers, std::string("cpu")}) {
      const fs::path base = folder(root) / mount;
      std::error_code ec;
      if (!fs::is_directory(base, ec)) continue;
      // Inside a container the mount is the container's own cgroup: the path may not exist below it.
      const fs::path top = !rel.empty() && fs::is_directory(base / rel, ec) ? base / rel : base;
      take(quota_up_to(top, base, false));
      break;
    }
  }
  return best;
}

UsableCores usable_cores() {
  UsableCores u;
  cpu_set_t set;
  CPU_ZERO(&set);
  u.affinity = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  if (u.affinity <= 0) u.affinity = std::max(1u, std::thread::hardware_concurrency());
  u.quota = cgroup_cpu_quota(read_small_file("/proc/self/cgroup"), "/sys/fs/cgroup");
  u.cores = u.affinity;
  if (u.quota > 0) u.cores = std::min<int64_t>(u.cores, static_cast<int64_t>(std::ceil(u.quota - 1e-9)));
  u.cores = std::max<int64_t>(1, u.cores);
  return u;
}

std::string UsableCores::describe() const {
  return fmt::format("affinity {} CPU{}, {}", affinity, affinity == 1 ? "" : "s",
                     quota > 0 ? fmt::format("cgroup CPU quota {:g} cores", quota) : std::string("no cgroup CPU quota"));
}

}  // namespace foxeval
