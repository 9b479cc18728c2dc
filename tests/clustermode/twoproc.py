"""Two processes as on a cluster: ``kuota serve --without-kueue`` (the API
server and the simulated cluster) and ``kuota controller`` replicas against
its kubeconfig; both stopped when the test ends."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from tests.server.conftest import REPO, Served, start_server

from kuota.api.decode import decode_object
from kuota.controllers.jobs.pod.podmeta import ROLE_HASH, role_hash

KUOTA = (sys.executable, "-m", "kuota.cli.main")


def _compress(d: dict[str, Any], start: datetime, k: int) -> None:
    meta = d.setdefault("metadata", {})
    at = meta.get("creationTimestamp")
    if at:
        t = datetime.fromisoformat(str(at).replace("Z", "+00:00"))
        meta["creationTimestamp"] = (start + (t - start) / k).strftime("%Y-%m-%dT%H:%M:%SZ")
    ann = (((d.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("annotations")
    if ann and "kuota.dev/duration" in ann:
        minutes = ann["kuota.dev/duration"]
        assert minutes.endswith("m"), minutes
        ann["kuota.dev/duration"] = f"{int(minutes[:-1]) * 60 // k}s"


def _queued(d: dict[str, Any]) -> bool:
    return bool(((d.get("metadata") or {}).get("labels") or {}).get("kueue.x-k8s.io/queue-name"))


def webhook_admitted(
    src: Path, dst: Path, compress: int = 1, lead: timedelta = timedelta(0)
) -> Path:
    """A world's files as Kueue's job webhook would have admitted them: each
    Job suspended and labelled with its namespace's LocalQueue ``default``
    (the webhook server is another item's: until it is wired, the world
    arrives as it would come out of it); plus Kueue's namespace, where the
    controller's Lease lives. ``kuota run`` of this world decides as it does
    of ``src``. ``compress``: the Jobs' arrivals and run times divided by it
    (the world's day in a test's minute, at a --speed whose real-time lags
    stay far below Kueue's timeouts). ``lead``: the world starts this much
    (simulated time) before its first Job, so that a controller started
    with the server leads before the Jobs come, as Kueue runs before a
    cluster's users submit."""
    dst.mkdir(parents=True, exist_ok=True)
    files = {f: list(yaml.safe_load_all(f.read_text())) for f in sorted(src.glob("*.yaml"))}
    stamps = [
        datetime.fromisoformat(str(d["metadata"]["creationTimestamp"]).replace("Z", "+00:00"))
        for docs in files.values()
        for d in docs
        if d and (d.get("metadata") or {}).get("creationTimestamp")
    ]
    start = min(stamps) if stamps else None
    for f, docs in files.items():
        for d in docs:
            if d and d.get("kind") == "Job":
                if compress != 1 and start is not None:
                    _compress(d, start, compress)
                labels = d.setdefault("metadata", {}).setdefault("labels", {})
                labels.setdefault("kueue.x-k8s.io/queue-name", "default")
                d["spec"]["suspend"] = True
            elif d and d.get("kind") == "Pod" and _queued(d):
                # Kueue's pod webhook (mpod.kb.io): managed, held by its
                # finalizer, gated until admitted.
                meta = d["metadata"]
                meta["labels"]["kueue.x-k8s.io/managed"] = "true"
                meta["finalizers"] = [*meta.get("finalizers", []), "kueue.x-k8s.io/managed"]
                gates = d["spec"].setdefault("schedulingGates", [])
                gates.append({"name": "kueue.x-k8s.io/admission"})
                meta.setdefault("annotations", {})[ROLE_HASH] = role_hash(decode_object(d).obj)
        (dst / f.name).write_text(yaml.safe_dump_all(docs))
    ns: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "kueue-system"},
    }
    if start is not None:
        ns["metadata"]["creationTimestamp"] = (start - lead).strftime("%Y-%m-%dT%H:%M:%SZ")
    (dst / "kueue-system.yaml").write_text(yaml.safe_dump(ns))
    return dst


@dataclass
class Controller:
    proc: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    times: list[float] = field(default_factory=list)  # when each stdout line came

    def when(self, text: str) -> float:
        for t, line in zip(self.times, self.lines, strict=False):
            if text in line:
                return t
        raise AssertionError(f"no {text!r} from the controller")

    def wait_line(self, text: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if text in line:
                    return line
            if self.proc.poll() is not None and not any(text in x for x in self.lines):
                raise AssertionError(f"controller exited: {''.join(self.lines + self.logs[-20:])}")
            time.sleep(0.05)
        raise AssertionError(f"no {text!r} from the controller: {''.join(self.lines)}")

    def port(self, what: str) -> int:
        return int(self.wait_line(f"{what} on ", 120).rsplit(":", 1)[1])

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode


def start_controller(served: Served, *args: str, env: dict[str, str] | None = None) -> Controller:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kuota.cli.main",
            "controller",
            "--kubeconfig",
            str(served.kubeconfig),
            "--sim-clock",
            str(served.state / "sim-clock.json"),
            "--metrics-bind-address",
            "127.0.0.1:0",
            "--health-probe-bind-address",
            "127.0.0.1:0",
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, **(env or {})},
    )
    c = Controller(proc)

    def pump(stream: Any, into: list[str]) -> None:
        for line in stream:
            if into is c.lines:
                c.times.append(time.monotonic())
            into.append(line)

    threading.Thread(target=pump, args=(proc.stdout, c.lines), daemon=True).start()
    threading.Thread(target=pump, args=(proc.stderr, c.logs), daemon=True).start()
    return c


def outcome(workloads: list[dict[str, Any]]) -> dict[str, Any]:
    """What a run decided, per Workload (by its Job): how it ended, where it
    was last admitted, and its evictions by reason."""
    out: dict[str, Any] = {}
    for w in workloads:
        owner = (w["metadata"].get("ownerReferences") or [{}])[0].get("name", w["metadata"]["name"])
        st = w.get("status") or {}
        conds = {c["type"]: c for c in st.get("conditions") or ()}
        fin = conds.get("Finished")
        adm = st.get("admission") or {}
        flavors = sorted(
            {
                f
                for ps in adm.get("podSetAssignments") or ()
                for f in (ps.get("flavors") or {}).values()
            }
        )
        evictions = {
            e["reason"]: e["count"]
            for e in (st.get("schedulingStats") or {}).get("evictions") or ()
        }
        out[f"{w['metadata']['namespace']}/{owner}"] = {
            "finished": fin["reason"] if fin and fin["status"] == "True" else None,
            "cluster_queue": adm.get("clusterQueue"),
            "flavors": flavors,
            "evictions": evictions,
        }
    return out


def run_embedded(world: Path, state: Path) -> dict[str, Any]:
    """``kuota run`` of the same world, in virtual time."""
    subprocess.run(
        [*KUOTA, "run", str(world), "--no-live", "--state", str(state)],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    return outcome(state_items(state, "workloads", "-A"))


def state_items(state: Path, *what: str) -> list[dict[str, Any]]:
    """``kuota get WHAT -o json`` of a state directory: its items."""
    got = subprocess.run(
        [*KUOTA, "get", *what, "-o", "json", "--state", str(state)],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    items: list[dict[str, Any]] = json.loads(got.stdout)["items"]
    return items


def start_paced(world: Path, tmp_path: Path, speed: int = 1000) -> Served:
    """``kuota serve --without-kueue --paced`` of a world (at ``speed``x)."""
    return start_server(
        tmp_path / "state",
        str(world),
        "--without-kueue",
        "--paced",
        "--speed",
        str(speed),
        home=tmp_path / "home",
    )


def finished_at(state: Path) -> dict[str, datetime]:
    """namespace/name -> when each Workload of a ``kuota run`` state finished."""
    return {key: at for w in state_items(state, "workloads", "-A") for key, at in [finished(w)]}


def finished(w: dict[str, Any]) -> tuple[str, datetime]:
    """A finished Workload's namespace/name and when it finished."""
    m = w["metadata"]
    at = next(c for c in w["status"]["conditions"] if c["type"] == "Finished")
    when = datetime.fromisoformat(at["lastTransitionTime"].replace("Z", "+00:00"))
    return f"{m['namespace']}/{m['name']}", when


def wait_for(cond: Callable[[], Any], timeout: float, what: str, every: float = 0.5) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = cond()
        if last and not isinstance(last, str):  # (a str says what is still missing)
            return last
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}: {last!r}")


class WorkloadLog:
    """Every Workload write the API server made, in order, as a watch from the
    start sees them (the recorded writes the invariants are checked on)."""

    def __init__(self, served: Served) -> None:
        from lightkube import Client, KubeConfig
        from lightkube.generic_resource import create_namespaced_resource

        self.writes: list[dict[str, Any]] = []
        self._stop = threading.Event()
        cfg = KubeConfig.from_file(str(served.kubeconfig))
        self._client = Client(cfg)
        self._res = create_namespaced_resource("kueue.x-k8s.io", "v1beta2", "Workload", "workloads")
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from lightkube import ALL_NS
        from lightkube.types import on_error_retry

        rv = "0"
        while not self._stop.is_set():
            try:
                for etype, obj in self._client.watch(
                    self._res, namespace=ALL_NS, resource_version=rv, on_error=on_error_retry
                ):
                    rv = obj["metadata"]["resourceVersion"]
                    self.writes.append({"type": etype, **dict(obj)})
                    if self._stop.is_set():
                        return
            except Exception:
                time.sleep(0.2)

    def stop(self) -> None:
        self._stop.set()

    def history(self) -> dict[str, list[tuple[str, Any]]]:
        """Per Workload (by its Job): its admissions and evictions, in order."""
        out: dict[str, list[tuple[str, Any]]] = {}
        last: dict[str, tuple[Any, Any]] = {}
        for w in self.writes:
            m = w["metadata"]
            owner = (m.get("ownerReferences") or [{}])[0].get("name", m["name"])
            key = f"{m['namespace']}/{owner}"
            st = w.get("status") or {}
            adm = st.get("admission")
            cq = adm and (adm["clusterQueue"], _flavors(adm))
            ev = next(
                (
                    c["reason"]
                    for c in st.get("conditions") or ()
                    if c["type"] == "Evicted" and c["status"] == "True"
                ),
                None,
            )
            prev_cq, prev_ev = last.get(key, (None, None))
            h = out.setdefault(key, [])
            if cq and cq != prev_cq:
                h.append(("admitted", cq))
            if ev and ev != prev_ev:
                h.append(("evicted", ev))
            last[key] = (cq, ev)
        return out


def _flavors(adm: dict[str, Any]) -> tuple[str, ...]:
    return tuple(
        sorted(
            {
                f
                for ps in adm.get("podSetAssignments") or ()
                for f in (ps.get("flavors") or {}).values()
            }
        )
    )


def _qty(text: str) -> float:
    units = {
        "Ki": 2**10,
        "Mi": 2**20,
        "Gi": 2**30,
        "Ti": 2**40,
        "m": 1e-3,
        "k": 1e3,
        "M": 1e6,
        "G": 1e9,
    }
    for u, f in units.items():
        if text.endswith(u):
            return float(text[: -len(u)]) * f
    return float(text)


def cohort_quota(cluster_queues: list[dict[str, Any]]) -> dict[tuple[str, str, str], float]:
    """(cohort, flavor, resource) -> the nominal quota of its ClusterQueues:
    what the cohort's admitted workloads may use together at most."""
    out: dict[tuple[str, str, str], float] = {}
    for cq in cluster_queues:
        cohort = cq["spec"].get("cohortName") or cq["spec"].get("cohort") or cq["metadata"]["name"]
        for rg in cq["spec"].get("resourceGroups") or ():
            for fl in rg.get("flavors") or ():
                for r in fl.get("resources") or ():
                    k = (cohort, fl["name"], r["name"])
                    out[k] = out.get(k, 0.0) + _qty(str(r["nominalQuota"]))
    return out


def check_writes(log: WorkloadLog, cluster_queues: list[dict[str, Any]]) -> dict[str, int]:
    """The invariants, over every recorded Workload write: a Workload is never
    given quota again while it holds some (no double booking), and what the
    workloads holding quota use never exceeds their cohort's quota. Returns
    the admissions and evictions counted."""
    cohort_of = {
        cq["metadata"]["name"]: cq["spec"].get("cohortName")
        or cq["spec"].get("cohort")
        or cq["metadata"]["name"]
        for cq in cluster_queues
    }
    limit = cohort_quota(cluster_queues)
    held: dict[str, dict[tuple[str, str, str], float]] = {}
    used: dict[tuple[str, str, str], float] = {}
    counts = {"admissions": 0, "evictions": 0}
    for w in log.writes:
        m = w["metadata"]
        key = f"{m['namespace']}/{m['name']}"
        st = w.get("status") or {}
        conds = {c["type"]: c["status"] for c in st.get("conditions") or ()}
        adm = st.get("admission")
        holds = (
            w["type"] != "DELETED"
            and adm is not None
            and conds.get("QuotaReserved") == "True"
            and conds.get("Finished") != "True"
            # The admission core frees an evicted workload's quota at its
            # eviction (embedded and cluster mode alike).
            and conds.get("Evicted") != "True"
        )
        before = held.get(key)
        now: dict[tuple[str, str, str], float] | None = None
        if holds:
            now = {}
            cohort = cohort_of[adm["clusterQueue"]]
            # Pods of a podSet that finished give their quota back
            # (status.reclaimablePods), as Kueue's usage counts them.
            reclaimed = {r["name"]: r["count"] for r in st.get("reclaimablePods") or ()}
            for ps in adm.get("podSetAssignments") or ():
                count = ps.get("count") or 1
                left = max(count - reclaimed.get(ps.get("name", "main"), 0), 0) / count
                for res, flavor in (ps.get("flavors") or {}).items():
                    q = _qty(str((ps.get("resourceUsage") or {}).get(res, "0"))) * left
                    k = (cohort, flavor, res)
                    now[k] = now.get(k, 0.0) + q
            if before is not None and (
                set(now) != set(before) or any(now[k] > before[k] + 1e-9 for k in now)
            ):
                raise AssertionError(f"{key} booked again while holding quota: {before} -> {now}")
        if before is None and now is not None:
            counts["admissions"] += 1
        if before is not None and now is None and conds.get("Finished") != "True":
            counts["evictions"] += 1
        for k, q in (before or {}).items():
            used[k] -= q
        for k, q in (now or {}).items():
            used[k] = used.get(k, 0.0) + q
            if used[k] > limit.get(k, 0.0) + 1e-9:
                holders = sorted(h for h, u in held.items() if k in u and h != key)
                raise AssertionError(
                    f"quota exceeded at {key}'s write: {k} uses {used[k]} of {limit.get(k)} "
                    f"(with {holders})"
                )
        if now is None:
            held.pop(key, None)
        else:
            held[key] = now
    return counts


def with_lead(src: Path, dst: Path, lead: timedelta) -> Path:
    """A world's files unchanged, plus Kueue's namespace (where the
    controller's Lease lives) stamped ``lead`` before the world's first
    object: every object stamped later arrives, as a user's ``kubectl
    apply`` would, through the admission webhooks the controller has
    registered by then (serve sends them there), not pre-mutated."""
    dst.mkdir(parents=True, exist_ok=True)
    stamps = []
    for f in sorted(src.glob("*.yaml")):
        text = f.read_text()
        (dst / f.name).write_text(text)
        for d in yaml.safe_load_all(text):
            at = ((d or {}).get("metadata") or {}).get("creationTimestamp")
            if at:
                stamps.append(datetime.fromisoformat(str(at).replace("Z", "+00:00")))
    ns: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "kueue-system"},
    }
    ns["metadata"]["creationTimestamp"] = (min(stamps) - lead).strftime("%Y-%m-%dT%H:%M:%SZ")
    (dst / "kueue-system.yaml").write_text(yaml.safe_dump(ns))
    return dst


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
