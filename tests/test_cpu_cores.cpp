// The cores a process may use (data/cpu_cores.h): cgroup v2 cpu.max and v1 CFS quotas read from a
// fake cgroup tree, the tightest level winning; the affinity mask from sched_getaffinity.
#include <doctest/doctest.h>
#include <sched.h>

#include <fstream>
#include <thread>

#include "data/cpu_cores.h"
#include "tests/temp_files.h"

namespace fs = std::filesystem;

namespace {

void put(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

}  // namespace

TEST_CASE("cgroup CPU quota: v2 cpu.max at every level, v1 CFS quota") {
  foxeval::test::TempDir root("cgroup");
  const std::string r = root.path.string();
  // v2: the job's cgroup allows 1.5 cores, its parent 4, the root has no limit.
  put(root.path / "cpu.max", "max 100000\n");
  put(root.path / "slurm" / "cpu.max", "400000 100000\n");
  put(root.path / "slurm" / "job_7" / "cpu.max", "150000 100000\n");
  CHECK(foxeval::cgroup_cpu_quota("0::/slurm/job_7\n", r) == doctest::Approx(1.5));
  CHECK(foxeval::cgroup_cpu_quota("0::/slurm\n", r) == doctest::Approx(4.0));
  CHECK(foxeval::cgroup_cpu_quota("0::/\n", r) == 0.0);  // "max": no limit
  // A parent's limit binds a child without one.
  put(root.path / "slurm" / "job_8" / "cpu.max", "max 100000\n");
  CHECK(foxeval::cgroup_cpu_quota("0::/slurm/job_8\n", r + "/") == doctest::Approx(4.0));
  // A path that is not there (another namespace's view) and unreadable text: no limit from them.
  CHECK(foxeval::cgroup_cpu_quota("0::/elsewhere/x\n", r) == 0.0);
  put(root.path / "bad" / "cpu.max", "lots\n");
  CHECK(foxeval::cgroup_cpu_quota("0::/bad\n", r) == 0.0);

  // v1: the cpu controller mounted as "cpu,cpuacct"; -1 is no limit.
  foxeval::test::TempDir v1("cgroup_v1");
  const fs::path cpu = v1.path / "cpu,cpuacct";
  put(cpu / "cpu.cfs_quota_us", "-1\n");
  put(cpu / "cpu.cfs_period_us", "100000\n");
  put(cpu / "docker" / "abc" / "cpu.cfs_quota_us", "250000\n");
  put(cpu / "docker" / "abc" / "cpu.cfs_period_us", "100000\n");
  const std::string text = "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n";
  CHECK(foxeval::cgroup_cpu_quota(text, v1.path.string()) == doctest::Approx(2.5));
  CHECK(foxeval::cgroup_cpu_quota("4:cpu,cpuacct:/\n", v1.path.string()) == 0.0);
  // Inside a container the mount is the container's own cgroup: its path is not below it.
  put(v1.path / "cpu" / "cpu.cfs_quota_us", "50000\n");
  put(v1.path / "cpu" / "cpu.cfs_period_us", "100000\n");
  foxeval::test::remove_tree(cpu);  // not fs::remove_all: see tests/temp_files.h
  CHECK(foxeval::cgroup_cpu_quota("4:cpu,cpuacct:/docker/zzz\n", v1.path.string()) == doctest::Approx(0.5));
  // No cpu controller named: nothing read.
  CHECK(foxeval::cgroup_cpu_quota("12:memory:/docker/abc\n", v1.path.string()) == 0.0);
}

TEST_CASE("usable cores: the affinity mask, at least one") {
  const foxeval::UsableCores u = foxeval::usable_cores();
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  CHECK(u.affinity == CPU_COUNT(&set));
  CHECK(u.cores >= 1);
  CHECK(u.cores <= u.affinity);
  CHECK(u.describe().find("affinity " + std::to_string(u.affinity) + " CPU") == 0);
}
