"""A click choice whose values are worked out on first use.

``kuota describe``'s kinds come from the api registry and the job
integrations; listing them when the CLI is imported would import those for
every command, ``kuota --version`` included.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cached_property

import click


class LazyChoice(click.Choice[str]):
    """``click.Choice`` over ``make()``'s values, called once, when a value is
    checked or the help shows them."""

    def __init__(self, make: Callable[[], Iterable[str]], case_sensitive: bool = True) -> None:
        # click.Choice's __init__ would take the values now: not called
        self._make = make
        self.case_sensitive = case_sensitive

    @cached_property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(self._make())
