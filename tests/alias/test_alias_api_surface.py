"""TileLang's public names outside kernels under the alias: tilelang.env settings, PassConfigKey members, the
testing decorators, T.Var and host arithmetic on symbolic dims, vector dtypes, Layout/Fragment built on the host."""
from __future__ import annotations


import pytest


def test_env_settings_are_descriptors_with_forced_values(tilelang, monkeypatch, tmp_path):
    from tilelang.env import resolve_pass_profile_threshold_ms

    desc = type(tilelang.env).__dict__["TILELANG_CACHE_DIR"]
    assert desc._forced_value is None
    monkeypatch.delenv("TILELANG_TMP_DIR", raising=False)
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "a"))
    assert tilelang.env.TILELANG_TMP_DIR == str(tmp_path / "a" / "tmp")  # follows the cache folder
    try:
        tilelang.env.TILELANG_CACHE_DIR = str(tmp_path / "b")  # forced: wins over the environment
        assert tilelang.env.TILELANG_TMP_DIR == str(tmp_path / "b" / "tmp")
    finally:
        desc._forced_value = None
    monkeypatch.delenv("TILELANG_PRINT_ON_COMPILATION", raising=False)
    assert tilelang.env.TILELANG_PRINT_ON_COMPILATION == "1"
    monkeypatch.setenv("TILELANG_PASS_PROFILE_THRESHOLD_MS", " 2.5 ")
    assert tilelang.env.get_pass_profile_threshold_ms() == 2.5
    monkeypatch.setenv("TILELANG_PASS_PROFILE_THRESHOLD_MS", "nan")
    with pytest.raises(ValueError, match="finite non-negative"):
        tilelang.env.get_pass_profile_threshold_ms()
    key = tilelang.PassConfigKey.TL_PASS_PROFILE_THRESHOLD_MS
    assert resolve_pass_profile_threshold_ms({key: 0}, key, lambda: 10.0) == 0.0
    assert resolve_pass_profile_threshold_ms({}, key, lambda: 10.0) == 10.0


def test_pass_config_keys_are_strings_with_enum_fields(tilelang):
    key = tilelang.PassConfigKey.TL_DISABLE_TMA_LOWER
    assert key == "tl.disable_tma_lower" and key.value == "tl.disable_tma_lower"
    assert key.name == "TL_DISABLE_TMA_LOWER" and {key: 1} == {"tl.disable_tma_lower": 1}


def test_testing_decorators(tilelang):
    import tilelang.testing as tt

    def case():
        pass

    for deco in (tt.requires_rocm, tt.requires_metal, tt.requires_cdna, tt.requires_gfx950):
        def other():
            pass

        assert [m.name for m in deco(other).pytestmark] == ["skip"]
    marks = tt.requires_cuda_compute_version_gt(99, 0)(case).pytestmark
    assert marks[-1].name == "skipif" and marks[-1].args == (True,)
    assert callable(tt.requires_llvm) and callable(tt.requires_cuda_or_cdna)


def test_symbolic_values_on_the_host(tilelang):
    import tilelang.language as T

    m = T.dynamic("m")
    assert isinstance(m, T.Var)
    expr = (m * 2 + 1) // 4
    assert expr.op == "//" and expr.lhs.op == "+" and expr.lhs.lhs.op == "*"
    assert (3 - m).lhs == 3  # reflected operators keep the operand order
    scalar = T.int32()
    assert isinstance(scalar, T.Var) and scalar.dtype == "int32"
    assert (scalar & 0x7FFFFFFF).op == "&"
    with pytest.raises(TypeError):
        m * 1.5  # noqa: B018 -- integer arithmetic only


def test_vector_dtypes(tilelang):
    import tilelang.language as T

    assert T.float32x2 == "float32x2" and T.float32x2.lanes == 2 and T.float32x2.bits == 32  # per lane, as tvm
    assert T.bfloat16x2.bits == 16 and T.int8x4.lanes == 4
    with pytest.raises(AttributeError):
        T.float33x2  # noqa: B018


def test_host_layouts_compare_expand_and_size(tilelang):
    import tilelang.language as T
    from tilelang.layout import Layout, make_gemm_fragment_8x8
    from tilelang.layout.fragment import Fragment

    assert T.Layout is Layout and T.Fragment is Fragment
    base = Layout([16, 128], lambda j, k: j * 128 + k)
    assert base.is_equal(Layout([16, 128], lambda a, b: b + a * 128))  # same map, written differently
    assert not base.is_equal(Layout([16, 128], lambda j, k: k * 16 + j))
    expanded = base.expand([4])
    assert expanded.is_equal(Layout([4, 16, 128], lambda i, j, k: [i, j * 128 + k]))
    assert expanded.get_output_shape() == [4, 2048] and base.expand([]) is base
    with pytest.raises(ValueError):
        base.expand([-1])
    with pytest.raises(TypeError):
        base.expand("4")
    rep = Fragment([32, 4], forward_thread_fn=lambda i, j, r: i * 4 + r, replicate=4)
    assert not rep.is_equal(Fragment([32, 4], forward_thread_fn=lambda i, j, r: i * 4 + r, replicate=2))
    mma = make_gemm_fragment_8x8()
    assert mma.get_thread_size() == 32 and mma.get_output_shape() == [2]
    assert mma.is_equal(Fragment([8, 8], forward_thread_fn=lambda i, j: i * 4 + j // 2,
                                 forward_index_fn=lambda i, j: j % 2))


def test_dtype_helpers(tilelang):
    import tilelang.language as T
    from tilelang.language.dtypes import _all_dtypes, resolve_torch_storage_dtype

    assert "float16" in _all_dtypes and all(hasattr(T, name) for name in _all_dtypes)
    assert resolve_torch_storage_dtype(T.float16) == T.float16
    assert resolve_torch_storage_dtype(T.int4) == T.int8 and resolve_torch_storage_dtype(T.uint4) == T.uint8
