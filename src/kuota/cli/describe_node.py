"""``kuota describe node``: as ``oc describe node`` (labels, taints,
capacity, allocatable, the pods on it and what they request), with what users
of accelerators look for first: the GPUs allocated and the pods holding them."""

from __future__ import annotations

from rich.console import Console

from kuota.cli.get import _map_lines, events_for, open_state, print_events
from kuota.cli.get_columns import pod_status
from kuota.cli.table_text import render
from kuota.quota.requests import pod_requests, resource_quantity, resource_value
from kuota.store import StoreError
from kuota.store.resources import NODE, POD

W = 20


def _accelerator(resource: str) -> bool:
    """An extended resource of a GPU (nvidia.com/gpu, amd.com/gpu, gpu.intel.com/i915...)."""
    return "gpu" in resource.lower() or resource.endswith("/i915")


def describe_node(name: str, state: str | None, namespace: str | None, console: Console) -> int:
    store, now = open_state(state)
    try:
        try:
            node = store.get(NODE, "", name)
        except StoreError:
            console.print(f'Error from server (NotFound): nodes "{name}" not found', markup=False)
            return 1
        pods = [
            p
            for p in store.list(POD).items
            if p.spec is not None
            and p.spec.node_name == name
            and (p.status is None or p.status.phase not in ("Succeeded", "Failed"))
        ]
        events = events_for(store, node)
    finally:
        store.close()
    st = node.status
    capacity = dict((st.capacity if st else None) or {})
    allocatable = dict((st.allocatable if st else None) or capacity)
    requests = {id(p): pod_requests(p.spec) for p in pods}
    resources = sorted(
        set(allocatable) | {r for v in requests.values() for r in v if v[r]},
        key=lambda r: (not _accelerator(r), r not in ("cpu", "memory"), r),
    )
    taints = [
        f"{t.key}={t.value}:{t.effect}" if t.value else f"{t.key}:{t.effect}"
        for t in (node.spec.taints if node.spec else None) or ()
    ]
    lines = [
        f"{'Name:':<{W}}{name}",
        *_map_lines("Labels", node.metadata.labels, W),
        f"{'Taints:':<{W}}{taints[0] if taints else '<none>'}",
        *(" " * W + t for t in taints[1:]),
        f"{'Unschedulable:':<{W}}{str(bool(node.spec and node.spec.unschedulable)).lower()}",
    ]
    # Allocated resources: the sum of the requests of the pods bound here.
    rows = []
    for r in resources:
        alloc = allocatable.get(r)
        total = resource_value(r, alloc) if alloc is not None else 0
        # Each pod takes one of the node's "pods" (kubelet's maxPods).
        used = len(pods) if r == "pods" else sum(v.get(r, 0) for v in requests.values())
        pct = f" ({100 * used // total}%)" if total else ""
        rows.append(
            [
                r,
                str(capacity[r]) if r in capacity else "-",
                str(alloc) if alloc is not None else "-",
                f"{resource_quantity(r, used)}{pct}",
            ]
        )
    lines += [
        "Allocated resources:",
        render(["RESOURCE", "CAPACITY", "ALLOCATABLE", "REQUESTED"], rows, None),
    ]
    gpus = [r for r in resources if _accelerator(r)]
    holders = [p for p in pods if any(requests[id(p)].get(r) for r in gpus)]
    if gpus:
        lines.append(f"GPU pods: ({len(holders)} holding GPUs)")
        if holders:
            lines.append(
                render(
                    ["NAMESPACE", "NAME", "STATUS", *(r.upper() for r in gpus)],
                    [
                        [
                            p.metadata.namespace,
                            p.metadata.name,
                            pod_status(p),
                            *(str(requests[id(p)].get(r, 0)) for r in gpus),
                        ]
                        for p in sorted(
                            holders, key=lambda p: (p.metadata.namespace, p.metadata.name)
                        )
                    ],
                    None,
                )
            )
    lines.append(f"Non-terminated Pods: ({len(pods)} in total)")
    if pods:
        shown = [r for r in ("cpu", "memory") if r in resources]
        lines.append(
            render(
                ["NAMESPACE", "NAME", *(f"{r.upper()} REQUESTS" for r in shown)],
                [
                    [
                        p.metadata.namespace,
                        p.metadata.name,
                        *(str(resource_quantity(r, requests[id(p)].get(r, 0))) for r in shown),
                    ]
                    for p in sorted(pods, key=lambda p: (p.metadata.namespace, p.metadata.name))
                ],
                None,
            )
        )
    console.print("\n".join(lines), markup=False, soft_wrap=True)
    print_events(events, now, console)
    return 0
