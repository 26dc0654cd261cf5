"""Run a CPU-backend kernel from its exported shared library through ctypes, without importing tvm.

`tvm.compile` for LLVM exports one C symbol per kernel, `__tvm_ffi_<name>`, with tvm-ffi's stable calling
convention `int f(void* self, const TVMFFIAny* args, int32_t n, TVMFFIAny* ret)`. Tensors are passed as DLTensor
pointers (torch's own DLPack export), scalars as int/float/bool values. The library's context function pointers
(`__TVMBackendParallelLaunch`, ...) are set from the apache-tvm wheel's C runtime libraries, which are dlopen'ed
(a few ms) instead of importing the Python package (seconds).
"""
from __future__ import annotations

import ctypes
import importlib.util
import threading
from pathlib import Path

# tvm-ffi type indices (tvm_ffi/c_api.h)
_INT, _BOOL, _FLOAT, _OPAQUE_PTR, _DLTENSOR_PTR = 1, 2, 3, 4, 7
# context functions TVM's library loader fills in (library_module.cc), found in libtvm_runtime / libtvm_ffi
CONTEXT_FUNCTIONS = ("TVMFFIFunctionCall", "TVMFFIErrorSetRaisedFromCStr", "TVMFFIErrorSetRaisedFromCStrParts",
                     "TVMBackendAllocWorkspace", "TVMBackendFreeWorkspace", "TVMBackendParallelLaunch",
                     "TVMBackendParallelBarrier")
# a library that looks functions up in its module environment needs TVM's module object: not loadable here
NEEDS_MODULE = ("__tvm_ffi__library_ctx", "__TVMBackendGetFuncFromEnv")

_LOCK = threading.Lock()
_RUNTIME: list = []


class CpuLibraryError(Exception):
    """The shared library cannot be loaded without tvm, or a kernel call failed."""


class _Any(ctypes.Structure):
    _fields_ = [("type_index", ctypes.c_int32), ("zero_padding", ctypes.c_uint32), ("value", ctypes.c_uint64)]


class _ByteArray(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("size", ctypes.c_size_t)]


_SAFE_CALL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_Any), ctypes.c_int32,
                              ctypes.POINTER(_Any))
_OBJECT_HEADER = 24  # TVMFFIObject: refcount, type index, padding, deleter
_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype, _get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


def _package_lib(package: str, name: str) -> Path:
    spec = importlib.util.find_spec(package)  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        raise CpuLibraryError(f"the Python package {package!r} is not installed (its {name} runs CPU kernels)")
    path = Path(list(spec.submodule_search_locations)[0]) / "lib" / name
    if not path.exists():
        raise CpuLibraryError(f"{path} is missing: reinstall apache-tvm")
    return path


def runtime_libraries() -> list:
    """libtvm_ffi and libtvm_runtime, dlopen'ed once with global symbols."""
    with _LOCK:
        if not _RUNTIME:
            for package, name in (("tvm_ffi", "libtvm_ffi.so"), ("tvm", "libtvm_runtime.so")):
                _RUNTIME.append(ctypes.CDLL(str(_package_lib(package, name)), mode=ctypes.RTLD_GLOBAL))
        return _RUNTIME


def _runtime_symbol(name: str) -> int | None:
    for lib in runtime_libraries():
        try:
            return ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
        except AttributeError:
            continue
    return None


def _has_symbol(lib, name: str) -> bool:
    try:
        ctypes.c_void_p.in_dll(lib, name)
        return True
    except ValueError:
        return False


class CpuLibrary:
    """One kernel's shared library: call it with torch CPU tensors and scalars in parameter order."""

    def __init__(self, path: str | Path, symbol: str):
        runtime_libraries()
        try:
            self._lib = ctypes.CDLL(str(path))
        except OSError as exc:
            raise CpuLibraryError(f"cannot load {path}: {exc}") from None
        if any(_has_symbol(self._lib, name) for name in NEEDS_MODULE):
            raise CpuLibraryError(f"{path} calls functions of its TVM module environment; it needs tvm to run")
        for name in CONTEXT_FUNCTIONS:
            if _has_symbol(self._lib, "__" + name):
                address = _runtime_symbol(name)
                if address is None:
                    raise CpuLibraryError(f"{path} needs {name}, which the installed TVM runtime lacks")
                ctypes.c_void_p.in_dll(self._lib, "__" + name).value = address
        try:
            self._fn = _SAFE_CALL(("__tvm_ffi_" + symbol, self._lib))
        except AttributeError:
            raise CpuLibraryError(f"{path} has no kernel '{symbol}'") from None
        self.path = str(path)

    def __call__(self, *args) -> None:
        """Run the kernel in place on the given tensors and scalars."""
        n = len(args)
        packed = (_Any * max(n, 1))()
        keep = []
        for slot, value in zip(packed, args):
            if hasattr(value, "__dlpack__"):
                from torch.utils.dlpack import to_dlpack

                capsule = to_dlpack(value)
                keep.append(capsule)
                slot.type_index, slot.value = _DLTENSOR_PTR, _get_pointer(capsule, b"dltensor")  # DLTensor first
            elif isinstance(value, ctypes.c_void_p):  # a T.ptr argument
                slot.type_index, slot.value = _OPAQUE_PTR, value.value or 0
            elif isinstance(value, bool):
                slot.type_index, slot.value = _BOOL, int(value)
            elif isinstance(value, int):
                slot.type_index, slot.value = _INT, value & 0xFFFFFFFFFFFFFFFF
            elif isinstance(value, float):
                slot.type_index = _FLOAT
                slot.value = ctypes.c_uint64.from_buffer_copy(ctypes.c_double(value)).value
            else:
                raise TypeError(f"a CPU kernel takes tensors and Python scalars, got {type(value).__name__}")
        ret = _Any()
        if self._fn(None, packed, n, ctypes.byref(ret)) != 0:
            raise CpuLibraryError(_raised_error())


def _raised_error() -> str:
    """The message of the error the kernel raised (tvm-ffi keeps it per thread)."""
    lib = runtime_libraries()[0]
    handle = ctypes.c_void_p()
    lib.TVMFFIErrorMoveFromRaised(ctypes.byref(handle))
    if not handle.value:
        return "the CPU kernel failed"
    kind = _ByteArray.from_address(handle.value + _OBJECT_HEADER)
    message = _ByteArray.from_address(handle.value + _OBJECT_HEADER + ctypes.sizeof(_ByteArray))
    text = f"{ctypes.string_at(kind.data, kind.size).decode()}: {ctypes.string_at(message.data, message.size).decode()}"
    lib.TVMFFIObjectDecRef(handle)
    return text
