"""The `tilelang` alias's API surface: every submodule TileLang examples import, and how each behaves
(carver device model and hints, utils, nvcc, fp8, env, dtypes, unsupported features, tvm)."""
from __future__ import annotations

import importlib
import sys

import pytest

SUBMODULES = [
    "tilelang.autotuner", "tilelang.carver", "tilelang.carver.arch", "tilelang.carver.template",
    "tilelang.carver.roller.rasterization", "tilelang.utils", "tilelang.utils.tensor", "tilelang.contrib",
    "tilelang.contrib.nvcc", "tilelang.env", "tilelang.tools", "tilelang.transform", "tilelang.engine",
    "tilelang.engine.callback", "tilelang.tileop", "tilelang.tileop.base", "tilelang.language.fp8",
    "tilelang.language.dtypes", "tilelang.cuda", "tilelang.cuda.intrinsics.macro.mma_macro_generator",
    "tilelang.cuda.intrinsics.sparse_layout", "tilelang.tools.cuda", "tilelang.profiler", "tilelang.testing", "tilelang.layout", "tilelang.math",
    "tilelang.rocm.target", "tilelang.language.tir.ir",
]


@pytest.mark.parametrize("name", SUBMODULES)
def test_every_submodule_imports(tilelang, name):
    assert importlib.import_module(name) is sys.modules[name]


def test_top_level_names(tilelang):
    from tilelang.autotuner import AutoTuner, autotune, get_autotune_inputs, set_autotune_inputs  # noqa: F401

    assert tilelang.__file__.endswith("tilelang_core/__init__.py")
    assert tilelang.TensorSupplyType.Integer.name == "Integer"
    assert tilelang.autotune is autotune and tilelang.env.TILELANG_CACHE_DIR
    assert tilelang.PassConfigKey.TL_ENABLE_FAST_MATH == "tl.enable_fast_math"
    assert tilelang.tileop.GemmWarpPolicy is tilelang.language.GemmWarpPolicy
    tilelang.disable_cache()
    assert not tilelang.is_cache_enabled()
    tilelang.enable_cache()
    with pytest.raises(AttributeError, match="no_such_name"):
        tilelang.no_such_name  # noqa: B018


def test_carver_arch_without_a_gpu(tilelang, monkeypatch):
    import torch
    from tilelang.carver.arch import CDNA, CUDA, driver, is_hopper_arch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    arch = CUDA("cuda")
    assert driver.get_num_sms() == arch.compute_max_core == 132 and is_hopper_arch(arch)
    assert arch.sm_version == 90 and arch.smem_cap == 48 * 1024 and arch.reg_cap == 65536
    assert CUDA("cuda -arch=sm_80").sm_version == 80
    with pytest.raises(NotImplementedError, match="CDNA.*not supported by tilelang_core"):
        CDNA("hip")


def test_carver_reads_torch_device_properties(tilelang, monkeypatch):
    import types

    import torch
    from tilelang.carver.arch import CUDA, driver

    props = types.SimpleNamespace(name="fake", major=8, minor=0, multi_processor_count=108, warp_size=32,
                                  regs_per_multiprocessor=65536, shared_memory_per_block=49152,
                                  shared_memory_per_block_optin=166912, L2_cache_size=40 << 20)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i=0: props)
    assert driver.get_num_sms() == 108 and CUDA("cuda").sm_version == 80
    assert driver.get_max_dynamic_shared_size_bytes(format="kb") == 163


def test_matmul_template_hints(tilelang):
    import tilelang.language as T
    from tilelang.carver.arch import CUDA
    from tilelang.carver.roller.rasterization import NoRasterization
    from tilelang.carver.template import MatmulTemplate

    template = MatmulTemplate(M=1024, N=1024, K=1024, in_dtype=T.float16, out_dtype=T.float16,
                              accum_dtype=T.float32).with_arch(CUDA("cuda"))
    assert "sum_k" in template.equivalent_function()
    hints = template.recommend_hints(topk=6)
    assert len(hints) == 6 and hints == sorted(hints, key=lambda h: h.cost)
    for hint in hints:
        block_m, block_n = hint.block
        warp_m, warp_n = hint.warp
        assert block_m % warp_m == 0 and block_n % warp_n == 0 and hint.rstep[0] in (32, 64, 128)
        assert hint.threads in (32, 128, 256) and hint.pipeline_stage >= 1
        stage_bytes = (block_m + block_n) * hint.rstep[0] * 2
        assert stage_bytes * hint.pipeline_stage <= template.arch.max_smem_usage
        assert hint.rasterization_plan is not NoRasterization


def test_utils_nvcc_fp8_dtypes(tilelang, monkeypatch):
    import torch
    from tilelang.contrib import nvcc
    from tilelang.language.dtypes import _TORCH_DTYPE_TO_STR, dtype
    from tilelang.language.fp8 import determine_fp8_type, determine_torch_fp8_type
    from tilelang.utils.tensor import TensorSupplyType, get_tensor_supply, torch_assert_close

    from tilelang_core.runtime.kernel import KernelParam

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    ones = get_tensor_supply(TensorSupplyType.One)(KernelParam("A", "float16", (4, 2)))
    assert ones.dtype == torch.float16 and ones.sum().item() == 8
    with pytest.raises(ValueError, match="symbolic"):
        get_tensor_supply(TensorSupplyType.Auto)(KernelParam("A", "float16", ("M", 2)))
    torch_assert_close(torch.ones(3), torch.ones(3) + 1e-4)
    near = torch.zeros(4000)
    near[0] = 1.0  # 1 of 4000 wrong: within TileLang's default ratio (int(4000 * 0.001) = 4 allowed)
    torch_assert_close(near, torch.zeros(4000))
    with pytest.raises(AssertionError):
        torch_assert_close(near[:999], torch.zeros(999))  # int(0.999) = 0 allowed
    with pytest.raises(AssertionError):
        torch_assert_close(near, torch.zeros(4000), max_mismatched_ratio=0.0)
    assert nvcc.get_target_compute_version() == "9.0" and nvcc.get_target_compute_version("sm_86") == "8.6"
    assert nvcc.parse_compute_version("8.9") == (8, 9) and nvcc.have_tma("sm_90a")
    assert determine_fp8_type() == "float8_e4m3fn" and determine_torch_fp8_type("e5m2") is torch.float8_e5m2
    assert _TORCH_DTYPE_TO_STR[torch.bfloat16] == "bfloat16" and dtype(torch.float16).bits == 16


def test_unsupported_features_raise_at_the_call(tilelang):
    from tilelang.cuda.intrinsics.layout.mma_layout import ldmatrix_32x8_to_shared_16x16_layout
    from tilelang.engine.callback import register_cuda_postproc_callback
    from tilelang.tools import plot_layout

    from tilelang_core.compat import UnsupportedFeatureError

    for call, feature in [(lambda: ldmatrix_32x8_to_shared_16x16_layout(0, 0), "ldmatrix_32x8_to_shared_16x16_layout"),
                          (lambda: register_cuda_postproc_callback(print), "register_cuda_postproc_callback"),
                          (lambda: plot_layout(None), "plot_layout")]:
        with pytest.raises(UnsupportedFeatureError, match=f"{feature}.*not supported by tilelang_core"):
            call()


def test_the_profilers_bench_module_times_with_do_bench(tilelang):
    from tilelang.profiler.bench import do_bench

    assert do_bench(lambda: sum(range(100)), warmup=1, rep=2) > 0


def test_simplify_prim_func_keeps_the_kernel(tilelang):
    from tilelang.transform import simplify_prim_func

    @simplify_prim_func
    def factory(n):
        return ("kernel", n)

    assert factory(3) == ("kernel", 3) and factory.__name__ == "factory"


@pytest.mark.tvm
def test_tilelang_tvm_is_apache_tvm_with_primexpr(tilelang):
    import tilelang.language as T
    from tilelang import tvm as tvm_alias
    from tvm import DataType, tirx

    import tvm

    assert tvm_alias is tvm and DataType(T.float16).bits == 16 and tilelang.DataType("int8").bits == 8
    assert callable(tvm.testing.requires_package)
    assert isinstance(tirx.const(3, "int32"), tirx.PrimExpr)
    assert issubclass(tvm.error.InternalError, tvm.TVMError)  # TileLang's tvm.TVMError catches 0.27's errors
    from tvm import arith  # TileLang's name of 0.27's tvm.sym

    assert arith.Analyzer().simplify(tirx.const(2, "int32") * 3).value == 6
    from tilelang_core import alias

    alias.uninstall_alias()
    assert not hasattr(tirx, "PrimExpr") and not hasattr(tvm.testing, "requires_package")
    assert not hasattr(tvm, "TVMError") and not hasattr(tvm, "arith") and not hasattr(tirx, "stmt_functor")


def test_sparse_layout_metadata_factors(tilelang):
    import tilelang.language as T
    from tilelang.cuda.intrinsics.sparse_layout import GROUP_CONFIG, get_e_factor, get_e_replicate_factor

    assert get_e_factor(T.float16, T.int16) == 16 and get_e_factor(T.int8, T.int32) == 32
    assert get_e_replicate_factor(T.int8) == 1 and get_e_replicate_factor(T.bfloat16) == 2
    assert GROUP_CONFIG[T.float32] == (1, 2)


def test_env_settings_through_the_module_too(tilelang, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", "/tmp/tl-cache")
    assert tilelang.env.TILELANG_CACHE_DIR == "/tmp/tl-cache"
    import tilelang.env as env_module

    assert env_module.TILELANG_CACHE_DIR == "/tmp/tl-cache" and env_module.TILELANG_TMP_DIR.startswith("/tmp/tl-cache")


def test_the_autotuners_param_module_imports_from_its_package_first():
    import subprocess
    import sys

    code = ("import tilelang_core; tilelang_core.install_alias(force=True)\n"
            "from tilelang.autotuner import param\n"  # before any `import tilelang.autotuner.param`
            "print(param.AutotuneResult.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "tilelang_core.runtime.autotune_param", out.stderr
