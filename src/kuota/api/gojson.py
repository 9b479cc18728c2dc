"""Go's encoding/json as Kueue's webhooks see it: the syntax check that runs
before decoding (its scanner's messages, which Kueue puts in field errors
verbatim) and the type errors of decoding into a slice of structs."""

from __future__ import annotations

import json
from typing import Any, Final

_SPACE: Final = " \t\r\n"


class GoJSONError(ValueError):
    """An error with the text Go's json.Unmarshal returns."""


def _quote(c: str) -> str:
    """scanner.go's quoteChar."""
    if c == "'":
        return "'\\''"
    if c == '"':
        return "'\"'"
    q = json.dumps(c)[1:-1] if ord(c) < 0x20 else c
    return f"'{q}'"


class _Scanner:
    """A recursive scan with the states of Go's scanner (step functions)."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def _fail(self, context: str) -> GoJSONError:
        if self.i >= len(self.s):
            return GoJSONError("unexpected end of JSON input")
        return GoJSONError(f"invalid character {_quote(self.s[self.i])} {context}")

    def _skip(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in _SPACE:
            self.i += 1

    def _peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def check(self) -> None:
        self._skip()
        self._value()
        self._skip()
        if self.i < len(self.s):
            raise self._fail("after top-level value")

    def _value(self) -> None:
        c = self._peek()
        if c == "{":
            self.i += 1
            self._object()
        elif c == "[":
            self.i += 1
            self._array()
        elif c == '"':
            self.i += 1
            self._string()
        elif c == "-" or (c.isdigit() and c.isascii()):
            self._number()
        elif c in ("t", "f", "n"):
            self._literal({"t": "true", "f": "false", "n": "null"}[c])
        else:
            raise self._fail("looking for beginning of value")

    def _object(self) -> None:
        self._skip()
        if self._peek() == "}":
            self.i += 1
            return
        while True:
            if self._peek() != '"':
                raise self._fail("looking for beginning of object key string")
            self.i += 1
            self._string()
            self._skip()
            if self._peek() != ":":
                raise self._fail("after object key")
            self.i += 1
            self._skip()
            self._value()
            self._skip()
            c = self._peek()
            if c == "}":
                self.i += 1
                return
            if c != ",":
                raise self._fail("after object key:value pair")
            self.i += 1
            self._skip()

    def _array(self) -> None:
        self._skip()
        if self._peek() == "]":
            self.i += 1
            return
        while True:
            self._value()
            self._skip()
            c = self._peek()
            if c == "]":
                self.i += 1
                return
            if c != ",":
                raise self._fail("after array element")
            self.i += 1
            self._skip()

    def _string(self) -> None:
        while True:
            c = self._peek()
            if c == "":
                raise self._fail("")
            if c == '"':
                self.i += 1
                return
            if c == "\\":
                self.i += 1
                e = self._peek()
                if e == "u":
                    self.i += 1
                    for _ in range(4):
                        if self._peek() == "" or self._peek() not in "0123456789abcdefABCDEF":
                            raise self._fail("in \\u hexadecimal character escape")
                        self.i += 1
                    continue
                if e == "" or e not in '"\\/bfnrt':
                    raise self._fail("in string escape code")
            elif ord(c) < 0x20:
                raise self._fail("in string literal")
            self.i += 1

    def _digits(self, context: str) -> None:
        if not (self._peek().isdigit() and self._peek().isascii()):
            raise self._fail(context)
        while self._peek().isdigit() and self._peek().isascii():
            self.i += 1

    def _number(self) -> None:
        if self._peek() == "-":
            self.i += 1
        if self._peek() == "0":
            self.i += 1
        else:
            self._digits("in numeric literal")
        if self._peek() == ".":
            self.i += 1
            self._digits("after decimal point in numeric literal")
        if self._peek() in ("e", "E"):
            self.i += 1
            if self._peek() in ("+", "-"):
                self.i += 1
            self._digits("in exponent of numeric literal")

    def _literal(self, word: str) -> None:
        for expected in word:
            if self._peek() != expected:
                raise self._fail(f"in literal {word} (expecting {_quote(expected)})")
            self.i += 1


def check_valid(text: str) -> None:
    """json.Valid with its error: the first character Go's scanner refuses."""
    _Scanner(text).check()


class _Number(str):
    """A JSON number as written (Go names it so in type errors)."""


def _kind(v: Any) -> str:
    if isinstance(v, _Number):
        return "number"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    return "object"


def unmarshal_structs(text: str, type_name: str, fields: dict[str, str]) -> list[dict[str, Any]]:
    """json.Unmarshal into ``[]type_name`` whose struct has ``fields`` (JSON
    name -> Go type: ``string`` or ``int32``): each element as a dict with
    every field (Go's zero value when absent). Keys match exactly, else case
    insensitively; unknown keys are dropped; the first type error is raised
    with Go's message, as Unmarshal returns it after decoding the rest."""
    check_valid(text)
    raw = json.loads(text, parse_int=_Number, parse_float=_Number, parse_constant=_Number)
    short = type_name.rsplit(".", 1)[-1]
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise GoJSONError(
            f"json: cannot unmarshal {_kind(raw)} into Go value of type []{type_name}"
        )
    out: list[dict[str, Any]] = []
    first: GoJSONError | None = None
    for item in raw:
        zero: dict[str, Any] = {n: "" if t == "string" else 0 for n, t in fields.items()}
        if item is None:
            out.append(zero)
            continue
        if not isinstance(item, dict):
            first = first or GoJSONError(
                f"json: cannot unmarshal {_kind(item)} into Go value of type {type_name}"
            )
            out.append(zero)
            continue
        for k, v in item.items():
            name = k if k in fields else next((n for n in fields if n.lower() == k.lower()), None)
            if name is None or v is None:
                continue
            typ = fields[name]
            where = f"Go struct field {short}.{name} of type {typ}"
            if typ == "string" and isinstance(v, str) and not isinstance(v, _Number):
                zero[name] = v
            elif typ == "int32" and isinstance(v, _Number) and _int32(v) is not None:
                zero[name] = _int32(v)
            else:
                shown = f"number {v}" if isinstance(v, _Number) else _kind(v)
                first = first or GoJSONError(f"json: cannot unmarshal {shown} into {where}")
        out.append(zero)
    if first is not None:
        raise first
    return out


def _int32(text: str) -> int | None:
    body = text[1:] if text.startswith("-") else text
    if not body.isdigit():
        return None
    v = int(text)
    return v if -(2**31) <= v < 2**31 else None
