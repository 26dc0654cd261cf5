"""nvcc for sm_90a with ptxas's report (-Xptxas -v): the compile checks of the Hopper codegen tests."""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path


def ptxas_report(source: str) -> str:
    """Compile CUDA `source` to a cubin for sm_90a with the artifact's flags; nvcc's stderr (fails on an error)."""
    from tilelang_core.runtime.artifact import arch_flags

    with tempfile.TemporaryDirectory() as tmp:
        cu = Path(tmp) / "k.cu"
        cu.write_text(source)
        p = subprocess.run(["nvcc", "-cubin", "-O3", "-std=c++17", *arch_flags("sm_90a"), "-Xptxas", "-v", "-o",
                            str(Path(tmp) / "k.cubin"), str(cu)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stderr
