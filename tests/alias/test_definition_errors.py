"""Under the alias `@T.prim_func` raises the errors TileLang's parser raises when it runs, each a CompileError that
is also TileLang's Python error (ValueError, AssertionError, RuntimeError), with its code, at the user's line."""
from __future__ import annotations

import pickle

import pytest

from tilelang_core.diagnostics import CompileError

KERNELS = '''
import tilelang.language as T


def memory_order(op, order):
    @T.prim_func
    def k(A: T.Tensor((1,), T.int32), B: T.Tensor((1,), T.int32)):
        with T.Kernel(1, threads=1):
            if op == "load":
                B[0] = T.atomic_load(A[0], memory_order=order)
            elif op == "store":
                T.atomic_store(B[0], 1, memory_order=order)
            else:
                T.atomic_add(B[0], A[0], memory_order=order)
    return k


def var_init(value):
    @T.prim_func
    def k(A: T.Tensor((1,), T.float32)):
        with T.Kernel(1):
            v = T.alloc_var(T.float32, init=value)
            A[0] = v
    return k


def sliced(step):
    @T.prim_func
    def k(A: T.Tensor((10,), T.int32), B: T.Tensor((5,), T.int32)):
        with T.Kernel(1):
            B[0] = A[0:10:step][0]
    return k


def reshaped(rows, cols, dtype):
    @T.prim_func
    def k(A: T.Tensor((1024,), T.float32), B: T.Tensor((rows, cols), dtype)):
        with T.Kernel(1):
            A_r = T.view(A, [rows, cols], dtype=dtype)
            T.copy(A_r, B)
    return k


def reducer(dtype):
    @T.prim_func
    def k(A: T.Tensor((8,), dtype)):
        with T.Kernel(1, threads=32):
            acc = T.alloc_reducer((1,), dtype, op="bitand")
            A[0] = acc[0]
    return k


def refused_later():
    @T.prim_func
    def k(A: T.Tensor((8,), T.float32)):
        with T.Kernel(1, threads=32):
            T.no_such_builtin(A)
    return k


def tma_from_global():
    @T.prim_func
    def k(A: T.Tensor((4, 8), T.float32), B: T.Tensor((4, 8), T.float32)):
        with T.Kernel(1):
            T.atomic_add(B, A, use_tma=True)
    return k
'''


@pytest.fixture(scope="module")
def mod(run_aliased):
    return run_aliased("definition_kernels", KERNELS)


@pytest.mark.parametrize("factory,args,error,code,match", [
    ("memory_order", ("load", "release"), ValueError, "invalid-memory-order", "atomic_load does not support memory_order"),
    ("memory_order", ("store", "acquire"), ValueError, "invalid-memory-order", "atomic_store does not support"),
    ("memory_order", ("add", "invalid"), ValueError, "invalid-memory-order", "'relaxed', 'consume', 'acquire'"),
    ("var_init", (1e300,), ValueError, "invalid-value", "exceeds maximum of float32"),
    ("sliced", (2,), RuntimeError, "slice-step", r"A\[0:10:step\]`: a slice of `A` with a step"),
    ("reshaped", (32, 33, "float32"), AssertionError, "reshape-size-mismatch", "4,096 bytes.*4,224 bytes"),
    ("reshaped", (32, 32, "float16"), AssertionError, "reshape-size-mismatch", "2,048 bytes"),
    ("reducer", ("float32",), AssertionError, "reducer-dtype", "integer dtype"),
])
def test_rejected_at_definition_as_tilelangs_error(mod, factory, args, error, code, match):
    with pytest.raises(error, match=match) as info:
        mod[factory](*args)
    err = info.value
    assert isinstance(err, CompileError) and [d.code for d in err.diagnostics] == [code]
    assert err.diagnostics[0].span.line > 1 and "definition_kernels.py" in str(err)


@pytest.mark.parametrize("factory,args", [
    ("memory_order", ("load", "acquire")), ("memory_order", ("store", "release")), ("memory_order", ("add", "acq_rel")),
    ("var_init", (3e38,)), ("sliced", (1,)), ("reshaped", (32, 64, "float16")), ("reshaped", (16, 64, "float32")),
])
def test_valid_definitions_pass(mod, factory, args):
    assert mod[factory](*args) is not None


def test_refusals_wait_for_the_compile(mod):
    """An error TileLang's parser does not raise (here an unknown builtin) stops the compile, not the definition."""
    import tilelang

    kernel = mod["refused_later"]()
    with pytest.raises(CompileError, match="unknown-builtin") as info:
        tilelang.compile(kernel, target="cpu")
    assert not isinstance(info.value, (ValueError, AssertionError, RuntimeError))


def test_an_error_tilelangs_lowering_raises_waits_for_the_compile(mod):
    """tma-atomic-unsupported has TileLang's Python error (tvm.error.InternalError, a RuntimeError) but its lowering
    raises it, not its parser: the definition passes and the compile raises it."""
    import tilelang

    kernel = mod["tma_from_global"]()
    with pytest.raises(RuntimeError, match="use_tma") as info:
        tilelang.compile(kernel, target="cpu")
    assert [d.code for d in info.value.diagnostics] == ["tma-atomic-unsupported"]


def test_a_flavoured_compile_error_pickles_to_the_same_flavour(mod):
    with pytest.raises(ValueError) as info:
        mod["var_init"](1e300)
    again = pickle.loads(pickle.dumps(info.value))
    assert isinstance(again, ValueError) and isinstance(again, CompileError) and str(again) == str(info.value)
