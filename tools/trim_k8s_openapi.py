"""Trim Kubernetes' published OpenAPI v3 documents to what kuota's conformance
test reads: the schema of every built-in kind kuota serves and every schema it
refers to, descriptions dropped (they are most of the bytes and the test does
not compare them). Writes one file per group-version, in upstream's names and
shape ({"components": {"schemas": ...}}), keys sorted as upstream sorts them.

    .venv/bin/python tools/trim_k8s_openapi.py SOURCE_DIR DEST_DIR

SOURCE_DIR holds the upstream documents, either as kubernetes/kubernetes keeps
them (api/openapi-spec/v3/api__v1_openapi.json, apis__batch__v1_openapi.json)
or as kubernetes-sigs/kubectl-validate copies them (api/v1.json,
apis/batch/v1.json). The kinds are those kuota's registry serves outside CRDs.
"""

from __future__ import annotations

import json
import pathlib
import sys
from typing import Any

from kuota.server.openapi.schemas import is_crd, schema_name, served_versions

REF = "#/components/schemas/"


def upstream_name(group: str, version: str) -> str:
    """kubernetes/kubernetes' file name of a group-version's document."""
    gv = f"apis__{group}__{version}" if group else f"api__{version}"
    return f"{gv}_openapi.json"


def _source(src: pathlib.Path, group: str, version: str) -> pathlib.Path:
    for candidate in (
        src / upstream_name(group, version),
        src / (f"apis/{group}/{version}.json" if group else f"api/{version}.json"),
    ):
        if candidate.exists():
            return candidate
    raise SystemExit(f"{src}: no OpenAPI v3 document for {group or 'core'}/{version}")


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        out = {node["$ref"].removeprefix(REF)} if isinstance(node.get("$ref"), str) else set()
        for v in node.values():
            out |= _refs(v)
        return out
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node)) if node else set()
    return set()


def _strip(node: Any) -> Any:
    """Drop descriptions (a property may be named "description": keep those)."""
    if isinstance(node, dict):
        return {
            k: (
                {p: _strip(s) for p, s in v.items()}
                if k == "properties" and isinstance(v, dict)
                else _strip(v)
            )
            for k, v in node.items()
            if k != "description"
        }
    if isinstance(node, list):
        return [_strip(v) for v in node]
    return node


def trim(src: pathlib.Path, dest: pathlib.Path) -> list[str]:
    roots: dict[tuple[str, str], set[str]] = {}
    for spec, version in served_versions():
        if not is_crd(spec):
            roots.setdefault((spec.group, version.name), set()).add(schema_name(spec, version.name))
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for (group, version), names in sorted(roots.items()):
        schemas = json.loads(_source(src, group, version).read_text())["components"]["schemas"]
        keep: set[str] = set()
        todo = sorted(names)
        while todo:
            name = todo.pop()
            if name in keep:
                continue
            if name not in schemas:
                raise SystemExit(f"{group or 'core'}/{version}: no schema {name}")
            keep.add(name)
            todo += sorted(_refs(schemas[name]) - keep)
        out = {"components": {"schemas": {n: _strip(schemas[n]) for n in sorted(keep)}}}
        path = dest / upstream_name(group, version)
        path.write_text(json.dumps(out, indent=2, sort_keys=True) + "\n")
        written.append(f"{path.name}: {len(keep)} schemas")
    return written


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    for line in trim(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])):
        print(line)
