"""`Profiler` for a JITKernel: random inputs from its params, `assert_allclose` against a reference, `do_bench`."""
from __future__ import annotations

from ..verify.bench import bench
from ..verify.numerics import compare


def supply_tensor(supply: str, shape, dtype: str, device: str = "cpu", gen=None):
    """A tensor of `shape`/`dtype` filled as TileLang's TensorSupplyType `supply` fills it: Auto (floats uniform in
    [-1, 1), unsigned 0..2, fp8 from int8 values, other ints -2..2), Integer, Uniform [-1, 1), Normal (mean -1,
    std 1), Randn, Zero, One; int8 under Uniform or Normal is all ones."""
    import torch

    from ..verify.numerics import torch_dtype

    tdt, shape = torch_dtype(dtype), tuple(int(s) for s in shape)
    if supply in ("Auto", "Integer"):
        if dtype.startswith("uint") or tdt == torch.bool:
            high = 2 if tdt == torch.bool else 3
            return torch.randint(0, high, shape, generator=gen).to(tdt).to(device)
        if dtype.startswith("float8"):
            return torch.randint(-128, 128, shape, generator=gen).to(torch.int8).to(tdt).to(device)
        if supply == "Auto" and tdt.is_floating_point:
            return (torch.rand(shape, generator=gen) * 2 - 1).to(tdt).to(device)
        return torch.randint(-2, 3, shape, generator=gen).to(tdt).to(device)
    if tdt == torch.int8 and supply in ("Uniform", "Normal"):
        return torch.ones(shape, dtype=tdt, device=device)
    if supply == "Uniform":
        return (torch.rand(shape, generator=gen) * 2 - 1).to(tdt).to(device)
    if supply == "Normal":
        return torch.empty(shape).normal_(-1.0, 1.0, generator=gen).to(tdt).to(device)
    if supply == "Randn":
        return torch.randn(shape, generator=gen).to(tdt).to(device)
    if supply == "Zero":
        return torch.zeros(shape, dtype=tdt, device=device)
    if supply == "One":
        return torch.ones(shape, dtype=tdt, device=device)
    raise ValueError(f"unknown TensorSupplyType '{supply}': use Auto, Integer, Uniform, Normal, Randn, Zero or One")


class Profiler:
    """Numerics and timing helpers for one kernel (TileLang's `kernel.get_profiler()`)."""

    def __init__(self, kernel, seed: int = 0, tensor_supply_type=None):
        self.kernel = kernel
        self.func = kernel  # TileLang's name for the profiled kernel (`profiler.func(*inputs)`)
        self.seed = seed
        self.supply = str(getattr(tensor_supply_type, "name", tensor_supply_type) or "Auto").split(".")[-1]

    def _device(self) -> str:
        return "cpu" if self.kernel.target == "cpu" else "cuda"

    def _tensor(self, shape, dtype: str, gen):
        return supply_tensor(self.supply, shape, dtype, self._device(), gen)

    def _get_inputs(self, with_output: bool = False, dynamic_symbolic_constraints: dict | None = None):
        """TileLang's name: generated tensors for the inputs (and the outputs too with `with_output`), symbolic
        dims taken from `dynamic_symbolic_constraints`."""
        return self._inputs(dynamic_symbolic_constraints, with_output)

    def _inputs(self, binding: dict | None = None, with_output: bool = False):
        import torch

        gen = torch.Generator().manual_seed(self.seed)
        out = []
        for p in self.kernel.params:
            if p.is_output and not with_output:
                continue
            if p.is_scalar:
                raise ValueError(f"parameter '{p.name}' is a scalar: pass input_tensors to the profiler explicitly")
            shape = [d if isinstance(d, int) else (binding or {}).get(d) for d in p.shape]
            if any(d is None for d in shape):
                raise ValueError(f"parameter '{p.name}' has symbolic shape {p.shape}: pass input_tensors "
                                 "or give dims, e.g. profiler.assert_allclose(ref, dims={'M': 128})")
            out.append(self._tensor(shape, p.dtype, gen))
        return out

    def _outputs(self, result) -> list:
        if result is None:
            return []
        return list(result) if isinstance(result, (list, tuple)) else [result]

    def assert_allclose(self, reference_program, input_tensors=None, atol: float = 1e-2, rtol: float = 1e-2,
                        max_mismatched_ratio: float = 0.01, dims=None, **kwargs):
        """Run the kernel and `reference_program` on the same inputs; AssertionError when more than
        `max_mismatched_ratio` of an output's elements differ beyond atol + rtol * |ref|."""
        ins = list(input_tensors) if input_tensors is not None else self._inputs(dims)
        got = self._outputs(self.kernel(*ins))
        ref = self._outputs(reference_program(*ins))
        if len(got) != len(ref):
            raise AssertionError(f"the kernel returned {len(got)} output(s) but the reference {len(ref)}")
        for k, (a, e) in enumerate(zip(got, ref)):
            name = self.kernel.params[self.kernel.out_idx[k]].name if k < len(self.kernel.out_idx) else f"#{k}"
            e = e.to(device=a.device, dtype=a.dtype) if hasattr(e, "to") else e
            res = compare(a, e, rtol=rtol, atol=atol, name=f"output '{name}'")
            if not res.passed and res.mismatched > max_mismatched_ratio * res.total:
                raise AssertionError(res.message + f" (max abs err {res.max_abs_err:.3g})")

    def run_once(self, func=None, dims=None):
        """`func` (default: the kernel) called once on the profiler's generated inputs; its result."""
        return (func or self.kernel)(*self._inputs(dims))

    def do_bench(self, func=None, warmup: int = 25, rep: int = 100, n_warmup: int = 0, n_repeat: int = 0,
                 input_tensors=None, dims=None, dynamic_symbolic_constraints=None, **kwargs) -> float:
        """Mean milliseconds per call of `func` (default: the kernel) on random (or the given) inputs; symbolic dims
        from `dims` or TileLang's `dynamic_symbolic_constraints` ({"m": 128})."""
        binding = dims or dynamic_symbolic_constraints
        ins = list(input_tensors) if input_tensors is not None else self._inputs(binding)
        fn = func or self.kernel
        return bench(lambda: fn(*ins), warmup=n_warmup or warmup, rep=n_repeat or rep, device=self._device())


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
