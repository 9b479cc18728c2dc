"""The store's quick checked copy (store.copier) against the reference copy,
the round trip through builtins (codec._through_builtins): on real objects and
on objects with any field set to any value, whatever the quick copy accepts
it copies as the round trip would, and it accepts nothing the round trip
refuses."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kuota.api.decode import decode_object
from kuota.api.hooks import enc_hook
from kuota.api.kueue.types import Workload
from kuota.api.quantity import Quantity
from kuota.store import codec
from kuota.store.copier import FAIL, copy_struct

HERE = Path(__file__).parent.parent
SEEDS: list[Any] = []
for p in sorted((HERE / "validation").glob("*.yaml")) + sorted(
    (HERE / "fixtures" / "manifests").glob("*.yaml")
):
    for d in yaml.safe_load_all(p.read_text()):
        if isinstance(d, dict):
            doc = decode_object(d, source=str(p))
            if doc.ok and doc.obj is not None:
                SEEDS.append(doc.obj)

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        [
            "",
            "main",
            "a_b",
            "Never",
            "True",
            "x" * 64,
            "y" * 254,
            "a.b-c",
            -1,
            0,
            2**31,
            2**63,
            2**64,
            datetime(2026, 1, 1),
            datetime(2026, 1, 1, tzinfo=UTC),
            timedelta(seconds=3),
            Quantity("1"),
            Quantity("500m"),
            b"bytes",
            ("a", "b"),
        ]
    ),
    st.lists(st.sampled_from(["a", 1, None]), max_size=3),
    st.dictionaries(st.sampled_from(["a", "cpu", "b.c"]), st.sampled_from(["x", 1]), max_size=2),
)


def _places(v: Any) -> list[tuple[Any, Any]]:
    """Every (container, slot) below v: struct fields, list items, dict values."""
    out: list[tuple[Any, Any]] = []
    if isinstance(v, msgspec.Struct):
        for f in v.__struct_fields__:
            out.append((v, f))
            out += _places(getattr(v, f))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out.append((v, i))
            out += _places(x)
    elif isinstance(v, dict):
        for k, x in v.items():
            out.append((v, k))
            out += _places(x)
    return out


def _exact(v: Any) -> Any:
    """A value as data, types and quantities' texts included."""
    if isinstance(v, msgspec.Struct):
        return (type(v), tuple(_exact(x) for x in msgspec.structs.astuple(v)))
    if isinstance(v, list):
        return ("list", [_exact(x) for x in v])
    if isinstance(v, dict):
        return ("dict", {k: _exact(x) for k, x in v.items()})
    if isinstance(v, Quantity):
        return ("q", enc_hook(v), v)
    return (type(v), v if v == v else "nan")


def _nothing_shared(copy: Any, orig: Any) -> None:
    """No struct, list or dict of the copy is one of the original's."""
    if isinstance(copy, msgspec.Struct | list | dict):
        assert copy is not orig
    if isinstance(copy, msgspec.Struct) and type(orig) is type(copy):
        for a, b in zip(msgspec.structs.astuple(copy), msgspec.structs.astuple(orig), strict=True):
            _nothing_shared(a, b)
    elif isinstance(copy, list) and isinstance(orig, list):
        for a, b in zip(copy, orig, strict=False):
            _nothing_shared(a, b)
    elif isinstance(copy, dict) and isinstance(orig, dict):
        for k, a in copy.items():
            if k in orig:
                _nothing_shared(a, orig[k])


def _check(obj: Any) -> bool:
    """The quick copy agrees with the round trip; True when it copied."""
    try:
        ref: Any = codec._through_builtins(obj, type(obj))
    except Exception:  # (any refusal: the quick copy must refuse too)
        ref = FAIL
    quick = copy_struct(obj)
    if quick is FAIL:
        return False
    assert ref is not FAIL, "the quick copy accepted what the round trip refuses"
    assert _exact(quick) == _exact(ref)
    _nothing_shared(quick, obj)
    return True


@pytest.mark.parametrize("i", range(len(SEEDS)))
def test_real_objects_copy_quickly_as_the_round_trip(i: int) -> None:
    assert _check(SEEDS[i])


@settings(max_examples=2500, deadline=None)
@given(data=st.data())
def test_any_field_set_to_anything_copies_as_the_round_trip_or_falls_back(
    data: st.DataObject,
) -> None:
    seed = data.draw(st.sampled_from(SEEDS))
    obj = codec._through_builtins(seed, type(seed))  # (a copy to change)
    for _ in range(data.draw(st.integers(1, 3))):
        places = _places(obj)
        if not places:
            break
        holder, slot = data.draw(st.sampled_from(places))
        value = data.draw(JUNK)
        if isinstance(holder, msgspec.Struct):
            setattr(holder, slot, value)
        else:
            holder[slot] = value
    _check(obj)


def test_a_workload_copies_quickly() -> None:
    wl = next(s for s in SEEDS if isinstance(s, Workload))
    assert copy_struct(wl) is not FAIL
