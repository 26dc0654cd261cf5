"""`tilelsp check` end to end: exit codes, folders, parallelism, select/ignore, suppression, config, stdin."""
from __future__ import annotations

import io
import json
import os
import sys
import types

import pytest

from tilelsp import cli
from tilelsp.cli import check as check_command
from tilelsp.cli import parser as cli_parser

BAD = "import tilelang.language as T\n\ndef f(:\n    pass\n"  # syntax error at 3:7
CLEAN = "import tilelang.language as T\n\nx = 1\n"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A project folder (the cwd) with two broken files, a clean one and folders that must be skipped."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "b_bad.py").write_text(BAD)
    (tmp_path / "pkg" / "sub" / "a_bad.py").write_text(BAD)
    (tmp_path / "pkg" / "clean.py").write_text(CLEAN)
    (tmp_path / "pkg" / "notes.txt").write_text("def (:")
    for skipped in (".hidden", "node_modules", "venv_x"):
        (tmp_path / "pkg" / skipped).mkdir()
        (tmp_path / "pkg" / skipped / "bad.py").write_text(BAD)
    (tmp_path / "pkg" / "venv_x" / "pyvenv.cfg").write_text("home = /usr\n")
    return tmp_path


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_file_exits_0(tree, capsys):
    code, out, _ = run(capsys, "check", "pkg/clean.py")
    assert code == 0 and out.strip() == "no TileLang kernel found in 1 file"


def test_a_folder_without_kernels_says_so(tmp_path, capsys):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("import tilelang\nprint(tilelang)\n")
    code, out, _ = run(capsys, "check", str(tmp_path))
    assert code == 0 and out.strip() == "no TileLang kernel found in 2 files"


def test_syntax_error_is_reported_with_location_and_exit_1(tree, capsys):
    code, out, err = run(capsys, "check", "pkg/b_bad.py")
    assert code == 1
    assert out.startswith("pkg/b_bad.py:3:") and "error[syntax-error]" in out.splitlines()[0]
    assert "def f(:" in out and "^" in out
    assert "Traceback" not in out + err


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["check", "--bogus", "x.py"], "unrecognized arguments: --bogus"),
        (["check", "pkg", "--target", "sm_80,sm_100"], "unknown target 'sm_100'; known targets: "),
        (["check", "pkg", "--select", "gemm-shape-mismatch,no-such-code"], "unknown diagnostic code 'no-such-code'"),
        (["check", "pkg", "--ignore", "sintax-error"], "did you mean 'syntax-error'"),
        (["check", "missing.py"], "missing.py: no such file or directory"),
        (["check", "pkg", "--format", "xml"], "invalid choice: 'xml'"),
        (["check"], "the following arguments are required: PATH"),
    ],
)
def test_usage_errors_exit_2(tree, capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2 and fragment in err and out == ""


def test_folder_walk_skips_hidden_venv_node_modules_and_orders_paths(tree, capsys):
    code, out, _ = run(capsys, "check", "pkg", "--format", "json")
    assert code == 1
    assert [d["path"] for d in json.loads(out)] == ["pkg/b_bad.py", "pkg/sub/a_bad.py"]


def test_parallel_and_serial_give_the_same_output(tree, capsys):
    for name in ("c1.py", "c2.py", "c3.py"):
        (tree / "pkg" / name).write_text(BAD)
    serial = run(capsys, "check", "pkg", "--no-parallel")
    parallel = run(capsys, "check", "pkg")
    assert serial == parallel and serial[0] == 1
    assert serial[1].strip().endswith("5 errors, 0 warnings in 6 files")


def test_select_and_ignore(tree, capsys):
    assert run(capsys, "check", "pkg", "--ignore", "syntax-error")[0] == 0
    assert run(capsys, "check", "pkg", "--select", "undefined-name")[0] == 0
    assert run(capsys, "check", "pkg", "--select", "undefined-name", "--select", "syntax-error")[0] == 1


def test_suppression_comment(tree, capsys):
    (tree / "pkg" / "b_bad.py").write_text(BAD.replace("def f(:", "def f(:  # tilelsp: ignore[syntax-error]"))
    (tree / "pkg" / "sub" / "a_bad.py").write_text(BAD + "# tilelsp: ignore-file[syntax-error]\n")
    code, out, _ = run(capsys, "check", "pkg")
    assert code == 0, out


def test_pyproject_config_and_cli_override(tree, capsys):
    (tree / "pyproject.toml").write_text('[tool.tilelsp]\nignore = ["syntax-error"]\nexclude = ["pkg/sub"]\n')
    assert run(capsys, "check", "pkg")[0] == 0
    code, out, _ = run(capsys, "check", "pkg", "--ignore", "undefined-name", "--format", "json")
    assert code == 1 and [d["path"] for d in json.loads(out)] == ["pkg/b_bad.py"]  # pkg/sub still excluded
    assert run(capsys, "check", "pkg/sub/a_bad.py")[0] == 0  # named files are checked even when excluded...
    assert run(capsys, "check", "pkg/sub")[0] == 0  # ...and so are folders (syntax-error is still ignored)
    (tree / "pyproject.toml").write_text('[tool.tilelsp]\nexclude = ["pkg/sub"]\n')
    code, out, _ = run(capsys, "check", "pkg/sub")
    assert code == 1 and out.startswith("pkg/sub/a_bad.py:3:")
    (tree / "pyproject.toml").write_text('[tool.tilelsp]\ntargets = ["sm_1"]\n')
    code, _, err = run(capsys, "check", "pkg")
    assert code == 2 and "tool.tilelsp.targets" in err


def test_internal_error_is_reported_per_file_without_traceback(tree, capsys, monkeypatch):
    import tilelang_core.check

    def boom(text, path, **kw):
        if "clean" in path:
            raise RuntimeError("kaboom")
        return real(text, path, **kw)

    real = tilelang_core.check.check_source
    monkeypatch.setattr(tilelang_core.check, "check_source", boom)
    code, out, err = run(capsys, "check", "pkg", "--no-parallel")
    assert code == 2
    assert "pkg/clean.py:1:1: error[internal-error]" in out and "RuntimeError: kaboom" in out
    assert "pkg/b_bad.py:3:" in out  # the other files are still checked
    assert "Traceback" not in out + err
    code, out, err = run(capsys, "check", "pkg/clean.py", "--debug")
    assert code == 2 and "Traceback" in err and "kaboom" in err


def test_unreadable_file_exits_2(tree, capsys):
    (tree / "latin.py").write_bytes(b"x = '\xff\xfe'\n")
    code, out, _ = run(capsys, "check", "latin.py", "--format", "json")
    assert code == 2 and json.loads(out)[0]["code"] == "file-unreadable"


def test_stdin(tree, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=io.BytesIO(BAD.encode())))
    code, out, _ = run(capsys, "check", "-", "--stdin-filename", "pkg/edited.py")
    assert code == 1 and out.startswith("pkg/edited.py:3:")


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.startswith("tilelsp ")


def test_other_subcommands_dispatch_lazily(monkeypatch, capsys):
    seen = {}
    fake = types.ModuleType("tilelsp.cli.ir")
    fake.run_ir = lambda args: seen.setdefault("ir", args) and 0
    monkeypatch.setitem(sys.modules, "tilelsp.cli.ir", fake)
    assert cli.main(["ir", "k.py", "--kernel", "main", "--stage", "tir", "--target", "cpu"]) == 0
    args = seen["ir"]
    assert (args.file, args.kernel, args.stage, args.target, args.list_stages) == ("k.py", "main", "tir", "cpu", False)

    fake = types.ModuleType("tilelsp.cli.verify")
    fake.run_verify = lambda args: seen.setdefault("verify", args) and 3
    monkeypatch.setitem(sys.modules, "tilelsp.cli.verify", fake)
    assert cli.main(["verify", "k.py", "--device", "cpu", "--json", "--timeout", "5", "--bench"]) == 3
    v = seen["verify"]
    assert (v.device, v.json, v.timeout, v.bench, v.kernel) == ("cpu", True, 5.0, True, None)


def test_serve_and_no_subcommand_dispatch_to_the_server(monkeypatch):
    calls = []
    fake = types.ModuleType("tilelsp.server.app")
    fake.run_serve = lambda args: calls.append(args.tcp) or 0
    monkeypatch.setitem(sys.modules, "tilelsp.server.app", fake)
    assert cli.main(["serve", "--tcp", "127.0.0.1:2087"]) == 0
    assert cli.main(["serve", "--stdio"]) == 0
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert cli.main([]) == 0
    assert calls == ["127.0.0.1:2087", None, None]


def test_plain_serve_skips_the_argument_parser(monkeypatch):
    """`tilelsp serve --stdio` (what editors start) answers initialize sooner without building every parser."""
    calls = []
    fake = types.ModuleType("tilelsp.server.app")
    fake.run_serve = lambda args: calls.append((args.command, args.tcp)) or 0
    monkeypatch.setitem(sys.modules, "tilelsp.server.app", fake)
    monkeypatch.setattr(cli_parser, "build_parser", lambda: (_ for _ in ()).throw(AssertionError("parser built")))
    assert cli.main(["serve", "--stdio"]) == 0 and cli.main(["serve"]) == 0
    assert calls == [("serve", None), ("serve", None)]
    assert cli._plain_serve(["serve", "--tcp", "1:2"]) is None and cli._plain_serve(["check", "x.py"]) is None


def test_missing_subcommand_module_exits_2(capsys):
    assert cli._dispatch("tilelsp.no_such_module", "run", None, "tilelsp nothing") == 2
    assert "tilelsp nothing is not available" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["2087", "host:", "h:99999", "h:x"])
def test_serve_rejects_a_malformed_tcp_address(capsys, value):
    assert cli.main(["serve", "--tcp", value]) == 2
    assert "expected HOST:PORT" in capsys.readouterr().err


def test_warnings_alone_exit_0(tree, capsys):
    (tree / "w.py").write_text(CLEAN + "y = 2  # tilelsp: ignore[no-such-code]\n")
    code, out, _ = run(capsys, "check", "w.py")
    assert code == 0
    assert out.startswith("w.py:4:8: warning[suppression-unknown-code] `no-such-code` is not a tilelsp diagnostic code")
    assert out.splitlines()[-1] == "0 errors, 1 warning in 1 file"


def test_a_crash_outside_any_file_is_one_line_without_debug(tree, capsys, monkeypatch):
    def broken(*a, **k):
        raise ValueError("walk failed")

    monkeypatch.setattr(check_command, "collect_jobs", broken)
    code, out, err = run(capsys, "check", "pkg")
    assert code == 2 and "tilelsp: error: internal error: ValueError: walk failed" in err and "Traceback" not in err
    code, out, err = run(capsys, "check", "pkg", "--debug")
    assert code == 2 and "Traceback" in err


def test_files_in_a_walk_that_never_mention_tilelang_are_skipped_unless_named(tree, capsys):
    (tree / "pkg" / "plain.py").write_text("def f(:\n")
    code, out, _ = run(capsys, "check", "pkg", "--ignore", "syntax-error")
    assert code == 0
    code, out, _ = run(capsys, "check", "pkg", "pkg/plain.py", "--select", "syntax-error", "--format", "json")
    assert code == 1 and "pkg/plain.py" in [d["path"] for d in json.loads(out)]
    code, out, _ = run(capsys, "check", "pkg", "--select", "syntax-error", "--format", "json")
    assert "pkg/plain.py" not in [d["path"] for d in json.loads(out)]


def test_source_reading_encodings_and_newlines(tmp_path):
    from tilelang_core.source import read_python_source as read_source

    (tmp_path / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\ns = '\xe9'\r\nt = 1\r\n")
    assert read_source(str(tmp_path / "latin.py")) == "# -*- coding: latin-1 -*-\ns = '\u00e9'\nt = 1\n"
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbfx = 1\n")
    assert read_source(str(tmp_path / "bom.py")) == "x = 1\n"
    (tmp_path / "cookie.py").write_bytes(b"# coding: no-such-codec\nx = 1\n")
    assert isinstance(read_source(str(tmp_path / "cookie.py")), SyntaxError)
    assert isinstance(read_source(str(tmp_path / "missing.py")), OSError)


def _pid_result(job):
    """Stands in for check_file: records which process checked the job."""
    from tilelsp.cli.formats import FileResult

    return FileResult(f"{job.display}@{os.getpid()}")


def test_several_files_really_go_to_worker_processes_in_order(monkeypatch):
    monkeypatch.setattr(check_command, "check_file", _pid_result)
    monkeypatch.setattr(check_command, "_cpu_count", lambda: 2)
    jobs = [check_command.Job(f"f{i}.py", f"f{i}.py", ("sm_90a",), None, frozenset(), True) for i in range(6)]
    results = check_command.run_jobs(jobs, parallel=True)
    names = [r.path.split("@")[0] for r in results]
    pids = {int(r.path.split("@")[1]) for r in results}
    assert names == [j.display for j in jobs] and os.getpid() not in pids
    serial = check_command.run_jobs(jobs[:2], parallel=True)  # too few files for a pool
    assert {int(r.path.split("@")[1]) for r in serial} == {os.getpid()}


def test_colour_follows_tty_and_no_color(tree, capsys, monkeypatch):
    monkeypatch.setattr(check_command, "_stdout_is_tty", lambda: True)
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert "\x1b[" in run(capsys, "check", "pkg/b_bad.py")[1]
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in run(capsys, "check", "pkg/b_bad.py")[1]
    assert "\x1b[" in run(capsys, "check", "pkg/b_bad.py", "--color", "always")[1]
    monkeypatch.setattr(check_command, "_stdout_is_tty", lambda: False)
    monkeypatch.delenv("NO_COLOR")
    assert "\x1b[" not in run(capsys, "check", "pkg/b_bad.py")[1]
    assert "\x1b[" not in run(capsys, "check", "pkg/b_bad.py", "--format", "json")[1]
