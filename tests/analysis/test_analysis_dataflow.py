"""The whole-kernel data-flow rules on small kernels: large grids (the affine path), gaps and overlaps between
blocks, identical blocks, a K loop that reads twice, warp-specialised roles, 64-bit arithmetic."""
from __future__ import annotations

from tilelang_core import check_source

HEAD = "import tilelang\nimport tilelang.language as T\n\n"


def found(body: str) -> list[tuple[str, str]]:
    """(code, message) of every warning or error the check reports on a kernel source."""
    r = check_source(HEAD + body, "k.py")
    assert r.kernels
    return [(d.code, d.message) for d in r.diagnostics if d.severity.value in ("error", "warning")]


def codes(body: str) -> list[str]:
    return sorted(c for c, _ in found(body))


def test_large_grid_sized_with_floor_division_misses_the_tail():
    src = '''
@T.prim_func
def k(X: T.Tensor((1000000,), T.float32), Y: T.Tensor((1000000,), T.float32)):
    with T.Kernel(1000000 // 256, threads=256) as bx:
        for i in T.Parallel(256):
            Y[bx * 256 + i] = X[bx * 256 + i]
'''
    (hit,) = found(src)
    assert hit[0] == "output-not-covered" and "999936..999999" in hit[1]
    assert codes(src.replace("1000000 // 256", "T.ceildiv(1000000, 256)")) == []


def test_tiles_narrower_than_the_block_step_leave_gaps():
    src = '''
@T.prim_func
def k(X: T.Tensor((256, 64), T.float32), Y: T.Tensor((256, 64), T.float32)):
    with T.Kernel(4, threads=128) as bx:
        T.copy(X[bx * 64:bx * 64 + 32, 0:64], Y[bx * 64:bx * 64 + 32, 0:64])
'''
    (hit,) = found(src)
    assert hit[0] == "output-not-covered" and "rows 32..63" in hit[1] and "gaps" in hit[1]


def test_overlapping_tiles_of_neighbouring_blocks_race():
    src = '''
@T.prim_func
def k(X: T.Tensor((512, 64), T.float32), Y: T.Tensor((512, 64), T.float32)):
    with T.Kernel(4, threads=128) as bx:
        T.copy(X[bx * 64:bx * 64 + 128, 0:64], Y[bx * 64:bx * 64 + 128, 0:64])
'''
    assert "cross-block-race" in codes(src)
    assert "64 elements are written by two blocks" in dict(found(src))["cross-block-race"]


def test_identical_blocks_are_not_a_race_but_a_block_index_ignored_by_the_output_is():
    same = '''
@T.prim_func
def k(X: T.Tensor((64,), T.float32), Y: T.Tensor((64,), T.float32)):
    with T.Kernel(8, threads=64) as bx:
        for i in T.Parallel(64):
            Y[i] = X[i] * 2.0
'''
    assert codes(same) == []
    differs = same.replace("X[i] * 2.0", "X[i] * bx")
    assert codes(differs) == ["cross-block-race"]


def test_k_loop_that_reads_part_of_k_twice():
    src = '''
@T.prim_func
def k(A: T.Tensor((128, 256), T.float16), B: T.Tensor((256, 128), T.float16), C: T.Tensor((128, 128), T.float32)):
    with T.Kernel(2, 2, threads=128) as (bx, by):
        A_s = T.alloc_shared((64, 64), T.float16)
        B_s = T.alloc_shared((64, 64), T.float16)
        C_l = T.alloc_fragment((64, 64), T.float32)
        T.clear(C_l)
        for k in T.Pipelined(8):
            T.copy(A[by * 64, k * 32], A_s)
            T.copy(B[k * 32, bx * 64], B_s)
            T.gemm(A_s, B_s, C_l)
        T.copy(C_l, C[by * 64, bx * 64])
'''
    hits = [m for c, m in found(src) if c == "reduction-axis-step"]
    assert len(hits) == 2 and "summed twice" in hits[0]


def test_warp_specialised_consumer_reads_what_the_producer_writes_later_in_the_text():
    src = '''
@T.prim_func
def k(X: T.Tensor((256, 64), T.float32), Y: T.Tensor((256, 64), T.float32)):
    with T.Kernel(4, threads=256) as bx:
        tx = T.get_thread_binding()
        S = T.alloc_shared((64, 64), T.float32)
        if tx >= 128:
            for i, j in T.Parallel(64, 64):
                Y[bx * 64 + i, j] = S[i, j]
        else:
            T.copy(X[bx * 64, 0], S)
'''
    assert "uninitialized-read" not in codes(src)


def test_int32_overflow_only_when_the_arithmetic_stays_32_bit():
    src = '''
@T.prim_func
def k(X: T.Tensor((65536, 1024), T.float16)):
    with T.Kernel(65536, threads=128) as bx:
        off = bx * 65536 * 64
        for i in T.Parallel(1024):
            X[off // 4194304, i] = X[off // 4194304, i] * 2.0
'''
    assert codes(src) == ["index-overflow"]
    assert codes(src.replace("bx * 65536 * 64", "T.cast(bx, T.int64) * 65536 * 64")) == []


def test_roles_that_each_load_every_other_k_tile_cover_k_between_them():
    src = '''
@T.prim_func
def k(A: T.Tensor((64, 512), T.float16), B: T.Tensor((512, 64), T.float16), C: T.Tensor((64, 64), T.float32)):
    with T.Kernel(1, threads=256) as bx:
        tx = T.get_thread_binding()
        A_s = T.alloc_shared((64, 64), T.float16)
        B_s = T.alloc_shared((64, 64), T.float16)
        acc = T.alloc_fragment((64, 64), T.float32)
        T.clear(acc)
        for k in T.serial(4):
            if tx < 128:
                T.copy(A[0, (2 * k) * 64], A_s)
                T.copy(B[(2 * k) * 64, 0], B_s)
            else:
                T.copy(A[0, (2 * k + 1) * 64], A_s)
                T.copy(B[(2 * k + 1) * 64, 0], B_s)
            T.gemm(A_s, B_s, acc)
        T.copy(acc, C)
'''
    assert "reduction-axis-step" not in codes(src)
    one_role = src[:src.index("            else:")] + src[src.index("            T.gemm"):]
    assert "reduction-axis-step" in codes(one_role.replace("if tx < 128:", "if k < 99:"))


def test_in_place_update_reading_a_part_no_block_writes_is_no_hazard():
    src = '''
@T.prim_func
def k(X: T.Tensor((256, 128), T.float32)):
    with T.Kernel(4, threads=128) as bx:
        tile = T.alloc_fragment((64, 64), T.float32)
        T.copy(X[0:64, 64:128], tile)
        T.copy(tile, X[bx * 64:bx * 64 + 64, 0:64])
'''
    assert "inplace-hazard" not in codes(src)
    assert "inplace-hazard" in codes(src.replace("X[0:64, 64:128]", "X[0:64, 0:64]"))


def test_every_block_filling_the_same_region_with_a_constant_is_no_race():
    src = '''
@T.prim_func
def k(X: T.Tensor((256, 64), T.float32), Y: T.Tensor((256, 64), T.float32), Z: T.Tensor((64,), T.float32)):
    with T.Kernel(4, threads=128) as bx:
        T.fill(Z[0:64], 0)
        T.copy(X[bx * 64:bx * 64 + 64, 0:64], Y[bx * 64:bx * 64 + 64, 0:64])
'''
    assert "cross-block-race" not in codes(src)


def test_row_sum_over_tiles_whose_offset_skips_columns():
    src = '''
@T.prim_func
def k(X: T.Tensor((128, 512), T.float32), Y: T.Tensor((128,), T.float32)):
    with T.Kernel(2, threads=128) as bx:
        tile = T.alloc_fragment((64, 32), T.float32)
        s = T.alloc_fragment((64,), T.float32)
        T.clear(s)
        for k in T.serial(8):
            T.copy(X[bx * 64, k * 64], tile)
            T.reduce_sum(tile, s, dim=1, clear=False)
        T.copy(s, Y[bx * 64])
'''
    hits = [m for c, m in found(src) if c == "reduction-axis-step"]
    assert len(hits) == 1 and "32 of every 64" in hits[0]
    assert "reduction-axis-step" not in codes(src.replace("k * 64", "k * 32").replace("T.serial(8)", "T.serial(16)"))


def test_race_follows_what_the_stored_tile_holds():
    src = '''
@T.prim_func
def k(X: T.Tensor((256, 64), T.float32), Y: T.Tensor((256, 64), T.float32), M: T.Tensor((64,), T.float32)):
    with T.Kernel(4, threads=128) as bx:
        S = T.alloc_shared((64,), T.float32)
        T.copy(X[0, 0:64], S)
        for i in T.Parallel(64):
            M[i] = S[i]
        T.copy(X[bx * 64:bx * 64 + 64, 0:64], Y[bx * 64:bx * 64 + 64, 0:64])
'''
    assert "cross-block-race" not in codes(src)  # every block stores the same row 0
    assert "cross-block-race" in codes(src.replace("X[0, 0:64]", "X[bx, 0:64]"))


def _apply(text: str, fix) -> str:
    lines = text.splitlines(keepends=True)
    (edit,) = fix.edits
    assert edit.span.col == 0 and edit.span.end_line == edit.span.line
    lines.insert(edit.span.line - 1, edit.new_text)
    return "".join(lines)


def test_the_quick_fix_initialises_the_accumulator_before_its_loop():
    from pathlib import Path

    for name in ("uninitialized_accumulator.py", "uninitialized_reduce.py"):
        path = Path(__file__).resolve().parents[2] / "examples" / "errors" / name
        text = path.read_text()
        (d,) = [d for d in check_source(text, str(path)).diagnostics if d.code == "uninitialized-read"]
        fixed = _apply(text, d.fix)
        assert [x.code for x in check_source(fixed, str(path)).diagnostics if x.is_error] == []
        assert ("T.clear(C_local)" in fixed) if "accumulator" in name else ('T.fill(m, -T.infinity("float32"))' in fixed)


def test_an_output_written_at_fixed_positions_only_is_a_warning():
    src = '''
@tilelang.jit(out_idx=[1])
def f(M=128, N=128):
    @T.prim_func
    def k(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float32)):
        with T.Kernel(1, threads=128):
            T.copy(X[:, 0:2], Y[:, 0:2])
    return k

f()
'''
    r = check_source(HEAD + src, "k.py")
    (d,) = [d for d in r.diagnostics if d.code == "output-not-covered"]
    assert d.severity.value == "warning" and "fixed positions" in d.message and not r.errors
