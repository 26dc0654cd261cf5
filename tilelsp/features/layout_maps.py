"""Layout maps of a kernel's buffers, computed from the CUDA codegen's own plan (no tvm needed).

A fragment's map says which thread and register hold each element: the coordinate formulas of
`passes/layout_kinds.py` (`coords`, `in_fragment`) evaluated for every thread and register. A shared tile's map
says which bank each element lands in: `templates.swizzled_index` (what the lowering indexes with) evaluated
for every element, and the bank conflicts of the accesses that touch it counted per memory request: the
`T.copy` that fills it (16-byte vectors, thread-strided as `copy.py` emits them), the ldmatrix loads of
`tl::gemm_ss` (lane addresses as in `tl::load_a` / `tl::load_b2`), and wgmma's 8-row x 16-byte core matrices.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from tilelang_core.codegen.cuda.common import nbytes
from tilelang_core.codegen.cuda.kernel_plan import plan
from tilelang_core.codegen.cuda.split import split_kernels
from tilelang_core.codegen.cuda.templates import swizzled_index
from tilelang_core.ir import nodes as N
from tilelang_core.ir.arith import shape_ints
from tilelang_core.ir.visitor import walk
from tilelang_core.passes.layout_kinds import Generic, Mma, MmaRow, Replicated, View, in_fragment, ravel

BANKS, BANK_BYTES, WAVEFRONT_BYTES = 32, 4, 128


@dataclass
class FragmentMap:
    """Which (thread, register) pairs hold each element of a fragment (row-major over `shape`)."""

    name: str
    dtype: str
    shape: tuple
    grid: tuple            # (rows, cols) the picture uses
    layout: str            # the layout's own description (layouts.describe)
    kind: str              # "wgmma accumulator", "mma.sync accumulator", "mma rows", "generic", "replicated", "view"
    threads: int
    regs: int
    owners: list = field(default_factory=list)  # per element: [(thread, register), ...]


@dataclass
class AccessPattern:
    """One access pattern of a shared tile and the memory requests it takes."""

    name: str
    requests: int          # memory requests (one per phase: 8 lanes of 16 bytes, or a warp of 4-byte words)
    wavefronts: int        # what the banks actually needed
    ideal: int             # what the bytes needed without conflicts
    worst: int             # the most wavefronts one request took (1: conflict-free)

    @property
    def conflicts(self) -> int:
        return self.wavefronts - self.ideal


@dataclass
class SharedMap:
    """Physical offset and bank of each element of a shared tile, and its access patterns' conflicts."""

    name: str
    dtype: str
    shape: tuple
    grid: tuple
    swizzle: str           # "none", "rows" or "atoms"
    swizzle_name: str
    offsets: list = field(default_factory=list)  # physical element offset per element
    banks: list = field(default_factory=list)
    patterns: list = field(default_factory=list)

    @property
    def elem_bytes(self) -> int:
        return nbytes(self.dtype)

    def chunk_slot(self, e: int) -> int:
        """The 16-byte slot (0..7) of the 128-byte bank line that element `e` lands in."""
        return self.offsets[e] * self.elem_bytes // 16 % 8


class _IntT:
    """The T.* integer functions the lowering's index text uses, on Python ints."""

    floordiv = staticmethod(lambda a, b: a // b)
    floormod = staticmethod(lambda a, b: a % b)
    bitwise_xor = staticmethod(lambda a, b: a ^ b)
    bitwise_and = staticmethod(lambda a, b: a & b)
    shift_right = staticmethod(lambda a, b: a >> b)


def _function(params: str, exprs: list[str]):
    """A Python function of `params` computing the tuple of the lowering's index texts `exprs`."""
    return eval(f"lambda {params}: ({', '.join(exprs)},)", {"T": _IntT, "__builtins__": {}})  # noqa: S307


def kernel_maps(func: N.PrimFunc, arch: str) -> list:
    """FragmentMap / SharedMap for every fragment and shared buffer of a kernel instance, in declaration order."""
    out = []
    for part in split_kernels(func):
        f = part.func
        _, threads, layouts, _, smem, wgmma = plan(f, arch)
        allocs = [n.buffer for n in walk(f.body) if isinstance(n, N.Allocate)]
        gemms = [g for g in walk(f.body) if isinstance(g, N.Gemm)]
        for buf in allocs:
            if buf.scope == "local.fragment" and buf in layouts:
                out.append(fragment_map(buf, layouts[buf], threads))
            elif buf.scope in ("shared", "shared.dyn") and shape_ints(buf.shape):
                out.append(shared_map(buf, smem.get(buf), threads, gemms, layouts, wgmma))
    return out


# --- fragments -----------------------------------------------------------------------------------

def _grid(shape: tuple, column: bool = False) -> tuple:
    if len(shape) == 1:
        return (shape[0], 1) if column else (1, shape[0])
    rows = 1
    for d in shape[:-1]:
        rows *= d
    return rows, shape[-1]


def _kind(lay) -> str:
    base = lay.base if isinstance(lay, View) else lay
    if isinstance(base, Mma):
        role = "accumulator" if base.rep == 1 and not base.transpose else "A operand in registers"
        kind = f"{'wgmma' if base.interleave else 'mma.sync'} {role}"
    else:
        kind = {MmaRow: "mma rows", Generic: "generic", Replicated: "replicated"}.get(type(base), "layout")
    return f"view of {kind}" if isinstance(lay, View) else kind


def fragment_map(buf, lay, threads: int) -> FragmentMap:
    """Owners of every element of a fragment: `lay.coords` and `in_fragment` evaluated for each thread/register."""
    shape = tuple(shape_ints(buf.shape))
    count = 1
    for d in shape:
        count *= d
    coords = lay.coords("tx", "r")
    flat = _function("tx, r", [ravel(coords, shape), *(in_fragment(lay, "tx", "r") or ["True"])])
    n_threads = threads
    if isinstance(lay, Mma):
        n_threads = min(threads, lay.wm * lay.wn * lay.rep * 32)
    owners: list = [[] for _ in range(count)]
    for tx in range(n_threads):
        for r in range(lay.regs):
            e, inside = flat(tx, r)
            if inside and 0 <= e < count:
                owners[e].append((tx, r))
    column = isinstance(lay.base if isinstance(lay, View) else lay, MmaRow)
    return FragmentMap(buf.name, buf.dtype, shape, _grid(shape, column), lay.describe(), _kind(lay), n_threads,
                       lay.regs, owners)


# --- shared tiles --------------------------------------------------------------------------------

_SWIZZLE_NAMES = {"none": "no swizzle (row-major)",
                  "rows": "16-byte chunks XOR-swizzled within each row (ldmatrix; wgmma 32B/64B swizzle)",
                  "atoms": "wgmma 128-byte swizzle: [cols/w][rows][w] atoms of 128 bytes, chunk ^= row % 8"}


def swizzle_name(kind: str | None, cols: int, elem_bytes: int) -> str:
    """A short name of a shared tile's swizzle, with its period."""
    kind = kind or "none"
    if kind == "rows":
        chunks = cols * elem_bytes // 16
        xor = {2: "(row >> 2) & 1", 4: "(row >> 1) & 3"}.get(chunks, "row & 7") if chunks >= 2 else "none"
        return f"{_SWIZZLE_NAMES['rows']}: chunk ^= {xor}"
    return _SWIZZLE_NAMES[kind]


def shared_map(buf, kind, threads: int, gemms: list, layouts: dict, wgmma: dict) -> SharedMap:
    """Physical offsets, banks and access-pattern conflicts of a shared tile."""
    shape = tuple(shape_ints(buf.shape))
    rows, cols = _grid(shape)
    eb = nbytes(buf.dtype)
    if kind is not None and len(shape) >= 2:
        phys = swizzled_index(kind, cols, eb, ["i", "j"])
        w = 128 // eb  # columns of a 128-byte atom (64 fp16, 128 fp8), as templates.swizzled_index
        dims = (cols // w, rows, w) if kind == "atoms" else (rows, cols)
        at = _function("i, j", [ravel(phys, dims)])
        offsets = [at(i, j)[0] for i in range(rows) for j in range(cols)]
    else:
        offsets = list(range(rows * cols))
    banks = [o * eb // BANK_BYTES % BANKS for o in offsets]
    m = SharedMap(buf.name, buf.dtype, shape, (rows, cols), kind or "none", swizzle_name(kind, cols, eb), offsets,
                  banks)
    m.patterns.append(_count("T.copy fill (16-byte vectors, thread-strided)", m, _copy_requests(m, threads)))
    for g in gemms:
        for role, operand, trans in (("A", g.a.buffer, g.transpose_a), ("B", g.b.buffer, g.transpose_b)):
            if operand is not buf:
                continue
            if id(g) in wgmma:
                m.patterns.append(_count(f"wgmma {role} core matrices (8 rows x 16 B)", m, _core_matrices(m)))
            elif isinstance(layouts.get(g.c.buffer), Mma) and eb == 2:
                lay = layouts[g.c.buffer]
                reqs = _ldmatrix_requests(m, role, trans, lay)
                m.patterns.append(_count(f"ldmatrix {role}{' (transposed)' if trans else ''} of T.gemm line "
                                         f"{g.span.line if g.span else '?'}", m, reqs))
    return m


def _bytes_of(m: SharedMap, i: int, j: int, width: int) -> list[int]:
    """Byte addresses of `width` bytes starting at logical element (i, j) (a chunk never straddles a swizzle unit)."""
    rows, cols = m.grid
    if not (0 <= i < rows and 0 <= j < cols):
        return []
    start = m.offsets[i * cols + j] * m.elem_bytes
    return list(range(start, start + width))


def _count(name: str, m: SharedMap, requests: list) -> AccessPattern:
    """Wavefronts per request: the most distinct 4-byte words any bank serves (1 when conflict-free)."""
    total = ideal = worst = 0
    for addrs in requests:
        words: dict[int, set] = {}
        for a in addrs:
            words.setdefault(a // BANK_BYTES % BANKS, set()).add(a // BANK_BYTES)
        need = max((len(w) for w in words.values()), default=0)
        total, worst = total + need, max(worst, need)
        ideal += -(-len({a // BANK_BYTES for a in addrs}) * BANK_BYTES // WAVEFRONT_BYTES)
    return AccessPattern(name, len(requests), total, ideal, worst)


def _copy_requests(m: SharedMap, threads: int) -> list:
    """The requests of a whole-tile T.copy into `m`: vector e = it * threads + tx at row-major position e * v."""
    rows, cols = m.grid
    v = 16 // m.elem_bytes
    while v > 1 and cols % v:
        v //= 2
    width = v * m.elem_bytes
    per_request = max(1, min(32, WAVEFRONT_BYTES // width))
    vectors = rows * cols // v
    out = []
    for start in range(0, vectors, per_request):
        addrs = []
        for e in range(start, min(start + per_request, vectors)):
            addrs += _bytes_of(m, e * v // cols, e * v % cols, width)
        out.append(addrs)
    return out


def _core_matrices(m: SharedMap) -> list:
    """wgmma reads each 8-row x 16-byte core matrix of the tile as one request."""
    rows, cols = m.grid
    epc = 16 // m.elem_bytes
    return [[a for r in range(i, min(i + 8, rows)) for a in _bytes_of(m, r, j, 16)]
            for i in range(0, rows, 8) for j in range(0, cols, epc)]


def _ldmatrix_requests(m: SharedMap, role: str, trans: bool, lay: Mma) -> list:
    """The 8-lane phases of every ldmatrix.x4 `tl::gemm_ss` issues for this operand (all warps, all k-steps)."""
    rows, cols = m.grid
    k = (rows if trans else cols) if role == "A" else (cols if trans else rows)
    out = []
    for warp in range(lay.wm * lay.wn):
        wm0, wn0 = warp // lay.wn * (lay.m // lay.wm), warp % lay.wn * (lay.n // lay.wn)
        if role == "A":
            starts = [(wm0 + i * 16, k0) for k0 in range(0, k, 16) for i in range(lay.mi)]
        else:
            starts = [(wn0 + j * 8, k0) for k0 in range(0, k, 16) for j in range(0, lay.ni - 1, 2)]
        for mn0, k0 in starts:
            lanes = [_lane_address(role, trans, mn0, k0, lane) for lane in range(32)]
            out += [[a for r, c in lanes[p:p + 8] for a in _bytes_of(m, r, c, 16)] for p in range(0, 32, 8)]
    return out


def _lane_address(role: str, trans: bool, mn0: int, k0: int, lane: int) -> tuple[int, int]:
    """(row, col) whose 16 bytes lane `lane` points ldmatrix at (mirrors tl::load_a / tl::load_b2)."""
    if role == "A" and not trans:
        return mn0 + (lane & 15), k0 + (lane >> 4) * 8
    if role == "A":
        return k0 + (lane >> 4) * 8 + (lane & 7), mn0 + ((lane >> 3) & 1) * 8
    if not trans:
        return k0 + (lane & 7) + ((lane >> 3) & 1) * 8, mn0 + (lane >> 4) * 8
    return mn0 + (lane & 7) + (lane >> 4) * 8, k0 + ((lane >> 3) & 1) * 8


# --- gemms ---------------------------------------------------------------------------------------

def gemm_notes(func: N.PrimFunc, arch: str) -> list[dict]:
    """What the lowering chose for each T.gemm: M/N/K, dtypes, the instruction, the warp layout and the operands'
    swizzles (from the same plan as the code: plan.wgmma_gemms, layouts.warp_partition, plan.shared_layouts)."""
    out = []
    for part in split_kernels(func):
        _, threads, layouts, _, smem, wgmma = plan(part.func, arch)
        for g in (n for n in walk(part.func.body) if isinstance(n, N.Gemm)):
            a, b, c = g.a.buffer, g.b.buffer, g.c.buffer
            lay, bshape = layouts.get(c), shape_ints(b.shape)
            if not isinstance(lay, Mma) or g.span is None or not bshape:
                continue
            k = bshape[-1] if g.transpose_b else bshape[-2]
            tensor = a.dtype == b.dtype and a.dtype in ("float16", "bfloat16") and c.dtype == "float32"
            if id(g) in wgmma:
                source = "A from registers" if a.scope == "local.fragment" else "A and B from shared memory"
                kstep = 32 if nbytes(a.dtype) == 1 else 16  # fp8: k32, both operands K-major
                inst = f"wgmma.mma_async m64n{lay.n}k{kstep} ({source})"
                warps = f"{lay.wm} warps along M (one warpgroup per 64 rows)"
            else:
                inst = "mma.sync m16n8k16 (operands by ldmatrix)" if tensor else "FMA fallback (no tensor cores)"
                warps = f"{lay.wm}x{lay.wn} warps (M x N), each {lay.m // lay.wm}x{lay.n // lay.wn}"
            swz = {}
            for role, buf in (("A", a), ("B", b)):
                shape = shape_ints(buf.shape)
                if buf.scope in ("shared", "shared.dyn") and shape:
                    swz[role] = f"{buf.name}: {swizzle_name(smem.get(buf), shape[-1], nbytes(buf.dtype))}"
                else:
                    swz[role] = f"{buf.name}: {buf.scope}"
            out.append({"line": g.span.line, "col": g.span.col, "end_line": g.span.end_line,
                        "end_col": g.span.end_col, "m": lay.m, "n": lay.n, "k": k,
                        "dtypes": [a.dtype, b.dtype, c.dtype], "instruction": inst, "warps": warps,
                        "threads": threads, "swizzle": swz})
    return out
