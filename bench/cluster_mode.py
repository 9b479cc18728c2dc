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
import contextlib
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
    return sum(_user_sys_s(pid))


def _user_sys_s(pid: int) -> tuple[float, float]:
    """(utime, stime) of a process and its reaped children, in seconds: the
    kernel's share (system calls, TLS over loopback, thread wake-ups) apart."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    user = (int(fields[11]) + int(fields[13])) / tick
    return user, (int(fields[12]) + int(fields[14])) / tick


def _requests(kc: Path) -> dict[str, int]:
    """serve's ``apiserver_request_total`` by ``VERB resource[/subresource]``
    (its /metrics, read with the kubeconfig's admin credentials)."""
    import re
    import urllib.request

    from lightkube.config.client_adapter import verify_cluster

    single = load_kubeconfig(str(kc)).get()
    ctx = verify_cluster(single.cluster, single.user, single.abs_file)
    req = urllib.request.Request(single.cluster.server + "/metrics")
    if single.user.token:
        req.add_header("Authorization", f"Bearer {single.user.token}")
    text = urllib.request.urlopen(req, context=ctx, timeout=30).read().decode()
    out: dict[str, int] = {}
    pat = re.compile(
        r'apiserver_request_total\{verb="([^"]*)",group="[^"]*",version="[^"]*",'
        r'resource="([^"]*)",subresource="([^"]*)"\} (\d+)'
    )
    for verb, res, sub, n in pat.findall(text):
        key = f"{verb} {res}/{sub}" if sub else f"{verb} {res}"
        out[key] = out.get(key, 0) + int(n)
    return out


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
    # (libyaml's emitter: the pure-Python one took seconds for 15,000 Workloads)
    out.write_text(yaml.dump_all(docs, Dumper=yaml.CSafeDumper, sort_keys=False))
    return world, len(world.arrivals)


class _Proc:
    """A kuota process the bench started: ``pid`` is kuota's own (under
    py-spy, the sampler's child), whose CPU is counted and which is stopped."""

    def __init__(self, popen: subprocess.Popen[str], pid: int) -> None:
        self.popen = popen
        self.pid = pid

    def stop(self) -> None:
        if self.popen.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGTERM)  # (py-spy writes its samples when kuota ends)
        try:
            self.popen.wait(60)
        except subprocess.TimeoutExpired:
            self.popen.kill()


def _child_pid(pid: int, timeout: float = 30.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except FileNotFoundError:
            break
        if kids:
            return int(kids[0])
        time.sleep(0.01)
    raise SystemExit(f"py-spy started no process (pid {pid})")


def _start(
    args: list[str],
    env: dict[str, str],
    profile: Path | None = None,
    py_spy: tuple[str, Path] | None = None,
) -> tuple[_Proc, list[str]]:
    head = ["-m", "kuota.cli.main"] if profile is None else ["-c", PROFILED, str(profile)]
    cmd = [sys.executable, *head, *args]
    if py_spy is not None:
        # (py-spy cannot attach to a process it did not start on this VM:
        # it starts kuota; --native shows the compiled modules' C functions)
        spy, out = py_spy
        cmd = [spy, "record", "--native", "-r", "50", "-f", "raw", "-o", str(out), "--", *cmd]
    popen = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    proc = _Proc(popen, popen.pid if py_spy is None else _child_pid(popen.pid))
    lines: list[str] = []

    def pump() -> None:
        assert popen.stdout is not None
        for line in popen.stdout:
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


def run(
    config: Path,
    timeout: float,
    profile: str | None = None,
    py_spy: str | None = None,
    serve_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``profile``: each process's cProfile stats to PROFILE-serve and
    PROFILE-controller (their main threads: serve's loop, the manager).
    ``py_spy``: "PY-SPY:OUT": both processes sampled by that py-spy (every
    thread), their stacks to OUT-serve.txt and OUT-controller.txt.
    ``serve_env``: set in serve's environment only (KUOTA_UVLOOP=0: serve on
    asyncio's loop while the controller and runner stay on uvloop's)."""
    spy = py_spy.split(":", 1) if py_spy else None

    def spied(name: str) -> tuple[str, Path] | None:
        return None if spy is None else (spy[0], Path(f"{spy[1]}-{name}.txt"))

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
        {**env, **(serve_env or {})},
        Path(f"{profile}-serve") if profile else None,
        spied("serve"),
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
            spied("controller"),
        )
        _wait(ctl_lines, "leading", 60)
        clock = read_sim_clock(sim)
        store = KubeStore(load_kubeconfig(str(kc)))
        mgr = Manager(store, clock)
        mgr.recorder.enabled = False
        rec = Recorder()
        mgr.add(Runner(rec))
        # CPU and requests from here on are the run's (before: the world's
        # generation, serve's load of it, both processes' start).
        cpu0 = {"serve": _cpu_s(serve.pid), "controller": _cpu_s(ctl.pid)}
        sys0 = {"serve": _user_sys_s(serve.pid)[1], "controller": _user_sys_s(ctl.pid)[1]}
        sys0["runner"] = _user_sys_s(os.getpid())[1]
        runner0 = time.process_time()
        req0 = _requests(kc)
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
        cpu_total = {"serve": _cpu_s(serve.pid), "controller": _cpu_s(ctl.pid)}
        cpu_total["runner"] = time.process_time()
        cpu = {k: v - cpu0.get(k, runner0) for k, v in cpu_total.items()}
        sys1 = {"serve": _user_sys_s(serve.pid)[1], "controller": _user_sys_s(ctl.pid)[1]}
        sys1["runner"] = _user_sys_s(os.getpid())[1]
        cpu_sys = {k: v - sys0[k] for k, v in sys1.items()}
        req1 = _requests(kc)
        requests = {k: n - req0.get(k, 0) for k, n in req1.items() if n > req0.get(k, 0)}
        runner_requests = store.requests
    finally:
        if store is not None:
            store.close()
        for p in (ctl, serve):
            if p is not None:
                p.stop()
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
        # CPU from the runner's start to the last finish (what the world's
        # workloads cost), per 1,000 workloads, and with the setup included.
        "cpu_s": {k: round(v, 2) for k, v in cpu.items()},
        "cpu_s_per_1k": {k: round(v * 1000 / total, 3) for k, v in cpu.items()},
        # (of cpu_s, the kernel's: system calls, loopback TCP, wake-ups)
        "cpu_sys_s": {k: round(v, 2) for k, v in cpu_sys.items()},
        "cpu_total_s": {k: round(v, 2) for k, v in cpu_total.items()},
        # serve's requests in the run by verb and resource (the runner's
        # included: it sent runner_requests of them), per admission.
        "requests_per_admission": {
            k: round(n / max(1, rec.admissions), 3)
            for k, n in sorted(requests.items())
            if n * 1000 >= max(1, rec.admissions)
        },
        # (the rest: the informers' lists and watches, the lease's renewals)
        "requests_rare": sum(n for n in requests.values() if n * 1000 < max(1, rec.admissions)),
        # (by name: a re-list after a 410 shows here as list pages)
        "requests_rare_by": {
            k: n for k, n in sorted(requests.items()) if n * 1000 < max(1, rec.admissions)
        },
        "requests": sum(requests.values()),
        # (how many requests a run takes varies with its timing: the pending
        # workloads' status writes follow the messages of each attempt)
        "cpu_us_per_request": {
            k: round(v * 1e6 / max(1, sum(requests.values()))) for k, v in cpu.items()
        },
        "runner_requests": runner_requests,
        # who sent them: the runner counts its own; the controller the rest
        # (serve sends none to itself)
        "requests_by_who": {
            "runner": runner_requests,
            "controller": sum(requests.values()) - runner_requests,
        },
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
    ap.add_argument(
        "--py-spy",
        default=None,
        metavar="PY_SPY:OUT",
        help="sample both processes with this py-spy binary, stacks to OUT-serve.txt, "
        "OUT-controller.txt (raw format, every thread, native frames)",
    )
    ap.add_argument(
        "--serve-env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set in serve's environment only (KUOTA_UVLOOP=0: serve on asyncio's loop)",
    )
    args = ap.parse_args()
    serve_env = dict(kv.split("=", 1) for kv in args.serve_env)
    results = []
    for c in args.configs:
        r = run(c, args.timeout, args.profile, args.py_spy, serve_env)
        if serve_env:
            r["serve_env"] = serve_env
        results.append(r)
        print(json.dumps(r), flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
