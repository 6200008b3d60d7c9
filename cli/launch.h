// `foxeval --nproc-per-node N <command> ...`: one distributed run (tasks/run/distributed.h) of N
// processes on this machine, started by foxeval itself instead of torchrun.
//
// Why not only torchrun: torchrun is Python, and its start (importing torch, ~4 s) is paid before
// any work; on a two-GPU NIAH sweep of 80 s that alone is 5 points of scaling efficiency. This
// launcher does what torchrun does for one node and nothing more: child i gets RANK = LOCAL_RANK = i,
// WORLD_SIZE = LOCAL_WORLD_SIZE = N, MASTER_ADDR = 127.0.0.1 and a free MASTER_PORT (rank 0 hosts
// the store), and OMP_NUM_THREADS = cores / N unless it is set. A child that fails makes the
// launcher stop the others with SIGTERM (they save what is finished and exit 3, as under torchrun);
// SIGINT/SIGTERM sent to the launcher are passed on. Several nodes: torchrun, srun or mpirun.
#pragma once
#include <optional>

namespace foxeval {

// When argv[1] is --nproc-per-node N (or --nproc-per-node=N): runs the rest of the command line as
// N processes and returns the exit code (0 when every process exited 0, else the first failure's).
// Otherwise returns nothing and the caller parses argv as usual.
std::optional<int> launch_local_processes(int argc, char** argv);

}  // namespace foxeval
