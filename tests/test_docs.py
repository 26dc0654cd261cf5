"""The generated docs (docs/language.md, docs/diagnostics.md) are up to date with the registry and code table."""
from __future__ import annotations

import subprocess
import sys

from tilelang_core import docgen
from tilelang_core.codes import CODES
from tilelang_core.language.catalog import BUILTINS


def test_generated_docs_are_current():
    stale = docgen.stale()
    assert not stale, f"run `python -m tilelang_core.docgen` to regenerate: {[str(p) for p in stale]}"


def test_check_flag_detects_a_stale_file(tmp_path):
    assert docgen.main(["--root", str(tmp_path)]) == 0
    assert docgen.main(["--check", "--root", str(tmp_path)]) == 0
    (tmp_path / "docs" / "diagnostics.md").write_text("old\n")
    assert docgen.main(["--check", "--root", str(tmp_path)]) == 1


def test_every_builtin_and_code_is_documented():
    language = docgen.render_language()
    for b in BUILTINS:
        if b.kind != "dtype":
            assert f"### `{b.name}`" in language and b.signature in language
        else:
            assert f"| `{b.returns}` |" in language
    diagnostics = docgen.render_diagnostics()
    for code, row in CODES.items():
        assert f"### `{code}`" in diagnostics and row.fix in diagnostics


def test_module_entry_point():
    out = subprocess.run([sys.executable, "-m", "tilelang_core.docgen", "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_overview_example_checks_clean():
    from tilelang_core.check import check_source

    text = "\n".join(docgen._OVERVIEW)
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    src = "import tilelang\nimport tilelang.language as T\n\n" + code + "\n\nkernel = matmul(1024, 1024, 1024)\n"
    result = check_source(src, "overview.py")
    assert result.kernels and not [d for d in result.diagnostics if d.is_error]


def test_real_tilelang_notes_name_existing_error_files():
    root = docgen.ROOT / "examples" / "errors"
    for code, (path, outcome) in docgen._REAL_TILELANG.items():
        assert code in CODES and outcome
        text = (root / path).read_text()
        assert f"[{code}]" in text, (code, path)
