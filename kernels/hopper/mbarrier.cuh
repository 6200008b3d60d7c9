// Shared-memory transaction barriers (mbarrier, sm_90) as PTX wrappers: how a TMA producer and
// its consumers hand ring slots to each other (kernels/fa_prefill_ws.cuh, ws_gemm.cuh). A producer
// thread arms a barrier with the bytes it expects (mbar_expect_tx) and starts copies (tma.cuh)
// that count those bytes down when they land; consumers wait on the barrier's phase parity. Each
// barrier use flips its phase, so the k-th use of a ring slot waits for parity k & 1.
#pragma once
#include <cstdint>

namespace foxeval::hopper {

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialised barriers visible to the async proxy (TMA) and to the other threads.
__device__ __forceinline__ void mbar_fence_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred P1;\n"
      "FA_MBAR_WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
      "@!P1 bra FA_MBAR_WAIT;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// Makes this thread's plain (generic-proxy) shared-memory writes visible to the async proxy (wgmma
// operands, TMA), before a barrier that orders them for the readers.
__device__ __forceinline__ void fence_proxy_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

}  // namespace foxeval::hopper
