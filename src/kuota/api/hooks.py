"""The quantity hooks of msgspec conversions, compiled with the hot path.

msgspec calls a hook for every Quantity it encodes or decodes: each store copy
of a Workload, each template key and scheduling hash. The definitions in
``kuota.api.base`` are interpreted; these answer the common cases (a Quantity
whose text is known, a text already decoded) from caches and hand every other
case to those, so they convert exactly as they do.
"""

from __future__ import annotations

from typing import Any, Final

from kuota.api import base
from kuota.api.quantity import Quantity

# id(quantity) -> (the quantity, its text). The entry holds the quantity, so no
# other object can take its identity while it is there. Quantities are
# immutable, and shared: one per decoded text, one per resource amount.
_TEXT: Final[dict[int, tuple[Quantity, str]]] = {}
_TEXT_SIZE: Final = 4096


def enc_hook(obj: Any) -> Any:
    if type(obj) is Quantity:
        known = _TEXT.get(id(obj))
        if known is not None and known[0] is obj:
            return known[1]
        text = str(obj)
        if len(_TEXT) >= _TEXT_SIZE:
            _TEXT.clear()
        _TEXT[id(obj)] = (obj, text)
        return text
    return base.enc_hook(obj)


_OF_TEXT: Final = base._QUANTITY_OF_TEXT


def dec_hook(typ: type, obj: Any) -> Any:
    if typ is Quantity and type(obj) is str:
        q = _OF_TEXT.get(obj)
        if q is not None:
            return q
    return base.dec_hook(typ, obj)
