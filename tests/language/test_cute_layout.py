"""`tilelang.layout.cute`: CuTe integer tuples, layout evaluation and algebra, and recovery of affine and swizzled
layouts from host-built TileLang layouts; plus the host bank swizzles and `Layout.repeat` they are checked on."""
from __future__ import annotations

import itertools

import pytest

from tilelang_core.language import cute
from tilelang_core.language.bank_swizzle import (make_full_bank_swizzled_layout, make_half_bank_swizzled_layout,
                                                 make_mma_swizzle_layout, make_quarter_bank_swizzled_layout)
from tilelang_core.language.host_layout import Layout as HostLayout


class _Buffer:
    """A shared buffer as the swizzle makers read it: a shape and a dtype."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


def _same_function(a, b):
    assert cute.size(a) == cute.size(b)
    assert all(a(i) == b(i) for i in range(cute.size(b)))


def test_int_tuples_add_componentwise_and_bases_become_coordinates():
    assert cute.to_python(cute.from_python([2, 3]) + cute.from_python([10])) == (12, 3)
    assert cute.to_python(cute.from_python(cute.E(0)) + cute.from_python(cute.E(1))) == (1, 1)
    assert cute.to_python(3 * cute.from_python(cute.E(1))).mode == (1,)
    assert str(cute.from_python(cute.ScaledBasis(2, (1, 0)))) == "2@0@1"


def test_layout_text_round_trips():
    for text in ("((2,(3,4)),5):((1,(2,6)),24)", "(8,8):(1@0,1@1)", "7:3"):
        assert str(cute.Layout.parse(text)) == text
    assert str(cute.Swizzle.parse("Sw<2,4,3>")) == "Sw<2,4,3>"
    with pytest.raises(ValueError, match="shape:stride"):
        cute.Layout.parse("(8,8)")


def test_evaluation_runs_the_last_mode_without_wrapping():
    L = cute.make_layout((4, (2, 3)), stride=(3, (1, 12)))
    assert [L(c) for c in range(4)] == [0, 3, 6, 9]
    assert L((1, (1, 2))) == 3 + 1 + 24
    assert L(24) == L((0, (0, 3)))  # past the domain: the last mode keeps counting
    assert cute.make_identity_layout((2, 3))(5) == (1, 2)


@pytest.mark.parametrize("shape,stride", [((2, 4, 6), (1, 2, 8)), (((2, 2), (2, 2)), ((1, 4), (8, 32))),
                                          ((3, 1, 5), (5, 9, 1))])
def test_coalesce_and_inverses_keep_their_defining_properties(shape, stride):
    L = cute.make_layout(shape, stride=stride)
    _same_function(cute.coalesce(L), L)
    inv = cute.right_inverse(L)
    assert all(L(inv(i)) == i for i in range(cute.size(inv)))
    left = cute.left_inverse(L)
    assert all(left(L(i)) == i for i in range(cute.size(L)))


def test_coalesce_fuses_contiguous_modes():
    assert str(cute.coalesce(cute.make_layout((2, 2, 2), stride=(1, 2, 4)))) == "8:1"
    assert str(cute.coalesce(cute.make_layout((1, 1), stride=(5, 7)))) == "1:0"
    assert str(cute.coalesce(cute.make_layout(((2, 2), (2, 2)), stride=((1, 4), (8, 32))))) == "(2,4,2):(1,4,32)"


@pytest.mark.parametrize("a,b", [(((12,), (1,)), ((4, 3), (3, 1))), (((4, 3), (3, 1)), ((6, 2), (2, 1))),
                                 (((8, 8), (8, 1)), (((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32))))])
def test_composition_is_function_composition(a, b):
    A, B = cute.make_layout(*a), cute.make_layout(*b)
    R = cute.composition(A, B)
    assert cute.size(R) == cute.size(B)
    assert all(R(i) == A(B(i)) for i in range(cute.size(B)))


def test_complement_divide_and_products():
    assert str(cute.complement(cute.make_layout(4, stride=1), 24)) == "6:4"
    assert str(cute.logical_divide(cute.make_layout(128, stride=4), cute.make_layout(8, stride=1))) == "(8,16):(4,32)"
    atom, outer = cute.make_layout((128, 16)), cute.make_layout((2, 4))
    assert str(cute.logical_product(atom, outer)) == "((128,16),(2,4)):((1,128),(2048,4096))"
    assert str(cute.tiled_product(atom, outer)) == "((128,16),2,4):((1,128),2048,4096)"
    assert str(cute.blocked_product(cute.make_layout((2, 5), stride=(5, 1)), cute.make_layout((3, 4)))) \
        == "((2,3),(5,4)):((5,10),(1,30))"
    assert cute.cosize(cute.make_layout((4, 2), stride=(1, 8))) == 12
    assert cute.coshape(cute.make_layout(((16, 4), 32), stride=((cute.E(0), 32 * cute.E(0)), cute.E(1)))) == (112, 32)
    assert cute.compatible((2, 3), ((1, 2), 3)) and not cute.compatible(((1, 2), 3), (2, 3))


def test_dynamic_strides_are_rejected_by_rank_two_complement():
    tvm = pytest.importorskip("tvm")
    s = tvm.tirx.Var("s", "int32")
    with pytest.raises(ValueError, match="rank-1"):
        cute.complement(cute.make_layout((4, 8), stride=(s, 1)), 1024)


def test_affine_and_hierarchical_recovery():
    flat = cute.Layout.from_tilelang(HostLayout((16, 128), lambda i, j: i * 128 + j))
    assert str(flat) == "(16,128):(128,1)"
    assert cute.Layout.from_tilelang(HostLayout((8, 8), lambda i, j: i * j)) is None
    hier = cute.Layout.from_tilelang_hierarchical(HostLayout((8, 16), lambda i, j: [i, (j // 4) * 8 + j % 4]))
    assert all(hier((i, j)) == (i, (j // 4) * 8 + j % 4) for i in range(8) for j in range(16))
    assert cute.Layout.from_tilelang_hierarchical(HostLayout((4, 4), lambda i, j: [i + j, j])) is None


@pytest.mark.parametrize("b,m,s", [(1, 0, 1), (2, 2, 3), (3, 4, 3), (3, 3, 4)])
def test_swizzle_recovery_is_exact(b, m, s):
    sw = cute.Swizzle(b, m, s)
    rows = 1 << max(m + s + b + 1 - 3, 0)
    composed = cute.ComposedLayout.from_tilelang(HostLayout((rows, 8), lambda i, j: sw(4096 + i * 8 + j)))
    assert str(composed.swizzle) == str(sw) and composed.offset == 4096
    assert all(composed((i, j)) == sw(4096 + i * 8 + j) for i, j in itertools.product(range(rows), range(8)))


@pytest.mark.parametrize("maker,b", [(make_quarter_bank_swizzled_layout, 1), (make_half_bank_swizzled_layout, 2),
                                     (make_full_bank_swizzled_layout, 3)])
@pytest.mark.parametrize("dtype", ["int8", "float16", "float32"])
def test_bank_swizzles_are_sw_b_4_3_in_bytes(maker, b, dtype):
    bits = {"int8": 8, "float16": 16, "float32": 32}[dtype]
    buf = _Buffer((8, (128 // bits) * (1 << b)), dtype)
    composed = cute.ComposedLayout.from_tilelang(maker(buf), buf)
    assert (composed.swizzle.b_bits, composed.swizzle.m_base, composed.swizzle.s_shift) == (b, 4, 3)
    # a bank swizzle is a permutation of the tile
    addresses = {composed((i, j)) for i in range(8) for j in range(buf.shape[1])}
    assert len(addresses) == 8 * buf.shape[1]


def test_bank_swizzle_leading_dims_and_errors():
    base = make_full_bank_swizzled_layout(_Buffer((8, 64), "float16"))
    assert make_full_bank_swizzled_layout(_Buffer((3, 8, 64), "float16")).is_equal(base.expand([3]))
    with pytest.raises(ValueError, match="divisible"):
        make_full_bank_swizzled_layout(_Buffer((8, 40), "float16"))
    smooth = cute.ComposedLayout.from_tilelang(make_mma_swizzle_layout(_Buffer((16, 64), "float16"), is_smooth=True))
    assert not smooth.swizzle.is_swizzled
    wide = make_mma_swizzle_layout(_Buffer((128, 192), "float16"))
    assert str(cute.ComposedLayout.from_tilelang(wide).swizzle) == "Sw<3,3,3>"


def test_recast_moves_m_base():
    composed = cute.ComposedLayout(cute.Swizzle(3, 3, 3), 0, cute.make_layout(64))
    assert str(composed.recast(16, 8).swizzle) == "Sw<3,4,3>"
    assert str(composed.recast(8, 16).swizzle) == "Sw<3,2,3>"


def test_layout_repeat_tiles_a_dim():
    atom = HostLayout((8, 64), lambda i, j: i * 64 + j)
    repeated = atom.repeat(dim=-2, factor=2)
    assert repeated.is_equal(HostLayout((16, 64), lambda i, j: [i // 8, (i % 8) * 64 + j]))
    assert atom.repeat(0, 1) is atom
    with pytest.raises(ValueError, match="dim"):
        atom.repeat(2, 2)
    with pytest.raises(ValueError, match="factor"):
        atom.repeat(0, 0)


@pytest.mark.parametrize("kind,mode,sbo", [("full", "SWIZZLE_128B", 64), ("half", "SWIZZLE_64B", 32),
                                           ("quarter", "SWIZZLE_32B", 16)])
def test_gmma_descriptor_of_a_k_major_tile(kind, mode, sbo):
    from tilelang_core.language.bank_swizzle import bank_swizzled_layout
    from tilelang_core.language.gmma_descriptor import compute_gmma_descriptor
    from tilelang_core.language.layout import SwizzleMode

    buf = _Buffer((64, 256), "float16")
    params = compute_gmma_descriptor(bank_swizzled_layout(buf, kind), buf, transposed=False)
    assert params.swizzle_mode is SwizzleMode[mode]
    assert (params.leading_byte_offset, params.stride_byte_offset) == (1, sbo)


def test_gmma_descriptor_of_an_mn_major_tile_steps_between_atoms():
    from tilelang_core.language.gmma_descriptor import compute_gmma_descriptor
    from tilelang_core.language.layout import SwizzleMode

    one_atom, two_atoms = _Buffer((64, 64), "float16"), _Buffer((64, 128), "float16")
    single = compute_gmma_descriptor(make_full_bank_swizzled_layout(one_atom), one_atom, transposed=True)
    double = compute_gmma_descriptor(make_full_bank_swizzled_layout(two_atoms), two_atoms, transposed=True)
    assert (single.leading_byte_offset, single.stride_byte_offset) == (0, 64)
    assert (double.leading_byte_offset, double.stride_byte_offset) == (64 * 128 // 16, 64)  # 64 K-rows of 128 B
    assert SwizzleMode.SWIZZLE_128B.wgmma_layout_type() == 1 and SwizzleMode.NONE.wgmma_layout_type() == 0
    with pytest.raises(ValueError, match="bank swizzle"):
        compute_gmma_descriptor(HostLayout((64, 64), lambda i, j: i * 64 + j), one_atom)


def test_recovery_rejects_what_is_not_a_tilelang_layout():
    with pytest.raises(TypeError, match="TileLang layout"):
        cute.ComposedLayout.from_tilelang(cute.make_layout(8))
    with pytest.raises(ValueError, match="byte-space"):
        cute.ComposedLayout.from_tilelang(HostLayout((8, 8), lambda i, j: i * 8 + j), _Buffer((8, 8), "int4"))
