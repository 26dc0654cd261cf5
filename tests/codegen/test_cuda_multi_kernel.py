"""A prim_func with several `with T.Kernel(...)` blocks (split-KV decoding: a partial pass writes a T.alloc_global
workspace, a combine kernel reads it): one `__global__` per block in one source, an artifact listing the launches
and workspaces, the launcher's per-launch argument packing (no GPU), and the CPU backend against torch."""
from __future__ import annotations

import ctypes
import runpy
import textwrap

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

class FakeTensor:
    def __init__(self, shape, dtype, ptr):
        self.shape, self.dtype, self._ptr, self.is_cuda, self.device = tuple(shape), f"torch.{dtype}", ptr, True, "cuda"

    def data_ptr(self):
        return self._ptr

    def is_contiguous(self):
        return True


SPLIT_SUM = '''
import tilelang_core as tilelang
import tilelang_core.language as T


def split_sum(B, N, S, target):
    chunk = N // S

    @T.prim_func
    def k(X: T.Tensor((B, N), "float32"), Y: T.Tensor((B,), "float32")):
        partial = T.alloc_global((B, S), "float32")
        with T.Kernel(B, S, threads=32) as (b, s):
            acc = T.alloc_var("float32")
            acc = 0.0
            for j in T.serial(chunk):
                acc += X[b, s * chunk + j]
            partial[b, s] = acc
        half = S // 2
        with T.Kernel(B, threads=32) as b:
            tot = T.alloc_var("float32")
            tot = 0.0
            for s in T.serial(S):
                tot += partial[b, s] * (2 if s < half else 1)
            Y[b] = tot
    return tilelang.compile(k, out_idx=[1], target=target)
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("multi") / "split_sum.py"
    path.write_text(textwrap.dedent(SPLIT_SUM))
    return runpy.run_path(str(path), run_name="split_sum")


def _func(mod, B, N, S):
    return mod["split_sum"](B, N, S, "cpu").func


def test_two_kernels_run_in_order_on_the_cpu_backend(mod):
    x = torch.randn(4, 64)
    y = mod["split_sum"](4, 64, 4, "cpu")(x)
    w = torch.tensor([2.0, 2.0, 1.0, 1.0])
    torch.testing.assert_close(y, (x.reshape(4, 4, 16).sum(2) * w).sum(1))


@pytest.mark.nvcc
def test_two_kernels_build_one_artifact_with_two_launches(mod, tmp_path):
    from tilelang_core.runtime.artifact import Artifact, build_artifact

    art = build_artifact(_func(mod, 4, 64, 4), "sm_90a", cache=False)
    plan = art.launch_plan()
    assert [(list(p["grid"]), p["block"][0]) for p in plan] == [([4, 4], 32), ([4], 32)]
    assert art.source.count('__global__ void __launch_bounds__') == 2 * 2  # declaration + definition each
    assert art.workspaces == [{"name": "partial", "dtype": "float32", "shape": [4, 4]}]
    assert [p["name"] for p in art.params] == ["X", "Y"]  # the caller passes no workspace
    kinds = [{p["name"]: (p["kind"], p["position"]) for p in step["params"]} for step in plan]
    assert kinds[0]["partial"][0] == "workspace" and kinds[0]["Y"][1] == -1 and kinds[1]["X"][1] == -1
    back = Artifact.load(art.save(tmp_path))
    assert back.launch_plan() == plan and back.workspace_shapes({}) == [("partial", "float32", (4, 4))]


def test_ir_stages_show_every_kernel(mod):
    from tilelang_core.lowering import lower

    text = lower(_func(mod, 4, 64, 4), "sm_90a", until="lowered").stages["lowered"]
    assert "# kernel 0 of 2: k_kernel0 (workspaces: partial)" in text and "# kernel 1 of 2: k_kernel1" in text
    assert text.count("@T.prim_func") == 2 and "(s < 2)" in text.split("# kernel 1 of 2")[1]
    launch = lower(_func(mod, 4, 64, 4), "sm_90a").launch
    assert [k["grid"] for k in launch["kernels"]] == [(4, 4), (4,)] and launch["workspaces"][0]["name"] == "partial"


def test_a_store_between_kernels_is_reported_at_its_line():
    from tilelang_core import check_source
    from tilelang_core.codegen.cuda.common import LoweringError
    from tilelang_core.codegen.cuda.split import split_kernels

    src = textwrap.dedent('''
        import tilelang_core.language as T

        @T.prim_func
        def k(A: T.Tensor((64,), T.float32)):
            with T.Kernel(2, threads=32) as bx:
                A[bx] = 1.0
            A[0] = 2.0
            with T.Kernel(2, threads=32) as bx:
                A[bx] = 3.0
        ''')
    with pytest.raises(LoweringError) as info:
        split_kernels(check_source(src, "<test>").kernels[0])
    assert info.value.span.line == 8 and "between `with T.Kernel(...)` blocks" in str(info.value)


def _two_launch_artifact():
    from tilelang_core.runtime.artifact import Artifact

    user = [{"name": "X", "kind": "tensor", "dtype": "float32", "shape": ["M", 64], "is_output": False},
            {"name": "Y", "kind": "tensor", "dtype": "float32", "shape": ["M"], "is_output": True},
            {"name": "M", "kind": "dim", "dtype": "int32", "shape": [], "is_output": False}]
    first = [dict(user[0], position=0), dict(user[1], position=-1), dict(user[2], position=2),
             {"name": "W", "kind": "workspace", "dtype": "float32", "shape": ["M", 4], "position": 1}]
    second = [dict(user[0], position=-1), dict(user[1], position=1), dict(user[2], position=-1),
              {"name": "W", "kind": "workspace", "dtype": "float32", "shape": ["M", 4], "position": 0}]
    launches = [{"kernel_symbol": "k0", "grid": ["M", 4], "block": [32, 1, 1], "smem_bytes": 0, "params": first},
                {"kernel_symbol": "k1", "grid": ["T.ceildiv(M, 32)"], "block": [32, 1, 1], "smem_bytes": 0,
                 "params": second}]
    return Artifact("k", "k0", "sm_90a", "", b"", ["M", 4], [32, 1, 1], 0, user, launches=launches,
                    workspaces=[{"name": "W", "dtype": "float32", "shape": ["M", 4]}])


def _pointers(array, n):
    return [ctypes.cast(array[i], ctypes.POINTER(ctypes.c_void_p)).contents.value for i in range(n)]


def test_each_launch_gets_its_own_arguments_and_the_workspaces():
    from tilelang_core.runtime.launch import bind_dims, pack_args

    art = _two_launch_artifact()
    args = [FakeTensor((100, 64), "float32", ptr=0xA000), FakeTensor((100,), "float32", ptr=0xB000)]
    dims = bind_dims(art, args)
    assert dims == {"M": 100} and art.workspace_shapes(dims) == [("W", "float32", (100, 4))]
    assert [art.grid_for(dims, s["grid"]) for s in art.launch_plan()] == [(100, 4, 1), (4, 1, 1)]
    spaces = {"W": FakeTensor((100, 4), "float32", ptr=0xC000)}
    _, first = pack_args(art, args, dims, art.launch_plan()[0], spaces)
    assert _pointers(first, 2) == [0xA000, 0xC000]
    assert ctypes.cast(first[2], ctypes.POINTER(ctypes.c_int32)).contents.value == 100
    _, second = pack_args(art, args, dims, art.launch_plan()[1], spaces)
    assert len(second) == 2 and _pointers(second, 2) == [0xC000, 0xB000]


def test_the_launches_run_in_order_and_an_empty_grid_is_skipped():
    from tilelang_core.runtime.launch import launch_grids

    art = _two_launch_artifact()
    steps = list(launch_grids(art, {"M": 100}))
    assert [(s["kernel_symbol"], grid, block) for s, grid, block in steps] == [
        ("k0", (100, 4, 1), (32, 1, 1)), ("k1", (4, 1, 1), (32, 1, 1))]
    assert list(launch_grids(art, {"M": 0})) == []


def test_an_artifact_saved_before_launch_lists_loads_as_one_launch(tmp_path):
    import json

    from tilelang_core.runtime.artifact import Artifact

    art = _two_launch_artifact()
    meta = art.meta()
    for key in ("launches", "workspaces"):
        meta.pop(key)
    (tmp_path / "old.json").write_text(json.dumps(meta))
    (tmp_path / "old.cu").write_text("")
    (tmp_path / "old.cubin").write_bytes(b"")
    old = Artifact.load(tmp_path / "old.json")
    assert old.launch_plan() == [{"kernel_symbol": "k0", "grid": ["M", 4], "block": [32, 1, 1], "smem_bytes": 0,
                                  "params": art.params}] and old.workspace_shapes({"M": 3}) == []
