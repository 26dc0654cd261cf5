"""Every quick-fix kind, applied to its example: the checks accept the result and the CPU backend computes what
the kernel means (torch reference). A fix that would leave dependent uses behind must change them or not exist."""
import re
from pathlib import Path

import pytest

from tilelang_core.check import check_source
from tilelsp.features import actions

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

ERRORS = Path(__file__).parents[2] / "examples" / "errors"


def _gemm(args):
    a, b = args[0].float(), args[1].float()
    return a @ b


CASES = [  # (example, title prefix, small call site, reference of the last argument)
    ("gemm_k_mismatch.py", "Use K = block_K for B_shared", "matmul(256, 256, 256)", _gemm),
    ("gemm_k_mismatch.py", "Use K = 64 for A_shared", "matmul(256, 256, 256)", _gemm),
    ("gemm_accumulator_shape.py", "Allocate C_local", "matmul(256, 256, 256)", _gemm),
    ("shared_memory_exceeded.py", "Lower num_stages", "matmul(256, 256, 256)", _gemm),
    ("undefined_name.py", "Change to `A_shared`", "matmul(256, 256, 256)", _gemm),
    ("unknown_builtin.py", "Change to `T.alloc_shared`", "matmul(256, 256, 256)", _gemm),
    ("threads_exceeded.py", "Set threads=1024", "scale(4096)", lambda args: args[0] * 2.0),
    ("threads_not_warp_multiple.py", "Set threads=128", "axpy(4000)", lambda args: 2.0 * args[0] + args[1]),
]


def _small(text: str, call: str) -> str:
    name = call.split("(")[0]
    return re.sub(rf"(\n\s+){name}\([^)]*\)\n", rf"\g<1>{call}\n", text, count=1)


@pytest.mark.parametrize("example, title, call, reference", CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_fix_gives_a_correct_kernel(example, title, call, reference):
    from tilelang_core.runtime.jit import JITKernel

    text = _small((ERRORS / example).read_text(), call)
    result = check_source(text, example)
    offered = [a for d in result.diagnostics if d.severity.value in ("error", "warning")
               for a in actions.code_actions(result, d.span, [d]) if a.title.startswith(title)]
    assert offered, [d.message for d in result.diagnostics]
    fixed = check_source(actions.apply_edits(text, offered[0].edits), example)
    assert not fixed.errors, [d.message for d in fixed.errors]
    func = fixed.kernels[0]
    kernel = JITKernel(func, out_idx=[len(func.params) - 1], target="cpu")
    g = torch.Generator().manual_seed(0)
    inputs = [torch.randn(*[int(d.value) for d in p.shape], generator=g).to(_dtype(p.dtype))
              for p in func.params[:-1]]
    out = kernel(*inputs)
    torch.testing.assert_close(out.float(), reference(inputs).float(), rtol=2e-2, atol=2e-2)


def _dtype(name: str):
    return getattr(torch, name)


def test_fix_with_unrelated_uses_is_not_offered():
    text = _small((ERRORS / "gemm_k_mismatch.py").read_text(), "matmul(256, 256, 256)")
    text = text.replace("threads=128", "threads=64 * 2")  # 64 now also means something else in the kernel
    result = check_source(text, "k.py")
    [d] = result.errors
    titles = [a.title for a in actions.code_actions(result, d.span, [d])]
    assert not any(t.startswith("Use K = block_K for B_shared") for t in titles)
