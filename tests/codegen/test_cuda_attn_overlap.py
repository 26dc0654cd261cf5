"""FA3-style overlap in the warp-specialised flash attention (codegen/cuda/overlap.py): the softmax of block k runs
while the P V wgmma of block k-1 is in flight, the two consumer warpgroups take turns issuing; the schedule is kept
where the reordering is illegal or would starve the producer (2 stages with one set of mbarriers; with 2 stages K and V
get separate ones); the CPU backend ignores all of it."""
from __future__ import annotations

import dataclasses
import shutil

import pytest

from tilelang_core import check_source
from tilelang_core.codegen.cuda import generate
from tests.conftest import EXAMPLES

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

FLASH = EXAMPLES / "flash_attention.py"


def _flash(fast_math=False, **kw):
    """The example's kernel; without its `tl.enable_fast_math` pass config unless asked (IEEE exp2f)."""
    args = dict(batch=1, heads=2, seq_len=1024, dim=128, is_causal=False, block_M=128, block_N=128, num_stages=3,
                threads=256)
    args.update(kw)
    res = check_source(FLASH.read_text(), str(FLASH), instances={"flash_attention": [args]})
    assert not res.errors, [d.message for d in res.errors]
    kernel = next(k for k in res.kernels if k.factory == "flash_attention")
    return kernel if fast_math else dataclasses.replace(kernel, pass_configs=())


def _loop(source: str) -> str:
    """The consumers' main loop of a generated kernel (from the peeled iteration's wait to the last P V)."""
    body = source[source.index("tl::consumer_sync<256>();"):]
    return body[:body.rindex("tl::pingpong_last") if "tl::pingpong_last" in body else len(body)]


@pytest.fixture(scope="module")
def overlapped():
    return generate(_flash(), "sm_90a").source


def test_second_gemm_of_the_previous_block_is_in_flight_during_the_softmax(overlapped):
    loop = _loop(overlapped)
    body = loop[loop.index("for (int k_i"):]
    order = [body.index(s) for s in ("tl::pingpong_sync()", "tl_gemm_wgmma_", "(&(probs_ptr[0])", "pingpong_arrive",
                                     "tl::wgmma_wait_fenced<1, 64>((&(scores_ptr[0])))", "exp2f(",
                                     "tl::wgmma_wait_fenced<0, 64>((&(acc_o_ptr[0])))", "tl::mbar_arrive",
                                     "acc_o_ptr[r_")]
    assert order == sorted(order), order
    # the P V wgmma of block k-1 reads stage k-1 ((k_i_1 % 3)) while Q K^T reads stage k
    assert "(((k_i_1 + 1) % 3) * 16384)" in body and "((k_i_1 % 3) * 16384)" in body
    assert body.count("wgmma.wait_group") == 0  # the gemm functions leave their groups in flight


def test_the_warpgroups_take_turns_and_the_barriers_balance(overlapped):
    loop = _loop(overlapped)
    assert loop.count("tl::pingpong_sync()") == loop.count("tl::pingpong_arrive()") == 3  # peeled, loop, last P V
    assert overlapped.count("tl::pingpong_first()") == 1 and "tl::pingpong_last();" in overlapped


def test_two_stages_with_one_set_of_mbarriers_keep_the_old_schedule_unless_forced(monkeypatch):
    monkeypatch.setenv("TILELSP_ATTN_KV_BARRIERS", "0")
    plain = generate(_flash(num_stages=2), "sm_90a").source
    assert "wgmma_wait_fenced<1" not in plain and "pingpong" not in plain
    monkeypatch.setenv("TILELSP_ATTN_OVERLAP", "1")
    assert "tl::wgmma_wait_fenced<1, 64>" in generate(_flash(num_stages=2), "sm_90a").source
    monkeypatch.setenv("TILELSP_ATTN_OVERLAP", "0")
    assert "wgmma_wait_fenced<1" not in generate(_flash(), "sm_90a").source


def test_pingpong_switch_and_one_consumer_warpgroup(monkeypatch):
    monkeypatch.setenv("TILELSP_ATTN_PINGPONG", "0")
    src = generate(_flash(), "sm_90a").source
    assert "tl::wgmma_wait_fenced<1, 64>" in src and "pingpong" not in src
    monkeypatch.delenv("TILELSP_ATTN_PINGPONG")
    one = generate(_flash(block_M=64, threads=128), "sm_90a").source  # one warpgroup: overlap, no ping-pong
    assert "tl::wgmma_wait_fenced<1, 64>" in one and "pingpong" not in one


def test_causal_loop_bound_runs_only_the_blocks_left_of_the_diagonal(monkeypatch):
    monkeypatch.setenv("TILELSP_HEAVY_FIRST", "0")  # blockIdx.x as launched (lpt.py reverses it; test_cuda_lpt)
    src = generate(_flash(is_causal=True), "sm_90a").source
    loop = _loop(src)
    assert "for (int k_i_1 = 0; k_i_1 < ((int)blockIdx.x); ++k_i_1)" in loop  # ceildiv((bx+1)*128, 128) - 1 peeled
    assert "tl::wgmma_wait_fenced<1, 64>" in loop


ILLEGAL = '''
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[2])
def probs_first(seq_len, dim, stage_scores=False):  # stage_scores: a legal order, but S goes to shared memory
    @T.prim_func
    def main(Q: T.Tensor((seq_len, dim), T.float16), K: T.Tensor((seq_len, dim), T.float16),
             O: T.Tensor((seq_len, dim), T.float16)):
        with T.Kernel(T.ceildiv(seq_len, 128), threads=256) as bx:
            Q_s = T.alloc_shared((128, dim), T.float16)
            K_s = T.alloc_shared((128, dim), T.float16)
            V_s = T.alloc_shared((128, dim), T.float16)
            S_s = T.alloc_shared((128, 128), T.float32)
            S = T.alloc_fragment((128, 128), T.float32)
            P = T.alloc_fragment((128, 128), T.float16)
            acc = T.alloc_fragment((128, dim), T.float32)
            m = T.alloc_fragment((128,), T.float32)
            T.copy(Q[bx * 128:(bx + 1) * 128, :], Q_s)
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(seq_len, 128), num_stages=3):
                T.copy(K[k * 128:(k + 1) * 128, :], K_s)
                T.clear(S)
                T.gemm(Q_s, K_s, S, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                if stage_scores:
                    T.reduce_max(S, m, dim=1)
                    T.copy(S, S_s)
                T.copy(S, P)
                T.reduce_max(S, m, dim=1)
                T.copy(K[k * 128:(k + 1) * 128, :], V_s)
                T.gemm(P, V_s, acc, policy=T.GemmWarpPolicy.FullRow)
            T.copy(acc, O[bx * 128:(bx + 1) * 128, :])

    return main
'''


@pytest.mark.parametrize("stage_scores", [False, True])
def test_illegal_or_pointless_reorderings_keep_the_old_schedule(stage_scores):
    # P written right after the first gemm (nothing could overlap), or the consumers write shared memory
    res = check_source(ILLEGAL, "illegal.py", instances={"probs_first": [dict(seq_len=512, dim=64,
                                                                               stage_scores=stage_scores)]})
    assert not res.errors, [d.message for d in res.errors]
    src = generate(res.kernels[0], "sm_90a").source
    assert "tl::mbar_expect_tx" in src  # still the warp-specialised TMA pipeline
    assert "wgmma_wait_fenced<1" not in src and "pingpong" not in src


def test_layouts_stage_names_the_overlap():
    from tilelang_core import lower

    stage = lower(_flash(), "sm_90a", until="layouts").stages["layouts"]
    assert "# overlapped: acc_o += probs @ V_shared of iteration k-1 in flight (wgmma.wait_group 1)" in stage
    assert "take turns issuing" in stage


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("causal", [False, True])
def test_overlapped_attention_compiles_for_sm90a_without_serialised_wgmma(causal, overlapped):
    from tests.codegen.ptxas import ptxas_report

    stderr = ptxas_report(generate(_flash(is_causal=True), "sm_90a").source if causal else overlapped)
    assert "C7514" not in stderr and "C7508" not in stderr and "warning" not in stderr.lower()
    assert "0 bytes spill stores" in stderr


@pytest.mark.parametrize("causal", [False, True])
def test_cpu_backend_runs_the_overlap_eligible_config_like_torch(causal, tilelang_alias):
    import runpy

    glb = runpy.run_path(str(FLASH), run_name="example_flash_attention")
    kernel = glb["flash_attention"](1, 2, 256, 64, causal, 128, 128, 3, 256)
    q, k, v = (torch.randn(1, 2, 256, 64, dtype=torch.float16) for _ in range(3))
    torch.testing.assert_close(kernel(q, k, v), glb["ref_program"](q, k, v, is_causal=causal), rtol=1e-2, atol=1e-2)


def test_unswitched_causal_mask_holds_exactly_on_the_blocks_left_of_the_diagonal():
    from tilelang_core.codegen.cuda.unswitch import unswitch_fill
    from tilelang_core.ir import nodes as N
    from tilelang_core.ir.arith import as_const
    from tilelang_core.ir.visitor import transform, walk

    fill = next(n for n in walk(_flash(is_causal=True, block_N=64).body) if isinstance(n, N.For)
                and n.kind == "parallel" and isinstance(getattr(n, "body", None), N.Store)
                and isinstance(n.body.value, N.Select))
    split = unswitch_fill(fill)
    assert isinstance(split, N.If) and split.else_body is fill
    assert not any(isinstance(n, N.Select) for n in walk(split.then_body))
    names = {v.name: v for v in walk(split.cond) if isinstance(v, N.Var)}
    assert set(names) == {"bx", "k"}

    def value(e, env):
        return as_const(transform(e, lambda n: N.Const(env[n.name]) if isinstance(n, N.Var) else n))

    cond = fill.body.value.cond
    for bx in range(3):
        for k in range(7):
            every = all(value(cond, dict(bx=bx, k=k, i=i, j=j)) for i in range(128) for j in range(64))
            assert value(split.cond, dict(bx=bx, k=k)) == every, (bx, k)


def test_causal_loop_masks_only_the_diagonal_block(monkeypatch):
    monkeypatch.setenv("TILELSP_HEAVY_FIRST", "0")  # blockIdx.x as launched (lpt.py reverses it; test_cuda_lpt)
    src = _loop(generate(_flash(is_causal=True), "sm_90a").source)
    assert "if (1 < (((int)blockIdx.x) - k_i_1)) {" in src  # k < bx: the plain fill
    monkeypatch.setenv("TILELSP_ATTN_UNSWITCH", "0")
    assert "if (1 < (((int)blockIdx.x) - k_i_1))" not in _loop(generate(_flash(is_causal=True), "sm_90a").source)


def test_fast_exp2_is_opt_in(monkeypatch, overlapped):
    assert "tl::exp2_ftz(" not in overlapped.split("exp2_ftz(float x)")[-1]  # exp2f (denormals kept) by default
    example = generate(_flash(fast_math=True), "sm_90a").source  # the example asks for it, as TileLang's do
    assert "tl::exp2_ftz(" in example.split("exp2_ftz(float x)")[-1] and "exp2f(" not in example
    monkeypatch.setenv("TILELSP_FAST_EXP2", "1")
    src = generate(_flash(), "sm_90a").source
    assert "tl::exp2_ftz(" in src and "exp2f(" not in src


def test_separate_k_and_v_mbarriers_overlap_two_stages(monkeypatch, overlapped):
    assert overlapped.count("tl::mbar_init(") == 6  # 3 stages: one set (full/empty) by default
    src = generate(_flash(num_stages=2), "sm_90a").source  # 2 stages: separate K and V mbarriers by default
    assert src.count("tl::mbar_init(") == 8  # full/empty for K and for V, 2 stages each
    producer = src[src.index("for (int k_i = 0;"):]
    producer = producer[:producer.index("} else {")]
    # the producer waits on K's empty barrier (bars + 2) before K's copies and on V's (bars + 6) before V's
    assert producer.index("+ 20482)") < producer.index("K_tmap0") < producer.index("+ 20486)") \
        < producer.index("V_tmap1")
    body = _loop(src)[_loop(src).index("for (int k_i_1"):]
    order = [body.index(s) for s in ("+ 20480)])), (((k_i_1 + 1) & 3) >> 1))",  # K_k landed
                                     "+ 20484)])), ((k_i_1 & 3) >> 1))",  # V_{k-1} landed
                                     "tl::pingpong_sync()", "tl::wgmma_wait_fenced<1, 64>",
                                     "(((k_i_1 + 1) & 1) + 20482)])));",  # K_k released after S_k's wait
                                     "tl::wgmma_wait_fenced<0, 64>",
                                     "((k_i_1 & 1) + 20486)])));")]  # V_{k-1} released after P V's wait
    assert order == sorted(order), order
    assert "tl::tma_store_4d" in src  # 2 stages leave room for the TMA-store epilogue
    monkeypatch.setenv("TILELSP_ATTN_KV_BARRIERS", "0")
    plain = generate(_flash(num_stages=2), "sm_90a").source
    assert plain.count("tl::mbar_init(") == 4 and "wgmma_wait_fenced<1" not in plain
    monkeypatch.setenv("TILELSP_ATTN_KV_BARRIERS", "1")
    assert generate(_flash(), "sm_90a").source.count("tl::mbar_init(") == 12  # forced at 3 stages


def test_separate_barriers_need_each_tile_read_by_one_gemm_only(monkeypatch):
    monkeypatch.setenv("TILELSP_ATTN_KV_BARRIERS", "1")  # forced: K_s read by both gemms still gets one set
    res = check_source(ILLEGAL.replace("T.copy(S, P)\n                T.reduce_max(S, m, dim=1)",
                                       "T.reduce_max(S, m, dim=1)\n                T.copy(S, P)")
                       .replace("T.gemm(P, V_s, acc", "T.gemm(P, K_s, acc"),
                       "shared_k.py", instances={"probs_first": [dict(seq_len=512, dim=64)]})
    assert not res.errors, [d.message for d in res.errors]
    src = generate(res.kernels[0], "sm_90a").source  # K_s read by both gemms: one set of mbarriers, 3 stages
    assert src.count("tl::mbar_init(") == 6 and "tl::wgmma_wait_fenced<1" in src


def test_layouts_stage_names_the_separate_barriers(monkeypatch):
    from tilelang_core import lower

    stage = lower(_flash(num_stages=2), "sm_90a", until="layouts").stages["layouts"]
    assert "separate mbarriers for K_shared (released after wait_group 1) and V_shared" in stage


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_separate_barriers_compile_for_sm90a_without_spills(monkeypatch):
    from tests.codegen.ptxas import ptxas_report

    stderr = ptxas_report(generate(_flash(is_causal=True, num_stages=2), "sm_90a").source)
    assert "C7514" not in stderr and "warning" not in stderr.lower() and "0 bytes spill stores" in stderr
