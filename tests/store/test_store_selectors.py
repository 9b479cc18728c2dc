"""Label selector strings (apimachinery labels.Parse) and JSON merge patch (RFC 7386)."""

from __future__ import annotations

from typing import Any

import pytest

from kuota.api.meta import LabelSelector
from kuota.store.merge import merge_patch
from kuota.store.selectors import Requirement, parse_selector, selector_matcher

LABELS = {"env": "prod", "tier": "web", "replicas": "3", "empty": ""}


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ("", True),
        ("env=prod", True),
        ("env==prod", True),
        ("env = prod", True),
        ("env=dev", False),
        ("env!=dev", True),
        ("env!=prod", False),
        ("missing!=x", True),
        ("env in (dev, prod)", True),
        ("env in (dev)", False),
        ("missing in (x)", False),
        ("env notin (dev)", True),
        ("env notin (prod,dev)", False),
        ("missing notin (x)", True),
        ("env", True),
        ("missing", False),
        ("!missing", True),
        ("!env", False),
        ("replicas>2", True),
        ("replicas<3", False),
        ("env>2", False),  # not an integer label: no match
        ("empty=", True),
        ("empty in ()", True),
        ("env=prod,tier=web,!missing", True),
        ("env=prod,tier=db", False),
        ("  env  ,  tier in ( web ) ", True),
        ("example.com/key!=v", True),
    ],
)
def test_selector_matches(text: str, matches: bool) -> None:
    assert parse_selector(text).matches(LABELS) is matches
    assert selector_matcher(text)(LABELS) is matches


def test_parsed_requirements() -> None:
    sel = parse_selector("a=b,c!=d,e in (x,y),f notin (z),g,!h")
    assert sel.requirements == (
        Requirement("a", "In", frozenset({"b"})),
        Requirement("c", "NotIn", frozenset({"d"})),
        Requirement("e", "In", frozenset({"x", "y"})),
        Requirement("f", "NotIn", frozenset({"z"})),
        Requirement("g", "Exists"),
        Requirement("h", "DoesNotExist"),
    )


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("a in (b", "expected ',' or ')'"),
        ("a in b", "expected '('"),
        ("a=b=c", "expected ',' or the end"),
        ("a,", "expected a label key, found the end"),
        (",a", "expected a label key"),
        ("a b", "expected an operator"),
        ("a>b", "needs an integer"),
        ("bad key!=x", "expected an operator"),
        ("-a=b", "key '-a'"),
        ("a=-b-", "value '-b-'"),
        ("in=x", "expected a label key"),
        ("!", "expected a label key"),
    ],
)
def test_bad_selectors(text: str, why: str) -> None:
    with pytest.raises(ValueError, match="invalid label selector") as err:
        parse_selector(text)
    assert why in str(err.value)


def test_selector_none_and_structs() -> None:
    assert selector_matcher(None)(None)
    assert selector_matcher(LabelSelector())({"a": "b"})
    assert selector_matcher(LabelSelector(match_labels={"env": "prod"}))(LABELS)
    assert not selector_matcher(LabelSelector(match_labels={"env": "dev"}))(LABELS)
    assert not selector_matcher("env")(None)


# ------------------------------------------------------------------ merge patch
# The examples of RFC 7386, appendix A.
RFC_CASES: list[tuple[Any, Any, Any]] = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("target", "patch", "result"), RFC_CASES)
def test_rfc7386_examples(target: Any, patch: Any, result: Any) -> None:
    assert merge_patch(target, patch) == result


def test_merge_patch_changes_neither_argument() -> None:
    target = {"a": {"b": 1, "c": [1, 2]}, "d": 1}
    patch = {"a": {"b": None, "e": {"f": [3]}}, "d": None}
    out = merge_patch(target, patch)
    assert out == {"a": {"c": [1, 2], "e": {"f": [3]}}}
    assert target == {"a": {"b": 1, "c": [1, 2]}, "d": 1}
    assert patch == {"a": {"b": None, "e": {"f": [3]}}, "d": None}
    out["a"]["e"]["f"].append(4)
    assert patch["a"]["e"]["f"] == [3]  # type: ignore[index]
