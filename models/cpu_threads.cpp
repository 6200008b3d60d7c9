#include "models/cpu_threads.h"

#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "data/errors.h"

namespace foxeval {
namespace {

int64_t threads_in_effect = 1;

// MKL's per-thread count for its own calls (mkl_service.h: mkl_set_num_threads_local is a macro for
// this by-value entry; the lower-case export of the same name is the Fortran one, taking a pointer).
// Looked up, not linked: a LibTorch built without MKL has none, and then null.
using SetLocalThreads = int (*)(int);
SetLocalThreads mkl_set_local_threads() {
  static const auto f = reinterpret_cast<SetLocalThreads>(dlsym(RTLD_DEFAULT, "MKL_Set_Num_Threads_Local"));
  return f;
}

}  // namespace

void pin_cpu_numerics() {
  const char* given = std::getenv("MKL_CBWR");
  if (given && *given) {
    std::string upper(given);
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
    if (upper.find("STRICT") == std::string::npos)
      throw Error(fmt::format("MKL_CBWR={}: foxeval needs one of MKL's strict modes (e.g. AUTO,STRICT or AVX2,STRICT), "
                              "under which the CPU thread count cannot change a result's bits; add ,STRICT or unset it",
                              given));
  } else {
    setenv("MKL_CBWR", "AUTO,STRICT", 1);
  }
  set_cpu_threads(at::get_num_threads());
}

int64_t set_cpu_threads(int64_t n) {
  // at::set_num_threads sets OpenMP's count and MKL's, and turns MKL's dynamic choice off
  // (mkl_set_dynamic(false)); then MKL alone gets n back.
  at::set_num_threads(1);
  const SetLocalThreads mkl = mkl_set_local_threads();
  threads_in_effect = mkl ? std::max<int64_t>(1, n) : 1;
  if (mkl) mkl(static_cast<int>(threads_in_effect));
  return threads_in_effect;
}

int64_t cpu_threads() { return threads_in_effect; }

}  // namespace foxeval
