"""A TMA copy from a view of a parameter (`T.Tensor(shape, dtype, A.data)`) maps the parameter's storage.

The real TileLang's convolution autotune example flattens its weight tensor this way; the launcher looked the view's
name up among the parameters and failed (KeyError) on the H200.
"""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

VIEW = textwrap.dedent('''
    import tilelang.language as T

    @T.prim_func
    def flat(W: T.Tensor((3, 3, 64, 128), "float16"), A: T.Tensor((128, 576), "float16"),
             C: T.Tensor((128, 128), "float32")):
        with T.Kernel(1, 1, threads=128) as (bx, by):
            a_s = T.alloc_shared((128, 64), "float16")
            w_s = T.alloc_shared((64, 128), "float16")
            acc = T.alloc_fragment((128, 128), "float32")
            w_flat = T.Tensor((576, 128), "float16", W.data)
            T.clear(acc)
            for k in T.Pipelined(9, num_stages=2):
                T.copy(A[0, k * 64], a_s)
                T.copy(w_flat[k * 64, 0], w_s)
                T.gemm(a_s, w_s, acc)
            T.copy(acc, C[0, 0])
''')


@pytest.mark.tvm
@pytest.mark.nvcc
def test_the_view_s_tensor_map_names_the_parameter_with_the_view_s_shape():
    from tilelang_core.runtime.artifact import build_artifact

    result = check_source(VIEW, "flat.py")
    assert not result.errors, result.errors
    art = build_artifact(result.kernels[0], "sm_90a", cache=False)
    maps = [m for step in art.launch_plan() for m in step.get("tensor_maps", ())]
    viewed = [m for m in maps if m.get("shape")]
    assert viewed, maps
    assert all(m["tensor"] == "W" and m["shape"] == [576, 128] for m in viewed)
    names = {p["name"] for p in art.params}
    assert all(m["tensor"] in names for m in maps)
