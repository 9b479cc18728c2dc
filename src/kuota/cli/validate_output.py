"""``kuota validate``'s output, written as the documents are read: a file of
a million documents is checked in memory bounded by one document, with
progress on stderr. ``--json`` streams the same object, its counts last."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from kuota.api.decode import Document
from kuota.cli.files import CannotRead, iter_documents
from kuota.cli.progress import Progress


@dataclass
class Counts:
    files: int = 0
    objects: int = 0
    invalid: int = 0
    unreadable: int = 0


def _as_json(d: Document) -> dict[str, Any]:
    return {
        "file": d.source,
        "document": d.index + 1,
        "at": d.prefix,
        "object": d.ref,
        "apiVersion": d.api_version,
        "valid": d.ok,
        "errors": [
            {"path": d.full_path(err), "type": err.type, "message": str(err)} for err in d.errors
        ],
        "warnings": d.warnings,
    }


def _show(d: Document, quiet: bool) -> None:
    if d.ok and not d.warnings:
        if not quiet:
            click.echo(f"{click.style('ok', fg='green')}    {d.where}: {d.ref}")
        return
    mark = (
        click.style("error", fg="red", bold=True) if not d.ok else click.style("warn", fg="yellow")
    )
    click.echo(f"{mark} {d.where}: {d.ref}")
    for err in d.errors:
        click.echo(f"      {d.shown(err)}")
    for w in d.warnings:
        click.echo(f"      warning: {w}")


def validate_files(files: list[Path], as_json: bool, quiet: bool) -> Counts:
    counts = Counts(files=len(files))
    sizes = [_size(f) for f in files]
    total = max(sum(sizes), 1)
    first = [True]

    def emit_json(d: Document) -> None:
        text = json.dumps(_as_json(d), indent=2).replace("\n", "\n    ")
        click.echo(("" if first[0] else ",\n") + "    " + text, nl=False)
        first[0] = False

    emit: Callable[[Document], None] = emit_json if as_json else (lambda d: _show(d, quiet))
    if as_json:
        click.echo('{\n  "documents": [')
    with Progress() as bar:
        task = bar.add("validate", total)
        done = 0
        for f, size in zip(files, sizes, strict=True):

            def progress(fraction: float, done: int = done, size: int = size) -> None:
                bar.update(task, done + fraction * size, detail=f"{counts.objects} objects")

            try:
                for d in iter_documents(f, progress=progress):
                    counts.objects += 1
                    counts.invalid += not d.ok
                    emit(d)
            except CannotRead as err:
                counts.unreadable += 1
                click.echo(f"error: cannot read {err}", err=True)
            done += size
    valid = counts.objects - counts.invalid
    if as_json:
        tail = {
            "files": counts.files,
            "objects": counts.objects,
            "valid": valid,
            "invalid": counts.invalid,
            "unreadable": counts.unreadable,
        }
        click.echo(("\n" if not first[0] else "") + "  ],")
        click.echo(json.dumps(tail, indent=2)[2:])
    else:
        summary = (
            f"{counts.objects} objects in {counts.files} files: {valid} valid, "
            f"{counts.invalid} invalid"
        )
        if counts.unreadable:
            summary += f", {counts.unreadable} files unreadable"
        click.echo(summary)
    return counts


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def print_kinds(as_json: bool) -> None:
    """The kinds kuota reads from manifests, as ``kubectl api-resources``
    lists a cluster's: kind, apiVersions (newest last), namespaced."""
    from kuota.api.decode import KINDS_BY_NAME, REGISTRY

    rows = []
    for kind in sorted(KINDS_BY_NAME):
        versions = sorted(KINDS_BY_NAME[kind])
        namespaced = any(REGISTRY[(av, kind)].namespaced for av in versions)
        rows.append({"kind": kind, "apiVersions": versions, "namespaced": namespaced})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    width = max(len(r["kind"]) for r in rows)
    click.echo(f"{'KIND':<{width}}  NAMESPACED  APIVERSIONS")
    for r in rows:
        ns = "true" if r["namespaced"] else "false"
        click.echo(f"{r['kind']:<{width}}  {ns:<10}  {', '.join(r['apiVersions'])}")
