"""Thousands of mutated manifests through the validator: never a crash, and
every rejection names a field path."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kuota.api.decode import decode_object

HERE = Path(__file__).parents[1]  # tests/
SEEDS: list[dict[str, Any]] = [
    d
    for p in sorted((HERE / "validation").glob("*.yaml"))
    + sorted((HERE / "fixtures" / "manifests").glob("*.yaml"))
    for d in yaml.safe_load_all(p.read_text())
    if isinstance(d, dict)
]

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(
        ["-1", "1e999", "1.5Ki", "", "Never", "main", "a_b", "x" * 300, "TryNextFlavor"]
    ),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


def _paths(v: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(v, dict):
        for k, x in v.items():
            out += _paths(x, (*prefix, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += _paths(x, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    doc = copy.deepcopy(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        paths = _paths(doc)
        target = draw(st.sampled_from(paths))
        if not target:
            continue
        parent: Any = doc
        for step in target[:-1]:
            parent = parent[step]
        last = target[-1]
        action = draw(st.sampled_from(["replace", "delete", "duplicate", "add"]))
        if action == "replace":
            parent[last] = draw(JUNK)
        elif action == "delete":
            del parent[last]
        elif action == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(JUNK)
    return doc


@settings(max_examples=3000)
@given(mutated())
def test_mutated_manifests_never_crash_and_errors_have_paths(doc: dict[str, Any]) -> None:
    result = decode_object(doc, source="fuzz")
    if result.ok:
        assert result.obj is not None
    for err in result.errors:
        assert isinstance(err.path, str)
        # Only a document that is not an object at all may lack a path.
        assert err.path or not isinstance(doc, dict) or err.type, err
        assert str(err)
    assert result.errors or result.obj is not None
