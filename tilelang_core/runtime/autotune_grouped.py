"""`tilelang.autotuner.grouped_compile`: compile one group of autotune configs of a kernel builder, each config's
failure kept with it instead of stopping the group. TileLang links the group's device code into one module; here
each config is its own kernel, built first by forked workers into the artifact cache (autotune_search.precompile)."""
from __future__ import annotations

from .autotune_search import default_jobs, precompile
from .jit import compile as compile_kernel

__all__ = ["compile_grouped_unit", "compile_grouped_unit_tvm_ffi"]


def compile_grouped_unit(unit_items, compile_args, elaborate_func) -> list[tuple]:
    """For each `(index, config)` of `unit_items`: `(index, config, kernel, None)` with the kernel of
    `elaborate_func(**config)` compiled under `compile_args` (a CompileArgs), or `(index, config, None, error)`."""
    items = list(unit_items)

    def build(config: dict):
        return compile_kernel(elaborate_func(**config), **compile_args.compile_kwargs())

    precompile(build, [config for _, config in items], default_jobs())
    results = []
    for index, config in items:
        try:
            results.append((index, config, build(config), None))
        except Exception as error:  # noqa: BLE001 -- each config's failure is its result
            results.append((index, config, None, error))
    return results


compile_grouped_unit_tvm_ffi = compile_grouped_unit  # TileLang's name (its CUDA + tvm_ffi backend's grouping)
