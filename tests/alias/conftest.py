"""Fixtures of the alias tests: `tilelang`, the alias installed for one test (`import tilelang` is tilelang_core)."""
from __future__ import annotations

import importlib

import pytest


@pytest.fixture
def tilelang():
    from tilelang_core import alias

    alias.uninstall_alias()
    alias.install_alias(force=True)
    yield importlib.import_module("tilelang")
    alias.uninstall_alias()
