"""Kueue's metrics at ``kuota serve``'s /metrics (authenticated as the rest of
the API), read as a scraper does while jobs run: every series matches the
objects kubectl shows."""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families
from tests.server.conftest import EXAMPLES, Served, needs_kubectl, start_server
from tests.server.test_kubectl import JOB

from kuota.api.quantity import Quantity

pytestmark = needs_kubectl


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    d = tmp_path_factory.mktemp("metrics")
    (d / "home").mkdir()
    s = start_server(d / "state", home=d / "home")
    try:
        s.ok(
            "apply",
            "-f",
            str(EXAMPLES / "quickstart" / "world.yaml"),
            "-f",
            str(EXAMPLES / "quickstart" / "nodes.yaml"),
        )
        jobs = "---".join(JOB.format(name=f"m{i}", app="m", n=4) for i in range(8))
        s.ok("apply", "-f", "-", input=jobs)
        yield s
    finally:
        s.stop()


def _samples(srv: Served) -> dict[str, list[tuple[dict[str, str], float]]]:
    out: dict[str, list[tuple[dict[str, str], float]]] = defaultdict(list)
    for fam in text_string_to_metric_families(srv.ok("get", "--raw", "/metrics")):
        for s in fam.samples:
            out[s.name].append((s.labels, s.value))
    return out


def _cond(wl: dict, ctype: str) -> dict | None:
    for c in (wl.get("status") or {}).get("conditions") or []:
        if c["type"] == ctype:
            return c
    return None


def _settled(srv: Served) -> list[dict]:
    """Workloads once the queues account for all of them (the jobs run for
    an hour: nothing moves after that)."""
    deadline = time.monotonic() + 30
    while True:
        cqs = [c.get("status") or {} for c in srv.json("get", "clusterqueues")["items"]]
        queued = sum(s.get("pendingWorkloads", 0) + s.get("reservingWorkloads", 0) for s in cqs)
        wls = srv.json("get", "workloads", "-A")["items"]
        if len(wls) == 8 and queued == 8:
            return wls
        assert time.monotonic() < deadline, wls
        time.sleep(0.3)


def _value(samples: list[tuple[dict[str, str], float]], **labels: str) -> float:
    got = [v for lb, v in samples if all(lb.get(k) == x for k, x in labels.items())]
    assert len(got) == 1, (labels, samples)
    return got[0]


def test_series_match_the_objects(srv: Served) -> None:
    wls = _settled(srv)
    m = _samples(srv)
    admitted = [w for w in wls if (_cond(w, "Admitted") or {}).get("status") == "True"]
    assert admitted and len(admitted) < 8  # some admitted, some pending: both are shown
    per_cq: dict[str, int] = defaultdict(int)
    for w in admitted:
        per_cq[w["status"]["admission"]["clusterQueue"]] += 1
    for cq, n in per_cq.items():
        assert _value(m["kueue_admitted_workloads_total"], cluster_queue=cq) == n
        assert _value(m["kueue_quota_reserved_workloads_total"], cluster_queue=cq) == n
        assert _value(m["kueue_admission_wait_time_seconds_count"], cluster_queue=cq) == n
        # E16 buckets, as Kueue's.
        les = {lb["le"] for lb, _ in m["kueue_admission_wait_time_seconds_bucket"]}
        assert {"1.0", "2.5", "10240.0", "40960.0", "+Inf"} <= les
    for lb, _ in m["kueue_admitted_workloads_total"]:
        assert lb["replica_role"] == "standalone"
    for cq in srv.json("get", "clusterqueues")["items"]:
        name, st = cq["metadata"]["name"], cq.get("status") or {}
        pending = sum(
            _value(m["kueue_pending_workloads"], cluster_queue=name, status=s)
            for s in ("active", "inadmissible")
        )
        assert pending == st.get("pendingWorkloads", 0)
        assert _value(m["kueue_admitted_active_workloads"], cluster_queue=name) == st.get(
            "admittedWorkloads", 0
        )
        assert _value(m["kueue_cluster_queue_status"], cluster_queue=name, status="active") == 1
        for fu in st.get("flavorsUsage") or []:
            for ru in fu["resources"]:
                got = _value(
                    m["kueue_cluster_queue_resource_usage"],
                    cluster_queue=name,
                    flavor=fu["name"],
                    resource=ru["name"],
                )
                assert got == Quantity.parse(ru["total"]).milli_value() / 1000
        for rg in cq["spec"]["resourceGroups"]:
            for fq in rg["flavors"]:
                for rq in fq["resources"]:
                    key = {"cluster_queue": name, "flavor": fq["name"], "resource": rq["name"]}
                    nominal = _value(m["kueue_cluster_queue_nominal_quota"], **key)
                    assert nominal == Quantity.parse(rq["nominalQuota"]).milli_value() / 1000
                    limit = _value(m["kueue_cluster_queue_borrowing_limit"], **key)
                    if "borrowingLimit" in rq:
                        assert limit == Quantity.parse(rq["borrowingLimit"]).milli_value() / 1000
                    else:
                        assert math.isinf(limit)
    assert _value(m["kueue_cohort_info"], cohort="research") == 1


def test_metrics_need_rbac(srv: Served) -> None:
    """An authenticated user without ``get`` on the non-resource URL /metrics
    is refused, as Kueue's metrics filter refuses it (kueue-metrics-reader)."""
    r = srv.kubectl("get", "--raw", "/metrics", "--as", "someone")
    assert r.returncode != 0
    assert 'cannot get path "/metrics"' in r.stderr


def test_grafana_dashboard_queries_served_series(srv: Served) -> None:
    """Every metric the dashboard under deploy/ queries is one /metrics serves."""
    import json
    import re
    from pathlib import Path

    board = json.loads(
        (Path(__file__).resolve().parents[2] / "deploy/grafana/kueue-dashboard.json").read_text()
    )
    # Families, whether or not a series has been counted yet (a counter's
    # family is named without _total, a histogram's without _bucket).
    text = srv.ok("get", "--raw", "/metrics")
    families = {f.name for f in text_string_to_metric_families(text)}
    served = families | {f + "_total" for f in families} | {f + "_bucket" for f in families}
    for panel in board["panels"]:
        for target in panel["targets"]:
            for name in re.findall(r"\bkueue_[a-z_]+", target["expr"]):
                assert name in served, (panel["title"], name)


def test_requests_are_counted_as_kube_apiserver_counts_them(srv: Served) -> None:
    """``apiserver_request_total`` by verb and resource, as kube-apiserver's
    (the cluster bench counts a run's requests per workload with it)."""
    _settled(srv)
    m = _samples(srv)["apiserver_request_total"]
    jobs = _value(m, verb="create", group="batch", version="v1", resource="jobs", subresource="")
    assert jobs >= 8  # (kubectl apply of the eight jobs above)
    before = _value(m, verb="list", group="kueue.x-k8s.io", resource="workloads", subresource="")
    srv.ok("get", "workloads", "-A")
    after = _samples(srv)["apiserver_request_total"]
    assert (
        _value(after, verb="list", group="kueue.x-k8s.io", resource="workloads", subresource="")
        == before + 1
    )
