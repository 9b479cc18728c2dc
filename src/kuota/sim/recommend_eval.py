"""One evaluation of ``kuota recommend``: a candidate design replayed on a
trace slice, scored against the goals. The one place a replay is run
(through :func:`kuota.sim.simulate.simulate`, so that whichever replay path
simulate chooses, the search uses it too).

A task carries text, not paths (the design's YAML and the slice's CSV), so
that it runs the same in this process, in a local worker process or on
another machine of a Ray cluster.
"""

from __future__ import annotations

import gc
import math
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kuota.api.decode import REGISTRY, decode_yaml
from kuota.api.kueue.config import KueueConfig
from kuota.sim.mapping import Mapping
from kuota.sim.recommend_goals import Goal, goal_value, shortfall, worst_wait
from kuota.sim.report import DesignResult
from kuota.sim.simulate import Design, simulate
from kuota.sim.trace import NodeRow, read_trace

__all__ = ["Context", "Score", "Task", "evaluate"]


@dataclass(frozen=True)
class Context:
    """What every evaluation shares."""

    mapping: Mapping
    config: KueueConfig
    goals: tuple[Goal, ...]
    node_rows: tuple[NodeRow, ...] | None = None
    openshift: bool = False
    scheduler: Any = None


@dataclass(frozen=True)
class Task:
    candidate: str
    gpus: float
    design_yaml: str  # the candidate's Kueue objects (no Configuration)
    rung: int
    rows: int  # jobs in the slice
    trace_csv: str  # the slice
    keep_result: bool = False  # return the whole DesignResult (for the report)


@dataclass(frozen=True)
class Score:
    candidate: str
    gpus: float
    rung: int
    rows: int
    values: tuple[float, ...]  # per goal, in the goals' order
    shortfall: float  # summed over the goals; 0: every goal met
    p95_wait: float  # the worst team's p95 wait, seconds (the Pareto front's y)
    utilization: float | None
    preemptions: int
    stopped: str
    cpu_s: float = field(default=0.0, compare=False)  # this evaluation's CPU time
    result: DesignResult | None = field(default=None, compare=False, repr=False)

    @property
    def met(self) -> bool:
        return self.shortfall == 0


def _objects(text: str, name: str) -> list[Any]:
    out: list[Any] = []
    for doc in decode_yaml(text, source=name):
        if not doc.ok:
            problems = "; ".join(doc.shown(e) for e in doc.errors)
            raise ValueError(f"{name}: {doc.ref}: {problems}")
        obj = doc.obj
        info = REGISTRY.get((obj.api_version, obj.kind))
        if info is not None and info.namespaced and not obj.metadata.namespace:
            obj.metadata.namespace = "default"  # as kubectl (and kuota run) apply it
        out.append(obj)
    return out


def evaluate(ctx: Context, task: Task) -> Score:
    """Replay ``task``'s slice on its design and score it."""
    cpu0 = time.process_time()
    design = Design(
        task.candidate,
        task.candidate,
        _objects(task.design_yaml, task.candidate),
        ctx.config,
        ctx.openshift,
        ctx.scheduler,
    )
    with tempfile.TemporaryDirectory(prefix="kuota-recommend-") as tmp:
        path = Path(tmp) / f"slice-{task.rows}.csv"
        path.write_text(task.trace_csv, encoding="utf-8")
        trace = read_trace(path)
        nodes = list(ctx.node_rows) if ctx.node_rows is not None else None
        (result,) = simulate(trace, [design], ctx.mapping, nodes)
    # A replay process collects almost never (runtime.gcpolicy: one replay,
    # then exit); a search runs many in one process, and each leaves its
    # control plane's cycles behind: free them before the next.
    gc.collect()
    values = tuple(goal_value(g, result) for g in ctx.goals)
    missed = sum(shortfall(g, v) for g, v in zip(ctx.goals, values, strict=True))
    return Score(
        candidate=task.candidate,
        gpus=task.gpus,
        rung=task.rung,
        rows=task.rows,
        values=values,
        shortfall=missed,
        p95_wait=worst_wait(result),
        utilization=result.quota_utilization,
        preemptions=result.overall.preemptions,
        stopped=result.stopped,
        cpu_s=time.process_time() - cpu0,
        result=result if task.keep_result else None,
    )


def finite(x: float) -> float | None:
    """JSON has no infinity: a wait that never ends is null."""
    return None if math.isinf(x) or math.isnan(x) else x
