// Helpers shared by the tests: fixture paths, safetensors writing, error measures.
#pragma once
#include <ATen/Functions.h>
#include <ATen/cuda/CUDAContext.h>
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "data/safetensors.h"

namespace foxeval::test {

inline std::string source_path(const std::string& rel) { return std::string(FOXEVAL_SOURCE_DIR) + "/" + rel; }
inline std::string shared_path(const std::string& rel) { return std::string(FOXEVAL_SOURCE_DIR) + "/../shared/" + rel; }

// Whether a CUDA device is there (the GPU test cases return early with a message where not, as in CI).
inline bool have_cuda() { return at::hasCUDA() && at::cuda::device_count() > 0; }

// Ends the calling test case with "<what> unavailable: skipping" where `have` is false: the GPU
// test cases pass there without checking anything, and say so.
#define SKIP_UNLESS(have, what)                     \
  do {                                              \
    if (!(have)) {                                  \
      MESSAGE(what " unavailable: skipping");       \
      return;                                       \
    }                                               \
  } while (0)
#define SKIP_WITHOUT_CUDA() SKIP_UNLESS(foxeval::test::have_cuda(), "CUDA")

// Whether an sm_90 GPU (H100/H200) is there: the Hopper-only kernels (wgmma, TMA, setmaxnreg).
inline bool have_hopper() { return have_cuda() && at::cuda::getCurrentDeviceProperties()->major == 9; }
#define SKIP_WITHOUT_HOPPER() SKIP_UNLESS(foxeval::test::have_hopper(), "CUDA sm_90")  // CI: no GPU

// Sets an environment variable for a scope (the kernels' A/B switches are read at every launch).
struct ScopedEnv {
  const char* name;
  ScopedEnv(const char* n, const char* v) : name(n) { setenv(n, v, 1); }
  ~ScopedEnv() { unsetenv(name); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
};

// ||a - b|| / ||b||, in float64.
inline double rel_err(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor ad = a.to(at::kDouble).cpu(), bd = b.to(at::kDouble).cpu();
  return (ad - bd).norm().item<double>() / bd.norm().item<double>();
}

// Per-token loss of next-token prediction from logits [B, T, V] and ids [B, T]: [B, T-1].
inline at::Tensor next_token_loss(const at::Tensor& logits, const at::Tensor& ids) {
  const int64_t T = ids.size(1);
  at::Tensor lp = at::log_softmax(logits.slice(1, 0, T - 1).to(at::kDouble), -1);
  return lp.gather(-1, ids.slice(1, 1, T).unsqueeze(-1).to(at::kLong)).squeeze(-1).neg();
}

// Writes tensors as a .safetensors file (F32/I64/BF16 as stored).
void write_safetensors(const std::string& path, const std::map<std::string, at::Tensor>& tensors);

// A fresh empty directory under the system temp dir.
std::string temp_dir(const std::string& name);

}  // namespace foxeval::test
