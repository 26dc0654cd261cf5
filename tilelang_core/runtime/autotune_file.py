"""Autotuning a kernel factory of a file (`tilelsp autotune FILE`, and each Ray compile task): which factory,
with which call arguments, over which configs, checked against which reference.

The file is checked statically first; its instance (a literal call site, defaults or a `# tilelsp: f(...)`
comment) gives the call arguments. Configs come from the factory's own `@tilelang.autotune(configs=...)`, else,
for a GEMM-like factory (block_M/block_N/block_K parameters), from `gemm_configs` of its M, N, K. The file runs
as a module under the `tilelang` alias (never as __main__); `ref_program` (or `# tilelsp: reference=NAME`)
checks every config's output.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .autotune import AutoTuneKernel, AutoTuner, config_list
from .autotune_param import ProfileArgs
from .autotune_configs import fit_configs, gemm_configs, is_gemm_like
from .autotune_search import kernel_identity
from .jit import JITFactory


class TuningError(Exception):
    """The file has no kernel factory to tune, or nothing to tune it over."""


@dataclass
class Tuning:
    """One factory of a file, ready to search."""

    name: str
    factory: JITFactory
    call: dict
    configs: list
    reference: object = None
    config_source: str = ""
    identity: str | None = field(default=None, repr=False)

    def build(self, config: dict):
        """The JITKernel of one config (cached on disk like every JIT build)."""
        return self.factory(**{**self.call, **config})

    def check(self, kernel) -> None:
        """Compare a config's kernel with the file's reference as a local search does (AssertionError if off)."""
        if self.reference is not None:
            limits = ProfileArgs()
            kernel.get_profiler().assert_allclose(self.reference, rtol=limits.rtol, atol=limits.atol,
                                                  max_mismatched_ratio=limits.max_mismatched_ratio)

    def tuner(self) -> AutoTuner:
        """An AutoTuner over the configs, checking against the reference when the file has one."""
        tuner = AutoTuner(self.factory, self.configs)
        tuner.build = lambda cfg: (self.build(cfg), None)
        tuner.identity, tuner.call = self.identity, repr(sorted(self.call.items()))
        if self.reference is not None:
            tuner.set_profile_args(ref_prog=self.reference)
        return tuner


def load_tuning(path: str, text: str, kernel: str | None, target: str, count: int = 16,
                overrides: dict | None = None) -> Tuning:
    """The Tuning of `kernel` (a factory name; default the first tunable one) of the file at `path`;
    `overrides` replace call arguments of the file's instance (e.g. {"M": 8192})."""
    from ..check import check_source
    from .user_file import load_module, plain_value, reference_name

    result = check_source(text, path)
    found = [k for k in result.kernels if k.factory and (kernel is None or kernel in (k.factory, k.name))]
    if not found:
        raise TuningError(f"no kernel factory named {kernel!r} in {path}" if kernel else
                          f"no kernel factory in {path}: autotuning searches the arguments of a @tilelang.jit "
                          "function")
    glb = load_module(path)
    errors = []
    for inst in found:
        obj = glb.get(inst.factory)
        wrapper = obj if isinstance(obj, AutoTuneKernel) else None
        jitted = wrapper.target if wrapper is not None else obj
        if not isinstance(jitted, JITFactory):
            errors.append(f"{inst.factory} is not a @tilelang.jit factory")
            continue
        factory = JITFactory(jitted.factory, out_idx=jitted.out_idx, target=target)
        bindings = {**{k: v for k, v in inst.bindings if plain_value(v)}, **(overrides or {})}
        if wrapper is not None:
            configs, origin = config_list(wrapper.configs, (), bindings), "@autotune(configs=...)"
        elif is_gemm_like(factory):
            configs = gemm_configs(bindings.get("M", 1024), bindings.get("N", 1024), bindings.get("K", 1024),
                                   in_dtype=str(bindings.get("dtype", "float16")), topk=count)
            configs, origin = fit_configs(factory, configs), "gemm_configs (carver hints)"
        else:
            errors.append(f"{inst.factory} has no configs: decorate it with @tilelang.autotune(configs=[...])")
            continue
        tuned = {k for c in configs for k in c}
        call = {k: v for k, v in bindings.items() if k not in tuned}
        ref = glb.get(reference_name(text))
        return Tuning(inst.factory, factory, call, configs[:count] if wrapper is None else configs,
                      ref if callable(ref) else None, origin, kernel_identity(factory))
    raise TuningError("; ".join(dict.fromkeys(errors)))
