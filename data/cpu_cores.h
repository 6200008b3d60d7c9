// The cores this process may use: the CPUs of its affinity mask (taskset, a batch scheduler's
// cpuset) and its cgroup's CPU quota (a container's --cpus, SLURM or systemd CPU limits), whichever
// is smaller. std::thread::hardware_concurrency() counts the machine's CPUs instead: on a shared
// node that oversubscribes (measured: 2-10x slower CPU runs than one thread per usable core).
#pragma once
#include <cstdint>
#include <string>

namespace foxeval {

struct UsableCores {
  int64_t affinity = 0;  // CPUs in the affinity mask
  double quota = 0.0;    // the cgroup CPU quota in cores (quota / period, the tightest level); 0: none
  int64_t cores = 1;     // min(affinity, ceil(quota)), at least 1
  std::string describe() const;  // "affinity 2 CPUs, no cgroup CPU quota"
};

UsableCores usable_cores();

// The cgroup CPU quota in cores (0: none) of the cgroup that `proc_self_cgroup` (the text of
// /proc/self/cgroup) names, under the cgroup file system at `root` (/sys/fs/cgroup): cgroup v2's
// cpu.max ("max 100000" or "150000 100000") or v1's cpu.cfs_quota_us / cpu.cfs_period_us, at the
// process's cgroup and every cgroup above it (a parent's limit binds its children), the smallest.
// Unreadable files count as no limit: the quota only ever lowers the count.
double cgroup_cpu_quota(const std::string& proc_self_cgroup, const std::string& root);

}  // namespace foxeval
