"""A click group whose subcommands are imported only when they run.

Each lazy subcommand is one entry, name -> ("module:attribute", short help),
as click's documentation shows for lazily loaded subcommands. The short help
lives in the table so that ``kuota --help`` lists every command without
importing any of them: a command's module pulls in the control plane, the
simulator or rich, which costs most of a second.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import click


class LazyGroup(click.Group):
    """``lazy_subcommands`` maps a command's name to (``"module:attr"``, its
    one-line help); the rest are ordinary click commands of the group."""

    def __init__(
        self, *args: Any, lazy_subcommands: Mapping[str, tuple[str, str]] | None = None, **kw: Any
    ) -> None:
        super().__init__(*args, **kw)
        self.lazy_subcommands: dict[str, tuple[str, str]] = dict(lazy_subcommands or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy_subcommands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands or cmd_name not in self.lazy_subcommands:
            return super().get_command(ctx, cmd_name)
        cmd = self.load(cmd_name)
        self.commands[cmd_name] = cmd  # loaded once
        return cmd

    def load(self, cmd_name: str) -> click.Command:
        """Import one lazy subcommand (a programming error, not the user's,
        if its entry does not name a click command)."""
        target = self.lazy_subcommands[cmd_name][0]
        module_name, _, attr = target.partition(":")
        cmd = getattr(importlib.import_module(module_name), attr)
        if not isinstance(cmd, click.Command):
            raise TypeError(f"lazy command {cmd_name!r}: {target} is not a click command")
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's listing, but a lazy command not yet loaded shows the short
        help of its table entry instead of being imported for it."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(n) for n in names)
        rows: list[tuple[str, str]] = []
        for name in names:
            if name in self.lazy_subcommands and name not in self.commands:
                # a stand-in with the table's help, shortened as click shortens it
                cmd: click.Command | None = click.Command(name, help=self.lazy_subcommands[name][1])
            else:
                cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)
