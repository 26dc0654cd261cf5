"""Hover text of the entries in `catalog_intrinsics.py`; `catalog_docs.py` merges it into `DOCS`."""
from __future__ import annotations

INTRINSIC_DOCS = {
    "T.reducer_init": """Open the epoch of a `T.alloc_reducer` buffer: every partial starts from the op's identity.

`value` (optional) is the starting value, taken where the init runs and combined once per element at the
finalize. Then `T.reducer_update(acc[i], v)` inside `T.Parallel` loops, then `T.finalize_reducer(acc, dst)`
in the same scope.

Reported: `reducer-epoch` (a second init before the finalize, a starting value of another dtype, a finalize in
another loop, no finalize).""",
    "T.reducer_update": """Fold one contribution into an element of a reducer: `T.reducer_update(acc[i], value)`.

Each iteration of the enclosing `T.Parallel` loop contributes once, whichever threads the loop runs on.

Reported: `reducer-epoch` (before `T.reducer_init`, or outside any `T.Parallel` loop).""",
    "T.atomic_or": """Atomic `dst |= value` on one integer element (its previous value with `return_prev=True`), or a
whole region element by element.""",
    "T.cluster_arrive": """Mark this thread's arrival at the cluster barrier (sm_90 thread-block clusters); pair it
with `T.cluster_wait()`.""",
    "T.cluster_wait": """Wait until every thread of the cluster's blocks has arrived (`T.cluster_arrive()`).

On the CPU backend the launch is split there, as at `T.sync_grid()`.""",
    "T.cluster_sync": """Barrier of every thread of the cluster's blocks: `T.cluster_arrive()` then `T.cluster_wait()`.""",
    "T.tma_store_arrive": """Commit the TMA stores issued so far (`T.tma_copy` into global memory); here those stores are
made by the calling threads, so nothing is left in flight.""",
    "T.tma_store_wait": """Wait for the committed TMA stores; here `T.tma_copy` stores with the calling threads, so
there is nothing to wait for.""",
    "T.pdl_trigger": """Programmatic dependent launch: let the next kernel on the stream start its prologue
(`cudaTriggerProgrammaticLaunchCompletion`, sm_90; nothing on older GPUs and on the CPU backend).""",
    "T.pdl_sync": """Programmatic dependent launch: wait until the previous kernel on the stream has finished
(`cudaGridDependencySynchronize`, sm_90; kernels run in order anyway on older GPUs and on the CPU backend).""",
    "T.shfl_sync": """The value `value` has on lane `src_lane` of this thread's group of `width` lanes (a warp
broadcast or gather, CUDA's `__shfl_sync`).""",
    "T.any_sync": """Warp vote: non-zero on every lane when `predicate` (an integer or boolean) is non-zero on some lane
of the warp (CUDA's `__any_sync`; the mask, when given, is the whole warp).""",
    "T.all_sync": """Warp vote: non-zero on every lane when `predicate` is non-zero on every lane of the warp
(CUDA's `__all_sync`).""",
    "T.ballot_sync": """Warp vote: a uint64 whose bit `i` is set when `predicate` is non-zero on lane `i` (CUDA's
`__ballot_sync`, zero-extended), the same on every lane.""",
    "T.ballot": """`T.ballot_sync` over the whole warp.""",
    "T.syncthreads_count": """A block barrier (`__syncthreads_count`) that gives every thread the number of threads of the
block whose `predicate` is non-zero (a 1-D block).""",
    "T.syncthreads_and": """A block barrier that gives non-zero when `predicate` is non-zero on every thread of the block.""",
    "T.syncthreads_or": """A block barrier that gives non-zero when `predicate` is non-zero on some thread of the block.""",
    "T.__ldg": """`T.__ldg(x[i])`: the element of global tensor `x`, loaded through the read-only data cache
(CUDA's `__ldg`; a plain load on the CPU backend). Out-of-bounds indices are not guarded.""",
    "T.align_up": """`lhs` rounded up to a multiple of `rhs`: `T.ceildiv(lhs, rhs) * rhs` (integers).""",
    "T.all_of": """True when every element of a buffer region is true (non-zero): `if T.all_of(mask[by, bx, k, :]):`.

The region's extent must be known at compile time (it is written out element by element).""",
    "T.any_of": """True when some element of a buffer region is true (non-zero): `if T.any_of(mask[by, bx, k, :]):`.""",
    "T.warp_reduce_bitand": "Bitwise AND of an integer over the 32 lanes of a warp, returned to every lane.",
    "T.warp_reduce_bitor": "Bitwise OR of an integer over the 32 lanes of a warp, returned to every lane.",
}
