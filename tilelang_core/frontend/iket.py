"""TileLang's iket event markers inside a kernel (`from tilelang.tools.cuda import iket`): `iket.mark(name,
payload=...)`, `with iket.range(name):`, `iket.range_push/range_start(name)`, `iket.range_pop/range_end()`.

Each marker becomes `Evaluate(Call("iket_event", (Const(event_id), Const(name, "str"), Const(kind, "str"),
[payload])))`, kind "mark" | "range_start" | "range_end"; the CUDA backend writes a timestamped record to the
kernel's trace buffer (codegen/cuda/iket.py), the CPU backend ignores it. Events are emitted only while an iket
session is enabled (`compat/iket.py` sets `REGISTRY.enabled`); otherwise markers are no-ops, as in TileLang,
whose instrumentation also needs an active session. Event ids are process-wide, one per (name, kind).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..ir import nodes as N
from .expr_info import expr_dtype
from .kernel_errors import KernelError
from .values import BuiltinRef

PREFIXES = ("tilelang.tools.cuda.iket.", "tilelang.compat.iket.")  # the alias module's own name, in live mode
PAYLOAD_DTYPES = ("int32", "uint32", "float32")
MAX_NAME_BYTES = 32


@dataclass
class Registry:
    """The process's iket events: (name, kind) -> event dict; `enabled` while a session is active."""

    enabled: bool = False
    events: dict = field(default_factory=dict)

    def register(self, name: str, kind: str, payload: str | None, node) -> int:
        """The event id of (name, kind), allocated on first use; a second payload dtype is an error."""
        key = (name, kind)
        event = self.events.get(key)
        if event is None:
            event = {"name": name, "event_id": len(self.events) + 1, "kind": kind, "payload_type": payload}
            self.events[key] = event
        elif event["payload_type"] != payload and payload is not None:
            raise KernelError("bad-arguments", f"iket event `{name}` was registered with payload "
                              f"{event['payload_type']} and is used with {payload}; one name has one payload dtype",
                              node)
        return event["event_id"]


REGISTRY = Registry()


@dataclass(frozen=True)
class PayloadSpec:
    """`iket.payload(value, dtype)` inside a kernel."""

    value: N.Expr
    dtype: str


def is_iket(ref) -> bool:
    """True for a builtin of the iket module."""
    return isinstance(ref, BuiltinRef) and ref.name.startswith(PREFIXES)


def iket_call(p, ref: BuiltinRef, node: ast.Call):
    """A call of `iket.<name>` in a kernel body: a payload spec, or an event statement (emitted)."""
    short = ref.short
    args, kw = list(node.args), {k.arg: k.value for k in node.keywords if k.arg}
    if short == "payload":
        return _payload(p, args[0] if args else kw.get("expr"), args[1] if len(args) > 1 else kw.get("dtype"), node)
    kinds = {"mark": "mark", "range_push": "range_start", "range_start": "range_start", "range_pop": "range_end",
             "range_end": "range_end"}
    if short not in kinds:
        hint = "write `with iket.range(name):` around the statements" if short == "range" else \
            "it is a host-side helper: call it outside the kernel"
        raise KernelError("unsupported-syntax", f"`iket.{short}(...)` in a kernel body: {hint}", node)
    name_node = args[0] if args else kw.get("name")
    payload_node = args[1] if len(args) > 1 else kw.get("payload")
    stmt = event(p, node, name_node, kinds[short], payload_node)
    if stmt is not None:
        p.emit(stmt)
    return None


def ranged(p, call: ast.Call, body: list) -> list:
    """`with iket.range(name, payload=None):` around `body`: a range start, the body, a range end."""
    name_node = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "name"), None)
    payload_node = call.args[1] if len(call.args) > 1 else next(
        (k.value for k in call.keywords if k.arg == "payload"), None)
    start = event(p, call, name_node, "range_start", payload_node)
    end = event(p, call, name_node, "range_end", None)
    return body if start is None else [start, *body, end]


def event(p, node, name_node, kind: str, payload_node) -> N.Evaluate | None:
    """The event statement (None when no iket session is enabled)."""
    name = p.ev.eval(name_node) if name_node is not None else None
    if kind == "range_end" and name is None:
        name = "<range>"
    if not isinstance(name, str) or not name or len(name.encode()) > MAX_NAME_BYTES:
        raise KernelError("bad-arguments", f"an iket event name is a string of 1 to {MAX_NAME_BYTES} UTF-8 bytes "
                          f"(got `{ast.unparse(name_node) if name_node is not None else 'nothing'}`)", node)
    spec = None
    if payload_node is not None:
        value = p.ev.eval(payload_node)
        spec = value if isinstance(value, PayloadSpec) else _payload(p, payload_node, None, payload_node)
    event_id = REGISTRY.register(name, kind, spec.dtype if spec else None, node)
    if not REGISTRY.enabled:
        return None
    span = p.span(node)
    args = (N.Const(event_id), N.Const(name, "str"), N.Const(kind, "str")) + ((spec.value,) if spec else ())
    return N.Evaluate(N.Call("iket_event", args, "int32", span), span)


def _payload(p, value_node, dtype_node, node) -> PayloadSpec:
    """A 32-bit payload: int32 / uint32 / float32, the value converted to it."""
    if value_node is None:
        raise KernelError("bad-arguments", "iket.payload(value, dtype=...) needs a value", node)
    value = p.ev.scalar(value_node)
    dtype = p.ev.eval(dtype_node) if dtype_node is not None else None
    if dtype is None:
        inferred = expr_dtype(value)
        dtype = "float32" if str(inferred).startswith(("float", "bfloat")) else \
            "uint32" if str(inferred).startswith("uint") else "int32"
    dtype = str(dtype)
    if dtype not in PAYLOAD_DTYPES:
        raise KernelError("bad-arguments", f"an iket payload is one of {', '.join(PAYLOAD_DTYPES)} (got {dtype})",
                          dtype_node or node)
    return PayloadSpec(N.Cast(dtype, value, p.span(value_node)), dtype)
