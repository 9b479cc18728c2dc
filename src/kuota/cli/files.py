"""Reading the files and directories named on the command line."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kuota.api.apiextensions import CustomResourceDefinition, register_crd
from kuota.api.apiextensions.crd_validation import crd_warnings
from kuota.api.decode import (
    Document,
    YamlError,
    check_update,
    decode_document,
    decode_object,
    iter_yaml_documents,
)
from kuota.api.kueue.config import load_config
from kuota.api.lws.template_checks import lws_template_warnings
from kuota.cli.run_annotations import run_annotation_errors, run_annotation_warnings
from kuota.sim.scenario_file import is_scenario, scenario_errors, scenario_timeline

MAX_FILE_BYTES = 256 * 1024 * 1024


class CannotRead(Exception):
    """A path that is missing, unreadable, or not YAML at all."""


def expand(paths: list[str]) -> list[Path]:
    """Files as given; directories searched recursively for ``*.yaml``/``*.yml``."""
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            before = len(out)
            for x in sorted(path.rglob("*")):
                if x.suffix not in (".yaml", ".yml"):
                    continue
                if x.is_symlink() and not x.exists():  # dangling, or a loop
                    raise CannotRead(f"{x}: a broken symbolic link (dangling or a loop)")
                if x.is_file():
                    out.append(x)
            if len(out) == before:  # nothing to read is a mistake to say, not a pass
                raise CannotRead(f"{p}: no *.yaml or *.yml file in this directory")
        elif path.exists():
            out.append(path)
        else:
            raise CannotRead(f"{p}: no such file or directory")
    return out


@dataclass
class FileResult:
    path: str
    documents: list[Document] = field(default_factory=list)


def read_bytes(path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise CannotRead(f"{path}: {size} bytes is more than kuota reads ({MAX_FILE_BYTES})")
        return path.read_bytes()
    except OSError as err:
        raise CannotRead(f"{path}: {err.strerror or err}") from None


def read_file(path: Path, gates: Mapping[str, bool] | None = None) -> FileResult:
    """Every object in a YAML/JSON file, including those inside scenario files."""
    return FileResult(str(path), list(iter_documents(path, gates)))


def iter_documents(
    path: Path,
    gates: Mapping[str, bool] | None = None,
    progress: Callable[[float], None] | None = None,
) -> Iterator[Document]:
    """The file's objects one at a time (a file of a million documents is
    never held decoded at once); ``progress(fraction)`` of its documents read.
    A file that is not YAML raises CannotRead when the bad document is reached."""
    data = read_bytes(path)
    source = str(path)
    # For progress only: documents are separated by "---" lines.
    expected = data.count(b"\n---") + 1
    try:
        raws = iter_yaml_documents(data)
        for i, raw in enumerate(raws):
            yield from _documents(raw, i, source, gates)
            if progress is not None:
                progress(min(1.0, (i + 1) / expected))
    except YamlError as err:
        raise CannotRead(f"{path}: {err}") from None


def _documents(
    raw: Any, i: int, source: str, gates: Mapping[str, bool] | None
) -> Iterator[Document]:
    if i == 0 and _is_mapping_file(raw):
        yield _mapping_document(Path(source))
        return
    if i == 0 and _is_bench_config(raw):
        yield _bench_document(Path(source), raw)
        return
    if is_scenario(raw):
        head = Document(source=source, index=i, kind="Scenario", name=str(raw.get("name", "")))
        head.errors, head.warnings = scenario_errors(raw)
        yield head
        # The scenario's world is read under its own Configuration's gates
        # (a mutating webhook and validation depend on them), as kuota check reads it.
        from kuota.sim.scenario import scenario_config

        cfg = scenario_config(raw, head)
        world_gates = cfg.feature_gates if cfg is not None else gates
        live: dict[str, Document] = {}  # ref -> the newest write of it
        for prefix, obj, deleted in scenario_timeline(raw):
            if deleted:
                live.pop(deleted, None)
                continue
            doc = decode_object(obj, source=source, index=i, prefix=prefix, gates=world_gates)
            if doc.ref in live:  # an update: what may not change, may not
                check_update(doc, live[doc.ref], world_gates)
            live[doc.ref] = doc
            yield doc
        return
    if _is_configuration(raw):
        # Kueue's Configuration in a world file (kuota run reads it as the
        # world's): checked as Kueue checks it at start-up.
        doc = Document(source=source, index=i, api_version=raw["apiVersion"])
        doc.kind, doc.name = "Configuration", str((raw.get("metadata") or {}).get("name", ""))
        doc.obj, doc.errors = load_config(raw)
        yield doc
        return
    for doc in decode_document(raw, source=source, index=i, gates=gates):
        if doc.ok:  # what run refuses, validate refuses (and warns of)
            doc.errors += run_annotation_errors(doc.obj)
            g = gates or {}
            if g.get("TopologyAwareScheduling", True) and _asks_for_topology(raw):
                # Kueue's job webhooks' TAS rules; imported only for manifests
                # that use the annotations (validate stays light otherwise).
                from kuota.controllers.jobs.topology_rules import topology_errors

                doc.errors += topology_errors(doc.obj, g.get("TASMultiLayerTopology", True))
            doc.warnings += run_annotation_warnings(doc.obj) + lws_template_warnings(doc.obj)
            if isinstance(doc.obj, CustomResourceDefinition):
                doc.warnings += crd_warnings(doc.obj)
                register_crd(doc.obj)  # its kind is read from the next document on
        yield doc


_TAS_PREFIX = "kueue.x-k8s.io/podset-"


def _asks_for_topology(raw: object) -> bool:
    """Some ``annotations`` map in the document has a pod-set TAS key."""
    if isinstance(raw, dict):
        ann = raw.get("annotations")
        if isinstance(ann, dict) and any(str(k).startswith(_TAS_PREFIX) for k in ann):
            return True
        return any(_asks_for_topology(v) for v in raw.values())
    if isinstance(raw, list):
        return any(_asks_for_topology(v) for v in raw)
    return False


def _is_configuration(raw: object) -> bool:
    return (
        isinstance(raw, dict)
        and str(raw.get("apiVersion", "")).startswith("config.kueue.x-k8s.io/")
        and raw.get("kind") == "Configuration"
    )


def _is_mapping_file(raw: object) -> bool:
    """A ``kuota simulate --mapping`` file: no apiVersion or kind, only its keys."""
    if not isinstance(raw, dict) or not raw or "apiVersion" in raw or "kind" in raw:
        return False  # a Kubernetes object: the simulator is not imported for it
    from kuota.sim.mapping import MAPPING_KEYS

    return all(k in MAPPING_KEYS for k in raw)


def _is_bench_config(raw: object) -> bool:
    """A ``kuota bench`` generator config (Kueue's performance worlds)."""
    return (
        isinstance(raw, dict) and "cohorts" in raw and "apiVersion" not in raw and "kind" not in raw
    )


def _bench_document(path: Path, raw: Any) -> Document:
    """The generator config checked as ``kuota bench`` reads it."""
    from kuota.api import errors as e
    from kuota.sim.benchgen import BenchConfigError, parse

    doc = Document(source=str(path), index=0, kind="BenchConfig", name=path.name)
    try:
        doc.obj = parse(raw, str(path))
    except BenchConfigError as err:
        # "FILE: field.path: reason" (the field path is absent for a whole-file reason).
        detail = str(err).removeprefix(f"{path}: ")
        head, sep, rest = detail.partition(": ")
        field = head if sep and re.fullmatch(r"[A-Za-z][\w.\[\]]*", head) else ""
        reason = (rest if field else detail).removeprefix("Invalid value: ")
        doc.errors.append(e.FieldError(field, e.INVALID, reason))
    return doc


def _mapping_document(path: Path) -> Document:
    """The mapping file checked as ``kuota simulate --mapping`` reads it."""
    from kuota.api import errors as e
    from kuota.sim.mapping import load_mapping
    from kuota.sim.trace import InputError

    doc = Document(source=str(path), index=0, kind="Mapping", name=path.name)
    try:
        doc.obj = load_mapping(path)
    except InputError as err:
        # The mapping's reasons start with the field ("teams.x: ..."): keep it as the path.
        head, sep, rest = err.reason.partition(": ")
        field = head if sep and re.match(r"[A-Za-z]+", head) else ""
        detail = rest if field else err.reason
        doc.errors.append(
            e.FieldError(field, e.INVALID, f"{detail} (line {err.line}, column {err.col})")
        )
    return doc
