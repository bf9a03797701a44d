"""docs/guarantees.md names a test for each row: every test it names exists."""

from __future__ import annotations

import ast
import re

from tests.conftest import REPO

DOC = REPO / "docs" / "guarantees.md"
_REF = re.compile(r"`(tests/[\w/]+\.py)::(\w+)`|`::(\w+)`")


def _tests(path: str) -> set[str]:
    tree = ast.parse((REPO / path).read_text())
    names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    names |= {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    return names


def test_every_test_named_in_the_guarantees_exists() -> None:
    text = DOC.read_text()
    checked = 0
    for line in text.splitlines():
        current = None  # a bare `::name` refers to the last file named on the same line
        for m in _REF.finditer(line):
            path, name = (m.group(1), m.group(2)) if m.group(1) else (current, m.group(3))
            assert path is not None, f"`::{name}` without a file before it: {line}"
            current = path
            assert (REPO / path).is_file(), f"{path} does not exist"
            assert name in _tests(path), f"{path}::{name} does not exist"
            checked += 1
    assert checked >= 30
