"""Autotuning (`tilelang.autotune`, `tilelang.autotuner.AutoTuner`): compile a kernel factory once per config,
check each kernel against a reference when one is given, time it with the profiler and keep the fastest.

Configs are dicts of factory keyword arguments. A config that fails to build, run or match the reference is
skipped and its error kept in `AutotuneResult.failures`; when every config fails, the first failure is raised
with a note listing the others. With `jobs` > 1 (or TILELSP_AUTOTUNE_JOBS) the configs are first compiled in
forked workers (autotune_search.py), with a progress bar. `warmup` and `rep` are TileLang's budgets in
milliseconds (at least one call each): a timing is the profiler's mean on a GPU (CUDA events) and the fastest
call on the CPU backend (the host clock; `AutotuneResult.device` says which). A second pass, last config to first,
keeps each config's lower figure (`autotune_search.pass_back`). The fastest few are then timed again in
interleaved rounds, each round comparing them with each other, until every rival is separated
from the leader (slower in enough rounds for a sign test, by more than 1 % in median) or level with it (a median
ratio within the rounds' spread of 1, at least 1 %, at most 5 %), or 15 rounds have passed
(`autotune_search.final_round`); finalists not separated from the leader are a tie (`AutotuneResult.tied`), won
by the first in the config list. `timings` keeps every config's first-pass figure; `final` has the finalists'
medians over the rounds, the winner's being the search's latency.
The best config of a kernel factory is remembered on disk per factory source, call arguments, configs, target
and device, and a later search returns it at once (`cached=True`; TILELSP_AUTOTUNE_CACHE=0 searches again).
`timeout`, `cache_input_tensors`, `backend`, and a config's "pass_configs" entry are accepted and ignored.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import statistics
import threading
from dataclasses import fields

from . import autotune_param as param  # `from tilelang.autotuner import param`, before any import of the submodule
from . import autotune_search as search
from .autotune_param import CALLBACKS, AutotuneResult, CompileArgs, ProfileArgs
from .jit import JITFactory, JITKernel, compile, jit
from .jit_kernel import machine_target

__all__ = ["autotune", "AutoTuner", "AutotuneResult", "set_autotune_inputs", "get_autotune_inputs"]

_local = threading.local()


@contextlib.contextmanager
def set_autotune_inputs(*tensors):
    """Within this block, autotuning times kernels on these tensors (the kernel's inputs, in order)."""
    stack = _local.__dict__.setdefault("inputs", [])
    stack.append(list(tensors[0]) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else list(tensors))
    try:
        yield
    finally:
        stack.pop()


def get_autotune_inputs():
    """The tensors of the innermost `set_autotune_inputs` block, or None."""
    stack = _local.__dict__.get("inputs") or []
    return stack[-1] if stack else None


class InputSupplyError(ValueError):
    """The search has no inputs to time kernels on (a scalar parameter and no set_autotune_inputs): no config
    can run, so the search stops at once rather than failing each config."""


class ConfigBuildError(Exception):
    """A config's kernel failed to build in a compile worker (the message is the worker's error)."""


class AutoTuner:
    """`AutoTuner.from_kernel(fn, configs).set_compile_args(...).set_profile_args(...).run(warmup, rep)`."""

    def __init__(self, fn, configs):
        self.fn = fn
        self.configs = configs
        self.compile_args = CompileArgs()
        self.profile_args = ProfileArgs()
        self.build = self._compile_factory
        # what names the search on disk: the factory's source and the call; None (plain callables) never caches
        self.identity = search.kernel_identity(fn) if isinstance(fn, JITFactory) else None
        self.call = ""

    @classmethod
    def from_kernel(cls, kernel, configs):
        """A tuner for a kernel factory (a function returning a @T.prim_func) over `configs`."""
        return cls(kernel, configs)

    def set_compile_args(self, out_idx=None, target="auto", execution_backend=None, target_host=None,
                         verbose=False, pass_configs=None, **_ignored):
        """Arguments for `tilelang.compile` of each config's kernel."""
        self.compile_args = CompileArgs(out_idx, target, execution_backend, target_host, verbose, pass_configs)
        return self

    def set_profile_args(self, warmup=None, rep=None, timeout=None, supply_type=None, ref_prog=None,
                         supply_prog=None, rtol=1e-2, atol=1e-2, max_mismatched_ratio=0.01, skip_check=False,
                         manual_check_prog=None, cache_input_tensors=False, **_ignored):
        """How each kernel is fed and checked: input supply, reference program and tolerances."""
        self.profile_args = ProfileArgs(supply_type=supply_type, ref_prog=ref_prog, supply_prog=supply_prog,
                                        rtol=rtol, atol=atol, max_mismatched_ratio=max_mismatched_ratio,
                                        skip_check=skip_check, manual_check_prog=manual_check_prog,
                                        cache_input_tensors=cache_input_tensors)
        return self

    def _compile_factory(self, config: dict):
        built = self.fn(**config)
        return (built if isinstance(built, JITKernel) else compile(built, **self.compile_args.compile_kwargs())), None

    def _target(self) -> str:
        target = getattr(self.fn, "target", None) if isinstance(self.fn, JITFactory) else None
        return machine_target(target or self.compile_args.target or "auto").kind

    def generate_cache_key(self, parameters, extra_parameters=None) -> str | None:
        """The key this search is remembered under: the kernel (its factory's source), the call's `parameters`
        (and `extra_parameters`), the configs, the compile arguments, the profile arguments, the target and the
        device. A user callback of the profile (reference, input supply, manual check) enters by its source;
        one without a source of its own (a lambda, a closure) makes the key None: not remembered."""
        identity = self.identity or search.kernel_identity(self.fn)
        if identity is None:
            return None
        profile = _as_dict(self.profile_args)
        for name in CALLBACKS:
            if profile[name] is not None:
                profile[name] = search.kernel_identity(profile[name])
                if profile[name] is None:
                    return None
        call = repr((sorted((str(k), repr(v)) for k, v in dict(parameters).items()),
                     sorted((str(k), repr(v)) for k, v in dict(extra_parameters or {}).items()), self.call))
        target = self._target()
        return search.best_key(identity, call, repr((config_list(self.configs), _as_dict(self.compile_args),
                                                      sorted(profile.items(), key=lambda kv: kv[0]))),
                               target, search.device_label(target))

    def run(self, warmup: float = 25, rep: float = 100, timeout=None, early_stop: bool = False,
            early_stop_factor: float = 2.0, jobs: int | None = None, progress: bool = True,
            **_ignored) -> AutotuneResult:
        """Build (in `jobs` workers), check and time every config; the fastest wins and is remembered."""
        configs = config_list(self.configs)
        if not configs:
            raise ValueError("autotune got no configs: pass configs=[{...}, ...] (or a function returning them)")
        device = search.device_label(self._target())
        key = self.generate_cache_key({}) if self.identity else None
        remembered = search.load_best(key) if key else None
        if remembered is not None and remembered["config"] in configs:
            kernel, _ = self.build(_kernel_args(remembered["config"]))
            result = AutotuneResult(latency=remembered.get("latency"), config=dict(remembered["config"]),
                                    kernel=kernel, device=device, cached=True,
                                    timings=[tuple(t) for t in remembered.get("timings", [])],
                                    final=[tuple(t) for t in remembered.get("final", [])],
                                    tied=list(remembered.get("tied", [])))
            return _finish(result)
        jobs = search.default_jobs() if jobs is None else jobs
        failed = search.precompile(lambda cfg: self.build(_kernel_args(cfg)), configs, jobs,
                                   search.Progress(len(configs), "autotune: compiling", enabled=progress))
        result = AutotuneResult(device=device)
        bar = search.Progress(len(configs), f"autotune: timing on {device}", enabled=progress)
        for index, config in enumerate(configs):
            try:
                if index in failed:
                    raise ConfigBuildError(failed[index])
                kernel, inputs = self.build(_kernel_args(config))
                latency = self._measure(kernel, inputs, warmup, rep, result.latency if early_stop else None,
                                        early_stop_factor)
            except InputSupplyError:
                raise
            except Exception as exc:  # noqa: BLE001 -- a failing config is skipped, its error kept
                result.failures.append((dict(config), exc))
                bar.step("failed")
                continue
            bar.step(f"{latency:.4g} ms")
            result.timings.append((dict(config), latency))
            if result.latency is None or latency < result.latency:
                result.latency, result.config, result.kernel = latency, dict(config), kernel
        if result.kernel is None:
            raise _all_failed(result.failures)
        if len(result.timings) > 1:
            self._pass_back(result, warmup, rep)
            self._final_round(result, warmup, rep)
        if key:
            search.save_best(key, {"config": result.config, "latency": result.latency, "device": device,
                                   "timings": result.timings, "final": result.final, "tied": result.tied})
        return _finish(result)

    def _pass_back(self, result: AutotuneResult, warmup: float, rep: float) -> None:
        """Time every config once more, last to first (`autotune_search.pass_back`): each row keeps its lower
        figure, so load that began or ended during the first pass does not decide the finalists."""
        measures = []
        for config, _ in result.timings:
            kernel, inputs = self.build(_kernel_args(config))
            measures.append(_timer(kernel, self._inputs(kernel, inputs), self.profile_args.supply_type))
        figures = search.pass_back(measures, [ms for _, ms in result.timings], warmup, rep)
        result.timings = [(config, ms) for (config, _), ms in zip(result.timings, figures)]

    def _final_round(self, result: AutotuneResult, warmup: int, rep: int) -> None:
        """Time the first pass's fastest few again, interleaved, until the leader separates from them or they
        tie (`autotune_search.final_round`, `winner`)."""
        order = search.fastest(result.timings)  # the timings follow the config list
        picks = [result.timings[k][0] for k in order]
        measures, kernels = [], []
        for config in picks:
            kernel, inputs = self.build(_kernel_args(config))
            measures.append(_timer(kernel, self._inputs(kernel, inputs), self.profile_args.supply_type))
            kernels.append(kernel)
        samples = search.final_round(measures, warmup, rep)
        settle_final(result, order, samples)
        result.kernel = kernels[picks.index(result.config)]

    def _inputs(self, kernel: JITKernel, inputs):
        p = self.profile_args
        if inputs is not None:
            return list(inputs)
        if p.supply_prog is not None:
            return list(p.supply_prog(kernel.params))
        captured = get_autotune_inputs()
        if captured is not None:
            return list(captured)
        scalars = [q.name for q in kernel.params if q.is_scalar]
        if scalars:
            raise InputSupplyError(
                f"autotune cannot make up a value for the scalar parameter(s) {', '.join(map(repr, scalars))} of "
                f"kernel '{kernel.name}': tune inside `with set_autotune_inputs(tensor, ..., scalar):` (every "
                "input in order) or give supply_prog=")
        return kernel.get_profiler(p.supply_type)._inputs()

    def _measure(self, kernel: JITKernel, inputs, warmup: int, rep: int, best, factor: float) -> float:
        p = self.profile_args
        profiler = kernel.get_profiler(p.supply_type)
        ins = self._inputs(kernel, inputs)
        if p.ref_prog is not None and not p.skip_check:
            profiler.assert_allclose(p.ref_prog, input_tensors=ins, rtol=p.rtol, atol=p.atol,
                                     max_mismatched_ratio=p.max_mismatched_ratio)
        if p.manual_check_prog is not None:
            p.manual_check_prog(kernel(*ins), p.ref_prog(*ins) if p.ref_prog is not None else None)
        timer = _timer(kernel, ins, p.supply_type)
        if best is not None:  # early stop: a short probe first, the full timing only for contenders
            probe = timer(0, rep / 10)
            if probe > best * factor:
                return probe
        return timer(warmup, rep)


def _timer(kernel: JITKernel, ins: list, supply_type):
    """`timer(warmup, rep)` -> ms of the kernel on `ins`, with budgets `warmup` and `rep` in ms: the profiler's mean
    on a GPU, the fastest call on the CPU backend (`autotune_search.sample_ms`)."""
    if getattr(kernel, "target", None) == "cpu":
        return lambda warmup, rep: search.sample_ms(lambda: kernel(*ins), warmup, rep)
    profiler = kernel.get_profiler(supply_type)
    return lambda warmup, rep: profiler.do_bench(input_tensors=ins, warmup=warmup, rep=rep)


def settle_final(result: AutotuneResult, rows: list[int], samples: list[list[float]],
                 order: list[int] | None = None) -> None:
    """Name the winner from the final round's `samples` of the finalists in `rows` (their positions in
    result.timings; `order`: their indices in the config list, for a tie, default `rows`): `result.final` lists each
    finalist's median over the rounds (the figure that decided; the first-pass rows stay as measured, so the table
    compares like with like), the winner's config and latency (its median) are set and the configs tied with it
    listed."""
    best, tied = search.winner(samples, rows if order is None else order)
    result.final = [(dict(result.timings[k][0]), statistics.median(runs), len(runs)) for k, runs in zip(rows, samples)]
    result.config, result.latency = dict(result.timings[rows[best]][0]), statistics.median(samples[best])
    result.tied = [dict(result.timings[rows[k]][0]) for k in tied]


def _as_dict(args) -> dict:
    """A dataclass's fields by name, values as they are (callbacks are not copied)."""
    return {f.name: getattr(args, f.name) for f in fields(args)}


def _finish(result: AutotuneResult) -> AutotuneResult:
    result.func, result.libcode = result.kernel.prim_func, result.kernel.get_kernel_source()
    result.kernel.latency, result.kernel.config = result.latency, result.config
    return result


def config_list(configs, args=(), kwargs=None) -> list[dict]:
    """Configs as dicts; a callable is called with the kernel call's arguments, a dict of lists expanded."""
    items = configs(*args, **(kwargs or {})) if callable(configs) else configs
    if isinstance(items, dict):  # {"block_M": [64, 128], ...}: the cartesian product
        import itertools

        keys = list(items)
        return [dict(zip(keys, vals)) for vals in itertools.product(*(items[k] for k in keys))]
    return [dict(c) for c in items or []]


def _kernel_args(config: dict) -> dict:
    """A config without its "pass_configs" entry (TileLang's per-config pass options; our pipeline has none)."""
    return {k: v for k, v in config.items() if k != "pass_configs"}


def _all_failed(failures) -> Exception:
    first = failures[0][1]
    lines = [f"  {cfg}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
             for cfg, exc in failures[:8]]
    more = f"\n  ... and {len(failures) - 8} more" if len(failures) > 8 else ""
    first.add_note(f"autotune: all {len(failures)} configs failed; the first error is shown above. "
                   "Failures:\n" + "\n".join(lines) + more)
    return first


class AutoTuneKernel:
    """What `@autotune(configs=...)` on a `@tilelang.jit` function returns: calling it without the tuned
    arguments searches the configs (once per specialisation) and returns the best kernel; calling it with any
    tuned argument given compiles that one instance, as TileLang does.

    `_tuner_cache` (TileLang's name) maps each specialisation of a call (`specialisation`: its arguments by
    parameter name, tensors by shape, dtype and device, less the `do_not_specialize` ones) to the config it settled
    on ({} for an instance the call gave); a later call of the same specialisation builds that config for its own
    arguments (the JIT cache keeps the kernels) without searching again."""

    def __init__(self, target, configs, warmup: float, rep: float, early_stop: bool, early_stop_factor: float,
                 profile: dict, do_not_specialize=()):
        functools.update_wrapper(self, getattr(target, "factory", getattr(target, "func", target)))
        self.target = target
        self.configs = configs
        self.options = {"warmup": warmup, "rep": rep, "early_stop": early_stop,
                        "early_stop_factor": early_stop_factor}
        self.profile = profile
        self.do_not_specialize = _parameter_names(self.__wrapped__, do_not_specialize)
        self._tuner_cache: dict = {}
        self._lock = threading.Lock()

    @property
    def _eager(self) -> bool:
        return not isinstance(self.target, JITFactory)

    def __call__(self, *args, **kwargs):
        """Tune (or compile the given instance); a jit factory returns the kernel (TileLang's
        `__return_kernel=False`: an AutotuneResult around it), an eager kernel runs."""
        return_kernel = kwargs.pop("__return_kernel", True)
        if self._eager:
            kernel, inputs = self._best(args, kwargs, eager_call=True)
            return kernel(*inputs)
        kernel = self._best(args, kwargs)[0]
        if return_kernel:
            return kernel
        return AutotuneResult(latency=kernel.latency, config=kernel.config, ref_latency=kernel.ref_latency,
                              func=kernel.prim_func, kernel=kernel)

    def compile(self, *args, **kwargs) -> JITKernel:
        """The tuned JITKernel for these arguments (eager kernels time on `set_autotune_inputs` tensors)."""
        return self._best(args, kwargs)[0]

    def specialisation(self, args, kwargs, eager_call: bool = False) -> tuple:
        """The tuner cache's key of a call: its arguments by parameter name as written (defaults left out, so a call
        naming a tuned argument is not the search), tensors by shape, dtype and device, without the parameters in
        `do_not_specialize`."""
        try:
            named = inspect.signature(self.__wrapped__).bind_partial(*args, **kwargs).arguments
        except TypeError:  # the call itself is wrong: building it reports that
            named = {**{str(i): a for i, a in enumerate(args)}, **kwargs}
        kept = tuple((k, _spec_value(v)) for k, v in sorted(named.items()) if k not in self.do_not_specialize)
        return kept, eager_call

    def _best(self, args, kwargs, eager_call: bool = False):
        key = self.specialisation(args, kwargs, eager_call)
        with self._lock:
            known = self._tuner_cache.get(key)
        build = self._builder(args, kwargs, eager_call)
        if known is None:
            known = self._search(args, kwargs, eager_call)
            with self._lock:
                self._tuner_cache[key] = known
        kernel, inputs = build(known)
        if known:  # a search's pick (for another value of a do_not_specialize parameter, too)
            kernel.config = dict(known)
        return kernel, inputs

    def _search(self, args, kwargs, eager_call: bool) -> dict:
        configs = config_list(self.configs, args, kwargs)
        tuned = {k for c in configs for k in _kernel_args(c)}
        if self._given(tuned, args, kwargs):
            return {}
        tuner = AutoTuner(None, configs).set_profile_args(**self.profile)
        tuner.build = self._builder(args, kwargs, eager_call)
        if not self._eager:  # a jit factory: the search is remembered per factory source and call
            tuner.fn, tuner.identity = self.target, search.kernel_identity(self.target)
            tuner.call = repr((_freeze(args), sorted(kwargs.items())))
        result = tuner.run(**self.options)
        return _kernel_args(result.config)

    def _given(self, tuned: set, args, kwargs) -> bool:
        params = list(inspect.signature(self.__wrapped__).parameters)
        positional = set(params[:len(args)])
        return bool(tuned & (positional | set(kwargs)))

    def _builder(self, args, kwargs, eager_call: bool):
        target = self.target
        if not self._eager:
            return lambda cfg: (target(*args, **{**kwargs, **cfg}), None)
        if eager_call:
            return lambda cfg: target.specialize(*args, **{**kwargs, **cfg})
        inputs = get_autotune_inputs()
        if inputs is not None:
            params = target.signature.parameters
            scalars = {k: v for k, v in kwargs.items() if k in params}
            return lambda cfg: target.specialize(*inputs, **{**scalars, **cfg})
        named = dict(zip(target.signature.parameters, args))
        return lambda cfg: (target.compile(**{**named, **kwargs, **cfg}), None)


def _parameter_names(fn, names) -> frozenset:
    """`do_not_specialize` as a set of parameter names of `fn` (a string is one name); an unknown name is an
    error naming the parameters there are."""
    names = [names] if isinstance(names, str) else list(names or ())
    params = list(inspect.signature(fn).parameters)
    unknown = [n for n in names if n not in params]
    if unknown:
        raise ValueError(f"autotune do_not_specialize names {', '.join(map(repr, unknown))}, which "
                         f"{'is not a parameter' if len(unknown) == 1 else 'are not parameters'} of "
                         f"{getattr(fn, '__name__', 'the kernel')}({', '.join(params)})")
    return frozenset(names)


def _spec_value(value):
    """A call argument as the tuner cache tells specialisations apart: a tensor by shape, dtype and device."""
    if hasattr(value, "shape") and hasattr(value, "dtype") and hasattr(value, "device"):
        return ("tensor", tuple(value.shape), str(value.dtype), str(value.device))
    return _freeze(value)


def _freeze(value):
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def autotune(func=None, *, configs=None, warmup: float = 25, rep: float = 100, timeout=100, supply_type=None,
             ref_prog=None, supply_prog=None, rtol: float = 1e-2, atol: float = 1e-2,
             max_mismatched_ratio: float = 0.01, skip_check: bool = False, manual_check_prog=None,
             cache_input_tensors: bool = False, do_not_specialize=None, early_stop: bool = False,
             early_stop_factor: float = 2.0):
    """Decorator over `@tilelang.jit`: search `configs` (dicts of factory keyword arguments) for the fastest kernel."""
    if configs is None:
        raise TypeError("autotune needs configs=[{...}, ...]: use it as @autotune(configs=...) above @tilelang.jit")
    profile = {"supply_type": supply_type, "ref_prog": ref_prog, "supply_prog": supply_prog, "rtol": rtol,
               "atol": atol, "max_mismatched_ratio": max_mismatched_ratio, "skip_check": skip_check,
               "manual_check_prog": manual_check_prog}

    def wrap(target):
        if not isinstance(target, JITFactory) and not hasattr(target, "specialize"):
            target = jit(target)
        return AutoTuneKernel(target, configs, warmup, rep, early_stop, early_stop_factor, profile,
                              do_not_specialize)

    return wrap if func is None else wrap(func)
