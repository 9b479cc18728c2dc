"""Reduce Kueue's CRD schemas to the skeleton test_reference.py compares."""

from __future__ import annotations

import gzip
import json
import pathlib
import sys
from typing import Any

import yaml


def skeleton(s: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if s.get("x-kubernetes-int-or-string"):
        out["t"] = "int-or-string"
    elif "type" in s:
        out["t"] = s["type"]
    for src, dst in (("x-kubernetes-list-type", "lt"), ("x-kubernetes-list-map-keys", "lk")):
        if src in s:
            out[dst] = s[src]
    if "properties" in s:
        out["p"] = {k: skeleton(v) for k, v in s["properties"].items()}
    if isinstance(s.get("items"), dict):
        out["i"] = skeleton(s["items"])
    if isinstance(s.get("additionalProperties"), dict):
        out["a"] = skeleton(s["additionalProperties"])
    return out


def main(repo: str) -> None:
    out: dict[str, Any] = {}
    for f in sorted(pathlib.Path(repo, "config/components/crd/bases").glob("*.yaml")):
        crd = yaml.safe_load(f.read_text())
        for v in crd["spec"]["versions"]:
            key = f"{crd['spec']['group']}/{v['name']}/{crd['spec']['names']['kind']}"
            out[key] = skeleton(v["schema"]["openAPIV3Schema"])
    dest = pathlib.Path(__file__).with_name("kueue-crds-ff69552e.json.gz")
    dest.write_bytes(gzip.compress(json.dumps(out, sort_keys=True).encode(), mtime=0))


if __name__ == "__main__":
    main(sys.argv[1])
