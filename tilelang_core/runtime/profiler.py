"""`Profiler` for a JITKernel: random inputs from its params, `assert_allclose` against a reference, `do_bench`."""
from __future__ import annotations

from ..verify.bench import bench
from ..verify.numerics import compare, random_tensor


class Profiler:
    """Numerics and timing helpers for one kernel (TileLang's `kernel.get_profiler()`)."""

    def __init__(self, kernel, seed: int = 0):
        self.kernel = kernel
        self.seed = seed

    def _device(self) -> str:
        return "cpu" if self.kernel.target == "cpu" else "cuda"

    def _inputs(self, binding: dict | None = None):
        import torch

        gen = torch.Generator().manual_seed(self.seed)
        out = []
        for p in self.kernel.params:
            if p.is_output:
                continue
            if p.is_scalar:
                raise ValueError(f"parameter '{p.name}' is a scalar: pass inputs to the profiler explicitly")
            shape = [d if isinstance(d, int) else (binding or {}).get(d) for d in p.shape]
            if any(d is None for d in shape):
                raise ValueError(f"parameter '{p.name}' has symbolic shape {p.shape}: pass inputs explicitly "
                                 "or give dims, e.g. profiler.assert_allclose(ref, dims={'M': 128})")
            out.append(random_tensor(shape, p.dtype, self._device(), gen))
        return out

    def _outputs(self, result) -> list:
        if result is None:
            return []
        return list(result) if isinstance(result, (list, tuple)) else [result]

    def assert_allclose(self, reference_program, rtol: float = 1e-2, atol: float = 1e-2, inputs=None, dims=None):
        """Run the kernel and `reference_program` on the same random inputs; AssertionError on a mismatch."""
        ins = list(inputs) if inputs is not None else self._inputs(dims)
        got = self._outputs(self.kernel(*ins))
        ref = self._outputs(reference_program(*ins))
        if len(got) != len(ref):
            raise AssertionError(f"the kernel returned {len(got)} output(s) but the reference {len(ref)}")
        for k, (a, e) in enumerate(zip(got, ref)):
            name = self.kernel.params[self.kernel.out_idx[k]].name if k < len(self.kernel.out_idx) else f"#{k}"
            res = compare(a, e.to(a.dtype) if hasattr(e, "to") else e, rtol=rtol, atol=atol, name=f"output '{name}'")
            if not res.passed:
                raise AssertionError(res.message + f" (max abs err {res.max_abs_err:.3g})")

    def do_bench(self, func=None, warmup: int = 25, rep: int = 100, inputs=None, dims=None, **kwargs) -> float:
        """Mean milliseconds per call of `func` (default: the kernel) on random inputs."""
        ins = list(inputs) if inputs is not None else self._inputs(dims)
        fn = func or self.kernel
        return bench(lambda: fn(*ins), warmup=warmup, rep=rep, device=self._device())


def do_bench(fn, warmup: float = 25, rep: float = 100, _n_warmup: int = 0, _n_repeat: int = 0, quantiles=None,
             return_mode: str = "mean", **kwargs) -> float:
    """`tilelang.profiler.do_bench`: mean milliseconds per call of `fn()` (CUDA events when a GPU is in use)."""
    try:
        import torch

        device = "cuda" if torch.cuda.is_available() and torch.cuda.is_initialized() else "cpu"
    except ImportError:
        device = "cpu"
    n_warm = int(_n_warmup) if _n_warmup else max(1, int(warmup) // 5)
    n_rep = int(_n_repeat) if _n_repeat else max(1, int(rep) // 5)
    return bench(fn, warmup=n_warm, rep=n_rep, device=device)
