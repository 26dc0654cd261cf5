"""The target table: every spelling users write gets one answer everywhere (or one clear error)."""
from __future__ import annotations

import pytest

from tilelang_core.target import (ARCHS, CLUSTERS, CP_ASYNC, FP8, SETMAXNREG, TMA, WGMMA, Target, UnknownTargetError,
                                  canonical, from_capability, parse_target, parse_targets)

SPELLINGS = [  # spelling, canonical name (no device known: "cuda"/"auto" are the default, sm_90a)
    ("sm_90a", "sm_90a"), ("SM_90A", "sm_90a"), ("90a", "sm_90a"), ("sm_90", "sm_90"), ("sm_80", "sm_80"),
    ("sm_86", "sm_86"), ("sm_89", "sm_89"), ("compute_90", "sm_90"), ("compute_80", "sm_80"), ("9.0", "sm_90a"),
    ("8.6", "sm_86"), ("cuda:sm_80", "sm_80"), ("cuda -arch=sm_86", "sm_86"),
    ("cuda -keys=cuda,gpu -arch=sm_89 -max_num_threads=1024", "sm_89"), ("cuda", "sm_90a"), ("auto", "sm_90a"),
    (None, "sm_90a"), ({"kind": "cuda", "arch": "sm_80"}, "sm_80"), ({"kind": "cuda"}, "sm_90a"),
    ({"kind": "llvm"}, "cpu"), ("cpu", "cpu"), ("llvm", "cpu"), ("llvm -mcpu=skylake", "cpu"), ("c", "cpu"),
    (" sm_80 ", "sm_80"), ("sm_75", "sm_75"), ("7.5", "sm_75"), ({"kind": "cuda", "arch": "sm_75"}, "sm_75"),
]
UNSUPPORTED = ["sm_70", "sm_72", "sm_87", "sm_100", "sm_100a", "sm_120", "7.0", "10.0", "tpu", "rocm", "cuda:0",
               {"kind": "rocm"}, {"kind": "cuda", "arch": "sm_70"}, "sm_91"]


@pytest.mark.parametrize("spelling,name", SPELLINGS, ids=[repr(s) for s, _ in SPELLINGS])
def test_each_spelling_has_one_answer(spelling, name):
    target = parse_target(spelling)
    assert target.name == name == canonical(spelling) == str(target)
    assert target.is_cpu == (name == "cpu") and target.is_cuda == (name != "cpu")


@pytest.mark.parametrize("spelling", UNSUPPORTED, ids=[repr(s) for s in UNSUPPORTED])
def test_unsupported_spellings_are_one_clear_error(spelling):
    with pytest.raises(UnknownTargetError) as err:
        parse_target(spelling)
    assert "unknown target" in str(err.value)
    assert all(name in str(err.value) for name in ARCHS)  # it names the supported ones


class _TvmKind:
    name = "cuda"


class _TvmTarget:
    """What a tvm.target.Target looks like to parse_target (duck-typed: `.kind.name` and `.attrs`)."""

    kind = _TvmKind()
    attrs = {"arch": "sm_80", "max_num_threads": 1024}


def test_tvm_target_objects_are_read_without_importing_tvm():
    assert parse_target(_TvmTarget()) == Target("cuda", "sm_80")
    cpu = _TvmTarget()
    cpu.kind = type("K", (), {"name": "llvm"})()
    assert parse_target(cpu).is_cpu


def test_the_machine_decides_auto_and_cuda_only():
    gpu, none = (lambda: "sm_80"), (lambda: Target("cpu"))
    assert parse_target("auto", device=gpu).name == "sm_80" and parse_target("cuda", device=gpu).name == "sm_80"
    assert parse_target("auto", device=none).is_cpu  # no GPU: the CPU backend
    assert parse_target("cuda", device=none).name == "sm_90a"  # asked for CUDA without a GPU: the default arch
    assert parse_target("cuda:sm_80", device=lambda: "sm_90a").name == "sm_80"  # an explicit arch is kept


def test_capabilities_and_limits():
    h, a = parse_target("sm_90a"), parse_target("sm_80")
    assert h.has(WGMMA) and h.has(SETMAXNREG) and h.has(TMA) and h.has(CLUSTERS) and h.has(FP8)
    assert not parse_target("sm_90").has(WGMMA) and parse_target("sm_90").has(TMA)
    assert a.has(CP_ASYNC) and not a.has(TMA) and not a.has(FP8) and parse_target("sm_89").has(FP8)
    assert not parse_target("cpu").has(CP_ASYNC)
    assert h.arch.smem_per_block == 232448 and a.arch.smem_per_block == 166912
    assert parse_target("sm_86").arch.smem_per_block == parse_target("sm_89").arch.smem_per_block == 101376
    assert h.arch.max_cluster_size == 8 and a.arch.max_cluster_size == 1
    assert all(x.threads_per_block == 1024 and x.registers_per_thread == 255 for x in ARCHS.values())
    assert h.arch.arch_specific and not parse_target("sm_90").arch.arch_specific
    assert from_capability(9, 0).name == "sm_90a" and from_capability(8, 9).name == "sm_89"


def test_target_lists():
    assert parse_targets("sm_90a, sm_80") == ("sm_90a", "sm_80")
    assert parse_targets(["90a", "sm_90a", "SM_80"]) == ("sm_90a", "sm_80")
    assert parse_targets("") == ("sm_90a",)
    with pytest.raises(UnknownTargetError, match="sm_91"):
        parse_targets("sm_80,sm_91")


def test_every_layer_gives_the_same_answer():
    """The pipeline, the checks' target list, the JIT and the CLI's validation all read the one table."""
    from tilelang_core.lowering import stage_names
    from tilelang_core.runtime.jit_kernel import machine_target
    from tilelsp.cli.config import ConfigError, validate_targets

    for spelling in ("cuda:sm_80", "compute_90", "9.0", "SM_90A", "sm_86"):
        name = canonical(spelling)
        assert machine_target(spelling).name == name  # cuda:sm_80 stays sm_80 in the JIT
        assert validate_targets([spelling], "--target") == (name,)
        assert stage_names(spelling)[-1] == "cuda"
    for spelling in ("sm_70", "sm_100"):
        with pytest.raises(UnknownTargetError):
            machine_target(spelling)
        with pytest.raises(ConfigError, match="unknown target"):
            validate_targets([spelling], "--target")


def test_the_editor_offers_the_supported_targets():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "vscode-extension/src/constants.ts").read_text()
    offered = re.findall(r"'([^']+)'", re.search(r"KNOWN_TARGETS = \[(.*?)\]", text).group(1))
    assert sorted(offered) == sorted([*ARCHS, "cpu"])


@pytest.mark.parametrize("spelling, reason", [("sm_72", "needs sm_75 or newer"), ("sm_70", "needs sm_75 or newer"),
                                              ({"kind": "cuda", "arch": "sm_70"}, "compute capability 7.0"),
                                              ("sm_100a", "sm_100 and newer"), ("sm_120", "compute capability 12.0")])
def test_real_architectures_outside_the_table_say_why(spelling, reason):
    with pytest.raises(UnknownTargetError, match="unknown target") as err:
        parse_target(spelling)
    assert reason in str(err.value) and "known targets: sm_75, sm_80" in str(err.value)


def test_other_unknown_spellings_give_no_reason():
    with pytest.raises(UnknownTargetError) as err:
        parse_target("sm_xx")
    assert "compute capability" not in str(err.value)
