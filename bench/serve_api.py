"""Benchmark: ``kuota serve`` over HTTPS. Reported as numbers, never asserted.

1. creates: N concurrent clients (aiohttp, one TLS connection each) POST
   Jobs; creates/s and the latency p50/p99 of a create.
2. watch delivery: 100 watchers on Jobs in one namespace; the delay from a
   create's response to each watcher's ADDED event (p50/p99).
3. ``kubectl get workloads -A`` over W Workloads (paginated by kubectl's
   ``limit=500``): wall time of the command (kubectl must be installed), and
   the server's CPU for it. kubectl's own client-side rate limit (client-go's
   default 5 requests/s, burst 10; kubernetes/kubernetes#111880) puts a floor
   of (pages - 10) / 5 s under the paginated command whatever the server
   does: 18 s for 100 pages. So the command is also timed unpaginated
   (``--chunk-size=0``, one request), and the floor is reported.

Every phase reports the server's CPU seconds (``/proc/PID/stat``) and their
ratio to a fixed pure-Python loop timed in the same run (``ref_loop_cpu_s``):
the machine is shared, so wall figures move with its load; the ratios less.

The server runs as ``kuota serve`` in a subprocess on a free port (with
``PYTHONPATH=build/mypyc`` under ``make bench``: the compiled hot path).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import yaml

import kuota

NS = "bench"


def _start(
    state: Path, world: Path | None, profile: Path | None = None
) -> tuple[subprocess.Popen[str], str]:
    args = ["-m", "kuota.cli.main", "serve", "--state", str(state), "--port", "0"]
    if world is not None:
        args.insert(3, str(world))
    if profile is not None:  # the server's own cProfile, written when it stops
        args = ["-c", _PROFILED, str(profile), *args[2:]]
    args = [sys.executable, *args]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    for line in proc.stdout:
        if "listening on " in line:
            return proc, line.split("listening on ")[1].split(";")[0].strip()
    raise SystemExit("kuota serve did not start")


# The server under cProfile (wall-clock timer: a CPU-time timer is a system
# call per function event and inflates call-heavy code tenfold; on a loaded
# machine the wall time of a system call also counts the waits for a core).
_PROFILED = """
import cProfile, runpy, sys
out = sys.argv[1]
sys.argv = ["kuota", *sys.argv[2:]]
prof = cProfile.Profile()
prof.enable()
try:
    runpy.run_module("kuota.cli.main", run_name="__main__")
except SystemExit:
    pass
finally:
    prof.disable()
    prof.dump_stats(out)
"""


def _ssl(state: Path) -> ssl.SSLContext:
    pki = state / "pki"
    ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
    ctx.load_cert_chain(str(pki / "admin.crt"), str(pki / "admin.key"))
    return ctx


def _job(i: int) -> dict[str, Any]:
    # No queue name and no LocalQueue in the namespace: Kueue leaves it alone,
    # the Job controller makes its pod (the create path, not the scheduler).
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": f"job-{i:06d}", "namespace": NS},
        "spec": {
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}
                    ],
                }
            },
        },
    }


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


async def _creates(url: str, ctx: ssl.SSLContext, clients: int, total: int) -> dict[str, float]:
    lat: list[float] = []
    counter = iter(range(total))

    async def client() -> None:
        conn = aiohttp.TCPConnector(ssl=ctx, limit=1)
        async with aiohttp.ClientSession(connector=conn) as s:
            for i in counter:
                t = time.perf_counter()
                async with s.post(f"{url}/apis/batch/v1/namespaces/{NS}/jobs", json=_job(i)) as r:
                    await r.read()
                    assert r.status == 201, await r.text()
                lat.append(time.perf_counter() - t)

    t0 = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    wall = time.perf_counter() - t0
    return {
        "creates": total,
        "clients": clients,
        "creates_per_s": round(total / wall, 1),
        "p50_ms": round(_pct(lat, 0.5) * 1000, 2),
        "p99_ms": round(_pct(lat, 0.99) * 1000, 2),
    }


async def _watch_delivery(
    url: str, ctx: ssl.SSLContext, watchers: int, events: int
) -> dict[str, float]:
    ns = "watched"
    conn = aiohttp.TCPConnector(ssl=ctx, limit=0)
    delays: list[float] = []
    created_at: dict[str, float] = {}
    async with aiohttp.ClientSession(connector=conn) as s:
        async with s.post(
            f"{url}/api/v1/namespaces",
            json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        ) as r:
            await r.read()
        async with s.get(f"{url}/apis/batch/v1/namespaces/{ns}/jobs") as r:
            rv = (await r.json())["metadata"]["resourceVersion"]
        ready = 0
        done = asyncio.Event()

        async def watcher() -> None:
            nonlocal ready
            got = 0
            async with s.get(
                f"{url}/apis/batch/v1/namespaces/{ns}/jobs",
                params={"watch": "true", "resourceVersion": rv},
                timeout=aiohttp.ClientTimeout(total=None),
            ) as r:
                ready += 1
                async for line in r.content:
                    ev = json.loads(line)
                    if ev["type"] != "ADDED":
                        continue
                    t = time.perf_counter()
                    name = ev["object"]["metadata"]["name"]
                    while name not in created_at:  # the response may not be read yet
                        await asyncio.sleep(0)
                        t = max(t, created_at.get(name, t))
                    delays.append(t - created_at[name])
                    got += 1
                    if got == events:
                        return

        tasks = [asyncio.create_task(watcher()) for _ in range(watchers)]
        while ready < watchers:
            await asyncio.sleep(0.05)
        for i in range(events):
            job = _job(i)
            job["metadata"]["namespace"] = ns
            t = time.perf_counter()
            async with s.post(f"{url}/apis/batch/v1/namespaces/{ns}/jobs", json=job) as r:
                await r.read()
            created_at[job["metadata"]["name"]] = t
            await asyncio.sleep(0.02)
        await asyncio.wait_for(asyncio.gather(*tasks), 120)
        done.set()
    return {
        "watchers": watchers,
        "events": events,
        "delivery_p50_ms": round(_pct(delays, 0.5) * 1000, 2),
        "delivery_p99_ms": round(_pct(delays, 0.99) * 1000, 2),
    }


def _workloads_world(path: Path, n: int) -> None:
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "wl"}},
    ]
    for i in range(n):
        docs.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "Workload",
                "metadata": {"name": f"wl-{i:06d}", "namespace": "wl"},
                "spec": {
                    "queueName": "none",
                    "podSets": [
                        {
                            "name": "main",
                            "count": 1,
                            "template": {
                                "spec": {
                                    "restartPolicy": "Never",
                                    "containers": [
                                        {
                                            "name": "c",
                                            "image": "x",
                                            "resources": {"requests": {"cpu": "1"}},
                                        }
                                    ],
                                }
                            },
                        }
                    ],
                },
            }
        )
    # JSON documents (valid YAML): dumping 50,000 documents as YAML takes minutes.
    path.write_text("\n---\n".join(json.dumps(d) for d in docs) + "\n")


class _Skip(Exception):
    pass


def _cpu_s(pid: int) -> float:
    """The process's user + system CPU seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _ref_loop() -> float:
    """CPU seconds of a fixed pure-Python loop (the yardstick of the ratios)."""
    t = time.process_time()
    acc: dict[int, int] = {}
    for i in range(2_000_000):
        acc[i & 1023] = acc.get(i & 1023, 0) + i
    return time.process_time() - t


def _build() -> str:
    import kuota

    return str(kuota.build())


def _prof(base: str | None, phase: str) -> Path | None:
    return Path(f"{base}-{phase}").resolve() if base else None


def main() -> None:
    print(f"build: {kuota.build()}, {kuota.interpreter()} (every figure below)")
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--creates", type=int, default=5000)
    ap.add_argument("--watchers", type=int, default=100)
    ap.add_argument("--events", type=int, default=100)
    ap.add_argument("--workloads", type=int, default=50_000)
    ap.add_argument("--json", default=None, help="Write the figures here too.")
    ap.add_argument(
        "--profile",
        default=None,
        help="Run each server under cProfile; its stats go to PROFILE-creates / -list.",
    )
    a = ap.parse_args()
    ref = min(_ref_loop() for _ in range(3))
    out: dict[str, Any] = {"build": _build(), "ref_loop_cpu_s": round(ref, 3)}
    print("build:", out["build"], "ref loop CPU s:", out["ref_loop_cpu_s"], flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="kuota-bench-serve-"))
    try:
        world = tmp / "ns.yaml"
        world.write_text(
            yaml.safe_dump({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
        )
        proc, url = _start(tmp / "s1", world, _prof(a.profile, "creates"))
        try:
            if not a.creates:
                raise _Skip
            ctx = _ssl(tmp / "s1")
            cpu0, client0 = _cpu_s(proc.pid), time.process_time()
            out["create"] = asyncio.run(_creates(url, ctx, a.clients, a.creates))
            cpu = _cpu_s(proc.pid) - cpu0
            out["create"]["server_cpu_ms_per_create"] = round(1000 * cpu / a.creates, 3)
            out["create"]["per_create_over_ref"] = round(cpu / a.creates / ref, 5)
            out["create"]["creates_per_server_cpu_s"] = round(a.creates / cpu, 1)
            out["create"]["client_cpu_ms_per_create"] = round(
                1000 * (time.process_time() - client0) / a.creates, 3
            )
            print("create:", out["create"], flush=True)
            if not a.events:
                raise _Skip
            cpu0 = _cpu_s(proc.pid)
            out["watch"] = asyncio.run(_watch_delivery(url, ctx, a.watchers, a.events))
            cpu = _cpu_s(proc.pid) - cpu0
            out["watch"]["server_cpu_ms_per_event"] = round(1000 * cpu / a.events, 3)
            out["watch"]["per_event_over_ref"] = round(cpu / a.events / ref, 5)
            print("watch:", out["watch"], flush=True)
        except _Skip:
            pass
        finally:
            proc.terminate()
            proc.wait(60)
        kubectl = shutil.which("kubectl")
        if kubectl and a.workloads:
            wl_world = tmp / "workloads.yaml"
            _workloads_world(wl_world, a.workloads)
            t = time.perf_counter()
            proc, url = _start(tmp / "s2", wl_world, _prof(a.profile, "list"))
            start_s = time.perf_counter() - t
            try:
                env = {**os.environ, "KUBECONFIG": str(tmp / "s2" / "kubeconfig"), "HOME": str(tmp)}
                r = subprocess.run([kubectl, "get", "ns"], env=env, capture_output=True, text=True)
                if r.returncode != 0:
                    raise SystemExit(f"kubectl get ns: {r.stderr}")
                figures: dict[str, Any] = {"server_start_s": round(start_s, 1)}
                for label, extra in (("paginated", []), ("unpaginated", ["--chunk-size=0"])):
                    times, cpus = [], []
                    for _ in range(3):
                        t, cpu0 = time.perf_counter(), _cpu_s(proc.pid)
                        r = subprocess.run(
                            [kubectl, "get", "workloads", "-A", "--no-headers", *extra],
                            env=env,
                            capture_output=True,
                            text=True,
                            check=True,
                        )
                        times.append(time.perf_counter() - t)
                        cpus.append(_cpu_s(proc.pid) - cpu0)
                    figures["workloads"] = len(r.stdout.splitlines())
                    figures[label] = {
                        "seconds_min": round(min(times), 2),
                        "seconds_max": round(max(times), 2),
                        "server_cpu_s": round(min(cpus), 2),
                        "server_cpu_over_ref": round(min(cpus) / ref, 2),
                    }
                pages = -(-figures["workloads"] // 500)
                figures["paginated"]["client_throttle_floor_s"] = max(0, pages - 10) / 5
                out["kubectl_get_workloads"] = figures
                print("kubectl get workloads -A:", out["kubectl_get_workloads"], flush=True)
            finally:
                proc.terminate()
                proc.wait(120)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
