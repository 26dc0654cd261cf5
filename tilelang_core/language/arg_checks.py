"""Arguments TileLang rejects as soon as a builtin is called, even outside a kernel body: the runtime stubs of
`T.<name>` run these checks before saying where the builtin belongs."""
from __future__ import annotations

from .registry import BindError, Builtin, bind

ROUNDING_MODES = ("rn", "rz", "ru", "rd")


def check_stub_arguments(builtin: Builtin, args: tuple, kwargs: dict) -> None:
    """Raise what a Python function with the builtin's signature raises at the call: TypeError for arguments that do
    not bind (an unknown keyword such as `T.gemm(..., use_2cta=True)`, too many or missing ones); ValueError for an
    argument value TileLang refuses at the call (an IEEE rounding mode that is none)."""
    try:
        bound = bind(builtin, list(args), kwargs)
    except BindError as err:
        raise TypeError(str(err)) from None
    mode = bound.get("rounding_mode") if builtin.name.startswith("T.ieee_") else None
    if isinstance(mode, str) and mode not in ROUNDING_MODES:
        raise ValueError(f"Invalid rounding mode {mode!r} for {builtin.name}; use one of "
                         f"{', '.join(map(repr, ROUNDING_MODES))}")
