"""No module of the CUDA emitter reaches into another's private emitter state: a private attribute of the emitter is
used only by the module that defines it; emitter fields are assigned only by the emitter's own modules (lower.py and
its mixins); a field of a shared record (records.py) is assigned only by the modules its declaration names."""
from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

from tilelang_core.codegen.cuda import records
from tilelang_core.codegen.cuda.lower import KernelEmitter

CUDA = Path(__file__).resolve().parents[2] / "tilelang_core" / "codegen" / "cuda"
EMITTER_MODULES = {Path(inspect.getfile(c)).name for c in KernelEmitter.__mro__ if c.__module__.startswith(
    "tilelang_core.codegen.cuda.")}
RECORDS = {name: cls for name, cls in vars(records).items() if dataclasses.is_dataclass(cls) and isinstance(cls, type)}


def _record_attrs() -> dict[str, type]:
    """Emitter attribute -> record class, read from `self.<attr> = <Record>(...)` in the emitter's modules."""
    out = {}
    for module in EMITTER_MODULES:
        for node in ast.walk(ast.parse((CUDA / module).read_text())):
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and isinstance(
                    node.value.func, ast.Name) and node.value.func.id in RECORDS):
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        out[t.attr] = RECORDS[node.value.func.id]
    return out


def _writers(record: type, name: str) -> tuple:
    """The modules a record field's declaration lets assign it (none: only the record's own methods)."""
    for f in dataclasses.fields(record):
        if f.name == name:
            return tuple(f.metadata.get("writers", ()))
    return ()


def _defined(tree: ast.Module) -> set[str]:
    """Names a module defines for the emitter: its functions and methods, and attributes it assigns on `self`."""
    out = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    out |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store)
            and isinstance(n.value, ast.Name) and n.value.id == "self"}
    return out


def violations(module: str, source: str, record_attrs: dict[str, type]) -> list[str]:
    """What `module` (a file name) does to emitter state it does not own, one line each."""
    tree = ast.parse(source)
    own = module in EMITTER_MODULES
    defined = _defined(tree)

    def is_emitter(n) -> bool:
        if isinstance(n, ast.Name):
            return n.id in ("em", "emitter") or (own and n.id == "self")
        return isinstance(n, ast.Attribute) and n.attr == "em" and isinstance(n.value, ast.Name) and n.value.id == "self"

    aliases: dict[str, str] = {}  # local name -> the record attribute it holds (`state = self.barrier_state`)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            pairs = []
            for t in node.targets:
                if isinstance(t, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    pairs += zip(t.elts, node.value.elts)
                else:
                    pairs.append((t, node.value))
            for t, v in pairs:
                if (isinstance(t, ast.Name) and isinstance(v, ast.Attribute) and v.attr in record_attrs
                        and is_emitter(v.value)):
                    aliases[t.id] = v.attr
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        where = f"{module}:{node.lineno}"
        store = isinstance(node.ctx, (ast.Store, ast.Del))
        if is_emitter(node.value):
            if node.attr.startswith("_") and node.attr not in defined:
                out.append(f"{where} uses the emitter's private {node.attr}")
            elif store and not own:
                out.append(f"{where} assigns emitter field {node.attr} (only {sorted(EMITTER_MODULES)} may)")
            continue
        rec = None
        if isinstance(node.value, ast.Attribute) and node.value.attr in record_attrs and is_emitter(node.value.value):
            rec = node.value.attr
        elif isinstance(node.value, ast.Name) and node.value.id in aliases:
            rec = aliases[node.value.id]
        if rec is not None and store and module not in _writers(record_attrs[rec], node.attr):
            out.append(f"{where} assigns {rec}.{node.attr} (its writers: "
                       f"{list(_writers(record_attrs[rec], node.attr)) or 'the record methods only'})")
    return out


def test_the_records_are_found():
    attrs = _record_attrs()
    assert {"plan", "pipeline", "frame", "parallel_scope", "barrier_state", "roles", "device_library"} <= set(attrs)
    assert {"lower.py", "pipeline.py", "parallel.py", "frame.py"} <= EMITTER_MODULES


def test_every_declared_writer_exists():
    for record in RECORDS.values():
        for f in dataclasses.fields(record):
            for module in f.metadata.get("writers", ()):
                assert (CUDA / module).is_file(), f"{record.__name__}.{f.name}: no module {module}"


def test_no_module_touches_emitter_state_it_does_not_own():
    attrs = _record_attrs()
    found = [v for path in sorted(CUDA.glob("*.py")) for v in violations(path.name, path.read_text(), attrs)]
    assert found == []


def test_the_checker_flags_each_kind_of_violation():
    attrs = _record_attrs()
    source = ("def f(em):\n"
              "    em.depth += 1\n"                       # an emitter field, outside the emitter
              "    em.__dict__.get('sync')\n"             # private emitter state
              "    em.barrier_state.dirty_r = False\n"    # a record field with no writers but its methods
              "    state = em.roles\n"
              "    state.ring_base = None\n"              # through an alias, from a module that is no writer
              "    em.roles.ring_base = None\n")
    found = violations("copy.py", source, attrs)
    assert [v.split()[1] for v in found].count("assigns") == 4, found
    assert any("private __dict__" in v for v in found)
    assert any("emitter field depth" in v for v in found)
    assert violations("persistent.py", "def f(em):\n    em.roles.ring_base = None\n", attrs) == []
    assert violations("lower.py", "class E:\n    def f(self):\n        self.depth += 1\n", attrs) == []


def test_device_library_keeps_each_snippet_once_in_first_use_order():
    lib = records.DeviceLibrary()
    for code in ("a", "b", "a", "c"):
        lib.need(code)
    assert lib.snippets == ["a", "b", "c"]
    lib.renew("a", "a2")  # a table that grew: the new text goes after everything needed so far
    lib.renew(None, "d")
    assert lib.snippets == ["b", "c", "a2", "d"]


def test_diverging_and_barrier_marks_restore_and_reset():
    scope, barriers = records.ParallelScope(), records.BarrierState()
    try:
        with scope.diverging():
            with scope.diverging():
                assert scope.in_parallel == 2
                raise ValueError
    except ValueError:
        pass
    assert scope.in_parallel == 0
    barriers.touched(reads=False)
    assert (barriers.dirty_r, barriers.dirty_w) == (False, True)
    barriers.touched()
    barriers.synced()
    assert (barriers.dirty_r, barriers.dirty_w) == (False, False)
