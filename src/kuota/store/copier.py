"""A checked deep copy of an API struct without the round trip through
builtins, for what is plainly valid.

The store copies every object it is given (``codec.clone``): converting the
object to builtins and back checks it against its schema and leaves nothing
shared with the writer. Most of that cost is msgspec building and reading the
intermediate dicts, and its hooks' keyword parsing. Here the same checks are
made on the struct itself, from msgspec's own account of each type
(``msgspec.inspect``: lengths, patterns, bounds, literals, time zones), and
the copy shares what cannot change (strings, numbers, datetimes) and builds
the rest (structs, lists, dicts) afresh; a Quantity goes through the same
hooks as in the round trip, so it comes out as that would make it.

Whatever is not plainly valid here (a value of another type than its field's,
a constraint broken, a kind of type this does not know) gives ``FAIL``, and
the caller converts as before: the conversion decides, and names what it
refuses. So for every value this accepts, the copy equals what the round trip
makes, and it refuses nothing the round trip accepts.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any, Final

import msgspec
import msgspec.inspect as mi

from kuota.api.hooks import dec_hook, enc_hook
from kuota.api.quantity import Quantity

astuple: Final = msgspec.structs.astuple
_replace: Final = msgspec.structs.replace

FAIL: Final = object()  # not plainly valid: convert instead

# Node kinds.
_NONE: Final = 0
_STR: Final = 1
_INT: Final = 2
_BOOL: Final = 3
_FLOAT: Final = 4
_LITERAL: Final = 5
_DATETIME: Final = 6
_QUANTITY: Final = 7
_LIST: Final = 8
_DICT: Final = 9
_STRUCT: Final = 10
_OPTIONAL: Final = 11
_JSON: Final = 12
_TIMEDELTA: Final = 13
_UNKNOWN: Final = 14

# msgspec's integers: int64 or uint64.
_INT_MIN: Final = -(2**63)
_INT_MAX: Final = 2**64 - 1
# Strings known to match a pattern, per pattern (forgotten at once when full).
_MATCHED_KEPT: Final = 50_000


class _Node:
    """One type of msgspec's account, as this copier checks it."""

    def __init__(self, kind: int) -> None:
        self.kind = kind
        self.lo: Any = None  # length, or bound (ge) of a number
        self.hi: Any = None  # length, or bound (le) of a number
        self.gt: Any = None
        self.lt: Any = None
        self.multiple_of: Any = None
        self.search: Any = None  # a compiled pattern's search
        self.matched: set[str] = set()
        self.values: frozenset[Any] = frozenset()
        self.tz: bool | None = None
        self.inner: _Node | None = None  # list item, dict value, optional's type
        self.key: _Node | None = None
        self.cls: type | None = None
        self.plan: _Plan | None = None  # a struct's, made at its first use


class _Plan:
    """A struct type's fields, in order."""

    def __init__(self, cls: type, names: tuple[str, ...], nodes: list[_Node]) -> None:
        self.cls: Any = cls
        self.names = names
        self.nodes = nodes
        # Fields whose copies are new objects (the others are shared as they are).
        self.rebuilt = [not _shared(n) for n in nodes]
        # Fields that may be None (most of a struct's, mostly None).
        self.nullable = [n.kind in (_OPTIONAL, _NONE, _JSON) for n in nodes]


_SHARED: Final = frozenset({_NONE, _STR, _INT, _BOOL, _FLOAT, _LITERAL, _DATETIME, _TIMEDELTA})

_PLANS: Final[dict[type, _Plan]] = {}


def _shared(n: _Node) -> bool:
    """Is a checked value of this node the value itself (immutable)?"""
    if n.kind == _OPTIONAL:
        assert n.inner is not None
        return n.inner.kind in _SHARED
    return n.kind in _SHARED


def copy_struct(value: Any) -> Any:
    """A checked copy of a struct, or FAIL."""
    plan = _plan(type(value))
    if plan is None:
        return FAIL
    return _copy_struct(plan, value)


def field_nodes(cls: type) -> list[_Node] | None:
    """A struct type's field nodes, in field order, for copy_value (None:
    not a struct type this copier knows)."""
    plan = _plan(cls)
    return plan.nodes if plan is not None else None


def item_node(node: _Node | None, length: int) -> _Node | None:
    """The items' node of a list field's node (optional or not), when a list
    of ``length`` items is within its length bounds; else None."""
    while node is not None and node.kind == _OPTIONAL:
        node = node.inner
    if node is None or node.kind != _LIST:
        return None
    return node.inner if _length_ok(node, length) else None


def entry_nodes(node: _Node | None, length: int) -> tuple[_Node, _Node] | None:
    """The (key, value) nodes of a dict field's node (optional or not), when a
    dict of ``length`` entries is within its length bounds; else None."""
    while node is not None and node.kind == _OPTIONAL:
        node = node.inner
    if node is None or node.kind != _DICT or not _length_ok(node, length):
        return None
    assert node.key is not None and node.inner is not None
    return node.key, node.inner


def copy_value(node: _Node, v: Any) -> Any:
    """A checked copy of a value of the node's type, or FAIL."""
    return _copy(node, v)


def _plan(cls: type) -> _Plan | None:
    plan = _PLANS.get(cls)
    if plan is None:
        if not (isinstance(cls, type) and issubclass(cls, msgspec.Struct)):
            return None
        info = mi.type_info(cls)
        if not isinstance(info, mi.StructType) or info.array_like or info.tag_field:
            return None
        names = tuple(f.name for f in info.fields)
        if names != cls.__struct_fields__:
            return None
        plan = _Plan(cls, names, [_node(f.type) for f in info.fields])
        _PLANS[cls] = plan
    return plan


def _node(t: Any) -> _Node:
    while isinstance(t, mi.Metadata):
        t = t.type
    if isinstance(t, mi.NoneType):
        return _Node(_NONE)
    if isinstance(t, mi.StrType):
        n = _Node(_STR)
        n.lo, n.hi = t.min_length, t.max_length
        if t.pattern is not None:
            n.search = re.compile(t.pattern).search
        return n
    if isinstance(t, mi.BoolType):
        return _Node(_BOOL)
    if isinstance(t, mi.IntType | mi.FloatType):
        if isinstance(t, mi.FloatType) and t.multiple_of is not None:
            return _Node(_UNKNOWN)  # (msgspec's float test is not plain arithmetic)
        n = _Node(_INT if isinstance(t, mi.IntType) else _FLOAT)
        n.lo, n.hi, n.gt, n.lt, n.multiple_of = t.ge, t.le, t.gt, t.lt, t.multiple_of
        return n
    if isinstance(t, mi.LiteralType):
        if not all(type(v) is str for v in t.values):
            return _Node(_UNKNOWN)
        n = _Node(_LITERAL)
        n.values = frozenset(t.values)
        return n
    if isinstance(t, mi.DateTimeType):
        n = _Node(_DATETIME)
        n.tz = t.tz
        return n
    if isinstance(t, mi.TimeDeltaType):
        return _Node(_TIMEDELTA)
    if isinstance(t, mi.CustomType) and t.cls is Quantity:
        return _Node(_QUANTITY)
    if isinstance(t, mi.ListType):
        n = _Node(_LIST)
        n.inner = _node(t.item_type)
        n.lo, n.hi = t.min_length, t.max_length
        return n
    if isinstance(t, mi.DictType):
        n = _Node(_DICT)
        n.key = _node(t.key_type)
        n.inner = _node(t.value_type)
        n.lo, n.hi = t.min_length, t.max_length
        return n
    if isinstance(t, mi.StructType):
        n = _Node(_STRUCT)
        n.cls = t.cls  # (its plan made at its first use: types may nest themselves)
        return n
    if isinstance(t, mi.UnionType):
        others = [m for m in t.types if not isinstance(m, mi.NoneType)]
        if len(others) == 1 and len(t.types) == 2:
            n = _Node(_OPTIONAL)
            n.inner = _node(others[0])
            return n
        return _Node(_UNKNOWN)
    if isinstance(t, mi.AnyType):
        return _Node(_JSON)
    return _Node(_UNKNOWN)


def _copy_struct(plan: _Plan, value: Any) -> Any:
    if type(value) is not plan.cls:
        return FAIL
    values = astuple(value)
    changes: dict[str, Any] = {}
    nodes, rebuilt, nullable, names = plan.nodes, plan.rebuilt, plan.nullable, plan.names
    for i in range(len(nodes)):
        v = values[i]
        if v is None and nullable[i]:
            continue
        c = _copy(nodes[i], v)
        if c is FAIL:
            return FAIL
        if rebuilt[i]:
            changes[names[i]] = c
    return _replace(value, **changes)


def _copy(n: _Node, v: Any) -> Any:
    kind = n.kind
    if kind == _OPTIONAL:
        if v is None:
            return None
        inner = n.inner
        assert inner is not None
        n = inner
        kind = n.kind
    if kind == _STR:
        if type(v) is not str:
            return FAIL
        if not _length_ok(n, len(v)):
            return FAIL
        if n.search is not None and v not in n.matched:
            if n.search(v) is None:
                return FAIL
            if len(n.matched) >= _MATCHED_KEPT:
                n.matched.clear()
            n.matched.add(v)
        return v
    if kind == _STRUCT:
        plan = n.plan
        if plan is None:
            assert n.cls is not None
            plan = _plan(n.cls)
            if plan is None:
                return FAIL
            n.plan = plan
        return _copy_struct(plan, v)
    if kind == _INT:
        if type(v) is not int or v < _INT_MIN or v > _INT_MAX:
            return FAIL
        return v if _in_bounds(n, v) else FAIL
    if kind == _LIST:
        if type(v) is not list:
            return FAIL
        if not _length_ok(n, len(v)):
            return FAIL
        item = n.inner
        assert item is not None
        out = []
        for x in v:
            c = _copy(item, x)
            if c is FAIL:
                return FAIL
            out.append(c)
        return out
    if kind == _DICT:
        if type(v) is not dict:
            return FAIL
        if not _length_ok(n, len(v)):
            return FAIL
        key, value = n.key, n.inner
        assert key is not None and value is not None
        d = {}
        for k, x in v.items():
            ck = _copy(key, k)
            if ck is FAIL:
                return FAIL
            cx = _copy(value, x)
            if cx is FAIL:
                return FAIL
            d[ck] = cx
        return d
    if kind == _QUANTITY:
        if type(v) is not Quantity:
            return FAIL
        if v.wire_stable():
            return v  # immutable, and the round trip would give it back
        # As the round trip makes it: its text, decoded.
        return dec_hook(Quantity, enc_hook(v))
    if kind == _NONE:
        return None if v is None else FAIL
    if kind == _BOOL:
        return v if type(v) is bool else FAIL
    if kind == _LITERAL:
        return v if type(v) is str and v in n.values else FAIL
    if kind == _DATETIME:
        if type(v) is not datetime:
            return FAIL
        if n.tz is not None and (v.tzinfo is not None) != n.tz:
            return FAIL
        return v
    if kind == _FLOAT:
        if type(v) is not float:
            return FAIL
        return v if _in_bounds(n, v) else FAIL
    if kind == _TIMEDELTA:
        return v if type(v) is timedelta else FAIL
    if kind == _JSON:
        return _copy_json(v)
    return FAIL


def _length_ok(n: _Node, length: int) -> bool:
    """Within a string's, list's or dict's length bounds."""
    return (n.lo is None or length >= n.lo) and (n.hi is None or length <= n.hi)


def _in_bounds(n: _Node, v: Any) -> bool:
    # Each written as the bound holding, so that a NaN breaks every bound.
    if n.lo is not None and not v >= n.lo:
        return False
    if n.hi is not None and not v <= n.hi:
        return False
    if n.gt is not None and not v > n.gt:
        return False
    if n.lt is not None and not v < n.lt:
        return False
    return not (n.multiple_of is not None and v % n.multiple_of != 0)


def _copy_json(v: Any) -> Any:
    """An untyped value: JSON's own values only (the round trip turns any
    other into one of them)."""
    t = type(v)
    if v is None or t is str or t is bool or t is int or t is float:
        return v
    if t is list:
        out = []
        for x in v:
            c = _copy_json(x)
            if c is FAIL:
                return FAIL
            out.append(c)
        return out
    if t is dict:
        d = {}
        for k, x in v.items():
            if type(k) is not str:
                return FAIL
            c = _copy_json(x)
            if c is FAIL:
                return FAIL
            d[k] = c
        return d
    return FAIL
