"""`[tool.tilelsp]` discovery and validation (tilelsp.cli.config)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tilelsp.cli import config as cfg


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "pyproject.toml"
    path.write_text(body)
    return path


def test_nearest_pyproject_with_the_table_wins(tmp_path):
    write(tmp_path, '[tool.tilelsp]\ntargets = ["sm_80"]\n')
    inner = tmp_path / "pkg"
    (inner / "deep").mkdir(parents=True)
    (inner / "pyproject.toml").write_text('[project]\nname = "x"\n')  # no [tool.tilelsp]: skipped
    conf = cfg.load(inner / "deep")
    assert conf.path == tmp_path / "pyproject.toml" and conf.targets == ("sm_80",)


def test_values_are_parsed_and_targets_normalised(tmp_path):
    path = write(tmp_path, '[tool.tilelsp]\ntargets = ["sm_90a", "80"]\nselect = ["gemm-shape-mismatch"]\n'
                           'ignore = "threads-not-warp-multiple"\nexclude = ["examples/errors"]\n')
    conf = cfg.load(tmp_path)
    assert conf.path == path and conf.targets == ("sm_90a", "sm_80")
    assert conf.select == {"gemm-shape-mismatch"} and conf.ignore == {"threads-not-warp-multiple"}
    assert conf.excludes(tmp_path / "examples" / "errors" / "bad.py")
    assert not conf.excludes(tmp_path / "examples" / "gemm.py")


@pytest.mark.parametrize(
    "body, fragment",
    [
        ('targets = ["sm_100"]', "tool.tilelsp.targets: unknown target 'sm_100'"),
        ('select = ["gemm-shape-mismatc"]', "did you mean 'gemm-shape-mismatch'"),
        ("ignore = [1]", "tool.tilelsp.ignore must be a list of strings"),
        ('exlude = ["x"]', "unknown key tool.tilelsp.exlude"),
        ("targets = [", "cannot read [tool.tilelsp]"),
    ],
)
def test_malformed_config_names_the_key(tmp_path, body, fragment):
    write(tmp_path, f"[tool.tilelsp]\n{body}\n")
    with pytest.raises(cfg.ConfigError) as info:
        cfg.load(tmp_path)
    assert fragment in str(info.value)


@pytest.mark.parametrize("body", ['tool = 1\n# tool.tilelsp', '[tool]\ntilelsp = 3\n# tool.tilelsp'])
def test_tool_or_table_of_the_wrong_type(tmp_path, body):
    write(tmp_path, body)
    with pytest.raises(cfg.ConfigError, match="must be a table"):
        cfg.load(tmp_path)


def test_exclude_globs(tmp_path):
    conf = cfg.Config(root=tmp_path, exclude=("*_test.py", "build/*", "gen"))
    assert conf.excludes(tmp_path / "a" / "x_test.py")
    assert conf.excludes(tmp_path / "build" / "sub" / "k.py")
    assert conf.excludes(tmp_path / "src" / "gen" / "k.py")
    assert not conf.excludes(tmp_path / "src" / "k.py")
    assert not conf.excludes(Path("/elsewhere/x_test.py"))


def test_split_list_and_validation_messages():
    assert cfg.split_list(["a,b", " c ", ""]) == ["a", "b", "c"]
    with pytest.raises(cfg.ConfigError, match="known targets: .*sm_90a"):
        cfg.validate_targets(["sm_1"], "--target")
    assert cfg.validate_targets(["sm_90a", "sm_90a"], "--target") == ("sm_90a",)


def test_a_folder_named_by_the_user_is_not_excluded_by_its_own_path(tmp_path):
    conf = cfg.Config(root=tmp_path, exclude=("examples/errors", "errors", "gen"))
    inside = tmp_path / "examples" / "errors" / "k.py"
    assert conf.excludes(inside) and conf.excludes(inside, tmp_path / "examples")
    assert not conf.excludes(inside, tmp_path / "examples" / "errors")
    assert conf.excludes(tmp_path / "examples" / "errors" / "gen" / "k.py", tmp_path / "examples" / "errors")
