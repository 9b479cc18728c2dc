"""A package's exports imported on first use (PEP 562), so that importing a
light module of the package does not pull in its heavy siblings."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """The package's module ``__getattr__``: ``exports`` maps each exported
    name to the module defining it; a name once imported is kept in the
    package, so the next access does not come here."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
