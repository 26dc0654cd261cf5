"""Run a kernel Artifact on torch CUDA tensors through NVIDIA's driver API (cuda-python), or CuPy.

Needs no tvm: the artifact carries the cubin, launch configuration and parameter list. Symbolic
dims are bound from the tensors' shapes and passed as int32 kernel arguments. A prim_func with several T.Kernel
blocks runs as its artifact's launches, in order on one stream, with its T.alloc_global workspaces allocated here.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import threading

from ..language.packing import logical_shape, per_byte, storage_torch_names
from .driver_call import LaunchError, checked
from .iket_trace import collect, is_instrumented

_CTYPE = {"int32": ctypes.c_int32, "int64": ctypes.c_int64, "float32": ctypes.c_float, "float64": ctypes.c_double,
          "bool": ctypes.c_bool, "uint32": ctypes.c_uint32, "handle": ctypes.c_void_p}  # handle: a T.ptr address
INDEX_MAX = 2**31 - 1  # the generated CUDA indexes a tensor with 32-bit integers unless it has an int64 dim
_LOCK = threading.Lock()
_MODULES: dict = {}
_PREPARED: dict = {}  # launch signature -> the prepared kernels of that launch (`launch`)
_instrumented = functools.lru_cache(maxsize=256)(is_instrumented)  # a source's str caches its hash: no rescan


def bind_dims(artifact, args: list) -> dict:
    """Symbolic dim name -> int, read off the tensors' shapes (checks the static dims too)."""
    dims: dict = {}
    tensors = [p for p in artifact.params if p["kind"] != "dim"]
    if len(args) != len(tensors):
        raise LaunchError(f"kernel '{artifact.name}' takes {len(tensors)} arguments "
                          f"({', '.join(p['name'] for p in tensors)}), got {len(args)}")
    for p, a in zip(tensors, args):
        if p["kind"] != "tensor":
            continue
        shape = logical_shape(tuple(getattr(a, "shape", ())), p["dtype"])  # packed sub-byte: its bytes' shape
        if len(shape) != len(p["shape"]):
            raise LaunchError(f"argument '{p['name']}' must have {len(p['shape'])} dims, got shape {shape}")
        for want, have in zip(p["shape"], shape):
            if isinstance(want, int):
                if want != have:
                    raise LaunchError(f"argument '{p['name']}' must have shape {tuple(p['shape'])}, got {shape}")
            elif isinstance(want, str) and want.isidentifier():
                if dims.setdefault(want, int(have)) != int(have):
                    raise LaunchError(f"dim '{want}' of '{p['name']}' is {have} but another argument set it to "
                                      f"{dims[want]}")
        if math.prod(shape) > INDEX_MAX and p.get("index_bits", 32) < 64:
            raise LaunchError(f"argument '{p['name']}' has {math.prod(shape)} elements, more than the "
                              f"{INDEX_MAX} the CUDA lowering can index with 32-bit integers; declare its dims "
                              "int64 (T.symbolic('n', 'int64')) or split the tensor across launches")
    return dims


def named_args(artifact, args: list) -> dict:
    """Parameter name -> the caller's argument (arguments follow the artifact's params, dims left out)."""
    return {p["name"]: a for p, a in zip([p for p in artifact.params if p["kind"] != "dim"], args)}


def pack_args(artifact, args: list, dims: dict, step: dict | None = None,
              workspaces: dict | None = None) -> tuple[list, ctypes.Array]:
    """ctypes values for every parameter of one launch (`step` of `launch_plan()`, the first when None) and the
    void** array cuLaunchKernel takes; `workspaces` maps each T.alloc_global name to its allocated tensor."""
    params = (step or artifact.launch_plan()[0])["params"]
    named = dict(named_args(artifact, args), **(workspaces or {}))
    values = []
    for p in params:
        if p["kind"] == "dim":
            values.append(_CTYPE.get(p["dtype"], ctypes.c_int32)(int(dims[p["name"]])))
        elif p["kind"] in ("tensor", "workspace"):
            values.append(ctypes.c_void_p(_data_ptr(named[p["name"]], p)))
        else:
            values.append(_CTYPE.get(p["dtype"], ctypes.c_int32)(named[p["name"]]))
    for m in (step or artifact.launch_plan()[0]).get("tensor_maps", ()):  # TMA maps of a warp-specialised kernel
        params = params + [m]
        values.append(_tensor_map(m, named[m["tensor"]]))
    order = sorted((p.get("position", k), k) for k, p in enumerate(params) if p.get("position", k) >= 0)
    ordered = [values[k] for _, k in order]
    array = (ctypes.c_void_p * max(len(ordered), 1))(*[ctypes.addressof(v) for v in ordered])
    return values, array


def allocate_workspaces(artifact, dims: dict, device) -> dict:
    """Zero-filled torch tensors for the artifact's T.alloc_global workspaces, on `device` and the current stream."""
    import torch

    return {name: torch.zeros(shape, dtype=getattr(torch, dtype), device=device)
            for name, dtype, shape in artifact.workspace_shapes(dims)}


def _tensor_map(spec: dict, t):
    """The encoded tensor map (passed by value as a __grid_constant__ CUtensorMap) of tensor `t` (or of a view of
    it with `spec["shape"]`)."""
    from .tensor_map import TensorMapError, encode

    try:
        shape = tuple(spec.get("shape") or t.shape)  # a view's map has the view's shape over the tensor's storage
        return encode(spec, _data_ptr(t, {"name": spec["tensor"], "dtype": spec["dtype"]}), shape, t.element_size())
    except TensorMapError as exc:
        raise LaunchError(str(exc)) from None


_STORED_AS = {"tfloat32": "float32", "float8_e4m3": "float8_e4m3fn"}  # dtypes torch has no tensors of, and the
# torch dtype that carries them (torch's one e4m3 type is e4m3fn, as CUDA's __nv_fp8_e4m3)


def _data_ptr(t, p) -> int:
    dtype = str(getattr(t, "dtype", "")).replace("torch.", "")
    stored = storage_torch_names(p["dtype"]) if per_byte(p["dtype"]) > 1 else (_STORED_AS.get(p["dtype"], p["dtype"]),)
    if dtype and dtype not in stored:
        raise LaunchError(f"argument '{p['name']}' must be {p['dtype']}, got {dtype}")
    if hasattr(t, "is_cuda") and not t.is_cuda:
        raise LaunchError(f"argument '{p['name']}' must be a CUDA tensor, got one on {t.device}")
    if hasattr(t, "is_contiguous") and not t.is_contiguous():
        raise LaunchError(f"argument '{p['name']}' must be contiguous (call .contiguous())")
    return int(t.data_ptr())


def _function(artifact, step: dict):
    """The loaded CUfunction of one launch (one module per content hash and device)."""
    import torch
    from cuda.bindings import driver as cu

    dev = torch.cuda.current_device()
    key = (artifact.content_hash, step["kernel_symbol"], dev)
    with _LOCK:
        if key in _MODULES:
            return _MODULES[key]
        torch.cuda.init()
        torch.empty(1, device="cuda")  # make the primary context current on this thread
        module = _MODULES.get((artifact.content_hash, dev))
        if module is None:
            module = _MODULES[(artifact.content_hash, dev)] = checked(cu.cuModuleLoadData(artifact.cubin))
        fn = checked(cu.cuModuleGetFunction(module, step["kernel_symbol"].encode()))
        if step["smem_bytes"] > 48 * 1024:
            attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            checked(cu.cuFuncSetAttribute(fn, attr, step["smem_bytes"]))
        _MODULES[key] = (module, fn)
        return _MODULES[key]


def launch(artifact, tensors, stream=None) -> None:
    """Launch `artifact` on torch CUDA tensors (and scalars) in parameter order, on `stream`: every kernel of
    `launch_plan()` in order, after zero-filling its workspaces on that stream. A launch whose arguments match an
    earlier one's (`_signature`) reuses its checked and packed arguments."""
    import torch
    from cuda.bindings import driver as cu

    args = list(tensors)
    if stream is None:
        stream = torch.cuda.current_stream()
    if not hasattr(stream, "cuda_stream"):
        stream = torch.cuda.ExternalStream(int(stream))
    key = _signature(artifact, args, stream.cuda_stream)
    launches = _PREPARED.get(key) if key is not None else None
    if launches is None:
        launches = _prepare(artifact, args, stream)
        if key is not None:
            if len(_PREPARED) >= 1024:
                _PREPARED.clear()
            _PREPARED[key] = launches
    handle = cu.CUstream(stream.cuda_stream)
    for fn, (gx, gy, gz), (bx, by, bz), smem, cooperative, array, _, window in launches:
        go = cu.cuLaunchCooperativeKernel if cooperative else cu.cuLaunchKernel
        with _l2_window(handle, window) if window is not None else _NO_WINDOW:  # most launches: no generator
            checked(go(fn, gx, gy, gz, bx, by, bz, smem, handle, ctypes.addressof(array),
                       *(() if cooperative else (0,))))
    if _instrumented(artifact.source):  # iket markers: read the trace back (runtime/iket_trace.py)
        collect(artifact, _function(artifact, artifact.launch_plan()[0])[0], stream)


def _signature(artifact, args: list, stream: int):
    """What a launch's packed arguments depend on (the kernel, the stream, each tensor's address, dtype, shape,
    strides and device, each scalar's value), or None when every launch prepares its own (fresh zeroed workspaces,
    an iket trace to read back)."""
    if artifact.workspaces or _instrumented(artifact.source):
        return None
    key = [id(artifact), artifact.content_hash, stream]
    for a in args:
        if hasattr(a, "data_ptr") and hasattr(a, "stride"):
            key.append((a.data_ptr(), a.dtype, a.shape, a.stride(), a.device))
        elif isinstance(a, (bool, int, float)):
            key.append((type(a), a))
        else:
            return None
    return tuple(key)


def _prepare(artifact, args: list, stream) -> list:
    """(function, grid, block, shared bytes, cooperative, packed argument array, what must outlive the launch) of
    every kernel of one launch, its arguments checked and its workspaces allocated on `stream`."""
    import torch

    dims = bind_dims(artifact, args)
    device = next((a.device for a in args if hasattr(a, "is_cuda") and a.is_cuda), torch.device("cuda"))
    with torch.cuda.stream(stream):  # workspaces belong to the launch stream: freed only after its kernels ran
        spaces = allocate_workspaces(artifact, dims, device)
    out = []
    for step, (gx, gy, gz), block in launch_grids(artifact, dims):
        _, fn = _function(artifact, step)
        gx = _capped_x(fn, step, gx, block, stream, device)
        if step.get("stream_k"):  # the stream-K last wave's flags and partial sums (codegen/cuda/streamk.py)
            spaces[step["stream_k"]["param"]] = _stream_k_space(step["stream_k"], gx, stream, device)
        values, array = pack_args(artifact, args, dims, step, spaces)
        if step.get("cooperative"):  # T.sync_grid: every block must be resident at once
            _check_co_resident(fn, step, gx * gy * gz, math.prod(block), device)
        out.append((fn, (gx, gy, gz), block, step["smem_bytes"], bool(step.get("cooperative")), array,
                    (values, dict(spaces)), _window_of(step, named_args(artifact, args))))
    return out


def _window_of(step: dict, named: dict):
    """(address, bytes, hit ratio) of the launch's T.annotate_l2_hit_ratio tensor (the first hint: a stream has one
    access policy window), or None."""
    hints = step.get("l2_persist") or ()
    if not hints:
        return None
    t = named[hints[0]["tensor"]]
    return int(t.data_ptr()), int(t.numel() * t.element_size()), float(hints[0]["hit_ratio"])


_NO_WINDOW = contextlib.nullcontext()  # a launch without an L2 hint (reusable)


@contextlib.contextmanager
def _l2_window(handle, window):
    """The stream's L2 access policy window over `window` for one launch (accesses to it persist in L2 with the
    hint's hit ratio, the rest stream), then cleared with the persisting lines, as TileLang's host code does."""
    from cuda.bindings import driver as cu

    ptr, nbytes, ratio = window
    limit_id = cu.CUlimit.CU_LIMIT_PERSISTING_L2_CACHE_SIZE
    dev = checked(cu.cuCtxGetDevice())
    most = checked(cu.cuDeviceGetAttribute(
        cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE, dev))
    widest = checked(cu.cuDeviceGetAttribute(cu.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE, dev))
    before = checked(cu.cuCtxGetLimit(limit_id))
    checked(cu.cuCtxSetLimit(limit_id, min(most, nbytes)))
    attr_id = cu.CUstreamAttrID.CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW
    value = cu.CUstreamAttrValue()
    value.accessPolicyWindow.base_ptr = ptr
    value.accessPolicyWindow.num_bytes = min(nbytes, widest)
    value.accessPolicyWindow.hitRatio = ratio
    value.accessPolicyWindow.hitProp = cu.CUaccessProperty.CU_ACCESS_PROPERTY_PERSISTING
    value.accessPolicyWindow.missProp = cu.CUaccessProperty.CU_ACCESS_PROPERTY_STREAMING
    checked(cu.cuStreamSetAttribute(handle, attr_id, value))
    try:
        yield
    finally:
        value.accessPolicyWindow.num_bytes = 0
        checked(cu.cuStreamSetAttribute(handle, attr_id, value))
        checked(cu.cuCtxResetPersistingL2Cache())
        checked(cu.cuCtxSetLimit(limit_id, before))


_RESIDENT: dict = {}
_STREAM_K: dict = {}


def _stream_k_space(info: dict, blocks: int, stream, device):
    """The stream-K workspace of `blocks` blocks: zeroed once per device and stream and kept (the kernel clears each
    flag it consumes, so the flags are zero again at the end of every launch); grown when a grid needs more."""
    import torch

    if blocks > info["flags"]:
        raise LaunchError(f"a stream-K kernel keeps {info['flags']} block flags; {blocks} blocks were asked for")
    need = info["flags"] + blocks * info["floats_per_block"]
    key = (str(device), stream.cuda_stream)
    space = _STREAM_K.get(key)
    if space is None or space.numel() < need:
        with torch.cuda.stream(stream):
            space = _STREAM_K[key] = torch.zeros(need, dtype=torch.float32, device=device)
    return space


def _capped_x(fn, step: dict, gx: int, block: tuple, stream, device) -> int:
    """The grid's x extent as launched: a persistent kernel's capped at the resident blocks, whole clusters."""
    if step.get("persistent"):  # a tile loop: one wave of resident blocks walks every tile
        gx = min(gx, _resident_blocks(fn, step, block[0] * block[1] * block[2], device))
    if step.get("cluster", 1) > 1:  # compiled-in clusters (codegen/cuda/cluster.py): whole resident clusters
        gx = _cluster_grid(fn, step, gx, block, stream, device)
    return gx


def launched_grid(artifact, tensors) -> tuple:
    """The grid `launch` starts for the first kernel of `artifact` on these arguments (for benchmark reports)."""
    import torch

    return _prepare(artifact, list(tensors), torch.cuda.current_stream())[0][1]


def _occupancy(fn, step: dict, threads: int, device) -> tuple[int, int]:
    """(blocks of the kernel one SM holds at once, SMs), cached per function and launch shape."""
    import torch
    from cuda.bindings import driver as cu

    key = (id(fn), step["smem_bytes"], threads, str(device))
    if key not in _RESIDENT:
        per_sm = checked(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(fn, threads, step["smem_bytes"]))
        _RESIDENT[key] = (per_sm, torch.cuda.get_device_properties(device).multi_processor_count)
    return _RESIDENT[key]


def _resident_blocks(fn, step: dict, threads: int, device) -> int:
    """How many blocks of the kernel the GPU holds at once (SMs times blocks per SM, one at least per SM)."""
    per_sm, sms = _occupancy(fn, step, threads, device)
    return max(per_sm, 1) * sms


def _cluster_grid(fn, step: dict, gx: int, block: tuple, stream, device) -> int:
    """A persistent grid of whole clusters, at most the clusters resident at once (cuOccupancyMaxActiveClusters;
    the resident blocks over the cluster size where the driver cannot say)."""
    from cuda.bindings import driver as cu

    size = step["cluster"]
    key = ("cluster", id(fn), step["smem_bytes"], block, str(device))
    if key not in _RESIDENT:
        try:
            config = cu.CUlaunchConfig()
            config.gridDimX, config.gridDimY, config.gridDimZ = gx - gx % size or size, 1, 1
            config.blockDimX, config.blockDimY, config.blockDimZ = block
            config.sharedMemBytes, config.hStream = step["smem_bytes"], cu.CUstream(stream.cuda_stream)
            err, clusters = cu.cuOccupancyMaxActiveClusters(fn, config)
            _RESIDENT[key] = clusters if err == cu.CUresult.CUDA_SUCCESS and clusters > 0 else None
        except (AttributeError, TypeError):  # an older cuda.bindings: fall back on the resident blocks
            _RESIDENT[key] = None
    return whole_clusters(gx, size, _RESIDENT[key] if step.get("persistent") else None)


def whole_clusters(gx: int, size: int, resident: int | None = None) -> int:
    """`gx` blocks rounded down to whole clusters of `size` (one at least), at most `resident` clusters."""
    if resident is not None:
        gx = min(gx, resident * size)
    return max(gx - gx % size, size)


def _check_co_resident(fn, step: dict, blocks: int, threads: int, device) -> None:
    """LaunchError unless `blocks` blocks of the kernel fit on the GPU at once (a grid barrier needs them all)."""
    per_sm, sms = _occupancy(fn, step, threads, device)
    if blocks > per_sm * sms:
        raise LaunchError(f"kernel '{step['kernel_symbol']}' calls T.sync_grid, so all {blocks} blocks must be "
                          f"resident at once, but {sms} SMs hold {per_sm} block(s) each ({per_sm * sms}); launch a "
                          "grid of at most that many blocks (a persistent kernel loops over its tiles)")


def launch_grids(artifact, dims: dict):
    """(step, grid, block) of every non-empty launch, in launch order."""
    for step in artifact.launch_plan():
        grid = artifact.grid_for(dims, step["grid"])
        if min(grid) > 0:
            yield step, grid, tuple((list(step["block"]) + [1, 1])[:3])
