"""CodegenOptions: one value per kernel from its TileLang pass configs, then the TILELSP_* overrides."""
from __future__ import annotations

from pathlib import Path

import pytest

from tilelang_core.options import (ENV_OVERRIDES, PASS_CONFIGS, CodegenOptions, codegen_options, current_options,
                                   options_scope, pass_config_key)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("key", sorted(PASS_CONFIGS))
def test_each_honoured_pass_config_sets_its_field(key):
    name, on = PASS_CONFIGS[key]
    assert getattr(codegen_options({key: True}, environ={}), name) == on
    assert codegen_options({key: False}, environ={}) == CodegenOptions()  # a false config is TileLang's default


def test_defaults_pairs_and_unknown_keys():
    assert codegen_options(None, environ={}) == CodegenOptions()
    pairs = (("tl.disable_tma_lower", True), ("tl.enable_fast_math", 1), ("tl.some_other_key", True))
    assert codegen_options(pairs, environ={}) == CodegenOptions(tma=False, fast_math=True)
    both = {"tl.enable_fast_math": True, "tl.disable_fast_math": True}
    assert not codegen_options(both, environ={}).fast_math  # the old spelling's opt-out wins


def test_environment_overrides_come_after_the_configs():
    env = {"TILELSP_DISABLE_TMA": "1", "TILELSP_PERSISTENT": "0", "TILELSP_CLUSTER": "2", "TILELSP_ATTN_OVERLAP": "0",
           "TILELSP_WGMMA_INFLIGHT": "1", "TILELSP_ATTN_UNSWITCH": "0", "TILELSP_DISABLE_WGMMA": "0"}
    opts = codegen_options({"tl.disable_wgmma": True}, environ=env)
    assert not opts.tma and not opts.persistent and opts.cluster == 2 and opts.attn_overlap == "off"
    assert opts.wgmma_in_flight == "on" and not opts.loop_unswitching
    assert opts.wgmma  # TILELSP_DISABLE_WGMMA=0 is not set: the environment has the last word
    assert all(name in {f for f in CodegenOptions.__dataclass_fields__} for name, _ in ENV_OVERRIDES.values())


def test_scope_and_outside_it(monkeypatch):
    monkeypatch.setenv("TILELSP_STREAM_K", "0")
    assert not current_options().stream_k  # outside a scope: the overrides alone
    with options_scope(codegen_options({"tl.disable_warp_specialized": True})) as opts:
        assert current_options() is opts and not opts.warp_specialized and not opts.stream_k
    assert current_options().warp_specialized


def test_pass_config_key_spellings():
    from tilelang_core.compat.transform import PassConfigKey

    assert pass_config_key("TL_ENABLE_FAST_MATH") == PassConfigKey.TL_ENABLE_FAST_MATH == "tl.enable_fast_math"
    assert PassConfigKey.TL_DISABLE_SAFE_MEMORY_ACCESS == "tl.disable_safe_memory_legalize"  # TileLang's string


def test_every_config_and_variable_is_documented():
    import re

    text = (ROOT / "docs" / "options.md").read_text()
    read = {m for pkg in ("tilelang_core", "tilelsp") for path in (ROOT / pkg).rglob("*.py")
            for m in re.findall(r"TILELSP_[A-Z0-9_]+", path.read_text())}
    missing = [k for k in sorted({*PASS_CONFIGS, *ENV_OVERRIDES, *read}) if f"`{k}" not in text]
    assert not missing, missing


GEMM = (ROOT / "examples" / "gemm.py").read_text()


def _gemm(configs=None):
    from tilelang_core.check import check_source

    func = check_source(GEMM, "examples/gemm.py").kernels[0]
    return func.with_pass_configs(configs) if configs else func


@pytest.mark.parametrize("config,env", [("tl.disable_tma_lower", "TILELSP_DISABLE_TMA"),
                                        ("tl.disable_warp_specialized", "TILELSP_DISABLE_TMA"),
                                        ("tl.disable_wgmma", "TILELSP_DISABLE_WGMMA")])
def test_a_pass_config_builds_what_its_override_builds(config, env, monkeypatch):
    pytest.importorskip("tvm")
    from tilelang_core.codegen.cuda import generate

    default = generate(_gemm(), "sm_90a")
    by_config = generate(_gemm({config: True}), "sm_90a")
    monkeypatch.setenv(env, "1")
    by_env = generate(_gemm(), "sm_90a")
    assert by_config.source == by_env.source != default.source
    assert by_config.tensor_maps == [] and default.tensor_maps


ELEMENTWISE = """
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def add(M=250, N=250):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float32), B: T.Tensor((M, N), T.float32), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, 32), T.ceildiv(M, 32), threads=128) as (bx, by):
            for i, j in T.Parallel(32, 32):
                C[by * 32 + i, bx * 32 + j] = A[by * 32 + i, bx * 32 + j] + B[by * 32 + i, bx * 32 + j]

    return main
"""


def test_disable_safe_memory_legalize_drops_the_extent_guards():
    pytest.importorskip("tvm")
    from tilelang_core.check import check_source
    from tilelang_core.codegen.cuda import generate

    func = check_source(ELEMENTWISE, "add.py").kernels[0]
    guarded = generate(func, "sm_80").source
    plain = generate(func.with_pass_configs({"tl.disable_safe_memory_legalize": True}), "sm_80").source
    assert "< 250)" in guarded and "< 250)" not in plain  # the store was guarded by the tensor's extent
