#include "models/run_options.h"

#include <ATen/Context.h>
#include <c10/cuda/CUDAFunctions.h>
#include <fmt/format.h>

#include "data/errors.h"

namespace foxeval {

int64_t cuda_device_count() { return at::hasCUDA() ? static_cast<int64_t>(c10::cuda::device_count()) : 0; }

ResolvedDevice resolve_device(const std::string& device, const std::string& dtype, int64_t local_rank) {
  ResolvedDevice r;
  const int64_t gpus = cuda_device_count();
  std::string why;
  if (device == "auto") {
    if (gpus > 0) {
      const int64_t index = local_rank >= 0 ? local_rank : 0;
      if (index >= gpus)
        throw Error(fmt::format("--device auto: the launcher's local rank is {} but this machine shows {} GPU(s)", index, gpus));
      r.device = fmt::format("cuda:{}", index);
      why = local_rank >= 0 ? "the local rank's GPU" : "a GPU is present";
    } else {
      r.device = "cpu";
      why = "no CUDA device";
    }
  } else if (device == "cpu") {
    r.device = "cpu";
  } else if (device == "cuda" || device.rfind("cuda:", 0) == 0) {
    if (gpus == 0)
      throw Error(fmt::format("--device {}: CUDA was asked for but no CUDA device is available (--device auto picks "
                              "the CPU here)", device));
    if (device == "cuda") {  // as given (the current device), or the launcher's local rank's
      r.device = local_rank >= 0 ? fmt::format("cuda:{}", local_rank) : "cuda";
    } else {
      const std::string n = device.substr(5);
      if (n.empty() || n.size() > 4 || n.find_first_not_of("0123456789") != std::string::npos)
        throw Error(fmt::format("--device {}: expected auto, cpu, cuda or cuda:N", device));
      r.device = device;
    }
    const int64_t index = r.device == "cuda" ? 0 : std::stoll(r.device.substr(5));
    if (index >= gpus)
      throw Error(fmt::format("--device {}: this machine shows {} GPU(s) (cuda:0..cuda:{})", r.device, gpus, gpus - 1));
  } else {
    throw Error(fmt::format("--device {}: expected auto, cpu, cuda or cuda:N", device));
  }
  const bool gpu = r.device != "cpu";
  if (dtype == "auto") {
    r.dtype = gpu ? "bfloat16" : "float32";
  } else if (dtype == "float32" || dtype == "bfloat16") {
    r.dtype = dtype;
  } else {
    throw Error(fmt::format("--dtype {}: expected auto, float32 or bfloat16", dtype));
  }
  if (device == "auto") r.chosen = "device auto: " + why;
  if (dtype == "auto")
    r.chosen += std::string(r.chosen.empty() ? "" : "; ") +
                (gpu ? "dtype auto: bfloat16 (autocast numerics) on a GPU" : "dtype auto: float32 on the CPU");
  return r;
}

}  // namespace foxeval
