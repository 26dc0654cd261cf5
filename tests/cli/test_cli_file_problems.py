"""Every subcommand treats a missing, unreadable, binary, empty, syntax-error or kernel-less file the way `check`
does: the same diagnostic, the same exit status (0 / 1 / 2), and never a traceback."""
from __future__ import annotations

import pytest

from tilelsp import cli

FILES = {  # name -> (bytes, exit status, what the output names)
    "binary.py": (b"\x00\x01\xff\xfe binary", 2, "file-unreadable"),
    "cookie.py": (b"# -*- coding: nope -*-\nx = 1\n", 2, "file-unreadable"),
    "syntax.py": (b"import tilelang\ndef f(:\n    pass\n", 1, "syntax-error"),
    "empty.py": (b"", 0, ""),
    "plain.py": (b"import tilelang\nx = 1\n", 0, ""),
}
COMMANDS = (["check"], ["ir", "--stage", "parsed"], ["verify", "--device", "cpu"])


@pytest.mark.parametrize("name", sorted(FILES))
def test_file_problems_are_reported_alike(tmp_path, capsys, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    data, status, code = FILES[name]
    (tmp_path / name).write_bytes(data)
    for command in COMMANDS:
        rc = cli.main([command[0], name, *command[1:]])
        out = capsys.readouterr()
        text = out.out + out.err
        assert rc == status, f"{command[0]} {name}: exit {rc}, expected {status}: {text}"
        assert "Traceback" not in text and "internal error" not in text
        if code:
            assert f"{name}:" in text and f"[{code}]" in text, f"{command[0]} {name}: {text}"
        if command[0] != "check" and not code:
            assert "has no TileLang kernels" in out.err


@pytest.mark.parametrize("command", [c[0] for c in COMMANDS])
def test_missing_file_and_folder_are_usage_errors(tmp_path, capsys, command):
    assert cli.main([command, str(tmp_path / "missing.py")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    if command != "check":  # check walks folders; the others need one file
        assert cli.main([command, str(tmp_path)]) == 2
        assert "is a folder" in capsys.readouterr().err


def test_ir_and_verify_agree_on_an_unknown_kernel(tmp_path, capsys):
    from pathlib import Path

    gemm = Path(__file__).resolve().parents[2] / "examples" / "gemm.py"
    assert cli.main(["ir", str(gemm), "--kernel", "nope", "--stage", "parsed"]) == 2
    assert "no kernel named 'nope'" in capsys.readouterr().err


LATIN1_KERNEL = '''# -*- coding: latin-1 -*-
# caf\xe9: a Latin-1 byte in a comment
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def add_one(N, block=64):
    @T.prim_func
    def main(A: T.Tensor((N,), T.float32), B: T.Tensor((N,), T.float32)):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] + 1.0
    return main


kernel = add_one(128)


def ref_program(A):
    return A + 1.0
'''


@pytest.mark.tvm
def test_every_command_honours_the_coding_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "latin.py").write_bytes(LATIN1_KERNEL.encode("latin-1"))
    for command in (["check"], ["ir", "--stage", "parsed"], ["verify", "--device", "cpu"]):
        rc = cli.main([command[0], "latin.py", *command[1:]])
        text = "".join(capsys.readouterr())
        assert rc == 0, f"{command[0]}: exit {rc}: {text}"
        assert "Traceback" not in text and "UnicodeDecodeError" not in text
        if command[0] == "verify":
            assert "PASS" in text


def test_every_command_is_bounded_on_a_huge_file(tmp_path, capsys, monkeypatch):
    """A file over the editor's size cap is refused at once (a generated 1.5 MB file of 3,790 kernels took 28 s to
    check and 46 s for `ir` before, and verify ran into its timeout)."""
    from tilelsp.features import check as check_child

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(check_child, "MAX_CHECK_CHARS", 200)
    (tmp_path / "huge.py").write_text("import tilelang\n" + "# padding\n" * 40)
    for command, status in ((["check"], 0), (["ir"], 2), (["layout"], 2), (["verify", "--device", "cpu"], 2),
                            (["bench", "--device", "cpu"], 2), (["autotune", "--device", "cpu"], 2)):
        rc = cli.main([command[0], "huge.py", *command[1:]])
        text = "".join(capsys.readouterr())
        assert rc == status, f"{command[0]}: exit {rc}: {text}"
        assert "[file-too-large]" in text and "split the kernels into smaller files" in text, text
