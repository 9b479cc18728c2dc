"""Kueue's scheduler-performance world in cluster mode: two processes over
HTTPS in real time, as Kueue's own figure is taken against a real API
server. ``kuota serve --without-kueue`` creates the world's Workloads at
their times; ``kuota controller`` (the other process) admits them; Kueue's
performance runner (here, in this process, over the kube store) marks each
admitted workload finished ``runtimeMs`` after its admission, and records
what Kueue's recorder records.

    PYTHONPATH=build/mypyc .venv/bin/python bench/cluster_mode.py bench/worlds/kueue-baseline.yaml

Reports the wall time (first creation to last finish), its ratio to the
world's arrival bound and to Kueue's published figure, and the CPU seconds
of each process (the build named: compiled or interpreted)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import yaml
from profiled import PROFILED  # (bench/ is the script's directory)

import kuota
from kuota.api.decode import to_wire
from kuota.runtime.manager import Manager
from kuota.runtime.simclock import read_sim_clock
from kuota.sim.bench import T0, Recorder, Runner
from kuota.sim.benchgen import generate, load, workload
from kuota.store.kube import KubeStore, load_kubeconfig

KUEUE_S = {"kueue-baseline": 351.0, "kueue-large-scale": 1179.0}  # Kueue's published figures
LEAD = timedelta(seconds=5)  # the controller leads before the first workload


def _cpu_s(pid: int) -> float:
    """utime + stime of a process and its reaped children, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / tick


def _world(config: Path, out: Path) -> tuple[Any, int]:
    gen = load(config)
    world = generate(gen, T0)
    docs = [to_wire(o) for o in world.objects]
    docs += [to_wire(workload(a, T0)) for a in world.arrivals]
    start = (T0 - LEAD).strftime("%Y-%m-%dT%H:%M:%SZ")
    docs.insert(
        0,
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "kueue-system", "creationTimestamp": start},
        },
    )
    out.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return world, len(world.arrivals)


def _start(
    args: list[str], env: dict[str, str], profile: Path | None = None
) -> tuple[subprocess.Popen[str], list[str]]:
    head = ["-m", "kuota.cli.main"] if profile is None else ["-c", PROFILED, str(profile)]
    proc = subprocess.Popen(
        [sys.executable, *head, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    lines: list[str] = []

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)

    threading.Thread(target=pump, daemon=True).start()
    return proc, lines


def _wait(lines: list[str], text: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in list(lines):
            if text in line:
                return line
        time.sleep(0.05)
    raise SystemExit(f"timed out waiting for {text!r}: {''.join(lines[-20:])}")


def run(config: Path, timeout: float, profile: str | None = None) -> dict[str, Any]:
    """``profile``: each process's cProfile stats to PROFILE-serve and
    PROFILE-controller (their main threads: serve's loop, the manager)."""
    tmp = Path(tempfile.mkdtemp(prefix="kuota-cluster-bench-"))
    world, total = _world(config, tmp / "world.yaml")
    env = dict(os.environ)
    serve, serve_lines = _start(
        [
            "serve",
            str(tmp / "world.yaml"),
            "--without-kueue",
            "--state",
            str(tmp / "state"),
            "--port",
            "0",
        ],
        env,
        Path(f"{profile}-serve") if profile else None,
    )
    ctl = None
    store = None
    try:
        _wait(serve_lines, "listening on", 300)
        kc = tmp / "state" / "kubeconfig"
        sim = tmp / "state" / "sim-clock.json"
        ctl, ctl_lines = _start(
            [
                "controller",
                "--kubeconfig",
                str(kc),
                "--sim-clock",
                str(sim),
                "--metrics-bind-address",
                "0",
                "--health-probe-bind-address",
                "0",
            ],
            env,
            Path(f"{profile}-controller") if profile else None,
        )
        _wait(ctl_lines, "leading", 60)
        clock = read_sim_clock(sim)
        store = KubeStore(load_kubeconfig(str(kc)))
        mgr = Manager(store, clock)
        mgr.recorder.enabled = False
        rec = Recorder()
        mgr.add(Runner(rec))
        mgr.start()
        t0 = time.monotonic()
        while rec.finished < total and time.monotonic() - t0 < timeout:
            at = mgr.next_timer()
            wait = 0.05
            if at is not None:
                wait = min(wait, max(0.0, (at - clock.now()).total_seconds()))
            store.wait(wait)
            mgr.fire_due()
            mgr.run_until_idle()
        cpu = {"serve": _cpu_s(serve.pid), "controller": _cpu_s(ctl.pid)}
        runner_cpu = time.process_time()
    finally:
        if store is not None:
            store.close()
        for p in (ctl, serve):
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
    first = rec.first_created or T0
    last = rec.last_finished or first
    wall = (last - first).total_seconds()
    bound = world.arrival_bound_s()  # the bound with arrivals, as kuota bench reports it
    name = config.stem
    out = {
        "config": name,
        "mode": "cluster (two processes over HTTPS, real time)",
        "build": kuota.build(),
        "interpreter": kuota.interpreter(),
        "workloads": total,
        "finished": rec.finished,
        "admissions": rec.admissions,
        "evictions": sum(s.evictions for s in rec.wls.values()),
        "wall_s": round(wall, 2),
        "arrival_bound_s": round(bound, 2),
        "ratio_to_bound": round(wall / bound, 3) if bound else None,
        "kueue_s": KUEUE_S.get(name),
        "ratio_to_kueue": round(wall / KUEUE_S[name], 3) if name in KUEUE_S else None,
        "cpu_s": {**{k: round(v, 2) for k, v in cpu.items()}, "runner": round(runner_cpu, 2)},
    }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("configs", nargs="+", type=Path)
    ap.add_argument("--timeout", type=float, default=900.0, help="give up after this many seconds")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--profile", default=None, help="cProfile stats to PROFILE-serve and PROFILE-controller"
    )
    args = ap.parse_args()
    results = []
    for c in args.configs:
        r = run(c, args.timeout, args.profile)
        results.append(r)
        print(json.dumps(r), flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
