"""The CEL environment of ``kuota.api.cel``: cel-expr-python's runtime with
the functions Kubernetes' base environment adds (strings, lists, sets,
regex, quantity), imported only when a rule is first compiled (the runtime
is a 14 MB library most runs never need).

Pure: no I/O.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import Any, Final

from cel_expr_python import cel
from cel_expr_python.ext import ext_optional

from kuota.api import cel_net
from kuota.api.quantity import Quantity, QuantityError

__all__ = ["ERROR", "env"]

# A quantity is carried through CEL as a one-key map (Python functions can
# return no opaque value to cel-cpp), under a key no Kubernetes field is named.
_Q: Final = "@kubernetes.Quantity"
_DYN = cel.Type.DYN
_LIST = cel.Type.List(cel.Type.DYN)
_MAP = cel.Type.Map(cel.Type.STRING, cel.Type.DYN)
_STR = cel.Type.STRING
_INT = cel.Type.INT
_BOOL = cel.Type.BOOL
_DOUBLE = cel.Type.DOUBLE


def _q(v: Any) -> Quantity:
    if not isinstance(v, dict) or _Q not in v:
        raise ValueError("no such overload")
    return Quantity.parse(v[_Q])


def _qv(q: Quantity) -> dict[str, str]:
    return {_Q: str(q)}


def _quantity(s: str) -> dict[str, str]:
    try:
        return _qv(Quantity.parse(s))
    except QuantityError as err:
        raise ValueError(f"quantities must match the regular expression: {err}") from err


def _is_quantity(s: str) -> bool:
    try:
        Quantity.parse(s)
    except QuantityError:
        return False
    return True


def _cmp(a: Any, b: Any) -> int:
    x, y = _q(a), _q(b)
    return (x > y) - (x < y)


def _as_integer(a: Any) -> int:
    q = _q(a)
    if q.nanos % 1_000_000_000 or not -(2**63) <= q.value() < 2**63:
        raise ValueError("cannot convert value to integer")
    return q.value()


def _sorted(xs: list[Any]) -> bool:
    return all(xs[i] <= xs[i + 1] for i in range(len(xs) - 1))


def _sum(xs: list[Any]) -> Any:
    if xs and isinstance(xs[0], dict):
        total = Quantity.parse("0")
        for x in xs:
            total = total + _q(x)
        return _qv(total)
    return sum(xs)


def _extreme(pick: Callable[[Iterable[Any]], Any]) -> Callable[[list[Any]], Any]:
    def f(xs: list[Any]) -> Any:
        if not xs:
            raise ValueError(
                "min called on empty list" if pick is min else "max called on empty list"
            )
        return pick(xs)

    return f


def _index_of(xs: list[Any], v: Any) -> int:
    return next((i for i, x in enumerate(xs) if x == v), -1)


def _last_index_of(xs: list[Any], v: Any) -> int:
    return next((i for i in range(len(xs) - 1, -1, -1) if xs[i] == v), -1)


@functools.lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _find(s: str, pattern: str) -> str:
    m = _regex(pattern).search(s)
    return m.group(0) if m else ""


def _find_all(s: str, pattern: str, n: int = -1) -> list[str]:
    found = [m.group(0) for m in _regex(pattern).finditer(s)]
    return found if n < 0 else found[:n]


def _str_index(s: str, sub: str, start: int = 0) -> int:
    if not 0 <= start <= len(s):
        raise ValueError(f"index out of range: {start}")
    return s.find(sub, start)


def _str_last_index(s: str, sub: str, end: int | None = None) -> int:
    if end is None:
        return s.rfind(sub)
    if not 0 <= end < max(len(s), 1):
        raise ValueError(f"index out of range: {end}")
    return s.rfind(sub, 0, end + len(sub))


def _substring(s: str, start: int, end: int | None = None) -> str:
    stop = len(s) if end is None else end
    if not 0 <= start <= len(s) or not start <= stop <= len(s):
        raise ValueError(f"index out of range: {start if not 0 <= start <= len(s) else stop}")
    return s[start:stop]


def _char_at(s: str, i: int) -> str:
    if not 0 <= i <= len(s):
        raise ValueError(f"index out of range: {i}")
    return s[i : i + 1]


def _split(s: str, sep: str, n: int = -1) -> list[str]:
    if n == 0:
        return []
    if sep == "":
        parts = list(s)
        return parts if n < 0 or n >= len(parts) else [*parts[: n - 1], s[n - 1 :]]
    return s.split(sep, n - 1 if n > 0 else -1)


def _replace(s: str, old: str, new: str, n: int = -1) -> str:
    return s.replace(old, new, n)


def _ascii(f: Callable[[str], str]) -> Callable[[str], str]:
    return lambda s: "".join(f(c) if c.isascii() else c for c in s)


def _string_functions() -> list[Any]:
    """The strings extension (cel-go's ext.Strings, as Kubernetes loads it)."""
    ls = cel.Type.List(_STR)
    o = cel.Overload
    return [
        cel.FunctionDecl("charAt", [o("string_char_at_int", _STR, [_STR, _INT], True, _char_at)]),
        cel.FunctionDecl(
            "lowerAscii", [o("string_lower_ascii", _STR, [_STR], True, _ascii(str.lower))]
        ),
        cel.FunctionDecl(
            "upperAscii", [o("string_upper_ascii", _STR, [_STR], True, _ascii(str.upper))]
        ),
        cel.FunctionDecl(
            "replace",
            [
                o("string_replace_string_string", _STR, [_STR, _STR, _STR], True, _replace),
                o(
                    "string_replace_string_string_int",
                    _STR,
                    [_STR, _STR, _STR, _INT],
                    True,
                    _replace,
                ),
            ],
        ),
        cel.FunctionDecl(
            "split",
            [
                o("string_split_string", ls, [_STR, _STR], True, _split),
                o("string_split_string_int", ls, [_STR, _STR, _INT], True, _split),
            ],
        ),
        cel.FunctionDecl(
            "substring",
            [
                o("string_substring_int", _STR, [_STR, _INT], True, _substring),
                o("string_substring_int_int", _STR, [_STR, _INT, _INT], True, _substring),
            ],
        ),
        cel.FunctionDecl("trim", [o("string_trim", _STR, [_STR], True, lambda s: s.strip())]),
        cel.FunctionDecl("reverse", [o("string_reverse", _STR, [_STR], True, lambda s: s[::-1])]),
        cel.FunctionDecl(
            "join",
            [
                o("list_join", _STR, [ls], True, lambda xs: "".join(xs)),
                o("list_join_string", _STR, [ls, _STR], True, lambda xs, sep: sep.join(xs)),
            ],
        ),
    ]


def _per_element(oid: str, impl: Callable[[list[Any], Any], int]) -> list[Any]:
    """One overload per element type: cel-cpp matches a ``dyn`` parameter
    to no runtime value."""
    return [
        cel.Overload(f"{oid}_{t.name().lower()}", _INT, [_LIST, t], True, impl)
        for t in (_INT, _STR, _DOUBLE, _BOOL, cel.Type.UINT, _MAP, _LIST)
    ]


def _overload(
    name: str, oid: str, ret: Any, params: list[Any], impl: Callable[..., Any], member: bool = True
) -> cel.FunctionDecl:
    return cel.FunctionDecl(name, [cel.Overload(oid, ret, params, is_member=member, impl=impl)])


def _functions() -> list[Any]:
    def qq(f: Callable[[Quantity, Quantity], Any]) -> Callable[[Any, Any], Any]:
        return lambda a, b: f(_q(a), _q(b))

    out = [
        # lists (k8s.io/apiserver/pkg/cel/library/lists.go)
        _overload("isSorted", "list_is_sorted", _BOOL, [_LIST], _sorted),
        _overload("sum", "list_sum", _DYN, [_LIST], _sum),
        _overload("min", "list_min", _DYN, [_LIST], _extreme(min)),
        _overload("max", "list_max", _DYN, [_LIST], _extreme(max)),
        # indexOf and lastIndexOf on strings (the strings extension's) and on
        # lists (Kubernetes' lists library) are one function each.
        cel.FunctionDecl(
            "indexOf",
            [
                cel.Overload("string_index_of", _INT, [_STR, _STR], True, _str_index),
                cel.Overload("string_index_of_int", _INT, [_STR, _STR, _INT], True, _str_index),
                *_per_element("list_index_of", _index_of),
            ],
        ),
        cel.FunctionDecl(
            "lastIndexOf",
            [
                cel.Overload("string_last_index_of", _INT, [_STR, _STR], True, _str_last_index),
                cel.Overload(
                    "string_last_index_of_int", _INT, [_STR, _STR, _INT], True, _str_last_index
                ),
                *_per_element("list_last_index_of", _last_index_of),
            ],
        ),
        *_string_functions(),
        # sets (library/sets.go)
        _overload(
            "sets.contains",
            "list_sets_contains_list",
            _BOOL,
            [_LIST, _LIST],
            lambda a, b: all(x in a for x in b),
            member=False,
        ),
        _overload(
            "sets.equivalent",
            "list_sets_equivalent_list",
            _BOOL,
            [_LIST, _LIST],
            lambda a, b: all(x in a for x in b) and all(x in b for x in a),
            member=False,
        ),
        _overload(
            "sets.intersects",
            "list_sets_intersects_list",
            _BOOL,
            [_LIST, _LIST],
            lambda a, b: any(x in a for x in b),
            member=False,
        ),
        # regex (library/regex.go)
        _overload("find", "string_find_string", _STR, [_STR, _STR], _find),
        cel.FunctionDecl(
            "findAll",
            [
                cel.Overload(
                    "string_find_all_string", cel.Type.List(_STR), [_STR, _STR], True, _find_all
                ),
                cel.Overload(
                    "string_find_all_string_int",
                    cel.Type.List(_STR),
                    [_STR, _STR, _INT],
                    True,
                    _find_all,
                ),
            ],
        ),
        # quantity (library/quantity.go)
        _overload("quantity", "string_to_quantity", _MAP, [_STR], _quantity, member=False),
        _overload("isQuantity", "is_quantity_string", _BOOL, [_STR], _is_quantity, member=False),
        _overload("sign", "quantity_sign", _INT, [_MAP], lambda a: _q(a).sign()),
        _overload(
            "isInteger", "quantity_is_integer", _BOOL, [_MAP], lambda a: not _q(a).nanos % 10**9
        ),
        _overload("asInteger", "quantity_as_integer", _INT, [_MAP], _as_integer),
        _overload(
            "asApproximateFloat",
            "quantity_as_float",
            _DOUBLE,
            [_MAP],
            lambda a: _q(a).nanos / 1e9,
        ),
        _overload(
            "isGreaterThan", "quantity_is_greater_than", _BOOL, [_MAP, _MAP], qq(lambda a, b: a > b)
        ),
        _overload(
            "isLessThan", "quantity_is_less_than", _BOOL, [_MAP, _MAP], qq(lambda a, b: a < b)
        ),
        _overload("compareTo", "quantity_compare_to", _INT, [_MAP, _MAP], _cmp),
        cel.FunctionDecl(
            "add",
            [
                cel.Overload("quantity_add", _MAP, [_MAP, _MAP], True, qq(lambda a, b: _qv(a + b))),
                cel.Overload(
                    "quantity_add_int",
                    _MAP,
                    [_MAP, _INT],
                    True,
                    lambda a, n: _qv(_q(a) + Quantity.from_int(n)),
                ),
            ],
        ),
        cel.FunctionDecl(
            "sub",
            [
                cel.Overload("quantity_sub", _MAP, [_MAP, _MAP], True, qq(lambda a, b: _qv(a - b))),
                cel.Overload(
                    "quantity_sub_int",
                    _MAP,
                    [_MAP, _INT],
                    True,
                    lambda a, n: _qv(_q(a) - Quantity.from_int(n)),
                ),
            ],
        ),
    ]
    out += cel_net.functions(cel)
    return out


@functools.cache
def env(variables: tuple[str, ...]) -> Any:
    return cel.NewEnv(
        variables={v: _DYN for v in variables},
        extensions=[ext_optional.ExtOptional()],
        functions=_functions(),
    )


ERROR: Final = cel.Type.ERROR
