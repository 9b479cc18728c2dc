"""``kuota capacity --pod POD.yaml WORLD...``: how many more copies of a pod
fit on a world's nodes, and what stops the next one on each node (OpenShift's
cluster-capacity tool, over a world's files or a kept ``--state``)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any

import click

from kuota.api.k8s import Job, Pod
from kuota.api.openshift.scheduler_config import profile_of
from kuota.cli.files import CannotRead
from kuota.cli.world import load_world
from kuota.cluster.apiserver.limitrange import PodResourceAdmission
from kuota.cluster.apiserver.pod_admission import PRIORITY_CLASS, PodAdmission
from kuota.cluster.kubescheduler.cluster_capacity import DEFAULT_LIMIT, CapacityReport, estimate
from kuota.cluster.kubescheduler.scoring import PROFILES, profile_named
from kuota.quota.requests import resource_quantity
from kuota.store.resources import NAMESPACE, NODE, POD

# Invalid input is an input error like an unreadable file: exit 2, as every command.
EXIT_OK, EXIT_INVALID, EXIT_UNREADABLE = 0, 2, 2


def _pod_of(objects: list[Any]) -> tuple[Pod | None, str]:
    """The one Pod of the file (a Job stands for a pod of its template)."""
    pods = [o for o in objects if isinstance(o, Pod)]
    jobs = [o for o in objects if isinstance(o, Job)]
    if len(pods) + len(jobs) != 1:
        return None, f"expected exactly one Pod (or Job) in the file, found {len(pods) + len(jobs)}"
    if pods:
        return pods[0], ""
    job = jobs[0]
    tmpl = job.spec.template if job.spec is not None else None
    if tmpl is None or tmpl.spec is None:
        return None, f"Job {job.metadata.name} has no pod template"
    pod = Pod(api_version="v1", kind="Pod", metadata=tmpl.metadata, spec=tmpl.spec)
    pod.metadata.name = pod.metadata.name or job.metadata.name
    pod.metadata.namespace = job.metadata.namespace
    return pod, ""


def _admit(pods: Iterable[Pod], classes: list[Any]) -> list[Pod]:
    """What the API server's Priority and DefaultTolerationSeconds plugins
    would have made of the pods."""
    by_name = {c.metadata.name: c for c in classes}
    hook = PodAdmission(lambda rt, ns, name: by_name.get(name), lambda: classes)
    # The API server's defaulting first (requests default to limits), as the
    # embedded control plane's pod admission does.
    defaults = PodResourceAdmission(lambda ns: ())
    return [hook("CREATE", defaults("CREATE", p, None), None) for p in pods]


def _quantities(requests: dict[str, int]) -> str:
    if not requests:
        return "none"
    return ", ".join(f"{k} {resource_quantity(k, v)}" for k, v in sorted(requests.items()))


def _load(paths: list[str], state: str | None) -> tuple[list[Any], list[str], str]:
    """The world's objects (from files, or from a kept state), its problems
    and the profile its Scheduler config names ("" if none)."""
    if state:
        from kuota.cli.get import open_state

        store, _ = open_state(state)
        try:
            objs: list[Any] = []
            for rtype in (NODE, POD, NAMESPACE, PRIORITY_CLASS):
                objs += store.list(rtype).items
        finally:
            store.close()
        return objs, [], ""
    world = load_world(paths)
    return world.objects, world.problems, profile_of(world.scheduler) if world.scheduler else ""


def run_capacity(
    pod_file: str,
    paths: list[str],
    *,
    state: str | None,
    profile: str | None,
    limit: int,
    as_json: bool,
) -> int:
    try:
        pod_world = load_world([pod_file])
        objects, problems, world_profile = _load(paths, state)
    except CannotRead as err:
        click.echo(f"error: {err}", err=True)
        return EXIT_UNREADABLE
    problems = pod_world.problems + problems
    pod, why = _pod_of(pod_world.objects) if not pod_world.problems else (None, "")
    if why:
        problems.append(f"{pod_file}: {why}")
    if problems or pod is None:
        for p in problems:
            click.echo(f"error: {p}", err=True)
        return EXIT_INVALID
    # --profile, else the world's Scheduler config, else kube-scheduler's default.
    profile = profile or world_profile or "LowNodeUtilization"
    classes = [o for o in objects if o.kind == "PriorityClass"]
    pod = _admit([pod], classes)[0]
    world_pods = _admit([o for o in objects if isinstance(o, Pod)], classes)
    namespaces = {
        o.metadata.name: o.metadata.labels or {} for o in objects if o.kind == "Namespace"
    }
    report = estimate(
        pod,
        [o for o in objects if o.kind == "Node"],
        world_pods,
        namespaces=namespaces,
        profile=profile_named(profile),
        limit=limit,
    )
    click.echo(json.dumps(_as_json(report), indent=2) if as_json else _as_text(report, profile))
    return EXIT_OK


def _as_json(r: CapacityReport) -> dict[str, Any]:
    return {
        "pod": r.pod,
        "requests": {k: str(resource_quantity(k, v)) for k, v in sorted(r.requests.items())},
        "instances": r.count,
        "limitReached": r.limited,
        "terminationReason": r.stop_reason,
        "distribution": dict(sorted(r.per_node.items())),
        "whyNotOneMore": {k: list(v) for k, v in r.why_not.items()},
    }


def _as_text(r: CapacityReport, profile: str) -> str:
    lines = [f"{r.pod} pod requirements: {_quantities(r.requests)}", ""]
    if r.placed_first or r.unplaced_first:
        lines.append(
            f"The world's {r.placed_first + r.unplaced_first} pending pod(s) were placed first "
            f"({r.unplaced_first} fit nowhere)."
        )
    more = "at least " if r.limited else ""
    lines.append(
        f"The cluster can schedule {more}{r.count} more instance(s) of the pod {r.pod} "
        f"(profile {profile})."
    )
    if r.limited:
        lines.append(f"Termination reason: LimitReached: --max {r.limit} instances placed.")
    else:
        lines.append(f"Termination reason: Unschedulable: {r.stop_reason}")
    if r.per_node:
        lines += ["", "Pod distribution among nodes:"]
        lines += [f"\t- {n}: {c} instance(s)" for n, c in sorted(r.per_node.items())]
    if r.why_not:
        lines += ["", "What stops the next one, per node:"]
        lines += [f"\t- {n}: {', '.join(reasons)}" for n, reasons in r.why_not.items()]
    return "\n".join(lines)


@click.command()
@click.option(
    "--pod",
    "pod_file",
    required=True,
    help="A file with the Pod (or a Job, for a pod of its template) to fit.",
)
@click.argument("paths", nargs=-1, metavar="WORLD...")
@click.option("--state", default=None, help="A kept state directory instead of WORLD files.")
@click.option(
    "--profile",
    type=click.Choice(sorted(PROFILES)),
    default=None,
    help="The scheduler profile placing the copies (default: the world's OpenShift "
    "Scheduler config, else LowNodeUtilization).",
)
@click.option(
    "--max", "limit", type=click.IntRange(min=1), default=DEFAULT_LIMIT, show_default=True
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def capacity(
    pod_file: str,
    paths: tuple[str, ...],
    state: str | None,
    profile: str | None,
    limit: int,
    as_json: bool,
) -> None:
    """How many more copies of a pod fit on a world's nodes, and what stops
    the next one on each node (OpenShift's cluster-capacity).

    WORLD files give the Nodes, the Pods already there (bound where their
    spec.nodeName says; pending ones are placed first), Namespaces and
    PriorityClasses; Jobs are not expanded into pods. Exit status: 0 done, 2 invalid
    input or a file that cannot be read.
    """
    if not paths and not state:
        raise click.UsageError("give WORLD files or --state DIR")
    sys.exit(
        run_capacity(
            pod_file, list(paths), state=state, profile=profile, limit=limit, as_json=as_json
        )
    )
