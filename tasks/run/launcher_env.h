// Shard and GPU assignment read from the launchers researchers already use: torchrun
// (RANK/WORLD_SIZE/LOCAL_RANK), SLURM tasks (SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID), SLURM job
// arrays (SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_MIN/SLURM_ARRAY_TASK_COUNT) and Open MPI
// (OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE/OMPI_COMM_WORLD_LOCAL_RANK).
#pragma once
#include <cstdint>
#include <string>

namespace foxeval {

struct LauncherShard {
  int64_t num_shards = 1, shard_index = 0;
  int64_t local_rank = -1;  // GPU index on this node, -1 if unknown
  std::string source;       // which variables it came from ("" = none)
};

LauncherShard shard_from_environment();

// "cuda" becomes "cuda:<local_rank>" when a launcher says which GPU is ours.
std::string device_for_local_rank(const std::string& device, int64_t local_rank);

}  // namespace foxeval
