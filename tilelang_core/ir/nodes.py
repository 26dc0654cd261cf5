"""The tile IR: frozen dataclasses for expressions, buffers, statements and tile ops, each with a span.

The IR is what the frontend produces from a `@T.prim_func` body for one kernel *instance* (one set of
factory arguments). Values the frontend could evaluate are folded to `Const`; what stayed unknown is a
`Var` of kind "symbolic". `Var` and `Buffer` compare by identity (two loops may both be called `i`).

Shapes and extents are `Expr`; use `ir.arith.as_int` to get a Python int when one is known.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Union

from ..source import Span

# ---------------------------------------------------------------------------------------------
# expressions


@dataclass(frozen=True)
class Const:
    """A literal: int, float or bool with its dtype ("int32", "float32", "bool", ...)."""

    value: Union[int, float, bool]
    dtype: str = "int32"
    span: Span | None = None

    def __int__(self) -> int:
        """`int(buf.shape[0])`, as on TVM's IntImm."""
        return int(self.value)

    def __float__(self) -> float:
        """`float(c)`, as on TVM's FloatImm."""
        return float(self.value)


@dataclass(frozen=True, eq=False)
class Var:
    """A scalar variable. kind: param | symbolic | block | thread | loop | let."""

    name: str
    dtype: str = "int32"
    kind: str = "loop"
    span: Span | None = None

    def __repr__(self) -> str:
        return f"Var({self.name}:{self.kind})"


@dataclass(frozen=True)
class BinOp:
    """Arithmetic or bitwise binary op: + - * / // % ** << >> & | ^ (Python semantics on ints: floor div/mod)."""

    op: str
    lhs: "Expr"
    rhs: "Expr"
    span: Span | None = None


@dataclass(frozen=True)
class Compare:
    """Comparison: == != < <= > >=."""

    op: str
    lhs: "Expr"
    rhs: "Expr"
    span: Span | None = None


@dataclass(frozen=True)
class BoolOp:
    """Logical and/or over two or more operands."""

    op: str  # "and" | "or"
    values: tuple["Expr", ...]
    span: Span | None = None


@dataclass(frozen=True)
class UnaryOp:
    """Unary op: "-" (negate), "not", "~"."""

    op: str
    operand: "Expr"
    span: Span | None = None


@dataclass(frozen=True)
class Call:
    """A scalar intrinsic by TileLang name without the `T.` prefix: exp, exp2, log, log2, sqrt, rsqrt,
    abs, max, min, ceildiv, infinity, max_value, min_value, floor, ceil, tanh, sigmoid, pow, ...

    `dtype` is the result dtype when the frontend knows it (e.g. infinity(dtype)), else None.
    """

    name: str
    args: tuple["Expr", ...]
    dtype: str | None = None
    span: Span | None = None


@dataclass(frozen=True)
class Cast:
    """Convert a value to dtype (T.cast(x, dtype), T.float32(x))."""

    dtype: str
    value: "Expr"
    span: Span | None = None


@dataclass(frozen=True)
class Select:
    """T.if_then_else(cond, true_value, false_value)."""

    cond: "Expr"
    true_value: "Expr"
    false_value: "Expr"
    span: Span | None = None


@dataclass(frozen=True)
class Load:
    """Read one element: buffer[indices]. `indices` has one Expr per dimension of the buffer."""

    buffer: "Buffer"
    indices: tuple["Expr", ...]
    span: Span | None = None


Expr = Union[Const, Var, BinOp, Compare, BoolOp, UnaryOp, Call, Cast, Select, Load]

# ---------------------------------------------------------------------------------------------
# buffers and regions

SCOPES = ("global", "shared.dyn", "shared", "local.fragment", "local", "local.var")


@dataclass(frozen=True, eq=False)
class Buffer:
    """A tensor parameter (scope "global") or an allocation (shared.dyn, local.fragment, local, local.var).

    `span` is where it is declared (the parameter annotation or the T.alloc_* call). `base` is the buffer whose
    storage a view shares (T.reshape, T.view, T.Tensor(shape, dtype, A.data)): its first element, row-major.
    `data` is the handle Var of a tensor made from a pointer (T.make_tensor), bound by a LetStmt before its uses.
    """

    name: str
    shape: tuple[Expr, ...]
    dtype: str
    scope: str = "global"
    span: Span | None = None
    base: "Buffer | None" = None
    data: "Var | None" = None

    def __repr__(self) -> str:
        return f"Buffer({self.name}:{self.scope})"


@dataclass(frozen=True)
class Axis:
    """One axis of a region: `start` and `extent`. `sliced` is False for a scalar index (A[bz, ...]),
    whose extent is 1. An open slice `:` has start 0 and the buffer's extent."""

    start: Expr
    extent: Expr
    sliced: bool = True


@dataclass(frozen=True)
class Region:
    """A tile-op operand: a buffer, a slice of it, or a head address.

    kind: "full" (the buffer itself), "slice" (at least one `a:b` axis) or "point" (every axis a
    scalar index: the head-address form, whose extent T.copy takes from the other side).
    """

    buffer: Buffer
    axes: tuple[Axis, ...]
    kind: str = "full"
    span: Span | None = None


# ---------------------------------------------------------------------------------------------
# statements


@dataclass(frozen=True)
class SeqStmt:
    """Statements in order."""

    stmts: tuple["Stmt", ...]
    span: Span | None = None


@dataclass(frozen=True)
class Allocate:
    """T.alloc_shared / alloc_fragment / alloc_local / alloc_var: declares `buffer` for the rest of the
    enclosing block. `init` is alloc_var's init value."""

    buffer: Buffer
    init: Expr | None = None
    span: Span | None = None


@dataclass(frozen=True)
class For:
    """A loop nest over one or more variables.

    kind: serial | parallel | pipelined | unroll | vectorized | grid. T.Parallel(a, b) and
    T.grid(a, b) give one For with two vars. `step` applies to single-var serial/unroll loops.
    Pipelined loops carry num_stages, and the user's order/stage lists when given.
    """

    vars: tuple[Var, ...]
    starts: tuple[Expr, ...]
    extents: tuple[Expr, ...]
    kind: str
    body: "Stmt"
    step: Expr | None = None
    num_stages: int | None = None
    order: tuple[int, ...] | None = None
    stage: tuple[int, ...] | None = None
    annotations: tuple[tuple[str, object], ...] = ()
    span: Span | None = None


@dataclass(frozen=True)
class Store:
    """buffer[indices] = value (also `v = x` for an alloc_var buffer v, with indices (0,))."""

    buffer: Buffer
    indices: tuple[Expr, ...]
    value: Expr
    span: Span | None = None


@dataclass(frozen=True)
class LetStmt:
    """A scalar name bound to a value for the rest of the block (`x = expr` in a kernel body)."""

    var: Var
    value: Expr
    span: Span | None = None


@dataclass(frozen=True)
class If:
    """if cond: then_body else: else_body."""

    cond: Expr
    then_body: "Stmt"
    else_body: "Stmt | None" = None
    span: Span | None = None


@dataclass(frozen=True)
class Evaluate:
    """An expression evaluated for its effect (rare; e.g. a bare intrinsic call)."""

    value: Expr
    span: Span | None = None


@dataclass(frozen=True)
class While:
    """`while cond: body` with a runtime condition (re-evaluated before every iteration)."""

    cond: Expr
    body: "Stmt"
    span: Span | None = None


@dataclass(frozen=True)
class Break:
    """`break` out of the innermost enclosing serial loop or While."""

    span: Span | None = None


@dataclass(frozen=True)
class Continue:
    """`continue` with the next iteration of the innermost enclosing serial loop or While."""

    span: Span | None = None


# --- tile ops ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Copy:
    """T.copy(src, dst): element-wise copy between any two scopes, converting dtypes. tma: written as T.tma_copy (an
    explicit TMA load; on sm_100 TileLang unpacks fp4 through it, which a SIMT copy cannot)."""

    src: Region
    dst: Region
    span: Span | None = None
    tma: bool = False


@dataclass(frozen=True)
class Gemm:
    """T.gemm(A, B, C): C (+)= op(A) @ op(B) on tiles. policy: Square | FullRow | FullCol."""

    a: Region
    b: Region
    c: Region
    transpose_a: bool = False
    transpose_b: bool = False
    policy: str = "Square"
    clear_accum: bool | Expr = False  # an Expr: clear when it holds at run time
    span: Span | None = None
    wgmma: bool = False  # T.wgmma_gemm: the user asked for Hopper wgmma (no mma.sync fallback)


@dataclass(frozen=True)
class Fill:
    """T.fill(dst, value) and T.clear(dst) (value 0, `is_clear` True)."""

    dst: Region
    value: Expr
    is_clear: bool = False
    span: Span | None = None


@dataclass(frozen=True)
class Reduce:
    """T.reduce_<op>(src, dst, dim, clear): op is max | min | sum | abssum | absmax. `dim` is normalised
    to be non-negative when the rank is known (the user's value is in `dim_written`). `nan_propagate`: a NaN
    wins max / min / absmax (otherwise NaN is ignored, as fmaxf / fminf do)."""

    op: str
    src: Region
    dst: Region
    dim: int
    clear: bool = True
    dim_written: int = -1
    span: Span | None = None
    nan_propagate: bool = False


@dataclass(frozen=True)
class CumSum:
    """T.cumsum / T.cummax(src, dst, dim, reverse): inclusive prefix sum (op "sum") or running maximum (op "max")
    along dim (dst defaults to src)."""

    src: Region
    dst: Region
    dim: int = 0
    reverse: bool = False
    span: Span | None = None
    op: str = "sum"


@dataclass(frozen=True)
class AtomicAdd:
    """T.atomic_add(dst, value): scalar (dst is a point Region, value an Expr) or tile (value a Region).
    `use_tma`: the user asked for a TMA reduce-add (tile form)."""

    dst: Region
    value: Union[Expr, Region]
    span: Span | None = None
    use_tma: bool = False


@dataclass(frozen=True)
class LayoutSpec:
    """A layout given to T.annotate_layout. kind: layout | fragment | swizzled | linear | unknown.
    `shape` is the layout's input shape when known (None for swizzled/linear: they take the buffer's).
    `threads`: for a fragment, the thread holding each element (row-major) when its index function was evaluated;
    `owners`: for a fragment built on the host, the threads holding each element (row-major) over its replicas."""

    kind: str
    shape: tuple[int, ...] | None = None
    span: Span | None = None
    threads: tuple[int, ...] | None = None
    owners: tuple[frozenset[int], ...] | None = None


@dataclass(frozen=True)
class AnnotateLayout:
    """T.annotate_layout({buffer: layout, ...})."""

    entries: tuple[tuple[Buffer, LayoutSpec], ...]
    span: Span | None = None


@dataclass(frozen=True)
class UseSwizzle:
    """T.use_swizzle(panel_size, order, enable): threadblock rasterization hint."""

    panel_size: int
    order: str = "row"
    enable: bool = True
    span: Span | None = None


Stmt = Union[SeqStmt, Allocate, For, While, Break, Continue, Store, LetStmt, If, Evaluate, Copy, Gemm, Fill,
             Reduce, CumSum, AtomicAdd, AnnotateLayout, UseSwizzle, "Launch"]
TILE_OPS = (Copy, Gemm, Fill, Reduce, CumSum, AtomicAdd)

# ---------------------------------------------------------------------------------------------
# kernels


@dataclass(frozen=True)
class Launch:
    """`with T.Kernel(*grid, threads=...) as (bx, by, ...)`: grid extents, threads per block (1-3 dims,
    product = block size), the block index vars and the body (everything inside the `with`). `cluster`: the
    thread-block cluster shape of `T.ClusterKernel(..., cluster_dims=...)` (x, y, z; () without clusters)."""

    grid: tuple[Expr, ...]
    threads: tuple[Expr, ...]
    block_vars: tuple[Var, ...]
    body: Stmt
    span: Span | None = None
    cluster: tuple[int, ...] = ()


@dataclass(frozen=True, eq=False)
class PrimFunc:
    """One kernel instance: its parameters (global Buffers and scalar Vars) and body.

    name: the @T.prim_func function's name; factory: the enclosing factory's name (or None);
    instance: a readable label of the factory arguments ("matmul(M=1024, N=1024, ...)");
    out_idx: the jit decorator's out_idx when known; span: the `def` line; name_span: the name;
    errors: the frontend's error diagnostics for this instance (lowering refuses a kernel that has any);
    pass_configs: the jit's `pass_configs` and the kernel's `T.annotate_pass_configs` (the CUDA lowering reads them
    into its CodegenOptions, options.py); compile_flags: the kernel's `T.annotate_compile_flags`; non_restrict: the
    tensor parameters `T.annotate_restrict_buffers` names (they may alias: no `__restrict__` on CUDA, no noalias on
    the CPU).
    """

    name: str
    params: tuple[Union[Buffer, Var], ...]
    body: Stmt
    factory: str | None = None
    instance: str = ""
    out_idx: tuple[int, ...] | None = None
    span: Span | None = None
    name_span: Span | None = None
    source_path: str = "<string>"
    bindings: tuple[tuple[str, object], ...] = field(default=())
    errors: tuple = field(default=(), repr=False)
    pass_configs: tuple[tuple[str, object], ...] = field(default=())  # TileLang pass configs (key, value), sorted
    compile_flags: tuple[str, ...] = field(default=())  # nvcc flags the kernel asks for (options.kernel_configs)
    non_restrict: tuple[str, ...] = field(default=())  # tensor parameters that may alias (T.annotate_restrict_buffers)

    def with_pass_configs(self, configs) -> PrimFunc:
        """This kernel with `configs` (a dict) added to its pass configs, overriding the same keys."""
        merged = {**dict(self.pass_configs), **dict(configs or {})}
        return replace(self, pass_configs=tuple(sorted(merged.items())))

    @property
    def launch(self) -> Launch | None:
        """The kernel's T.Kernel launch (the first one found at top level)."""
        stmts = self.body.stmts if isinstance(self.body, SeqStmt) else (self.body,)
        for s in stmts:
            if isinstance(s, Launch):
                return s
        return None
