// The kernels' on/off switches that several files read, through the switch registry
// (data/switches.h: read from the environment once per process, so a switch cannot change between
// launches). FOXEVAL_<NAME>=0 turns a kernel off, so its caller takes the path it replaced (timing
// and numerics comparisons). Each accessor finds its switch once and is then one array read.
#pragma once
#include "data/switches.h"

namespace foxeval {

// FOXEVAL_FUSED_GLUE: the FoX block's fused glue kernels (kernels/fused_glue.h, kernels/fox_decode.h).
inline bool fused_glue_on() {
  static const SwitchSlot s("FOXEVAL_FUSED_GLUE");
  return s.on();
}

// FOXEVAL_FUSED_PROJ: the FoX prefill's one matmul for every input projection (models/fox).
inline bool fused_projection_on() {
  static const SwitchSlot s("FOXEVAL_FUSED_PROJ");
  return s.on();
}

// FOXEVAL_PREFILL_PREP: a prefill's q/k/v glue and forget-gate scan in their one-pass kernels
// (kernels/fox_prefill_prep.h, kernels/fgate_scan.h) rather than the separate glue kernels.
inline bool prefill_prep_on() {
  static const SwitchSlot s("FOXEVAL_PREFILL_PREP");
  return s.on();
}

}  // namespace foxeval
