"""Cache keys cover the kernel, its arguments, the target, the compiler version and its CodegenOptions."""
import re
from pathlib import Path

from tilelang_core.check import check_source
from tilelang_core.options import ENV_OVERRIDES
from tilelang_core.runtime import artifact
from tilelang_core.runtime.artifact import ir_key

ROOT = Path(__file__).parents[2]
GEMM = (ROOT / "examples" / "gemm.py").read_text()


def _func(text=GEMM):
    return check_source(text, "gemm.py").kernels[0]


def test_key_changes_with_each_input(monkeypatch):
    func = _func()
    base = ir_key(func, "sm_90a")
    assert ir_key(_func(), "sm_90a") == base  # deterministic
    assert ir_key(func, "sm_80") != base
    other_args = GEMM.replace("matmul(256, 256, 256, 128, 128, 32)", "matmul(512, 256, 256, 128, 128, 32)")
    assert ir_key(_func(other_args), "sm_90a") != base
    assert ir_key(_func(GEMM.replace("T.clear(C_local)", "T.fill(C_local, 1)")), "sm_90a") != base
    for name in ENV_OVERRIDES:
        for value in ("0", "1", "2"):
            monkeypatch.setenv(name, value)
            if ir_key(func, "sm_90a") != base:
                break
        else:
            raise AssertionError(f"{name} does not change the key")
        monkeypatch.delenv(name)
    assert ir_key(func.with_pass_configs({"tl.disable_tma_lower": True}), "sm_90a") != base
    monkeypatch.setattr(artifact, "compiler_version", lambda: "another build")
    assert ir_key(func, "sm_90a") != base


def test_only_the_options_read_a_code_changing_switch():
    read = set()
    for path in (ROOT / "tilelang_core").rglob("*.py"):
        if path.name != "options.py":
            read |= set(re.findall(r"environ\.get\(\s*[\"'](TILELSP_\w+)", path.read_text()))
    # where artifacts live, a child's limit, how many processes compile autotune configs, whether its results are
    # remembered: none of them changes the code
    assert read == {"TILELSP_CACHE_DIR", "TILELSP_VERIFY_MEM_GB", "TILELSP_AUTOTUNE_JOBS", "TILELSP_AUTOTUNE_CACHE"}


def test_jit_factory_builds_anew_when_a_switch_flips(monkeypatch):
    from tilelang_core.runtime import jit

    built = []
    factory = jit.JITFactory(lambda n: n, target="cpu")
    monkeypatch.setattr(jit, "to_ir", lambda result, *a, **k: result)
    monkeypatch.setattr(jit, "JITKernel", lambda func, **k: built.append(func) or object())
    factory(1), factory(1)
    monkeypatch.setenv("TILELSP_DISABLE_WGMMA", "1")
    factory(1)
    assert len(built) == 2


def test_key_needs_neither_tvm_nor_nvcc(monkeypatch):
    """A GPU machine without tvm or nvcc computes the same key as the machine that built the artifact."""
    func = _func()
    base = ir_key(func, "sm_90a")
    artifact.compiler_version.cache_clear()
    monkeypatch.setattr(artifact, "nvcc_version", lambda: (_ for _ in ()).throw(AssertionError("nvcc asked")))
    monkeypatch.setattr(artifact.shutil, "which", lambda name: None)
    try:
        assert ir_key(func, "sm_90a") == base
    finally:
        artifact.compiler_version.cache_clear()


def test_cached_cubin_from_another_nvcc(monkeypatch):
    """Without nvcc any cached cubin serves; with nvcc only one built by the same nvcc version does."""
    monkeypatch.setattr(artifact.shutil, "which", lambda name: None)
    assert artifact._builder_matches({"nvcc_version": "some other nvcc"})
    monkeypatch.setattr(artifact.shutil, "which", lambda name: "/usr/bin/nvcc")
    monkeypatch.setattr("tilelang_core.codegen.tvm_loader.installed_version", lambda: None)
    assert artifact._builder_matches({"nvcc_version": "some other nvcc"})  # nvcc but no tvm: cannot build here
    monkeypatch.setattr("tilelang_core.codegen.tvm_loader.installed_version", lambda: "0.27.0.post1")
    monkeypatch.setattr(artifact, "nvcc_version", lambda: "13.0")
    assert artifact._builder_matches({"nvcc_version": "13.0"})
    assert not artifact._builder_matches({"nvcc_version": "12.4"})


def test_key_tells_dtypes_and_shapes_apart():
    """Buffers print as name:scope only; the key must still see their dtype and shape (an fp16 and a bf16 GEMM of
    the same sizes once shared one artifact)."""
    func = _func()
    assert "float16" in GEMM
    other_dtype = _func(GEMM.replace('"float16"', '"bfloat16"').replace("T.float16", "T.bfloat16"))
    assert [p.dtype for p in other_dtype.params] != [p.dtype for p in func.params]
    assert ir_key(other_dtype, "sm_90a") != ir_key(func, "sm_90a")
