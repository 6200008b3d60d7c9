#include "tasks/run/launcher_env.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "data/errors.h"

namespace foxeval {
namespace {

// Launcher variables are checked as the flags they stand for are (--num-shards, --shard-index:
// [1, 2^20] and [0, 2^20)): WORLD_SIZE=1000000000 is refused at once, not run.
constexpr int64_t kMaxWorld = int64_t(1) << 20;

struct EnvRange {
  const char* name;
  int64_t lo, hi;
};
// SLURM array task ids run to MaxArraySize (at most 4000001); a local rank names a GPU of one node.
constexpr EnvRange kRanges[] = {
    {"WORLD_SIZE", 1, kMaxWorld},          {"RANK", 0, kMaxWorld - 1},
    {"LOCAL_RANK", 0, 1023},               {"SLURM_NTASKS", 1, kMaxWorld},
    {"SLURM_PROCID", 0, kMaxWorld - 1},    {"SLURM_LOCALID", 0, 1023},
    {"SLURM_ARRAY_TASK_COUNT", 1, kMaxWorld}, {"SLURM_ARRAY_TASK_ID", 0, 4000001},
    {"SLURM_ARRAY_TASK_MIN", 0, 4000001},  {"OMPI_COMM_WORLD_SIZE", 1, kMaxWorld},
    {"OMPI_COMM_WORLD_RANK", 0, kMaxWorld - 1}, {"OMPI_COMM_WORLD_LOCAL_RANK", 0, 1023},
};

bool env_int(const char* name, int64_t& out) {
  const char* v = std::getenv(name);
  if (!v || !*v) return false;
  int64_t lo = 0, hi = kMaxWorld;
  for (const EnvRange& r : kRanges)
    if (std::string(name) == r.name) lo = r.lo, hi = r.hi;
  errno = 0;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  if (end == v || *end != '\0' || errno == ERANGE || x < lo || x > hi)
    throw Error(fmt::format("environment variable {}={} is not allowed: must be an integer in [{}, {}]", name,
                            std::string(v).substr(0, 40), lo, hi));
  out = x;
  return true;
}

}  // namespace

LauncherShard shard_from_environment() {
  LauncherShard s;
  int64_t rank = 0, size = 0, local = -1, min_id = 0;
  if (env_int("WORLD_SIZE", size) && env_int("RANK", rank)) {
    s = {size, rank, env_int("LOCAL_RANK", local) ? local : -1, "RANK/WORLD_SIZE"};
  } else if (env_int("SLURM_ARRAY_TASK_COUNT", size) && env_int("SLURM_ARRAY_TASK_ID", rank)) {
    env_int("SLURM_ARRAY_TASK_MIN", min_id);
    s = {size, rank - min_id, -1, "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT"};
  } else if (env_int("SLURM_NTASKS", size) && env_int("SLURM_PROCID", rank)) {
    s = {size, rank, env_int("SLURM_LOCALID", local) ? local : -1, "SLURM_PROCID/SLURM_NTASKS"};
  } else if (env_int("OMPI_COMM_WORLD_SIZE", size) && env_int("OMPI_COMM_WORLD_RANK", rank)) {
    s = {size, rank, env_int("OMPI_COMM_WORLD_LOCAL_RANK", local) ? local : -1, "OMPI_COMM_WORLD_RANK/SIZE"};
  }
  if (s.num_shards < 1 || s.shard_index < 0 || s.shard_index >= s.num_shards)
    throw Error(fmt::format("launcher variables {} give shard {} of {}", s.source, s.shard_index, s.num_shards));
  return s;
}

std::string device_for_local_rank(const std::string& device, int64_t local_rank) {
  if (device == "cuda" && local_rank >= 0) return fmt::format("cuda:{}", local_rank);
  return device;
}

}  // namespace foxeval
