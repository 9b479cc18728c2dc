"""Label selectors in their string form, as ``kubectl -l`` and the API's
``labelSelector`` query parameter write them (apimachinery ``labels.Parse``):

    a=b  a==b  a!=b  a in (x,y)  a notin (x)  a  !a  a>3  a<3

joined by commas (all must hold). ``a!=b`` and ``notin`` also match objects
without the label; ``in (...)``, ``=`` and ``>``/``<`` need it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from kuota.api.meta import LabelSelector, selector_matches
from kuota.api.names import is_label_value, is_qualified_name

Op = Literal["Exists", "DoesNotExist", "In", "NotIn", "Gt", "Lt"]
Matcher = Callable[[Mapping[str, str] | None], bool]


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    op: Op
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.key)
        op = self.op
        if op == "In":
            return value is not None and value in self.values
        if op == "NotIn":
            return value is None or value not in self.values
        if op == "Exists":
            return value is not None
        if op == "DoesNotExist":
            return value is None
        if value is None:
            return False
        try:
            have = int(value)
        except ValueError:
            return False
        (bound,) = self.values
        return have > int(bound) if op == "Gt" else have < int(bound)


@dataclass(frozen=True, slots=True)
class Selector:
    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)


# Operators and punctuation, or an identifier (anything up to whitespace or one of them).
_TOKEN = re.compile(r"\s*(?:(==|!=|=|\(|\)|,|!|<|>)|([^\s!=,()<>]+))")
_KEYWORDS = {"in": "In", "notin": "NotIn"}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str]] = []  # (kind, text): kind "op" or "id"
        pos = 0
        while True:
            m = _TOKEN.match(text, pos)
            if m is None:
                if text[pos:].strip():
                    self.fail(f"unexpected character {text[pos:].lstrip()[0]!r}")
                break
            pos = m.end()
            self.tokens.append(("op", m.group(1)) if m.group(1) else ("id", m.group(2)))
        self.i = 0

    def fail(self, why: str) -> None:
        raise ValueError(f"invalid label selector {self.text!r}: {why}")

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str] | None:
        tok = self.peek()
        self.i += tok is not None
        return tok

    def parse(self) -> Selector:
        reqs: list[Requirement] = []
        if not self.tokens:
            return Selector(())
        while True:
            reqs.append(self.requirement())
            tok = self.take()
            if tok is None:
                return Selector(tuple(reqs))
            if tok != ("op", ","):
                self.fail(f"expected ',' or the end after a requirement, found {tok[1]!r}")

    def key(self) -> str:
        tok = self.take()
        if tok is None or tok[0] != "id" or tok[1] in _KEYWORDS:
            found = "the end" if tok is None else repr(tok[1])
            self.fail(f"expected a label key, found {found}")
            raise AssertionError  # unreachable: fail raises
        errs = is_qualified_name(tok[1])
        if errs:
            self.fail(f"key {tok[1]!r}: {'; '.join(errs)}")
        return tok[1]

    def value(self) -> str:
        tok = self.peek()
        if tok is None or tok[0] == "op":
            return ""  # ``a=`` selects the empty value
        self.i += 1
        errs = is_label_value(tok[1])
        if errs:
            self.fail(f"value {tok[1]!r}: {'; '.join(errs)}")
        return tok[1]

    def requirement(self) -> Requirement:
        if self.peek() == ("op", "!"):
            self.i += 1
            return Requirement(self.key(), "DoesNotExist")
        key = self.key()
        tok = self.peek()
        if tok is None or tok == ("op", ","):
            return Requirement(key, "Exists")
        self.i += 1
        kind, text = tok
        if kind == "op" and text in ("=", "=="):
            return Requirement(key, "In", frozenset((self.value(),)))
        if kind == "op" and text == "!=":
            return Requirement(key, "NotIn", frozenset((self.value(),)))
        if kind == "op" and text in ("<", ">"):
            bound = self.value()
            if not re.fullmatch(r"-?[0-9]+", bound):
                self.fail(f"{key}{text}{bound}: {text!r} needs an integer value")
            return Requirement(key, "Gt" if text == ">" else "Lt", frozenset((bound,)))
        if kind == "id" and text in _KEYWORDS:
            return Requirement(key, _KEYWORDS[text], self.value_set(key))  # type: ignore[arg-type]
        self.fail(
            f"expected an operator after {key!r} (=, ==, !=, in, notin, <, >), found {text!r}"
        )
        raise AssertionError  # unreachable

    def value_set(self, key: str) -> frozenset[str]:
        if self.take() != ("op", "("):
            self.fail(f"expected '(' after the set operator of {key!r}")
        values: list[str] = []
        while True:
            values.append(self.value())
            tok = self.take()
            if tok == ("op", ")"):
                return frozenset(values)
            if tok != ("op", ","):
                found = "the end" if tok is None else repr(tok[1])
                self.fail(f"expected ',' or ')' in the values of {key!r}, found {found}")


@functools.lru_cache(maxsize=256)
def parse_selector(text: str) -> Selector:
    """Parse the string form; raises ValueError saying what is wrong and where."""
    return _Parser(text).parse()


def everything(labels: Mapping[str, str] | None) -> bool:
    return True


def selector_matcher(sel: LabelSelector | str | None) -> Matcher:
    """A predicate on an object's labels. ``None`` and ``""`` select everything
    (as an absent ``labelSelector`` in a list request does); a LabelSelector
    struct matches as ``metav1.LabelSelectorAsSelector`` (``{}`` everything)."""
    if sel is None or sel == "":
        return everything
    if isinstance(sel, str):
        parsed = parse_selector(sel)
        if len(parsed.requirements) == 1 and parsed.requirements[0].op == "In":
            # The common ``key=value``: one lookup, no loop.
            req = parsed.requirements[0]
            key, values = req.key, req.values
            return lambda labels: labels is not None and labels.get(key) in values
        return parsed.matches
    return functools.partial(selector_matches, sel)
