"""Renderers of `tilelsp check` (text, json, sarif, github), on hand-made results: structure, not snapshots."""
from __future__ import annotations

import json

from tilelang_core.codes import CODES
from tilelang_core.diagnostics import Diagnostic, Fix, Related, Severity, TextEdit
from tilelang_core.source import Span
from tilelsp.cli.formats import FileResult, escape_data, escape_property, render, summary

TEXT = "import tilelang.language as T\nA_shared = T.alloc_shared((64, 32), 'float16')\n    T.gemm(A_shared, B_shared, C_local)\n"


def sample() -> list[FileResult]:
    gemm = Diagnostic(
        "gemm-shape-mismatch", Severity.ERROR, "K must agree (32 vs 64); make block_K the same for both",
        Span(3, 4, 3, 39), related=(Related(Span(2, 11, 2, 46), "A_shared allocated here"),),
        fix=Fix("use 64", (TextEdit(Span(2, 32, 2, 34), "64"),)), kernel="main", instance="matmul(M=1024)",
        target="sm_90a",
    )
    warn = Diagnostic("threads-not-warp-multiple", Severity.WARNING, "threads=100, 100%: round, up", Span(1, 0, 1, 6))
    return [FileResult("a/gemm.py", TEXT, [gemm]), FileResult("b.py", "x = 1\n", [warn]), FileResult("c.py", "")]


def test_text_has_location_code_caret_note_help_and_summary():
    out = render("text", sample())
    lines = out.splitlines()
    assert lines[0].startswith("a/gemm.py:3:5: error[gemm-shape-mismatch] K must agree")
    assert lines[1].endswith("T.gemm(A_shared, B_shared, C_local)") and lines[1].lstrip().startswith("3 |")
    caret_line = lines[2]
    assert caret_line.split("|", 1)[1] == " " * 5 + "^" + "~" * 34  # under columns 4..39
    assert "  note: a/gemm.py:2:12: A_shared allocated here" in lines
    assert "  help: use 64" in lines
    assert any(l.startswith("b.py:1:1: warning[threads-not-warp-multiple]") for l in lines)
    assert lines[-1] == "1 error, 1 warning in 3 files"
    assert "\x1b[" not in out


def test_text_colour_only_when_asked():
    assert "\x1b[1;31m" in render("text", sample(), color=True)


def test_caret_for_multiline_span_and_tabs():
    d = Diagnostic("undefined-name", Severity.ERROR, "m", Span(1, 2, 3, 1))
    out = render("text", [FileResult("t.py", "\tx = foo(\n1,\n)\n", [d])]).splitlines()
    assert out[2].split("|", 1)[1] == " \t ^~~~~~~"  # tab kept, underline to the end of the first line


def test_multiline_caret_stops_before_a_trailing_comment():
    d = Diagnostic("unsupported-syntax", Severity.ERROR, "m", Span(1, 0, 2, 8))
    out = render("text", [FileResult("t.py", "while s == '#': # x\n    pass\n", [d])]).splitlines()
    assert out[2].split("|", 1)[1] == " ^" + "~" * (len("while s == '#':") - 1)


def test_summary_plurals():
    assert summary([]) == "0 errors, 0 warnings in 0 files"
    assert summary(sample()[:1]) == "1 error, 0 warnings in 1 file"


def test_summary_says_when_no_file_holds_a_kernel():
    plain = [FileResult("a.py", kernels=0), FileResult("b.py", kernels=0)]
    assert summary(plain) == "no TileLang kernel found in 2 files"
    assert summary(plain + [FileResult("k.py", kernels=1)]) == "0 errors, 0 warnings in 3 files"
    assert summary(plain + [FileResult("u.py")]) == "0 errors, 0 warnings in 3 files"  # not known: no claim


def test_json_fields_are_one_based_and_end_exclusive():
    data = json.loads(render("json", sample()))
    assert [d["code"] for d in data] == ["gemm-shape-mismatch", "threads-not-warp-multiple"]
    first = data[0]
    assert (first["path"], first["line"], first["column"], first["end_line"], first["end_column"]) == ("a/gemm.py", 3, 5, 3, 40)
    assert (first["severity"], first["kernel"], first["instance"], first["target"]) == ("error", "main", "matmul(M=1024)", "sm_90a")
    assert first["related"] == [{"path": "a/gemm.py", "line": 2, "column": 12, "end_line": 2, "end_column": 47,
                                 "message": "A_shared allocated here"}]
    assert first["fix"]["edits"][0]["new_text"] == "64"
    assert json.loads(render("json", [])) == []


def test_sarif_structure():
    log = json.loads(render("sarif", sample(), version="1.2.3"))
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "tilelsp" and driver["version"] == "1.2.3"
    rule_ids = [r["id"] for r in driver["rules"]]
    assert rule_ids == list(CODES)
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["help"]["text"]
        assert rule["defaultConfiguration"]["level"] in {"error", "warning", "note"}
    res = run["results"][0]
    assert res["ruleId"] == "gemm-shape-mismatch" and res["level"] == "error"
    assert rule_ids[res["ruleIndex"]] == res["ruleId"]
    assert res["message"]["text"].startswith("K must agree")
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "a/gemm.py", "uriBaseId": "%SRCROOT%"}
    assert loc["region"] == {"startLine": 3, "startColumn": 5, "endLine": 3, "endColumn": 40}
    rel = res["relatedLocations"][0]
    assert rel["message"]["text"] == "A_shared allocated here" and rel["physicalLocation"]["region"]["startLine"] == 2
    assert run["results"][1]["level"] == "warning"
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file://")
    assert run["invocations"][0]["executionSuccessful"] is True


def test_sarif_absolute_path_and_spaces():
    d = Diagnostic("undefined-name", Severity.ERROR, "m", Span(1, 0, 1, 1))
    log = json.loads(render("sarif", [FileResult("/tmp/my dir/k.py", "x\n", [d]), FileResult("sub dir/k.py", "x\n", [d])]))
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]]
    assert uris == ["file:///tmp/my%20dir/k.py", "sub%20dir/k.py"]


def test_github_annotations_and_escaping():
    lines = render("github", sample()).splitlines()
    assert lines[0].startswith("::error file=a/gemm.py,line=3,col=5,endLine=3,endColumn=39,title=tilelsp(gemm-shape-mismatch)::")
    assert lines[0].endswith("%0Anote: a/gemm.py:2:12: A_shared allocated here")
    assert lines[1].startswith("::warning ") and lines[1].endswith("::threads=100, 100%25: round, up")
    assert escape_data("a%b\r\nc") == "a%25b%0D%0Ac"
    assert escape_property("x:y,z%") == "x%3Ay%2Cz%25"
    d = Diagnostic("undefined-name", Severity.INFO, "m", Span(1, 0, 2, 3))
    (line,) = render("github", [FileResult("p,q:r.py", "", [d])]).splitlines()
    assert line == "::notice file=p%2Cq%3Ar.py,line=1,col=1,endLine=2,title=tilelsp(undefined-name)::m"


def test_caret_under_wide_characters():
    d = Diagnostic("undefined-name", Severity.ERROR, "m", Span(1, 7, 1, 9))
    out = render("text", [FileResult("t.py", "s = '数据' + xy\n", [d])]).splitlines()
    # '数据' is 4 columns wide on a terminal, so the caret moves 2 to the right of the code-point column
    assert out[2].split("|", 1)[1] == " " + " " * 9 + "^~"


def test_instance_is_named_only_when_a_file_has_several():
    one = Diagnostic("threads-exceeded", Severity.ERROR, "m", Span(1, 0, 1, 1), instance="k(n=1)")
    two = Diagnostic("threads-exceeded", Severity.ERROR, "m2", Span(1, 0, 1, 1), instance="k(n=2)")
    assert "in instance" not in render("text", [FileResult("t.py", "x\n", [one])])
    out = render("text", [FileResult("t.py", "x\n", [one, two])]).splitlines()
    assert "  note: in instance k(n=1)" in out and "  note: in instance k(n=2)" in out


def test_json_carries_the_fix_the_server_offers_and_one_report_per_line(capsys):
    """`--format json` has the editor's quick fix (not `"fix": null`), and F[i] = F[i] * 2 is reported once."""
    from tilelsp import cli

    from tests.conftest import EXAMPLES

    cli.main(["check", str(EXAMPLES / "errors/shared_memory_exceeded.py"), str(EXAMPLES / "errors/threads_exceeded.py"),
              str(EXAMPLES / "errors/fragment_parallel_dynamic.py"), "--format", "json"])
    found = {d["code"]: d for d in json.loads(capsys.readouterr().out)}
    smem, threads = found["shared-memory-exceeded"]["fix"], found["threads-exceeded"]["fix"]
    assert smem["title"].startswith("Lower num_stages to ") and smem["edits"][0]["new_text"].isdigit()
    assert threads == {"title": "Set threads=1024", "edits": [dict(threads["edits"][0], new_text="1024")]}
    cli.main(["check", str(EXAMPLES / "errors/fragment_parallel_dynamic.py"), "--format", "json"])
    assert [d["code"] for d in json.loads(capsys.readouterr().out)] == ["fragment-parallel-dynamic"]
