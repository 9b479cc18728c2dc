"""JSON merge patch against RFC 7386's appendix A and JSON patch against RFC
6902's appendix A, plus the property that makes them useful: the merge patch
computed from two documents turns the first into the second."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kuota.server.patch import PatchError, json_patch, merge_patch

# RFC 7386 appendix A (the cases whose target and result are objects).
RFC7386 = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
]


@pytest.mark.parametrize(("target", "patch", "result"), RFC7386)
def test_merge_patch_rfc7386(target: dict[str, Any], patch: dict[str, Any], result: Any) -> None:
    before = repr(target)
    assert merge_patch(target, patch) == result
    assert repr(target) == before  # the live object is not changed in place


RFC6902 = [
    ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}], {"baz": "qux", "foo": "bar"}),
    (
        {"foo": ["bar", "baz"]},
        [{"op": "add", "path": "/foo/1", "value": "qux"}],
        {"foo": ["bar", "qux", "baz"]},
    ),
    ({"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}], {"foo": "bar"}),
    ({"foo": ["bar", "qux", "baz"]}, [{"op": "remove", "path": "/foo/1"}], {"foo": ["bar", "baz"]}),
    (
        {"baz": "qux", "foo": "bar"},
        [{"op": "replace", "path": "/baz", "value": "boo"}],
        {"baz": "boo", "foo": "bar"},
    ),
    (
        {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
        [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
        {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}},
    ),
    (
        {"foo": ["all", "grass", "cows", "eat"]},
        [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
        {"foo": ["all", "cows", "eat", "grass"]},
    ),
    (
        {"baz": "qux", "foo": ["a", 2, "c"]},
        [
            {"op": "test", "path": "/baz", "value": "qux"},
            {"op": "test", "path": "/foo/1", "value": 2},
        ],
        {"baz": "qux", "foo": ["a", 2, "c"]},
    ),
    (
        {"foo": "bar"},
        [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
        {"foo": "bar", "child": {"grandchild": {}}},
    ),
    (
        {"foo": ["bar"]},
        [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}],
        {"foo": ["bar", ["abc", "def"]]},
    ),
    ({"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": 10}], {"/": 9, "~1": 10}),
    ({"foo": 1}, [{"op": "copy", "from": "/foo", "path": "/bar"}], {"foo": 1, "bar": 1}),
]


@pytest.mark.parametrize(("doc", "ops", "result"), RFC6902)
def test_json_patch_rfc6902(doc: dict[str, Any], ops: list[Any], result: Any) -> None:
    before = repr(doc)
    assert json_patch(doc, ops) == result
    assert repr(doc) == before


@pytest.mark.parametrize(
    ("doc", "ops", "words"),
    [
        (
            {"baz": "qux"},
            [{"op": "test", "path": "/baz", "value": "bar"}],
            "testing value /baz failed",
        ),
        ({"foo": "bar"}, [{"op": "add", "path": "/baz/bat", "value": "qux"}], "missing path"),
        ({"foo": "bar"}, [{"op": "remove", "path": "/nope"}], "nonexistent key"),
        ({"foo": [1]}, [{"op": "add", "path": "/foo/5", "value": 1}], "out of bounds"),
        ({"foo": 1}, [{"op": "frob", "path": "/foo"}], "unexpected kind of operation"),
        ({"foo": 1}, [{"op": "add", "path": "/foo"}], "missing 'value'"),
    ],
)
def test_json_patch_errors_name_the_operation(
    doc: dict[str, Any], ops: list[Any], words: str
) -> None:
    with pytest.raises(PatchError, match=words):
        json_patch(doc, ops)


def test_a_failed_test_op_leaves_nothing_applied() -> None:
    doc = {"a": 1}
    with pytest.raises(PatchError):
        json_patch(
            doc,
            [{"op": "replace", "path": "/a", "value": 2}, {"op": "test", "path": "/a", "value": 1}],
        )
    assert doc == {"a": 1}


def _diff(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """The merge patch turning ``a`` into ``b`` (null values cannot be expressed)."""
    out: dict[str, Any] = {k: None for k in a if k not in b}
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(a.get(k), dict):
            sub = _diff(a[k], v)
            if sub:
                out[k] = sub
        elif a.get(k, object()) != v or k not in a:
            out[k] = v
    return out


_scalar = st.one_of(st.booleans(), st.integers(), st.text(max_size=3))
_value = st.recursive(
    _scalar,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=8,
)
_doc = st.dictionaries(st.text(max_size=2), _value, max_size=4)


@settings(max_examples=200, deadline=None)
@given(_doc, _doc)
def test_merge_patch_of_a_diff_reproduces_the_target(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert merge_patch(a, _diff(a, b)) == b


@settings(max_examples=200, deadline=None)
@given(_doc, _doc)
def test_json_patch_replacing_each_key_reproduces_the_target(
    a: dict[str, Any], b: dict[str, Any]
) -> None:
    ops: list[Any] = [
        {"op": "remove", "path": "/" + k.replace("~", "~0").replace("/", "~1")}
        for k in a
        if k not in b
    ]
    ops += [
        {"op": "add", "path": "/" + k.replace("~", "~0").replace("/", "~1"), "value": v}
        for k, v in b.items()
    ]
    assert json_patch(a, ops) == b
