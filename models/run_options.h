// The device and dtype a run gets when they are "auto" (the command line's default): the local
// rank's GPU when CUDA is present, else the CPU; bfloat16 on a GPU (the official evaluation's
// torch.autocast(bfloat16) numerics, models/model.h), float32 on the CPU.
#pragma once
#include <cstdint>
#include <string>

namespace foxeval {

struct ResolvedDevice {
  std::string device;  // "cpu" or "cuda:N"
  std::string dtype;   // "float32" or "bfloat16"
  std::string chosen;  // how, in words, when "auto" chose ("" when both were given)
};

// `device`: auto, cpu, cuda or cuda:N; `dtype`: auto, float32 or bfloat16; `local_rank`: the
// launcher's local rank (-1: none), whose GPU "auto" and "cuda" take. Throws Error for a CUDA
// device on a machine without one (or an index beyond its GPUs), naming the flag.
ResolvedDevice resolve_device(const std::string& device, const std::string& dtype, int64_t local_rank);

// How many CUDA devices this process sees (0 without CUDA).
int64_t cuda_device_count();

}  // namespace foxeval
