"""The code table is complete: every code emitted anywhere in the packages is a documented row."""
import re
from pathlib import Path

from tilelang_core.codes import CODES

ROOT = Path(__file__).resolve().parents[2]
EMIT = re.compile(r"""(?:emit|Diagnostic)\(\s*["']([a-z0-9-]+)["']""")


def test_every_emitted_code_is_in_the_table():
    emitted = {}
    for pkg in ("tilelang_core", "tilelsp"):
        for path in (ROOT / pkg).rglob("*.py"):
            for code in EMIT.findall(path.read_text()):
                emitted.setdefault(code, path)
    missing = {code: str(p) for code, p in emitted.items() if code not in CODES}
    assert not missing, f"codes emitted but not in tilelang_core/codes.py: {missing}"


def test_codes_are_kebab_case_and_documented():
    for code, row in CODES.items():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", code), code
        assert row.meaning and row.fix, code


def test_bind_suggests_the_closest_keyword_deterministically():
    import pytest

    from tilelang_core.language.builtin import BindError, Builtin, Param, bind

    gemm = Builtin("T.gemm", "tile-op", (Param("A"), Param("B"), Param("C"), Param("transpose_A", "bool", False),
                                         Param("transpose_B", "bool", False)))
    for _ in range(5):
        with pytest.raises(BindError, match="did you mean 'transpose_B'"):
            bind(gemm, ["a", "b", "c"], {"transpose_b": True})
