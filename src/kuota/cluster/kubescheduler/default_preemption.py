"""DefaultPreemption: when a pod fits nowhere, find a node where evicting pods
of lower priority makes it fit, and the fewest, least important such pods
(``pkg/scheduler/framework/plugins/defaultpreemption`` and
``framework/preemption``).

* A pod with ``preemptionPolicy: Never`` does not preempt; nor does one
  whose nominated node still has a lower-priority pod terminating.
* Nodes rejected as unresolvable (taints, affinity, a pod bigger than the
  node) are not candidates ("Preemption is not helpful for scheduling").
* On each other node: remove every pod of lower priority; if the pod still
  does not fit, the node is out (with the filter's reason). Otherwise put
  the removed pods back one by one, most important first (higher priority,
  then earlier start), keeping each that still lets the pod fit; the rest
  are the victims. PodDisruptionBudgets are not modelled.
* Among candidate nodes pick (kube-scheduler's ``pickOneNodeForPreemption``):
  the lowest highest-victim priority, then the lowest sum of victim
  priorities, then the fewest victims, then the latest start among the
  most important victims, then — where kube-scheduler takes the first of
  a randomly offset list — the first in name order. Every node is a
  candidate (kube-scheduler samples at least 10% / 100 of them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from kuota.cluster.kubescheduler.filters import Rejection
from kuota.cluster.kubescheduler.podinfo import PodInfo

__all__ = [
    "MSG_NEVER",
    "MSG_NOT_HELPFUL",
    "MSG_NO_VICTIMS",
    "MSG_TERMINATING",
    "Candidate",
    "Fits",
    "importance_order",
    "pick_candidate",
    "select_victims",
]

MSG_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING = "not eligible due to a terminating pod on the nominated node."
MSG_NO_VICTIMS = "No preemption victims found for incoming pod"
MSG_NOT_HELPFUL = "Preemption is not helpful for scheduling"
_MAX_INT32 = 2**31 - 1
_NOW = datetime.max  # GetPodStartTime of a pod that has not started: "now", the latest

Fits = Callable[[Sequence[PodInfo]], Rejection | None]  # removed pods -> rejection or None


@dataclass(frozen=True, slots=True)
class Candidate:
    node: str
    victims: tuple[PodInfo, ...]  # most important first


def _start(p: PodInfo) -> datetime:
    s = p.start
    return s.replace(tzinfo=None) if s is not None else _NOW


def importance_order(pods: Sequence[PodInfo]) -> list[PodInfo]:
    """``MoreImportantPod`` order: higher priority first, then earlier start
    (pod key last, for a stable order)."""
    return sorted(pods, key=lambda p: (-p.priority, _start(p), p.key))


def select_victims(
    pod: PodInfo, node: str, on_node: Sequence[PodInfo], fits: Fits
) -> tuple[list[PodInfo] | None, Rejection | None]:
    """``SelectVictimsOnNode``: the victims on one node, or why there are none."""
    potential = [p for p in on_node if p.priority < pod.priority]
    if not potential:
        return None, Rejection((MSG_NO_VICTIMS,), True)
    why = fits(potential)
    if why is not None:
        return None, why
    removed = importance_order(potential)
    victims: list[PodInfo] = []
    for p in list(removed):
        removed.remove(p)  # reprieve: put it back
        if fits(removed) is not None:
            removed.append(p)
            victims.append(p)
    if not victims:
        return None, Rejection((f"expected at least one victim pod on node {node}",), False)
    return victims, None


def _earliest_of_most_important(victims: Sequence[PodInfo]) -> datetime:
    """``GetEarliestPodStartTime``: the earliest start among the victims of
    the highest priority."""
    top = max(v.priority for v in victims)
    return min(_start(v) for v in victims if v.priority == top)


def pick_candidate(candidates: Sequence[Candidate]) -> Candidate:
    """``pickOneNodeForPreemption`` (no PodDisruptionBudgets: none violated)."""

    def key(c: Candidate) -> tuple[int, int, int, float, str]:
        v = c.victims
        highest = max(p.priority for p in v)
        total = sum(p.priority + _MAX_INT32 + 1 for p in v)
        latest = _earliest_of_most_important(v)
        # The latest "earliest start" wins: negate it as seconds since a fixed point.
        ts = -(latest - datetime.min).total_seconds()
        return (highest, total, len(v), ts, c.node)

    return min(candidates, key=key)
