"""One plan per kernel per lowering: the driver plans each kernel once and every stage reads that plan."""
from __future__ import annotations

from pathlib import Path

import pytest

from tilelang_core.check import check_source
from tilelang_core.codegen.cuda import kernel_plan
from tilelang_core.lowering import lower

ROOT = Path(__file__).resolve().parents[2]


def _kernel(name: str):
    return check_source((ROOT / "examples" / name).read_text(), f"examples/{name}").kernels[0]


@pytest.fixture
def plans(monkeypatch):
    """The number of plan() calls made so far (plan_kernel, the layout views and tests call it)."""
    calls = []
    real = kernel_plan.plan
    monkeypatch.setattr(kernel_plan, "plan", lambda func, arch: calls.append(func.name) or real(func, arch))
    return calls


@pytest.mark.parametrize("example,arch", [("gemm.py", "sm_90a"), ("gemm.py", "sm_80"),
                                          ("flash_attention.py", "sm_90a")])
def test_lowering_to_the_lowered_stage_plans_each_kernel_once(plans, example, arch):
    res = lower(_kernel(example), arch, until="lowered")
    assert "lowered" in res.stages and len(plans) == 1


def test_the_whole_lowering_plans_each_kernel_once(plans):
    pytest.importorskip("tvm")
    res = lower(_kernel("gemm.py"), "sm_90a")
    assert res.source and len(plans) == 1
