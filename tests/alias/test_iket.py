"""`tilelang.tools.cuda.iket` under the alias: markers, ranges and payloads inside kernels become trace records
in the CUDA source (only inside an iket session), no-ops on the CPU backend; the host helpers, and the decoding
of a trace buffer read back from the GPU."""
from __future__ import annotations

import re
import struct

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

KERNELS = '''
import tilelang
import tilelang.language as T
from tilelang.tools.cuda import iket


def traced_add(n, threads=128):
    @T.prim_func
    def main(A: T.Tensor((n,), "float32"), C: T.Tensor((n,), "float32")):
        with T.Kernel(T.ceildiv(n, threads), threads=threads) as bx, iket.range("block_total"):
            iket.mark("block_enter", payload=iket.payload(bx, dtype="int32"))
            for i in T.Parallel(threads):
                idx = bx * threads + i
                if idx < n:
                    iket.mark("store", payload=iket.payload(A[idx], dtype="float32"))
                    C[idx] = A[idx] + 1.0
            with iket.range("tail"):
                iket.mark("block_exit")
    return main
'''


@pytest.fixture(scope="module")
def mod(run_aliased):
    return run_aliased("iket_kernels", KERNELS)


def test_session_state_and_output_helpers(tmp_path):
    from tilelang_core.compat import iket

    with iket.session(output_dir=tmp_path / "out", runtime_payloads=True):
        assert iket.is_enabled() and iket.runtime_payloads_enabled()
        assert iket.output_path("k.cu") == (tmp_path / "out" / "k.cu").absolute()
        (tmp_path / "out" / "a.trace.json").write_text("{}")
        assert [p.name for p in iket.trace_files()] == ["a.trace.json"]
    assert not iket.is_enabled() and not iket.runtime_payloads_enabled() and iket.output_dir() is None
    assert iket.profile_command(["python", "x y.py"], directory="/d").endswith("-- python 'x y.py'")


def test_markers_run_as_no_ops_on_the_cpu_backend(mod):
    import tilelang
    from tilelang_core.compat import iket

    with iket.session():
        kernel = tilelang.compile(mod["traced_add"](200), out_idx=-1, target="cpu")
    a = torch.arange(200, dtype=torch.float32)
    torch.testing.assert_close(kernel(a), a + 1.0)
    assert {e["name"] for e in iket.event_table()} == {"block_total", "block_enter", "store", "tail", "block_exit"}


@pytest.mark.nvcc
def test_markers_become_trace_records_in_the_cuda_source_only_inside_a_session(mod):
    import tilelang
    from tilelang_core.compat import iket

    with iket.session():
        source = tilelang.compile(mod["traced_add"](256), out_idx=-1, target="sm_90a").get_kernel_source()
    kinds = {e["name"] + ":" + e["kind"]: e for e in iket.event_table()}
    assert {"block_total:range_start", "block_total:range_end", "store:mark", "tail:range_start"} <= set(kinds)
    assert kinds["store:mark"]["payload_type"] == "float32"
    assert len(re.findall(r"TL_IKET_EVENT\(\d", source)) == 7 and "__iket_meta_info_main" in source and "%%globaltimer" in source
    plain = tilelang.compile(mod["traced_add"](256), out_idx=-1, target="sm_90a").get_kernel_source()
    assert "TL_IKET_EVENT(" not in plain


def test_trace_records_decode_to_markers_ranges_and_payloads():
    from tilelang_core.runtime.iket_trace import decode_records, event_names

    source = ('__device__ const char __iket_meta_info_main[] = "{\\"1\\":{\\"name\\":\\"r\\",\\"kind\\":\\"range_start\\",'
              '\\"payload_type\\":null},\\"2\\":{\\"name\\":\\"r\\",\\"kind\\":\\"range_end\\",\\"payload_type\\":null},'
              '\\"3\\":{\\"name\\":\\"v\\",\\"kind\\":\\"mark\\",\\"payload_type\\":\\"float32\\"}}";')
    names = event_names(source)
    assert names[3] == ("v", "mark", "float32")
    f = struct.unpack("<I", struct.pack("<f", 2.5))[0]
    words = [100, 0, 1 | 1 << 24, 0, 1, 0,  150, 0, 3, 0, 1, f,  400, 0, 2 | 2 << 24, 0, 1, 0]
    launch = decode_records(words, 4, names)  # a fourth record was dropped (buffer full)
    assert launch["markers"] == [{"name": "v", "ts": 50, "block": 0, "warp": 1, "payloadVal": 2.5}]
    assert launch["ranges"] == [{"name": "r", "ts": 0, "block": 0, "warp": 1, "dur": 300}]
    assert launch["records"] == 3 and launch["dropped"] == 1


def test_collect_reads_back_and_resets_the_trace_buffer(tmp_path, monkeypatch):
    """The launcher's readback through the driver API (a fake driver whose device memory is host memory)."""
    import ctypes
    import json
    import sys
    import types

    from tilelang_core.runtime import iket_trace

    count = (ctypes.c_uint32 * 1)(2)
    trace = (ctypes.c_uint32 * (iket_trace.RECORD_WORDS * 4))(*[10, 0, 1, 3, 0, 7, 30, 0, 1, 3, 1, 9])
    memory = {b"tl_iket_count": count, b"tl_iket_trace": trace}
    driver = types.SimpleNamespace(
        CUstream=lambda s: s, cuStreamSynchronize=lambda s: (0,),
        cuModuleGetGlobal=lambda module, name: (0, ctypes.addressof(memory[name]), ctypes.sizeof(memory[name])),
        cuMemcpyDtoH=lambda dst, src, n: (ctypes.memmove(dst, src, n), (0,))[1],
        cuMemsetD32=lambda ptr, value, n: (ctypes.memset(ptr, value, 4 * n), (0,))[1])
    bindings = types.ModuleType("cuda.bindings")
    bindings.driver = driver
    monkeypatch.setitem(sys.modules, "cuda", types.ModuleType("cuda"))
    monkeypatch.setitem(sys.modules, "cuda.bindings", bindings)
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", driver)
    monkeypatch.setenv("TL_IKET_OUTPUT_DIR", str(tmp_path))
    monkeypatch.setenv("TL_IKET_RUNTIME_PAYLOADS", "1")
    art = types.SimpleNamespace(name="k", source='tl_iket_count; __device__ const char __iket_meta_info_k[] = '
                                '"{\\"1\\":{\\"name\\":\\"m\\",\\"kind\\":\\"mark\\",\\"payload_type\\":\\"int32\\"}}";')
    launch = iket_trace.collect(art, None, types.SimpleNamespace(cuda_stream=0))
    assert [(m["ts"], m["warp"], m["payloadVal"]) for m in launch["markers"]] == [(0, 0, 7), (20, 1, 9)]
    assert count[0] == 0  # reset for the next launch
    saved = json.loads((tmp_path / "k.trace.json").read_text())
    assert saved["launches"][0]["records"] == 2 and iket_trace.LAUNCHES[-1] == launch
