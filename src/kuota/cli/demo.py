"""``make demo``: kuota's main job on the embedded default.

Until the embedded control plane lands, the demo reads the example world the
way kuota reads any manifest (both API versions, every rule) and shows what it
holds: flavors, the cohort tree with each queue's quota, local queues, and the
jobs waiting to be admitted.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.tree import Tree

from kuota.cli.files import CannotRead, expand, read_file


def run_demo(directory: Path) -> int:
    console = Console(highlight=False)
    try:
        files = expand([str(directory)])
        docs = [d for f in files for d in read_file(f).documents]
    except CannotRead as err:
        console.print(f"[red]error:[/red] {err}", markup=True)
        return 2
    bad = [d for d in docs if not d.ok]
    for d in bad:
        console.print(f"{d.where}: {d.ref}", markup=False)
        for err in d.errors:
            console.print(f"  {err}", markup=False)
    if bad:
        return 1
    by_kind: dict[str, list[Any]] = defaultdict(list)
    for d in docs:
        by_kind[d.kind].append(d)
    console.rule(f"kuota demo: {directory} ({len(docs)} objects, all valid)")

    flavors = Table(title="ResourceFlavors", title_justify="left")
    for col in ("name", "node labels", "taints"):
        flavors.add_column(col)
    for d in by_kind["ResourceFlavor"]:
        s = d.obj.spec
        labels = ", ".join(f"{k}={v}" for k, v in (s.node_labels or {}).items())
        taints = ", ".join(f"{t.key}={t.value or ''}:{t.effect}" for t in s.node_taints or ())
        flavors.add_row(d.name, labels, taints)
    console.print(flavors)

    tree = Tree("[bold]cohorts and cluster queues[/bold]")
    cohorts: dict[str, Tree] = {}
    for d in by_kind["ClusterQueue"]:
        cq = d.obj
        parent_name = cq.spec.cohort_name or "(no cohort)"
        parent = cohorts.get(parent_name) or cohorts.setdefault(
            parent_name, tree.add(f"cohort {parent_name}")
        )
        node = parent.add(
            f"[bold]{cq.metadata.name}[/bold] ({cq.api_version.rsplit('/', 1)[-1]}, "
            f"{cq.spec.queueing_strategy}, preemption within={cq.spec.preemption.within_cluster_queue} "
            f"reclaim={cq.spec.preemption.reclaim_within_cohort})"
        )
        for g in cq.spec.resource_groups or ():
            for f in g.flavors:
                quotas = []
                for r in f.resources:
                    q = f"{r.name} {r.nominal_quota}"
                    if r.borrowing_limit is not None:
                        q += f" (borrow ≤ {r.borrowing_limit})"
                    if r.lending_limit is not None:
                        q += f" (lend ≤ {r.lending_limit})"
                    quotas.append(q)
                node.add(f"{f.name}: " + ", ".join(quotas))
    console.print(tree)

    queues = Table(title="LocalQueues", title_justify="left")
    for col in ("namespace/name", "cluster queue", "stop policy"):
        queues.add_column(col)
    for d in by_kind["LocalQueue"]:
        lq = d.obj
        queues.add_row(f"{d.namespace}/{d.name}", lq.spec.cluster_queue or "-", lq.spec.stop_policy)
    console.print(queues)

    jobs = Table(title="Jobs waiting for admission", title_justify="left")
    for col in ("job", "queue", "priority class", "pods", "requests per pod"):
        jobs.add_column(col)
    for d in by_kind["Job"]:
        job = d.obj
        labels = job.metadata.labels or {}
        reqs: list[str] = []
        for c in job.spec.template.spec.containers or ():
            for k, v in ((c.resources.requests if c.resources else None) or {}).items():
                reqs.append(f"{k}={v}")
        jobs.add_row(
            f"{d.namespace}/{d.name}",
            labels.get("kueue.x-k8s.io/queue-name", "-"),
            labels.get("kueue.x-k8s.io/priority-class", "-"),
            str(job.spec.parallelism if job.spec.parallelism is not None else 1),
            " ".join(reqs),
        )
    console.print(jobs)
    console.print(
        "Next: the admission core and the embedded control plane decide which of these run now, "
        "where, and who yields."
    )
    return 0
