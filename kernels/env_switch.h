// A/B switches for the kernels: FOXEVAL_<NAME>=0 in the environment turns a kernel off, so its
// caller takes the path it replaced (timing and numerics comparisons). Read once per switch.
#pragma once
#include <cstdlib>
#include <cstring>

namespace foxeval {

// False when the variable is set to "0".
inline bool env_switch_on(const char* var) {
  const char* v = std::getenv(var);
  return !(v && std::strcmp(v, "0") == 0);
}

// FOXEVAL_FUSED_GLUE: the FoX block's fused glue kernels (kernels/fused_glue.h, kernels/fox_decode.h).
inline bool fused_glue_on() {
  static const bool on = env_switch_on("FOXEVAL_FUSED_GLUE");
  return on;
}

// FOXEVAL_FUSED_PROJ: the FoX prefill's one matmul for every input projection (models/fox).
inline bool fused_projection_on() {
  static const bool on = env_switch_on("FOXEVAL_FUSED_PROJ");
  return on;
}

// FOXEVAL_PREFILL_PREP: a prefill's q/k/v glue and forget-gate scan in their one-pass kernels
// (kernels/fox_prefill_prep.h, kernels/fgate_scan.h) rather than the separate glue kernels.
inline bool prefill_prep_on() {
  static const bool on = env_switch_on("FOXEVAL_PREFILL_PREP");
  return on;
}

}  // namespace foxeval
