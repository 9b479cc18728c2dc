"""``kuota must-gather --state DIR -o FILE.tar.gz``: a diagnostics bundle an
admin attaches to a bug report, as OpenShift's must-gather.

The bundle holds every stored object with its status, one YAML List per
resource (``objects/<group>/<resource>.yaml``, Events among them), the
Kueue Configuration, Kueue's metrics as a scrape now would show them
(``metrics.txt``), node summaries and ``summary.txt``: every pending workload with kuota's
one-line reason, every inactive queue with why, every quota-tree node
(``BizGroupResourceQuota``) over a limit or with a budget spent. Nothing secret goes in: a Secret's
data, the values of environment variables named like credentials and
last-applied annotations are left out, and no file of the state directory
(its certificates, keys, kubeconfig, token files) is copied.
"""

from __future__ import annotations

import io
import json
import re
import sys
import tarfile
import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import click
import yaml

REDACTED = "<redacted by kuota must-gather>"
# Environment variables whose literal values are credentials, by name.
_SECRET_NAME = re.compile(r"token|secret|passw|key|credential|auth|cert", re.IGNORECASE)
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
_LOG_SECRET = re.compile(r"((?:[Bb]earer\s+|token[\"']?\s*[=:]\s*[\"']?))[A-Za-z0-9._~+/=-]{8,}")
BIZRQ_KIND = "BizGroupResourceQuota"
CASH_PREFIX = "cash/"  # a budget key (resource-hours), see specs/bizrq.md
_TITLES = ("Pending workloads", "Inactive queues", "Quota-tree nodes over budget")


def _scrub_containers(spec: dict[str, Any]) -> None:
    for field in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(field) or []:
            for env in c.get("env") or []:
                if "value" in env and _SECRET_NAME.search(env.get("name", "")):
                    env["value"] = REDACTED


def _walk_pod_specs(doc: Any) -> Iterator[dict[str, Any]]:
    """Every pod spec inside an object (a Pod's, a Job's template, a
    Workload's podSets, a JobSet's replicated jobs' ...)."""
    if isinstance(doc, dict):
        if "containers" in doc and isinstance(doc["containers"], list):
            yield doc
        for v in doc.values():
            yield from _walk_pod_specs(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _walk_pod_specs(v)


def scrub(doc: dict[str, Any]) -> dict[str, Any]:
    """An object's served form without what must never leave the cluster."""
    if doc.get("kind") == "Secret":
        for field in ("data", "stringData"):
            if field in doc:
                doc[field] = {k: REDACTED for k in doc[field] or {}}
    ann = (doc.get("metadata") or {}).get("annotations")
    if ann and _LAST_APPLIED in ann:
        ann[_LAST_APPLIED] = REDACTED
    for spec in _walk_pod_specs(doc):
        _scrub_containers(spec)
    return doc


def _redact_log(text: str) -> str:
    """A log without what looks like a credential (bearer tokens, token=...)."""
    return _LOG_SECRET.sub(lambda m: m.group(1) + REDACTED, text)


def _condition(doc: dict[str, Any], ctype: str) -> dict[str, Any] | None:
    for c in (doc.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c  # type: ignore[no-any-return]
    return None


def _inactive(kind: str, doc: dict[str, Any]) -> str | None:
    c = _condition(doc, "Active")
    if c is not None and c.get("status") == "True":
        return None
    m = doc["metadata"]
    name = f"{m['namespace']}/{m['name']}" if m.get("namespace") else m["name"]
    why = f"{c.get('reason', '')}: {c.get('message', '')}" if c else "no Active condition yet"
    return f"{kind} {name}: {why}"


def _over_budget(doc: dict[str, Any]) -> str | None:
    """A quota-tree node past a limit: a budget (``cash/`` key) is spent once
    ``used >= hard`` (the rule that holds new requests), any other key is over
    when ``used > hard`` (a shrunk limit, or use the tree could not refuse)."""
    from kuota.api.quantity import Quantity

    status = doc.get("status") or {}
    hard = status.get("hard") or (doc.get("spec") or {}).get("hard") or {}
    used = status.get("used") or {}
    over = []
    for key, limit in hard.items():
        if key not in used:
            continue
        try:
            u, h = Quantity(str(used[key])), Quantity(str(limit))
        except (ValueError, TypeError):
            continue
        if u > h or (key.startswith(CASH_PREFIX) and u >= h):
            verb = "spent" if key.startswith(CASH_PREFIX) else "over"
            over.append(f"{key} {verb}: used {used[key]} of {limit}")
    return f"{BIZRQ_KIND} {doc['metadata']['name']}: {', '.join(over)}" if over else None


def _metrics(store: Any) -> str:
    """Kueue's metrics as a scrape would show them now: the gauges (pending,
    usage, quotas, statuses, bizrq budgets) read from the objects. Counters
    start at what exists, as a restarted Kueue's do."""
    from kuota.metrics import KueueMetrics

    return KueueMetrics(store).render().decode()


def _gpu(resources: dict[str, Any] | None) -> str:
    if not resources:
        return "0"
    gpus = [f"{k}={v}" for k, v in resources.items() if "gpu" in k]
    return ",".join(gpus) or "0"


def _node_lines(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> list[str]:
    per_node: dict[str, int] = {}
    for p in pods:
        node = (p.get("spec") or {}).get("nodeName")
        phase = (p.get("status") or {}).get("phase")
        if node and phase not in ("Succeeded", "Failed"):
            per_node[node] = per_node.get(node, 0) + 1
    lines = ["NAME\tREADY\tUNSCHEDULABLE\tTAINTS\tALLOCATABLE GPU\tLABELED GPU MODEL\tPODS"]
    for n in nodes:
        m, spec, status = n["metadata"], n.get("spec") or {}, n.get("status") or {}
        ready = _condition(n, "Ready")
        taints = ",".join(
            f"{t.get('key')}={t.get('value', '')}:{t.get('effect')}"
            for t in spec.get("taints") or []
        )
        model = (m.get("labels") or {}).get("nvidia.com/gpu.product", "")
        lines.append(
            "\t".join(
                [
                    m["name"],
                    ready.get("status", "?") if ready else "?",
                    str(bool(spec.get("unschedulable"))).lower(),
                    taints or "-",
                    _gpu(status.get("allocatable")),
                    model or "-",
                    str(per_node.get(m["name"], 0)),
                ]
            )
        )
    return lines


def gather(store: Any, now: datetime, logs: dict[str, str] | None = None) -> dict[str, bytes]:
    """The bundle's files (path -> content) from a store read only, with the
    manager's recent logs read from a cluster (None: a kept state, which
    keeps no process logs)."""
    from kuota.cli.cluster_source import LOG_LINES
    from kuota.cli.get import pending_reasons
    from kuota.cli.served_form import served_form
    from kuota.embedded.state_meta import CONFIG_META
    from kuota.store.kinds import kind_info, registered_kinds

    files: dict[str, bytes] = {}
    by_kind: dict[str, list[dict[str, Any]]] = {}
    reason = pending_reasons(store, now)
    pending: list[str] = []
    for rtype in registered_kinds():
        info = kind_info(rtype)
        items = store.list(rtype).items
        if not items:
            continue
        docs = [scrub(json.loads(json.dumps(served_form(o), default=str))) for o in items]
        by_kind[info.kind] = docs
        group = rtype[0] or "core"
        doc = {"apiVersion": "v1", "kind": "List", "items": docs}
        files[f"objects/{group}/{rtype[2]}.yaml"] = yaml.safe_dump(doc, sort_keys=False).encode()
        if info.kind == "Workload":
            for o in items:
                why = reason(o)
                if why:
                    pending.append(f"{o.metadata.namespace}/{o.metadata.name}: {why}")
    config = store.get_meta(CONFIG_META)
    if config is None:
        config = {"note": "the state keeps no Configuration: the default one was used"}
    files["configuration.yaml"] = yaml.safe_dump(config, sort_keys=False).encode()
    files["metrics.txt"] = _metrics(store).encode()
    nodes = _node_lines(by_kind.get("Node", []), by_kind.get("Pod", []))
    files["nodes.txt"] = ("\n".join(nodes) + "\n").encode()
    inactive = [
        line
        for kind in ("ClusterQueue", "LocalQueue")
        for d in by_kind.get(kind, [])
        if (line := _inactive(kind, d)) is not None
    ]
    over = [line for d in by_kind.get(BIZRQ_KIND, []) if (line := _over_budget(d)) is not None]
    summary = [f"kuota must-gather at {now.isoformat()}", ""]
    for title, lines in zip(_TITLES, (pending, inactive, over), strict=True):
        summary.append(f"{title}: {len(lines)}")
        summary += [f"  {line}" for line in lines]
        summary.append("")
    summary.append("metrics: metrics.txt (Kueue's series as a scrape now would show them)")
    if logs is None:
        summary.append("logs: kuota keeps no log files in a state (a server logs to its stderr)")
    else:
        for where, text in sorted(logs.items()):
            files[f"logs/{where}.log"] = _redact_log(text).encode()
        summary.append(
            f"logs: the last {LOG_LINES} lines of {len(logs)} manager container(s) in logs/"
            if logs
            else "logs: no manager pod (label control-plane=controller-manager) found"
        )
    files["summary.txt"] = ("\n".join(summary) + "\n").encode()
    return files


def _write(path: str, files: dict[str, bytes]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(f"must-gather/{name}")
            info.size = len(data)
            info.mtime = int(time.time())
            tar.addfile(info, io.BytesIO(data))


@click.command(
    "must-gather",
    short_help="Write a diagnostics bundle of a state (objects, Events, Configuration, nodes,"
    " summary.txt); no secrets.",
)
@click.option("--state", envvar="KUOTA_STATE", default=None, help="State directory of a run.")
@click.option(
    "--kubeconfig",
    default=None,
    help="Gather from this API server instead (a cluster, or a kuota serve).",
)
@click.option(
    "--sim-clock",
    default=None,
    help="With --kubeconfig: a kuota serve's STATE/sim-clock.json, its simulated time as now.",
)
@click.option("-o", "--output", "out", required=True, help="The bundle to write (FILE.tar.gz).")
def must_gather(state: str | None, kubeconfig: str | None, sim_clock: str | None, out: str) -> None:
    """Write a diagnostics bundle of a kept (or live) state: every object with
    status, Events, the Configuration, node summaries and summary.txt (pending
    workloads with their reasons, inactive queues, quota-tree nodes over
    budget). No Secret data, credential-named env values or state files
    (keys, tokens, kubeconfig). Exit status: 0 written, 2 bad input."""
    from kuota.cli.files import CannotRead
    from kuota.cli.get import open_state

    skipped: list[str] = []
    logs: dict[str, str] = {}
    try:
        if kubeconfig is not None:
            from kuota.cli.cluster_source import memory_store, read_cluster

            if state:
                raise CannotRead("give --state DIR or --kubeconfig K, not both")
            cluster = read_cluster(kubeconfig, sim_clock)
            store, now, skipped = memory_store(cluster), cluster.now, cluster.skipped
            logs = cluster.logs
        else:
            if sim_clock:
                raise CannotRead("--sim-clock goes with --kubeconfig")
            store, now = open_state(state)
    except CannotRead as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(2)
    try:
        files = gather(store, now, logs if kubeconfig is not None else None)
    finally:
        store.close()
    if skipped:  # what the reader's RBAC (or the server) did not let us list
        files["skipped.txt"] = ("\n".join(skipped) + "\n").encode()
    try:
        _write(out, files)
    except OSError as err:
        click.echo(f"error: -o {out}: {err.strerror or err}", err=True)
        sys.exit(2)
    heads = [x for x in files["summary.txt"].decode().splitlines() if x.startswith(_TITLES)]
    click.echo(f"wrote {out} ({len(files)} files): " + "; ".join(heads))
