"""The hover's CUDA excerpt of a statement: the first place it was emitted, with long index arithmetic as `…`."""
from __future__ import annotations

from tilelsp.features.cuda_excerpt import elide_arithmetic, runs, statement_excerpt

WAIT = ("tl::mbar_wait((&(((uint64_t*)smem_ptr)[(((((tile_i_1 * 8) + ko_i_2) + 1) % 3) + 6144)])), "
        "((((tile_i_1 * 8) + ko_i_2) + 1) % 6) / 3);")


def test_long_index_arithmetic_is_elided_but_calls_casts_and_addresses_stay():
    assert elide_arithmetic(WAIT) == "tl::mbar_wait((&(((uint64_t*)smem_ptr)[…])), (…) / 3);"
    # short subscripts and terms stay as written; so do template arguments and a call's argument list
    assert elide_arithmetic("tl::wgmma_wait_fenced<1, 128>((&(C_local_ptr[0])));") == \
        "tl::wgmma_wait_fenced<1, 128>((&(C_local_ptr[0])));"
    assert elide_arithmetic("x = f(a + b, sk_ptr[3] / 8);") == "x = f(a + b, sk_ptr[3] / 8);"
    assert elide_arithmetic("for (int i = 0; i < ((sk_ptr[7] - sk_ptr[6]) - 1); ++i) {") == \
        "for (int i = 0; i < (…); ++i) {"
    assert elide_arithmetic("unbalanced (a + b") == "unbalanced (a + b"


def test_the_first_run_is_shown_and_the_other_runs_counted():
    assert runs([3, 4, 5, 9, 10, 12]) == [[3, 4, 5], [9, 10], [12]]
    cuda = ["  // tilelang source line 7", "  tl_gemm_0(a, b, c);", "  " + WAIT, "  x = 1;",
            "  // tilelang source line 7", "  tl_gemm_1(a, b, c);", "  tl_gemm_2(a, b, c);"]
    shown, body, more_lines, more_places = statement_excerpt(cuda, [1, 2, 3, 5, 6, 7])
    assert shown == [2, 3] and body[0] == "tl_gemm_0(a, b, c);" and body[1].startswith("tl::mbar_wait((&(")
    assert "[…]" in body[1] and (more_lines, more_places) == (2, 1)
    assert statement_excerpt(cuda, [1]) == ([], [], 0, 0)  # only the marker comment: nothing to show
