"""kuota agrees with Kueue on Kueue's own webhook and CRD-schema test cases
(tests/validation, from ../shared/validation): valid files pass, invalid ones
fail with an error at the path Kueue reports."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from kuota.cli.files import read_file
from kuota.cli.main import main

CASES = sorted((Path(__file__).parents[1] / "validation").glob("*.yaml"))


def _expect(path: Path) -> tuple[str, str]:
    text = path.read_text()
    expect = re.search(r"^# expect: (\w+)", text, re.M)
    where = re.search(r"^# expect-path: (\S+)", text, re.M)
    assert expect, path
    return expect.group(1), where.group(1) if where else ""


def test_cases_are_present() -> None:
    assert len(CASES) >= 50


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_case(case: Path) -> None:
    expect, where = _expect(case)
    docs = read_file(case).documents
    assert len(docs) == 1
    doc = docs[0]
    if expect == "valid":
        assert doc.ok, [str(e) for e in doc.errors]
        assert doc.obj is not None
    else:
        assert not doc.ok, f"{case.name} should be rejected at {where}"
        paths = [e.path for e in doc.errors]
        assert where in paths, f"expected an error at {where}, got {[str(e) for e in doc.errors]}"


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)
def test_cli_exit_code_and_path(case: Path) -> None:
    expect, where = _expect(case)
    result = CliRunner().invoke(main, ["validate", str(case)])
    assert result.exit_code == (0 if expect == "valid" else 1), result.output
    if expect == "invalid":
        assert f"{where}:" in result.output
