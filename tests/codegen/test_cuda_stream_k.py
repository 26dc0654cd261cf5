"""Stream-K for the last wave of a persistent GEMM (codegen/cuda/streamk.py): the split the emitted arithmetic
computes for every block (run here in Python), what the kernel and its launch carry, each refusal, and the
launcher's workspace."""
from __future__ import annotations

import re
import shutil
from types import SimpleNamespace

import pytest

from tilelang_core import lower
from tilelang_core.codegen.cuda import generate
from tilelang_core.codegen.cuda.records import FrameDeclarations, RoleState
from tilelang_core.codegen.cuda.streamk import FLAGS, MAX_FILL, MIN_STEPS, StreamK, emit_pieces, emit_split
from tests.codegen.ptxas import ptxas_report
from tests.codegen.test_cuda_persistent import BATCHED, _gemm, _kernel

pytestmark = pytest.mark.tvm


class _Lines:
    """The emitter surface emit_split / emit_pieces use, collecting Python-runnable lines."""

    def __init__(self):
        self.lines, self.depth, self.n = [], 0, 0
        self.frame, self.roles = FrameDeclarations(), RoleState()

    def line(self, text):
        self.lines.append("    " * self.depth + text)

    def fresh(self, hint):
        self.n += 1
        return f"{hint}_{self.n}"

    def block(self):
        em = self

        class _Indent:
            def __enter__(self):
                em.depth += 1

            def __exit__(self, *exc):
                em.depth -= 1
        return _Indent()


def _schedule_of(tiles: int, steps: int, blocks: int) -> dict:
    """Run the emitted stream-K arithmetic for every block: {block: [(tile, k0, k1, ring, last), ...]} and the
    data-parallel tile count."""
    em = _Lines()
    sk = StreamK(tiles, steps, None, 4)
    _, sk_steps, dp = emit_split(em, sk, "grid_blocks")
    em.line(f"dp.append({dp})")
    em.line(f"if {sk_steps} > 0:")
    with em.block():
        for tile, piece in emit_pieces(em, sk, "block"):
            k0, k_count = em.roles.k_range
            em.line(f"out.append(({tile}, {piece.k_begin}, {k0} + {k_count}, {em.roles.ring_base}, "
                    f"{piece.last}))")
    program = "\n".join(ln.replace(".ptr_to", "") for ln in em.lines)
    T = SimpleNamespace(truncdiv=lambda a, b: a // b, truncmod=lambda a, b: a % b, max=max, min=min,  # noqa: N806
                        serial=range, if_then_else=lambda c, a, b: a if c else b)
    runs, dps = {}, []
    for b in range(blocks):
        env = {"T": T, "grid_blocks": blocks, "block": b, "out": [], "dp": dps, em.frame.allocs[0].split()[0]: [0] * 8}
        exec(program, env)  # noqa: S102 - the emitted index arithmetic
        runs[b] = env["out"]
    return {"pieces": runs, "dp_tiles": dps[0]}


@pytest.mark.parametrize("tiles,steps,blocks", [(512, 64, 132), (2048, 128, 132), (162, 32, 132), (324, 32, 132),
                                                (1024, 64, 132), (200, 7, 33), (9, 100, 4), (79, 3, 66)])
def test_every_k_step_of_the_last_wave_runs_once_and_each_tile_finishes_where_it_starts(tiles, steps, blocks):
    s = _schedule_of(tiles, steps, blocks)
    rest = tiles % blocks
    if rest * steps < blocks * MIN_STEPS or rest * MAX_FILL[1] > blocks * MAX_FILL[0]:
        assert s["dp_tiles"] == tiles and all(not p for p in s["pieces"].values())
        return
    assert s["dp_tiles"] == tiles - rest and s["dp_tiles"] % blocks == 0
    covered = {}
    for b, pieces in s["pieces"].items():
        ring = s["dp_tiles"] // blocks * steps  # the ring continues after the block's data-parallel tiles
        for n, (tile, k0, k1, base, last) in enumerate(pieces):
            assert s["dp_tiles"] <= tile < tiles and 0 <= k0 < k1 <= steps and base == ring
            ring += k1 - k0
            assert k0 == 0 or n == 0  # a contributor piece is a block's first: no block waits on one that waits
            for k in range(k0, k1):
                assert (tile, k) not in covered
                covered[tile, k] = (b, k0, last)
    assert len(covered) == rest * steps
    for tile in range(s["dp_tiles"], tiles):
        finisher, _, last = covered[tile, 0]
        holders = {covered[tile, k][0] for k in range(steps)}
        # the finisher waits for exactly the other holders (ranks up to `last`), all of lower block index
        assert holders == {blocks - 1 - r for r in range(blocks - 1 - finisher, last + 1)}
        assert all(b < finisher for b in holders - {finisher})
    shares = [sum(k1 - k0 for _, k0, k1, _, _ in p) for p in s["pieces"].values()]
    assert max(shares) - min(shares) <= 1 and min(shares) >= MIN_STEPS


def test_the_kernel_carries_the_pieces_the_fixup_and_the_workspace():
    func = _gemm(num_stages=4)
    layouts = lower(func, "sm_90a", until="layouts").stages["layouts"]
    assert "# stream-K: when 8 tiles leave a last wave at most 3/5 full" in layouts
    ck = generate(func, "sm_90a")
    src = ck.source
    assert "void* __restrict__ sk_workspace" in src and "tl::sk_store<128, 256>(sk_workspace, " in src
    assert "tl::sk_signal(sk_workspace, " in src and "tl::sk_wait(sk_workspace, " in src
    assert "tl::sk_add<128, 256>(sk_workspace, " in src
    # the finisher's epilogue: the TMA stores appear once per whole tile and once per finisher piece
    assert src.count("tl::tma_store_2d(C_tmap2") == 8
    step = ck.launches[0]
    assert step["stream_k"] == {"param": "sk_workspace", "flags": FLAGS, "floats_per_block": 128 * 256}
    assert [p["name"] for p in ck.params] == ["A", "B", "C"]  # the workspace is the launcher's, not the caller's
    assert [p["kind"] for p in step["params"] if p["name"] == "sk_workspace"] == ["workspace"]


@pytest.mark.parametrize("env,body,kw,reason", [
    ({"TILELSP_STREAM_K": "0"}, {}, {}, "TILELSP_STREAM_K=0"),
    ({"TILELSP_CLUSTER": "2"}, dict(prologue="T.use_swizzle(4)\n            T.clear(C_local)"), {},
     "clusters of two walk tile pairs"),
    ({}, dict(prologue="T.fill(C_local, 1)"), {}, "C_local is not only cleared before the loop"),
])
def test_each_refusal_keeps_the_last_wave_data_parallel(monkeypatch, env, body, kw, reason):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    func = _gemm(body, **kw)
    text = lower(func, "sm_90a", until="layouts").stages["layouts"]
    assert f"# last wave data-parallel: {reason}" in text
    src = generate(func, "sm_90a").source
    assert "sk_workspace" not in src and "tl::grid_blocks()" in src and "tl::sk_" not in src


def test_a_tile_count_known_only_at_launch_stays_data_parallel():
    func = _kernel(BATCHED, "bgemm", M=1000, N=512, K=256)
    assert "# last wave data-parallel: the tile count is known only at launch" in lower(
        func, "sm_90a", until="layouts").stages["layouts"]


def test_the_launcher_keeps_one_zeroed_workspace_per_stream_and_grows_it():
    torch = pytest.importorskip("torch")
    from tilelang_core.runtime import launch as L

    info = {"param": "sk_workspace", "flags": FLAGS, "floats_per_block": 32}
    stream = SimpleNamespace(cuda_stream=7)
    real = torch.cuda.stream
    try:  # a CPU tensor stands in for the device buffer
        torch.cuda.stream = lambda s: __import__("contextlib").nullcontext()
        L._STREAM_K.clear()
        first = L._stream_k_space(info, 4, stream, "cpu")
        assert first.numel() == FLAGS + 4 * 32 and not first.any()
        assert L._stream_k_space(info, 2, stream, "cpu") is first  # kept: the kernel leaves its flags clear
        bigger = L._stream_k_space(info, 8, stream, "cpu")
        assert bigger is not first and bigger.numel() == FLAGS + 8 * 32
        with pytest.raises(L.LaunchError, match="block flags"):
            L._stream_k_space(info, FLAGS + 1, stream, "cpu")
    finally:
        torch.cuda.stream = real
        L._STREAM_K.clear()


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("kw", [dict(num_stages=4, dtype="bfloat16"), dict(block_N=128, threads=128, num_stages=4)],
                         ids=["two-warpgroups", "one-warpgroup-in-flight"])
def test_the_stream_k_gemm_compiles_for_sm90a_without_spills(kw):
    ck = generate(_gemm(**kw), "sm_90a")
    assert "sk_workspace" in ck.source
    stderr = ptxas_report(ck.source)
    assert "warning" not in stderr.lower() and "C7514" not in stderr
    assert all(int(n) == 0 for n in re.findall(r"(\d+) bytes spill", stderr))
