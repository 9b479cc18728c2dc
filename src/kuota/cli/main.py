"""``kuota``: Kueue-compatible queueing, quota and gang admission."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from kuota import __version__
from kuota.cli.files import CannotRead, expand, read_file

EXIT_OK, EXIT_INVALID, EXIT_UNREADABLE = 0, 1, 2


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kuota")
def main() -> None:
    """kuota decides whether a workload may start now, where, and who yields.

    It reads Kueue's manifests (kueue.x-k8s.io v1beta1 and v1beta2) unchanged.
    """


def _validate(paths: list[str], as_json: bool, quiet: bool) -> int:
    try:
        files = expand(paths)
    except CannotRead as err:
        click.echo(f"error: {err}", err=True)
        return EXIT_UNREADABLE
    unreadable = 0
    results = []
    for f in files:
        try:
            results.append(read_file(f))
        except CannotRead as err:
            unreadable += 1
            click.echo(f"error: cannot read {err}", err=True)
    docs = [d for r in results for d in r.documents]
    invalid = [d for d in docs if not d.ok]
    if as_json:
        out = {
            "files": len(files),
            "objects": len(docs),
            "valid": len(docs) - len(invalid),
            "invalid": len(invalid),
            "unreadable": unreadable,
            "documents": [
                {
                    "file": d.source,
                    "document": d.index + 1,
                    "at": d.prefix,
                    "object": d.ref,
                    "apiVersion": d.api_version,
                    "valid": d.ok,
                    "errors": [
                        {"path": d.full_path(err), "type": err.type, "message": str(err)}
                        for err in d.errors
                    ],
                    "warnings": d.warnings,
                }
                for d in docs
            ],
        }
        click.echo(json.dumps(out, indent=2))
    else:
        for d in docs:
            if d.ok and not d.warnings:
                if not quiet:
                    click.echo(f"{click.style('ok', fg='green')}    {d.where}: {d.ref}")
                continue
            mark = (
                click.style("error", fg="red", bold=True)
                if not d.ok
                else click.style("warn", fg="yellow")
            )
            click.echo(f"{mark} {d.where}: {d.ref}")
            for err in d.errors:
                click.echo(f"      {d.shown(err)}")
            for w in d.warnings:
                click.echo(f"      warning: {w}")
        summary = f"{len(docs)} objects in {len(files)} files: {len(docs) - len(invalid)} valid, {len(invalid)} invalid"
        if unreadable:
            summary += f", {unreadable} files unreadable"
        click.echo(summary)
    if unreadable:
        return EXIT_UNREADABLE
    return EXIT_INVALID if invalid else EXIT_OK


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("-q", "--quiet", is_flag=True, help="Print only problems and the summary.")
def validate(paths: tuple[str, ...], as_json: bool, quiet: bool) -> None:
    """Validate manifests and scenario files as Kueue and the API server would.

    PATHS are files or directories (searched recursively for *.yaml). Exit
    status: 0 all valid, 1 something is invalid, 2 a file cannot be read
    (missing, not UTF-8, not YAML).
    """
    sys.exit(_validate(list(paths), as_json, quiet))


@main.command()
@click.option(
    "--kind", "kinds", multiple=True, help="Only these kinds (default: every Kueue kind)."
)
def crds(kinds: tuple[str, ...]) -> None:
    """Print the CustomResourceDefinitions of Kueue's kinds (v1beta1 and v1beta2
    served, v1beta2 stored), generated from kuota's types."""
    from kuota.api.crd import all_crds, crds_yaml

    try:
        objs = all_crds(list(kinds) or None)
    except KeyError as err:
        click.echo(f"error: unknown kind {err}", err=True)
        sys.exit(EXIT_INVALID)
    click.echo(crds_yaml(objs), nl=False)


@main.command()
@click.argument("directory", default="examples/quickstart", type=click.Path(file_okay=False))
def demo(directory: str) -> None:
    """Validate the example world and show what it holds."""
    from kuota.cli.demo import run_demo

    sys.exit(run_demo(Path(directory)))


if __name__ == "__main__":  # pragma: no cover
    main()
