"""Where ``kuota recommend``'s evaluations run: here one after another, in
local processes (``--jobs N``) or on a Ray cluster (``--ray ADDRESS``, the
optional extra ``kuota[ray]``). Evaluations are independent and each is
deterministic, so every runner returns the same scores, in the tasks' order.
"""

from __future__ import annotations

import logging
import multiprocessing
import socket
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from typing import Any, Protocol

from kuota.runtime import gcpolicy
from kuota.sim.recommend_eval import Context, Score, Task, evaluate

__all__ = ["Local", "Processes", "RayCluster", "Runner", "RunnerError"]

Done = Callable[[Score], None]


class RunnerError(Exception):
    """A runner that cannot start (Ray missing, a cluster that cannot be reached)."""


class Runner(Protocol):
    name: str

    def run(self, ctx: Context, tasks: Sequence[Task], done: Done | None = None) -> list[Score]: ...

    def close(self) -> None: ...


class Local:
    name = "this process"

    def run(self, ctx: Context, tasks: Sequence[Task], done: Done | None = None) -> list[Score]:
        out = []
        for t in tasks:
            s = evaluate(ctx, t)
            if done is not None:
                done(s)
            out.append(s)
        return out

    def close(self) -> None:
        pass


def _init_worker() -> None:
    gcpolicy.tune(replay=True)  # a spawned worker starts with the default pace


class Processes:
    def __init__(self, jobs: int) -> None:
        self.name = f"{jobs} local processes"
        self._pool = ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
        )

    def run(self, ctx: Context, tasks: Sequence[Task], done: Done | None = None) -> list[Score]:
        futures: list[Future[Score]] = [self._pool.submit(evaluate, ctx, t) for t in tasks]
        if done is not None:  # here, not in the pool's thread
            for f in as_completed(futures):
                done(f.result())
        return [f.result() for f in futures]

    def close(self) -> None:
        self._pool.shutdown(cancel_futures=True)


def _reachable(address: str, timeout_s: float = 10.0) -> None:
    """Raise RunnerError unless something listens at ``[ray://]host:port``
    (``auto`` and other forms are left to Ray)."""
    hostport = address.removeprefix("ray://")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
            pass
    except OSError as err:
        raise RunnerError(
            f"--ray {address}: cannot connect to a Ray cluster: nothing answers at "
            f"{host}:{port} ({err.strerror or err})"
        ) from None


def _ray_evaluate(ctx: Context, task: Task, trace_csv: str) -> Score:
    from dataclasses import replace

    gcpolicy.tune(replay=True)
    return evaluate(ctx, replace(task, trace_csv=trace_csv))


class RayCluster:
    """Evaluations as Ray tasks (one CPU each). The shared context and each
    slice go to the object store once, not once per task."""

    def __init__(self, address: str) -> None:
        try:
            import ray
        except ImportError:
            raise RunnerError(
                "--ray needs Ray, which is not installed: pip install 'kuota[ray]'"
            ) from None
        self._ray: Any = ray
        self.name = f"the Ray cluster at {address}"
        _reachable(address)  # ray.init retries an address where nothing listens for minutes
        try:
            ray.init(
                address=address,
                ignore_reinit_error=True,
                log_to_driver=False,
                logging_level=logging.ERROR,
                include_dashboard=False,
            )
        except Exception as err:  # Ray raises ConnectionError, ValueError, RuntimeError, ...
            raise RunnerError(f"--ray {address}: cannot connect to a Ray cluster: {err}") from None
        self._remote = ray.remote(num_cpus=1)(_ray_evaluate)
        self._slices: dict[str, Any] = {}

    def run(self, ctx: Context, tasks: Sequence[Task], done: Done | None = None) -> list[Score]:
        from dataclasses import replace

        ray = self._ray
        ctx_ref = ray.put(ctx)
        refs = []
        for t in tasks:
            ref = self._slices.get(t.trace_csv)
            if ref is None:
                ref = self._slices[t.trace_csv] = ray.put(t.trace_csv)
            refs.append(self._remote.remote(ctx_ref, replace(t, trace_csv=""), ref))
        out: list[Score] = ray.get(refs)
        if done is not None:
            for s in out:
                done(s)
        return out

    def close(self) -> None:
        self._slices.clear()
        self._ray.shutdown()
