"""Autotuning on the CPU backend: `@autotune` over `@tilelang.jit` (search, explicit tuned arguments,
`.compile`, eager kernels with `set_autotune_inputs`) and `AutoTuner.from_kernel(...)...run()`."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

KERNELS = '''
import tilelang
import tilelang.language as T
from tilelang.autotuner import *


def scale_kernel(M, N, block_M=None, threads=None):
    @T.prim_func
    def scale(A: T.Tensor((M, N), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            tile = T.alloc_fragment((block_M, N), "float32")
            T.copy(A[bx * block_M, 0], tile)
            for i, j in T.Parallel(block_M, N):
                tile[i, j] = tile[i, j] * 3.0
            T.copy(tile, B[bx * block_M, 0])
    return scale


CONFIGS = [{"block_M": 16, "threads": 32}, {"block_M": 24, "threads": 32}, {"block_M": 32, "threads": 64}]


@autotune(configs=CONFIGS, warmup=1, rep=2)
@tilelang.jit(out_idx=[-1], target="cpu")
def tuned(M, N, block_M=16, threads=32):
    return scale_kernel(M, N, block_M, threads)


@tilelang.autotune(configs=[{"block": 8}, {"block": 16}], warmup=1, rep=2)
@tilelang.jit(target="cpu")
def eager_scale(X, block: int = 8):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), "float32")
    Y = T.empty((M, N), "float32")
    with T.Kernel(T.ceildiv(M, block), threads=32) as bx:
        tile = T.alloc_fragment((block, N), "float32")
        T.copy(X[bx * block, 0], tile)
        for i, j in T.Parallel(block, N):
            tile[i, j] = tile[i, j] * 2.0
        T.copy(tile, Y[bx * block, 0])
    return Y


@tilelang.autotune(configs=[{"block_M": 8}, {"block_M": 16}], do_not_specialize=["N"], warmup=1, rep=1)
@tilelang.jit(out_idx=[-1], target="cpu")
def wide(M, N, block_M=16):
    return scale_kernel(M, N, block_M, 32)


@tilelang.autotune(configs=[{"threads": 32}, {"threads": 64}], warmup=1, rep=1)
@tilelang.jit(target="cpu")
def add_scalar(M=64, threads=32):
    @T.prim_func
    def main(A: T.Tensor((M,), "float32"), s: T.float32):
        with T.Kernel(T.ceildiv(M, threads), threads=threads) as bx:
            for i in T.Parallel(threads):
                A[bx * threads + i] = A[bx * threads + i] + s
    return main
'''


@pytest.fixture(scope="module")
def mod(run_aliased):
    return run_aliased("tuned_kernels", KERNELS)


def test_autotuner_searches_and_skips_failing_configs(mod):
    from tilelang_core.compat.utils import TensorSupplyType
    from tilelang_core.runtime.autotune import AutoTuner

    with_pass_configs = {"block_M": 32, "threads": 32, "pass_configs": {"tl.disable_tma_lower": True}}
    configs = mod["CONFIGS"] + [with_pass_configs, {"block_M": 16, "threads": 32, "no_such_arg": 1}]
    tuner = (AutoTuner.from_kernel(kernel=lambda **cfg: mod["scale_kernel"](48, 8, **cfg), configs=configs)
             .set_compile_args(out_idx=[-1], target="cpu")
             .set_profile_args(supply_type=TensorSupplyType.Auto, ref_prog=lambda a: a * 3, skip_check=False))
    result = tuner.run(warmup=1, rep=2)
    assert result.config in configs[:-1] and result.latency > 0
    assert len(result.timings) == 4 and [cfg for cfg, _ in result.failures] == [configs[-1]]
    a = torch.randn(48, 8)
    torch.testing.assert_close(result.kernel(a), a * 3)
    assert "define" in result.libcode


def test_autotuner_raises_the_first_error_when_every_config_fails(mod):
    from tilelang_core.runtime.autotune import AutoTuner

    tuner = AutoTuner.from_kernel(lambda **cfg: mod["scale_kernel"](32, 8, **cfg), configs=[{"bad": 1}, {"bad": 2}])
    with pytest.raises(TypeError, match="bad") as info:
        tuner.set_compile_args(out_idx=[-1], target="cpu").run(warmup=1, rep=1)
    assert "all 2 configs failed" in "".join(info.value.__notes__)


def test_wrong_results_disqualify_a_config(mod):
    from tilelang_core.runtime.autotune import AutoTuner

    tuner = (AutoTuner.from_kernel(lambda **cfg: mod["scale_kernel"](32, 8, **cfg), configs=mod["CONFIGS"][:1])
             .set_compile_args(out_idx=[-1], target="cpu").set_profile_args(ref_prog=lambda a: a * 2))
    with pytest.raises(AssertionError):
        tuner.run(warmup=1, rep=1)


def test_decorator_tunes_once_and_compiles_explicit_arguments_directly(mod):
    tuned = mod["tuned"]
    kernel = tuned(40, 8)
    assert tuned(40, 8) is kernel  # tuned once per argument set
    assert kernel.config in mod["CONFIGS"] and kernel.latency > 0
    a = torch.randn(40, 8)
    torch.testing.assert_close(kernel(a), a * 3)
    explicit = tuned(40, 8, 24, threads=32)  # a tuned argument given positionally: no search, no clash
    torch.testing.assert_close(explicit(a), a * 3)
    assert tuned.compile(40, 8, block_M=16).get_kernel_source()


def test_eager_kernel_tunes_on_its_call_and_on_autotune_inputs(mod):
    from tilelang_core.runtime.autotune import set_autotune_inputs

    x = torch.randn(32, 4)
    torch.testing.assert_close(mod["eager_scale"](x), x * 2)
    with set_autotune_inputs(x):
        kernel = mod["eager_scale"].compile()
    torch.testing.assert_close(kernel(x), x * 2)
    by_dims = mod["eager_scale"].compile(M=32, N=4)  # no inputs given: random ones of the declared shapes
    torch.testing.assert_close(by_dims(x), x * 2)
    assert by_dims.config in ({"block": 8}, {"block": 16})


def test_the_tuner_cache_has_one_entry_per_specialisation(mod):
    wide = mod["wide"]
    wide._tuner_cache.clear()
    first = wide(32, 8)
    assert len(wide._tuner_cache) == 1 and first.config in ({"block_M": 8}, {"block_M": 16})
    other_n = wide(32, N=12)  # N is in do_not_specialize: no new search, the same config built for N=12
    assert len(wide._tuner_cache) == 1 and other_n.config == first.config
    a = torch.randn(32, 12)
    torch.testing.assert_close(other_n(a), a * 3)
    wide(M=64, N=8)  # M specialises: a new entry
    wide(32, 8, block_M=8)  # a tuned argument given: an entry of its own (that instance, no search)
    assert len(wide._tuner_cache) == 3
    wide(M=32, N=8)  # the first call's specialisation, written with keywords
    assert len(wide._tuner_cache) == 3


def test_do_not_specialize_must_name_parameters(mod):
    from tilelang_core.runtime.autotune import autotune

    with pytest.raises(ValueError, match=r"'P', which is not a parameter of wide\(M, N, block_M\)"):
        autotune(configs=[{"block_M": 8}], do_not_specialize=["P"])(mod["wide"].target)


def test_an_eager_kernel_is_tuned_once_per_tensor_shape(mod):
    eager = mod["eager_scale"]
    eager._tuner_cache.clear()
    eager(torch.randn(32, 4)), eager(torch.randn(32, 4))
    assert len(eager._tuner_cache) == 1  # new tensors of the same shape and dtype: the same specialisation
    eager(torch.randn(16, 4))
    assert len(eager._tuner_cache) == 2


def test_a_scalar_parameter_needs_set_autotune_inputs(mod, monkeypatch):
    from tilelang_core.runtime.autotune import set_autotune_inputs

    monkeypatch.setenv("TILELSP_AUTOTUNE_CACHE", "0")  # a best config remembered by an earlier run needs no inputs
    with pytest.raises(ValueError, match=r"scalar parameter\(s\) 's'.*set_autotune_inputs"):
        mod["add_scalar"]()
    a = torch.randn(64)
    with set_autotune_inputs(a.clone(), 0.5):
        kernel = mod["add_scalar"]()
    b = a.clone()
    kernel(b, 0.5)
    torch.testing.assert_close(b, a + 0.5)


def test_autotuner_over_a_jit_factory(mod):
    from tilelang_core.runtime.autotune import AutoTuner

    factory = mod["tuned"].target
    result = AutoTuner.from_kernel(lambda **cfg: factory(24, 8, **cfg), configs=mod["CONFIGS"][:2]).run(1, 1)
    assert result.kernel.config == result.config and result.kernel(torch.ones(24, 8)).sum().item() == 24 * 8 * 3


def test_configs_from_a_function_of_the_call_arguments(mod):
    from tilelang_core.runtime.autotune import autotune

    seen = []

    def configs(M, N):
        seen.append((M, N))
        return {"block_M": [M // 2], "threads": [32]}  # a dict of lists: its product

    kernel = autotune(configs=configs, warmup=1, rep=1)(mod["tuned"].target)(16, 8)
    assert seen == [(16, 8)] and kernel.config == {"block_M": 8, "threads": 32}


def test_autotune_needs_configs():
    from tilelang_core.runtime.autotune import autotune

    with pytest.raises(TypeError, match="configs"):
        autotune()(lambda: None)


def test_star_import_exports_the_public_names_only():
    import tilelang_core.runtime.autotune as A

    names: dict = {}
    exec("from tilelang_core.runtime.autotune import *", names)
    assert {"autotune", "AutoTuner", "set_autotune_inputs"} <= set(names) and "compile" not in names
    assert set(A.__all__) <= set(names)


def test_the_cache_key_covers_compile_and_profile_arguments_and_skips_unnamed_callbacks(mod):
    import inspect
    from dataclasses import replace

    from tilelang_core.runtime.autotune import AutoTuner
    from tilelang_core.runtime.autotune_param import CompileArgs, ProfileArgs

    factory = mod["tuned"].target

    def key(compile_args=CompileArgs(), profile_args=ProfileArgs()):
        tuner = AutoTuner(factory, configs=mod["CONFIGS"])
        tuner.compile_args, tuner.profile_args = compile_args, profile_args
        return tuner.generate_cache_key(inspect.signature(factory.factory).parameters, {})

    base = key()
    assert base is not None and base == key()
    assert base != key(compile_args=CompileArgs(out_idx=[0]))
    assert base != key(profile_args=replace(ProfileArgs(), skip_check=True))
    assert base != key(profile_args=ProfileArgs(atol=1e-3))
    scale = 3.0
    assert key(profile_args=ProfileArgs(ref_prog=lambda a: a * scale)) is None  # no source of its own
    named = key(profile_args=ProfileArgs(ref_prog=mod["scale_kernel"]))  # a module-level function: by its source
    assert named is not None and named != base


def test_a_cpu_autotune_result_is_saved_to_a_folder_atomically(mod, tmp_path, caplog):
    import json
    import pickle

    from tilelang_core.runtime import autotune_param as param

    kernel = mod["tuned"](40, 8)
    result = param.AutotuneResult(latency=kernel.latency, config=kernel.config, func=kernel.prim_func,
                                  kernel=kernel)
    assert kernel.adapter is kernel.adapter and kernel.execution_backend == "ctypes"
    target = tmp_path / "autotuner" / "entry"
    target.mkdir(parents=True)
    (target / "stale.txt").write_text("from an older save")
    result.save_to_disk(target)
    assert json.loads((target / param.BEST_CONFIG_PATH).read_text()) == kernel.config
    assert (target / param.KERNEL_LIB_PATH).read_bytes() == open(kernel.adapter.libpath, "rb").read()
    assert (target / param.DEVICE_KERNEL_PATH).read_text() == kernel.get_kernel_source()
    assert [p.name for p in pickle.loads((target / param.PARAMS_PATH).read_bytes())] == ["A", "B"]
    assert not (target / "stale.txt").exists() and sorted(p.name for p in target.parent.iterdir()) == ["entry"]

    broken = param.AutotuneResult(config={"x": 1}, func=kernel.prim_func, kernel=object())  # no kernel to save
    with caplog.at_level("ERROR", logger="tilelang_core.autotune"):
        broken.save_to_disk(tmp_path / "autotuner" / "other")
    assert "Error during atomic autotune result save" in caplog.text
    assert sorted(p.name for p in target.parent.iterdir()) == ["entry"]  # no folder, no staging left


def test_each_kernel_has_its_own_adapter(mod):
    first, second = mod["tuned"](40, 8), mod["tuned"](48, 8)
    assert first.adapter.kernels is not second.adapter.kernels
    assert list(first.adapter.kernels) == [first.name] and first.adapter.get_host_source() == ""
