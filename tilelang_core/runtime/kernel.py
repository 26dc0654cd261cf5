"""`JITKernel`: a built kernel called with torch tensors; validates arguments and allocates outputs.

Validation names the parameter: wrong count, dtype, rank, shape (symbolic dims bound consistently
across arguments) or device raise TypeError/ValueError before anything runs.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import nodes as N
from ..ir.arith import as_int
from ..ir.printer import expr_str
from .assumptions import check_assumptions, host_assumptions
from ..language.packing import logical_shape, output_torch_name, per_byte, storage_shape, storage_torch_names


@dataclass(frozen=True)
class KernelParam:
    """One kernel parameter: name, dtype, shape (ints and symbolic names; () for scalars), output flag."""

    name: str
    dtype: str
    shape: tuple
    is_output: bool = False

    is_scalar: bool = False


def normalize_out_idx(out_idx, n_params: int) -> tuple[int, ...]:
    """out_idx (None, int or list, negatives allowed) as sorted non-negative indices."""
    if out_idx is None:
        return ()
    items = [out_idx] if isinstance(out_idx, int) else list(out_idx)
    out = []
    for i in items:
        if not isinstance(i, int) or not -n_params <= i < n_params:
            raise ValueError(f"out_idx {i!r} is out of range for a kernel with {n_params} parameters")
        out.append(i % n_params)
    return tuple(sorted(set(out)))


def kernel_params(func: N.PrimFunc, out_idx: tuple[int, ...]) -> list[KernelParam]:
    """The KernelParam list of an IR PrimFunc."""
    params = []
    for k, p in enumerate(func.params):
        if isinstance(p, N.Var):
            params.append(KernelParam(p.name, p.dtype, (), False, True))
        else:
            shape = tuple(as_int(d) if as_int(d) is not None else expr_str(d) for d in p.shape)
            params.append(KernelParam(p.name, p.dtype, shape, k in out_idx))
    return params


class ShapeBinder:
    """Binds symbolic dims from argument shapes and evaluates shape expressions."""

    def __init__(self):
        self.values: dict = {}  # ir Var -> int
        self.origin: dict = {}  # ir Var -> "argument 'A' dim 0"

    def eval(self, e):
        """The int value of a shape expression under the bindings so far, or None."""
        from ..ir.visitor import transform

        if isinstance(e, N.Const):
            return as_int(e)
        if isinstance(e, N.Var):
            return self.values.get(e)

        def sub(n):
            if isinstance(n, N.Var) and n in self.values:
                return N.Const(self.values[n])
            return n

        return as_int(transform(e, sub))

    def bind_tensor(self, buf: N.Buffer, shape: tuple[int, ...]) -> None:
        """Bind/check every dim of `buf` against an actual tensor shape (ValueError naming the argument)."""
        for d, (dim, actual) in enumerate(zip(buf.shape, shape)):
            if isinstance(dim, N.Var) and dim not in self.values:
                self.values[dim] = actual
                self.origin[dim] = f"argument '{buf.name}' dimension {d}"
        expected = [self.eval(dim) for dim in buf.shape]
        if any(e is not None and e != a for e, a in zip(expected, shape)):
            raise ValueError(self._shape_message(buf, shape, expected))

    def _shape_message(self, buf, shape, expected) -> str:
        written = ", ".join(expr_str(d) for d in buf.shape)
        values = ", ".join("?" if e is None else str(e) for e in expected)
        msg = f"argument '{buf.name}' has shape {tuple(shape)} but the kernel expects ({written})"
        if written != values:
            msg += f" = ({values})"
        for dim, e, a in zip(buf.shape, expected, shape):
            if isinstance(dim, N.Var) and dim in self.origin and e != a:
                msg += f"; {dim.name} = {e} was bound from {self.origin[dim]}"
                break
        return msg

    def output_shape(self, buf: N.Buffer) -> tuple[int, ...]:
        """The concrete shape of an output buffer (ValueError when a dim is unbound)."""
        dims = [self.eval(d) for d in buf.shape]
        if any(d is None for d in dims):
            unknown = [expr_str(d) for d, v in zip(buf.shape, dims) if v is None]
            raise ValueError(f"cannot allocate output '{buf.name}': dimension(s) {', '.join(unknown)} "
                             "are not fixed by any input tensor; pass the output explicitly")
        return tuple(dims)


def _check_tensor(buf: N.Buffer, value, device):
    """TypeError/ValueError unless `value` is a torch tensor of buf's dtype and rank on `device`."""
    import torch

    from .numerics import torch_dtype

    if not isinstance(value, torch.Tensor):
        raise TypeError(f"argument '{buf.name}' must be a torch.Tensor of dtype {buf.dtype}, "
                        f"got {type(value).__name__}")
    if per_byte(buf.dtype) > 1:  # packed sub-byte values: bytes (or torch's fp4 pair type)
        allowed = [getattr(torch, n) for n in storage_torch_names(buf.dtype) if hasattr(torch, n)]
        if value.dtype not in allowed:
            raise TypeError(f"argument '{buf.name}' has dtype {str(value.dtype).replace('torch.', '')} but the "
                            f"kernel expects {buf.dtype}, passed packed as one of "
                            f"{', '.join(str(a).replace('torch.', '') for a in allowed)}")
    else:
        if value.dtype != torch_dtype(buf.dtype):
            raise TypeError(f"argument '{buf.name}' has dtype {str(value.dtype).replace('torch.', '')} "
                            f"but the kernel expects {buf.dtype}")
    if value.dim() != len(buf.shape):
        raise ValueError(f"argument '{buf.name}' has {value.dim()} dimension(s) {tuple(value.shape)} but the "
                         f"kernel expects {len(buf.shape)}: ({', '.join(expr_str(d) for d in buf.shape)})")
    if device is not None and value.device.type != device:
        raise ValueError(f"argument '{buf.name}' is on device '{value.device}' but this kernel runs on "
                         f"'{device}'; move it with .to('{device}')")


def _check_scalar(var: N.Var, value):
    kind_ok = isinstance(value, bool) if var.dtype == "bool" else (
        isinstance(value, (int, float)) if var.dtype.startswith(("float", "bfloat")) else isinstance(value, int))
    if not kind_ok or (isinstance(value, bool) and var.dtype != "bool"):
        raise TypeError(f"argument '{var.name}' must be a Python scalar of dtype {var.dtype}, "
                        f"got {type(value).__name__}")


def prepare_args(func: N.PrimFunc, out_idx: tuple[int, ...], args: tuple, device: str | None):
    """Validate call arguments; return (full argument list, output positions) with outputs allocated."""
    import torch

    from .numerics import torch_dtype

    n_all, n_in = len(func.params), len(func.params) - len(out_idx)
    if len(args) not in (n_in, n_all):
        names = [p.name for k, p in enumerate(func.params) if k not in out_idx]
        raise TypeError(f"kernel '{func.name}' takes {n_in} argument(s) ({', '.join(names)}) but "
                        f"{len(args)} were given")
    given = iter(args)
    full: list = [None if (len(args) == n_in and k in out_idx) else next(given) for k in range(n_all)]
    nulls = [k for k, v in enumerate(full) if v is None and isinstance(func.params[k], N.Buffer)
             and not (len(args) == n_in and k in out_idx)]
    binder = ShapeBinder()
    dev = device
    for k, (p, value) in enumerate(zip(func.params, full)):
        if value is None:
            continue
        if isinstance(p, N.Var):
            if p.dtype == "handle" and hasattr(value, "data_ptr"):  # a T.ptr argument: the tensor's address
                full[k] = value = int(value.data_ptr())
            _check_scalar(p, value)
            continue
        _check_tensor(p, value, dev)
        dev = dev or value.device.type
        binder.bind_tensor(p, logical_shape(tuple(value.shape), p.dtype))
    assumptions = host_assumptions(func)
    if assumptions:
        scalars = {p: v for p, v in zip(func.params, full) if isinstance(p, N.Var) and isinstance(v, (int, float))}
        check_assumptions(assumptions, {**binder.values, **scalars})
    like = next((v for v in full if isinstance(v, torch.Tensor)), None)
    for k in nulls:
        full[k] = _null_stand_in(func, func.params[k], binder, like.device if like is not None else (device or "cpu"))
    for k in out_idx:
        if full[k] is None:
            p = func.params[k]
            shape, dtype = binder.output_shape(p), p.dtype
            if per_byte(dtype) > 1:
                shape, dtype = storage_shape(shape, dtype), output_torch_name(dtype)
            full[k] = new_output(shape, torch_dtype(dtype) if dtype == p.dtype else getattr(torch, dtype),
                                 like.device if like is not None else (device or "cpu"))
    return full, binder


def _null_stand_in(func: N.PrimFunc, buf: N.Buffer, binder, device):
    """For a tensor passed as None (TileLang's null pointer): a zero tensor the kernel never touches, allowed only
    when the kernel neither reads nor writes `buf` (e.g. a bias behind `if with_bias:` that is False)."""
    from ..codegen.cuda.common import used_buffers, view_root
    from .numerics import torch_dtype

    if any(view_root(b) is buf for b in used_buffers(func.body)):
        raise TypeError(f"argument '{buf.name}' is None (a null pointer) but kernel '{func.name}' reads or writes "
                        "it; pass a torch.Tensor")
    try:
        shape = binder.output_shape(buf)
    except ValueError:
        raise TypeError(f"argument '{buf.name}' is None (a null pointer) but its shape "
                        f"({', '.join(expr_str(d) for d in buf.shape)}) is not fixed by another tensor; pass a "
                        "torch.Tensor") from None
    return new_output(shape, torch_dtype(buf.dtype), device)


_ALIGN = 64


def new_output(shape, dtype, device):
    """An output tensor: zero-filled on the CPU, where torch.empty reuses freed host memory that may hold NaN
    (kernels that leave padding rows unwritten, as fresh GPU memory is zeros in practice, then read NaN).

    The CPU zeros come from numpy (calloc'ed pages, zeroed by the OS on first touch): torch.zeros fills with its OpenMP pool,
    whose threads then spin and slowed the CPU kernel that runs right after by 3-4x (its own thread pool)."""
    import torch

    if str(device) == "cpu":
        import numpy as np

        shape = tuple(int(d) for d in shape)
        nbytes = torch.empty((), dtype=dtype).element_size() * int(np.prod(shape, dtype=np.int64))
        raw = np.zeros(nbytes + _ALIGN, dtype=np.uint8)
        start = -raw.ctypes.data % _ALIGN  # the CPU backend's code assumes 64-byte aligned buffers (as torch's are)
        return torch.from_numpy(raw)[start:start + nbytes].view(dtype).reshape(shape)
    return torch.empty(shape, dtype=dtype, device=device)


def contiguous_args(full: list):
    """Arguments made contiguous, plus (original, copy) pairs to write back after the run."""
    import torch

    out, writeback = [], []
    for v in full:
        if isinstance(v, torch.Tensor) and not v.is_contiguous():
            c = v.contiguous()
            writeback.append((v, c))
            v = c
        out.append(v)
    return out, writeback


class CallPlan:
    """Per-kernel precomputed argument checks: a fast path for valid calls; any doubt falls back to
    `prepare_args`, which produces the precise error."""

    def __init__(self, func: N.PrimFunc, out_idx: tuple[int, ...]):
        from .numerics import torch_dtype

        self.func, self.out_idx = func, out_idx
        self.n_all = len(func.params)
        self.n_in = self.n_all - len(out_idx)
        self.entries = []
        simple = True
        for k, p in enumerate(func.params):
            if isinstance(p, N.Var):
                self.entries.append((k, p, None, None))
                continue
            dims = [as_int(d) if as_int(d) is not None else d for d in p.shape]
            simple &= all(isinstance(d, (int, N.Var)) for d in dims)
            try:
                tdt = torch_dtype(p.dtype)
            except ValueError:
                tdt, simple = None, False
            self.entries.append((k, p, tdt, dims))
        self.simple = simple and not host_assumptions(func)  # a call checks them in prepare_args
        self.packed = [k for k, p in enumerate(func.params) if isinstance(p, N.Buffer) and per_byte(p.dtype) > 1]

    def storage_views(self, args: list) -> list:
        """The arguments as the backends take them: packed sub-byte tensors as their uint8 bytes (a view)."""
        if not self.packed:
            return args
        import torch

        out = list(args)
        for k in self.packed:
            if isinstance(out[k], torch.Tensor) and out[k].dtype != torch.uint8:
                out[k] = out[k].view(torch.uint8)
        return out

    def prepare(self, args: tuple, device: str | None):
        """(full argument list) for a valid call, else whatever `prepare_args` raises or returns."""
        if not self.simple or len(args) not in (self.n_in, self.n_all):
            return prepare_args(self.func, self.out_idx, args, device)[0]
        fast = self._fast(args, device)
        return fast if fast is not None else prepare_args(self.func, self.out_idx, args, device)[0]

    def _fast(self, args, device):
        import torch

        full, values, it, like = [None] * self.n_all, {}, iter(args), None
        inplace = len(args) == self.n_all
        for k, p, tdt, dims in self.entries:
            if k in self.out_idx and not inplace:
                continue
            v = next(it)
            full[k] = v
            if tdt is None:
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    return None
                continue
            if type(v) is not torch.Tensor or v.dtype != tdt or v.dim() != len(dims):
                return None
            if device is not None and v.device.type != device:
                return None
            like = v
            for d, actual in zip(dims, v.shape):
                want = d if isinstance(d, int) else values.setdefault(d, actual)
                if want != actual:
                    return None
        for k in () if inplace else self.out_idx:
            _, p, tdt, dims = self.entries[k]
            shape = [d if isinstance(d, int) else values.get(d) for d in dims]
            if any(d is None for d in shape) or tdt is None:
                return None
            full[k] = new_output(shape, tdt, like.device if like is not None else (device or "cpu"))
        return full
