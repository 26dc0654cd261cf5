"""The CPU backend: tile IR to TVM TIR, built with LLVM for the host; thread-level code runs its threads as loops."""
from .build import CpuModule, build, host_target, to_tir

__all__ = ["CpuModule", "build", "host_target", "to_tir"]
