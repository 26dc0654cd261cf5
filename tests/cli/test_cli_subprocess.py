"""`python -m tilelsp check` in a real process: exit codes, output streams, and no heavy imports."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

BAD = "import tilelang.language as T\n\ndef f(:\n    pass\n"


def tilelsp(*args, cwd=ROOT, code: str | None = None):
    env = dict(os.environ, NO_COLOR="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    cmd = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "tilelsp", *args]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def test_python_m_tilelsp_check_reports_syntax_error(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    proc = tilelsp("check", "bad.py", "--format", "github", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("::error file=bad.py,line=3,") and "title=tilelsp(syntax-error)" in proc.stdout
    assert proc.stderr == "tilelsp: 1 error, 0 warnings in 1 file\n"


def test_usage_error_in_a_process_exits_2(tmp_path):
    proc = tilelsp("check", "nope.py", cwd=tmp_path)
    assert proc.returncode == 2 and "nope.py: no such file or directory" in proc.stderr and proc.stdout == ""


def test_check_never_imports_tvm_torch_or_pygls():
    probe = ("import json, sys; from tilelsp.cli import main; code = main(sys.argv[1:]); "
             "print(json.dumps([code, [m for m in ('tvm', 'torch', 'pygls', 'lsprotocol') if m in sys.modules]]))")
    proc = tilelsp("check", str(EXAMPLES / "gemm.py"), "--format", "json", code=probe)
    code, heavy = json.loads(proc.stdout.splitlines()[-1])
    assert heavy == [] and code == 0, proc.stdout + proc.stderr


def test_python_warnings_about_the_users_code_stay_off_stderr(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONWARNINGS", "default")  # make DeprecationWarnings visible too
    (tmp_path / "w.py").write_text("import tilelang.language as T\nx = 1if True else 2\ns = '\\d'\n")
    proc = tilelsp("check", "w.py", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_ir_subcommand_is_wired_to_its_module():
    proc = tilelsp("ir", str(EXAMPLES / "gemm.py"), "--list-stages", "--target", "cpu")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[0] == "parsed" and "llvm" in proc.stdout.split()
