"""The JSONPath subset CRD printer columns use, read by ``kuota get`` on an
object's served form and by ``kuota serve``'s tables on the API struct
itself: ``.field``, ``[N]`` (``[-1]`` counts from the end),
``[?(@.field=="value")]`` and ``[N:]`` (the training operator's
``.status.conditions[-1:].type``). A path with anything else selects
nothing. Pure: no I/O."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, Final

__all__ = ["json_path", "select"]

_STEP: Final = re.compile(
    r'\.([A-Za-z0-9_\-/]+)|\[(-?\d+)\]|\[\?\(@\.([\w-]+)\s*==\s*["\']([^"\']*)["\']\)\]'
    r"|\[(-?\d+):\]"
)

# (field, index, filter key, filter value, slice start): one of them set.
Step = tuple[str | None, int | None, str | None, str | None, int | None]


@functools.cache
def _steps(path: str) -> tuple[Step, ...] | None:
    out: list[Step] = []
    pos = 0
    for m in _STEP.finditer(path):
        if m.start() != pos:
            return None
        pos = m.end()
        field, idx, fkey, fval, start = m.groups()
        out.append(
            (
                field,
                int(idx) if idx is not None else None,
                fkey,
                fval,
                int(start) if start is not None else None,
            )
        )
    return tuple(out) if pos == len(path) else None


def select(root: Any, path: str, field_of: Callable[[Any, str], Any]) -> list[Any]:
    """The values ``path`` selects from ``root``; ``field_of(node, name)``
    reads a field (None when the node has none)."""
    steps = _steps(path)
    if steps is None:
        return []
    found = [root]
    for field, idx, fkey, fval, start in steps:
        nxt: list[Any] = []
        for cur in found:
            if field is not None:
                got = field_of(cur, field)
                if got is not None:
                    nxt.append(got)
            elif not isinstance(cur, list):
                continue
            elif idx is not None:
                if -len(cur) <= idx < len(cur):
                    nxt.append(cur[idx])
            elif fkey is not None:
                for x in cur:
                    got = field_of(x, fkey)
                    if got is not None and str(got) == fval:
                        nxt.append(x)
            elif start is not None:
                nxt += cur[start:]
        found = nxt
    return found


def _dict_field(node: Any, name: str) -> Any:
    return node.get(name) if isinstance(node, dict) else None


def json_path(doc: Any, path: str) -> list[Any]:
    """The values ``path`` selects in ``doc`` (an object as the API serves it)."""
    return select(doc, path, _dict_field)
