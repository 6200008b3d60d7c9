#include "tasks/launcher_env.h"

#include <fmt/format.h>

#include <cstdlib>

#include "data/errors.h"

namespace foxeval {
namespace {

bool env_int(const char* name, int64_t& out) {
  const char* v = std::getenv(name);
  if (!v || !*v) return false;
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  if (*end != '\0') throw Error(fmt::format("environment variable {}={} is not an integer", name, v));
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
