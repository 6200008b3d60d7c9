// CPU threads that cannot change a bit (README: "Identical bits"). Two things made a CPU result
// depend on the thread count (measured on the FoX (Pro) fixtures, float32):
//  - ATen's intra-op pool splits an elementwise op or a reduction into one range per thread, and
//    the last few elements of a range take the scalar tail of the vectorized loop, whose sigmoid
//    and silu round differently from the vector code: 3 threads gave other bits than 1, 2 or 4
//    (ranges of 163840 / 3 elements end off the 16-float vector grid).
//  - MKL's GEMMs partition by thread count: a [1, 1536] x [1536, 8192] product differs at 3 and 6
//    threads, [64, 4096] x [4096, 1536] at 2, 4 and 6.
// So ATen's own pool runs one thread (an op is never split) and MKL's GEMMs, where the time goes,
// run `--threads` threads in MKL's strict conditional-numerical-reproducibility mode
// (MKL_CBWR=AUTO,STRICT: bitwise the same result for any thread count). oneDNN (bfloat16 matmuls,
// convolutions) follows OpenMP's count, one thread. Measured after: every count from 1 to 8 gives
// the same bits, under load as alone (tests/cli_hostile_test.sh, tests/cli_threads_test.sh).
#pragma once
#include <cstdint>
#include <string>

namespace foxeval {

// At process start, before anything calls into MKL (MKL reads MKL_CBWR once, at its first call):
// sets MKL_CBWR=AUTO,STRICT unless the environment already asks for a strict mode (e.g.
// AVX2,STRICT, the same bits across machines too), refuses any other MKL_CBWR (it would let the
// thread count change the bits), then sets the default thread count (OpenMP's: OMP_NUM_THREADS or
// the CPUs) as set_cpu_threads does. Throws Error naming MKL_CBWR.
void pin_cpu_numerics();

// n threads for MKL's GEMMs, one for ATen's intra-op pool and OpenMP. Returns the count in effect:
// n, or 1 where LibTorch was built without MKL (then nothing can use more threads without
// changing bits). Call on the thread that runs the model: MKL's count is per thread.
int64_t set_cpu_threads(int64_t n);

// The count set_cpu_threads put in effect (1 before it was called).
int64_t cpu_threads();

}  // namespace foxeval
