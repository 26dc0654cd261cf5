"""The CPU backend: tile IR to TVM TIR, built with LLVM for the host; thread-level code runs its threads as loops."""
from .build import to_tir
from .module import CpuModule, build, host_target

__all__ = ["CpuModule", "build", "host_target", "to_tir"]
