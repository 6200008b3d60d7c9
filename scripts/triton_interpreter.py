"""Patches that let fla's Triton kernels run under TRITON_INTERPRET=1 on a machine without a GPU;
shared by scripts/bench_recurrent_anchor.py (--check) and tests/tools/inspect_reference.py."""


def patch_triton_interpreter():
    # Autotuning times configs on a GPU driver, which the interpreter has none of: every config
    # "takes" 0 s, so the first listed runs (a tile choice; the values are the same up to rounding).
    from triton.runtime.autotuner import Autotuner
    Autotuner._bench = lambda self, *args, config, **meta: [0.0, 0.0, 0.0]
    # The interpreter turns a scalar into an int with int(array of shape (1,)), which NumPy >= 2.4
    # refuses ("only 0-dimensional arrays..."; fla's `range(tl.cdiv(K, BK))`): the same via .item().
    from triton.runtime import interpreter
    patch_tensor = interpreter._patch_lang_tensor

    def patch_lang_tensor(tensor, scope):
        patch_tensor(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))
    interpreter._patch_lang_tensor = patch_lang_tensor
