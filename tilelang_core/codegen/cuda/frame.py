"""The CUDA kernel frame: registers and local buffers, views, and the one dynamic shared-memory pool with its
plan. Mixed into KernelEmitter."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import shape_ints
from ...ir.visitor import walk
from . import smem
from .common import LoweringError, is_shared, nbytes, used_buffers, view_root
from .records import SharedMemoryPlan


class FrameEmitter:
    """Allocations and the shared-memory plan; mixed into KernelEmitter."""

    def allocate(self) -> None:
        """Declare fragments, locals and vars (shared memory views are added by `frame`)."""
        for node in walk(self.plan.func.body):
            if not isinstance(node, N.Allocate):
                continue
            b = node.buffer
            if b.scope == "local.fragment":
                lay = self.plan.layouts[b]
                self.frame.allocs.append(f'{self.name(b)} = T.alloc_buffer(({lay.regs},), "{b.dtype}", scope="local")')
            elif b.scope in ("local", "local.var"):
                shape = shape_ints(b.shape) or (1,)
                if b.scope == "local" and shape_ints(b.shape) is None:
                    raise LoweringError(f"local buffer '{b.name}' needs a static shape", node.span)
                dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
                self.frame.allocs.append(f'{self.name(b)} = T.alloc_buffer(({dims}), "{b.dtype}", scope="local")')
            elif is_shared(b):
                self.name(b)
        for v in self.views():
            root = view_root(v)
            if root.scope == "local.fragment":  # the same registers (layouts.View maps them to the view's shape)
                self.names[v] = self.name(root)
            if root.scope == "global":
                dims = ", ".join(self.idx(d) for d in v.shape) + ("," if len(v.shape) == 1 else "")
                self.frame.allocs.append(f'{self.name(v)} = T.decl_buffer(({dims}), "{v.dtype}", '
                                   f'data={self.name(root)}.data)')

    def views(self) -> list:
        """The buffer views the kernel uses (T.reshape, T.view, T.Tensor(shape, dtype, A.data)), in order."""
        return list(dict.fromkeys(b for b in used_buffers(self.plan.func.body) if b.base is not None))

    def shared_views(self, offsets: dict, sizes: dict) -> list[str]:
        """decl_buffer lines of views of shared tiles: the tile's bytes read as another shape or dtype."""
        lines = []
        for v in self.views():
            root = view_root(v)
            if not is_shared(root):
                continue
            shape = shape_ints(v.shape)
            problem = ("needs a static shape" if shape is None else
                       "views a multi-buffered tile" if root in self.pipeline.stages or v in self.pipeline.stages else
                       # another dtype reuses the bytes as scratch; the same dtype would read swizzled elements
                       "views a swizzled gemm tile with its own dtype" if (self.plan.swizzled.get(root) or
                                                                          self.plan.swizzled.get(v)) and
                       v.dtype == root.dtype else None)
            size = nbytes(v.dtype)
            for d in shape or ():
                size *= d
            if problem is None and size > sizes[root]:
                problem = f"is larger ({size} bytes) than the tile it views ({sizes[root]} bytes)"
            if problem is not None:
                raise LoweringError(f"shared view '{v.name}' of '{root.name}' {problem}; the CUDA lowering does "
                                    "not support that yet", v.span)
            dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
            lines.append(f'{self.name(v)} = T.decl_buffer(({dims}), "{v.dtype}", data=smem.data, '
                         f'elem_offset={offsets[root] // nbytes(v.dtype)}, scope="shared.dyn")')
        return lines

    def shared_buffers(self) -> list:
        return [n.buffer for n in walk(self.plan.func.body) if isinstance(n, N.Allocate) and is_shared(n.buffer)]

    def smem_plan(self, limit: int | None = None) -> SharedMemoryPlan:
        """Views into one dynamic shared-memory pool, kept as em.shared_memory (lines, total bytes, breakdown).

        Buffers go one after another; when that exceeds `limit` bytes, buffers never live together share bytes."""
        entries = []
        for b in self.shared_buffers():
            shape = shape_ints(b.shape)
            if shape is None:
                raise LoweringError(f"shared buffer '{b.name}' needs a static shape", b.span)
            stages = self.pipeline.stages.get(b, 1)
            if self.plan.swizzled.get(b) == "atoms":  # 128-byte atoms: 64 columns of fp16, 128 of fp8
                w = 128 // nbytes(b.dtype)
                shape = shape[:-2] + (shape[-1] // w, shape[-2], w)
            entries.append((self.name(b), b.dtype, ((stages,) if b in self.pipeline.stages else ()) + shape, stages, b))
        for name, (dtype, elems) in self.frame.scratch.items():
            entries.append((name, dtype, (elems,), 1, name))
        sizes = []
        for _, dtype, shape, _, _ in entries:
            size = nbytes(dtype)
            for d in shape:
                size *= d
            sizes.append(size)
        # wgmma's 128-byte swizzle repeats every 1024 bytes: its tiles (whole KiBs) start on a KiB; the rest
        # (row vectors, barriers, scratch) on 128 bytes, so small buffers do not each round up to a KiB
        align = [1024 if self.plan.wgmma and size % 1024 == 0 else 128 for size in sizes]
        at = smem.sequential(sizes, align)
        if limit is not None and entries and at[-1] + sizes[-1] > limit:
            at = smem.packed(sizes, smem.live_ranges(self.plan.func, [e[4] for e in entries]), align)
        lines, breakdown, offsets, by_label = [], [], {}, {}
        for (name, dtype, shape, stages, label), size, offset in zip(entries, sizes, at):
            dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
            lines.append(f'{name} = T.decl_buffer(({dims}), "{dtype}", data=smem.data, '
                         f'elem_offset={offset // nbytes(dtype)}, scope="shared.dyn")')
            breakdown.append((getattr(label, "name", label), size // stages, stages))
            offsets[label], by_label[label] = offset, size
        total = max((o + s for o, s in zip(at, sizes)), default=0)
        self.shared_memory = SharedMemoryPlan(lines + self.shared_views(offsets, by_label), total, breakdown)
        return self.shared_memory
