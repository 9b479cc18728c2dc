"""Admission fair sharing: the arithmetic of Kueue's usage ledger and the
admission core's bookkeeping around it, with numbers worked out by hand from
Kueue's formulas (pkg/util/admissionfairsharing, pkg/cache/queue/afs,
pkg/util/resource MulByFloat, the LocalQueue and workload controllers).

With usageHalfLifeTime = usageSamplingInterval = 1s most tests get
alpha = 1 - 0.5^1 = 0.5 exactly, so every tick is consumed/2 + admitted/2 and
the entry penalty is half the requests.
"""

from __future__ import annotations

import copy
import math
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from kuota.api.decode import decode_object
from kuota.api.kueue.config import KueueConfig, config_from_scenario
from kuota.api.quantity import Quantity
from kuota.quota.afs import (
    UsageLedger,
    alpha,
    approx_float,
    decayed,
    decimal_of,
    from_units,
    merge_sum,
    mul_by_float,
    seconds,
    usage_value,
)
from kuota.quota.workload import WorkloadInfo
from kuota.scheduler.admission.admission_core import AdmissionCore
from kuota.scheduler.preemption.preemptor import Preemptor

T0 = datetime(2026, 1, 1, tzinfo=UTC)
V1B2 = "kueue.x-k8s.io/v1beta2"
LQ = "ns/lq"


def d(text: str) -> Decimal:
    return Decimal(text)


# ============================================================================ arithmetic


def test_alpha_is_the_share_of_one_elapsed_span() -> None:
    assert alpha(1.0, 1.0) == 0.5
    assert alpha(1.0, 10.0) == 1 - 0.5**0.1 == 0.06696700846319259
    assert alpha(300.0, 0.0) == 0.0  # half-life 0: nothing is ever kept
    assert alpha(0.0, 10.0) == 0.0


def test_seconds_is_go_duration_seconds() -> None:
    assert seconds(timedelta(minutes=5)) == 300.0
    assert seconds(timedelta(seconds=1, microseconds=500_000)) == 1.5


def test_mul_by_float_truncates_to_nano_units() -> None:
    # 4 cpu x 0.06696700846319259 = 0.26786803385277036, cut after 9 decimals.
    got = mul_by_float({"cpu": from_units("cpu", 4000)}, alpha(1.0, 10.0))
    assert got == {"cpu": d("0.267868033")}
    assert got["cpu"].as_tuple().exponent == -9
    # One nano-unit halved is gone: decay reaches exactly zero.
    assert mul_by_float({"cpu": d("1E-9")}, 0.5) == {"cpu": 0}
    assert mul_by_float({}, 0.5) == {}


def test_decayed_mixes_history_and_current_usage() -> None:
    # 8 x 0.5 + 4 x 0.5
    assert decayed({"cpu": d("8")}, {"cpu": d("4.000")}, 1.0, 1.0) == {"cpu": d("6")}
    # A resource only in the current usage enters at alpha; one only in the history decays.
    got = decayed({"memory": d("1000")}, {"cpu": d("2.000")}, 1.0, 1.0)
    assert got == {"memory": d("500"), "cpu": d("1")}
    # Half-life 0 keeps the history untouched (the LocalQueue tick resets it instead).
    assert decayed({"cpu": d("8")}, {"cpu": d("4")}, 5.0, 0.0) == {"cpu": d("8")}


def test_merge_sum_is_exact() -> None:
    assert merge_sum({"cpu": d("0.1")}, {"cpu": d("0.2"), "pods": d("1")}) == {
        "cpu": d("0.3"),
        "pods": d("1"),
    }
    assert merge_sum({"cpu": d("1")}, None) == {"cpu": d("1")}


def test_approx_float_is_unscaled_times_power_of_ten() -> None:
    # AsApproximateFloat64 multiplies by 10^-1, it does not divide by 10.
    assert approx_float(d("0.3")) == 3 * 0.1 == 0.30000000000000004
    assert approx_float(d("0.300000000")) == 300000000 * 1e-9
    assert approx_float(d("1E+3")) == 1000.0
    assert approx_float(d("8")) == 8.0


def test_quantities_keep_kubernetes_scale() -> None:
    assert from_units("cpu", 1500).as_tuple().exponent == -3  # NewMilliQuantity
    assert from_units("memory", 1024) == 1024  # "1Ki" parses to the integer
    assert from_units("memory", 1000).as_tuple().exponent == 3  # "1k"
    assert from_units("example.com/gpu", 3) == 3
    assert decimal_of(Quantity("1500m")).as_tuple().exponent == -3
    assert decimal_of(Quantity("2Gi")) == 2 * 2**30


def test_usage_weighs_resources_and_divides_by_the_queue_weight() -> None:
    consumed = {"cpu": d("2.000"), "memory": d("1073741824")}
    penalty = {"cpu": d("0.5")}
    # (2 x 2.5 + 1 x 1073741824) / 2
    assert usage_value(consumed, penalty, 2.0, {"cpu": 2.0}) == 536870914.5
    assert usage_value(consumed, penalty, 1.0, {"cpu": 2.0, "memory": 0.0}) == 5.0
    assert usage_value({}, {}, 0.0, {}) == math.inf  # no 0/0
    assert usage_value(consumed, {}, -1.0, {}) == math.inf


# ============================================================================ the ledger


def config(half_life: str = "1s", interval: str = "1s") -> KueueConfig:
    afs = {"usageHalfLifeTime": half_life, "usageSamplingInterval": interval}
    return config_from_scenario({"admissionFairSharing": afs})


def ledger(half_life: str = "1s", interval: str = "1s") -> UsageLedger:
    cfg = config(half_life, interval).admission_fair_sharing
    assert cfg is not None
    return UsageLedger(cfg)


def test_penalty_records_replace_and_subtract_exactly() -> None:
    led = ledger("10s", "1s")
    pen = led.entry_penalty({"cpu": from_units("cpu", 4000)})
    assert pen == {"cpu": d("0.267868033")}
    led.push_penalty(LQ, "ns/w", pen, T0)
    led.push_penalty(LQ, "ns/w", pen, T0)  # re-assumed: no second penalty
    led.push_penalty(LQ, "ns/x", {"cpu": d("1")}, T0)
    e = led.get(LQ)
    assert e is not None and e.pending == {"cpu": d("1.267868033")}
    assert e.last_update == T0 and not e.status_accounted
    led.sub_penalty(LQ, "ns/x")
    led.sub_penalty(LQ, "ns/x")  # no record: a no-op
    assert e.pending == pen and e.has_pending_penalty()
    led.sub_penalty(LQ, "ns/w")
    assert e.pending == {} and not e.has_pending_penalty()
    led.sub_penalty("ns/other", "ns/w")
    assert led.get("ns/other") is None


def test_zero_half_life_penalties_are_not_pending() -> None:
    led = ledger("0s", "1s")
    led.push_penalty(LQ, "ns/w", led.entry_penalty({"cpu": from_units("cpu", 4000)}), T0)
    e = led.get(LQ)
    assert e is not None and e.pending == {"cpu": 0} and not e.has_pending_penalty()


def test_settle_folds_the_recorded_penalty_into_decayed_usage() -> None:
    led = ledger("10s", "1s")
    led.initialize(LQ, {"cpu": d("8")}, T0)
    led.push_penalty(LQ, "ns/w", {"cpu": d("0.267868033")}, T0)
    led.settle(LQ, "ns/w", {"cpu": from_units("cpu", 4000)}, T0 + timedelta(seconds=2))
    e = led.get(LQ)
    assert e is not None
    a = 1 - 0.5**0.2  # 0.12944943670387588
    # 8 x 0.8705505632961241 = 6.9644045063689928 -> 6.964404506
    # 4 x 0.12944943670387588 = 0.51779774681550352 -> 0.517797746
    assert alpha(2.0, 10.0) == a
    assert e.resources == {"cpu": d("6.964404506") + d("0.517797746") + d("0.267868033")}
    assert e.pending == {} and e.last_update == T0 + timedelta(seconds=2)
    # Settling again folds no penalty, only decays.
    led.settle(LQ, "ns/w", {"cpu": from_units("cpu", 4000)}, T0 + timedelta(seconds=2))
    assert e.resources == {"cpu": d("7.750070285")}


def test_initialize_seeds_once_and_merges_into_a_penalty_entry() -> None:
    led = ledger()
    had, e = led.initialize(LQ, {"cpu": d("3")}, T0)
    assert not had and e.resources == {"cpu": d("3")} and e.status_accounted
    had, e = led.initialize(LQ, {"cpu": d("100")}, T0)
    assert had and e.resources == {"cpu": d("3")}
    led.push_penalty("ns/new", "ns/w", {"cpu": d("1")}, T0)
    had, e = led.initialize("ns/new", {"cpu": d("3")}, T0 + timedelta(seconds=5))
    assert had and e.resources == {"cpu": d("3")} and e.last_update == T0


def test_a_frozen_ledger_shows_the_usage_of_the_cycle_start() -> None:
    led = ledger()
    led.initialize(LQ, {"cpu": d("3")}, T0)
    led.freeze()
    led.push_penalty(LQ, "ns/w", {"cpu": d("2")}, T0)
    led.push_penalty("ns/new", "ns/x", {"cpu": d("1")}, T0)
    assert led.snapshot_usage(LQ, 1.0) == 3.0 and led.usage(LQ, 1.0) == 5.0
    assert led.snapshot_usage("ns/new", 1.0) == 0.0
    led.thaw()
    assert led.snapshot_usage(LQ, 1.0) == 5.0


# ============================================================================ the core


def obj(raw: dict[str, Any]) -> Any:
    doc = decode_object(copy.deepcopy(raw))
    assert doc.ok, [doc.shown(e) for e in doc.errors]
    return doc.obj


def cluster_queue(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": V1B2,
        "kind": "ClusterQueue",
        "metadata": {"name": "cq"},
        "spec": {
            "namespaceSelector": {},
            "admissionScope": {"admissionMode": "UsageBasedAdmissionFairSharing"},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "f", "resources": [{"name": "cpu", "nominalQuota": "8"}]}],
                }
            ],
            **spec,
        },
    }


CHECK = {
    "apiVersion": V1B2,
    "kind": "AdmissionCheck",
    "metadata": {"name": "check"},
    "spec": {"controllerName": "example.com/check"},
    # What its controller sets: an inactive check keeps the queue inactive.
    "status": {
        "conditions": [
            {
                "type": "Active",
                "status": "True",
                "reason": "Active",
                "message": "The admission check is active",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ]
    },
}


def checked_cluster_queue() -> dict[str, Any]:
    return cluster_queue(admissionChecksStrategy={"admissionChecks": [{"name": "check"}]})


def local_queue(
    name: str = "lq", cq: str = "cq", consumed: str | None = None, **spec: Any
) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "apiVersion": V1B2,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"clusterQueue": cq, **spec},
    }
    if consumed is not None:
        raw["status"] = {
            "fairSharing": {
                "admissionFairSharingStatus": {
                    "consumedResources": {"cpu": consumed},
                    "lastUpdate": "2025-12-31T23:00:00Z",
                }
            }
        }
    return raw


def workload(name: str, queue: str = "lq", cpu: str = "4") -> dict[str, Any]:
    container = {"name": "c", "resources": {"requests": {"cpu": cpu}}}
    return {
        "apiVersion": V1B2,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": {
            "queueName": queue,
            "podSets": [
                {"name": "main", "count": 1, "template": {"spec": {"containers": [container]}}}
            ],
        },
    }


def world(cfg: KueueConfig, *objects: dict[str, Any]) -> AdmissionCore:
    core = AdmissionCore(cfg, T0)
    base = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}},
        {"apiVersion": V1B2, "kind": "ResourceFlavor", "metadata": {"name": "f"}},
    ]
    for i, raw in enumerate([*base, *objects]):
        o = obj(raw)
        o.metadata.creation_timestamp = o.metadata.creation_timestamp or T0 + timedelta(
            milliseconds=i
        )
        core.add(o)
    return core


def status(core: AdmissionCore, lq: str = LQ) -> tuple[dict[str, str] | None, datetime | None]:
    v = core.local_queue(lq)
    assert v is not None
    return v.consumed_resources, v.last_update


def at(s: float) -> datetime:
    return T0 + timedelta(seconds=s)


def test_usage_is_sampled_every_interval_and_written_to_the_status() -> None:
    core = world(config(), cluster_queue(), local_queue(), workload("w"))
    # The LocalQueue's first reconcile writes its (empty) usage at once.
    assert status(core) == ({}, T0)
    assert core.cycle().admitted == ["ns/w"]
    # Admission folds the entry penalty (4 x 0.5) into the usage; the status
    # keeps the last sample until the next tick.
    e = core.afs.get(LQ) if core.afs else None
    assert e is not None and e.resources == {"cpu": d("2")} and e.pending == {}
    assert status(core) == ({}, T0)
    expected = {1: "3", 2: "3500m", 3: "3750m"}  # c/2 + 4/2 each tick
    for s, cpu in expected.items():
        core.advance(at(s))
        assert status(core) == ({"cpu": cpu}, at(s))
    core.finish("ns/w")
    core.advance(at(4.5))
    assert status(core) == ({"cpu": "1875m"}, at(4))  # nothing admitted: halved
    assert core.next_timer() == at(5)


def test_penalty_waits_for_admission_checks_and_settles_with_decay() -> None:
    core = world(config(), CHECK, checked_cluster_queue(), local_queue(), workload("w"))
    assert core.afs is not None
    core.cycle()
    assert core.workload("ns/w").state == "reserved"  # type: ignore[union-attr]
    e = core.afs.get(LQ)
    assert e is not None and e.pending == {"cpu": d("2")} and e.resources == {}
    assert core._lq_usage(LQ) == 2.0
    core.advance(at(1.5))  # the tick at 1s sees nothing admitted yet
    assert e.resources == {} and e.last_update == at(1)
    ready = copy.deepcopy(core.workloads["ns/w"])
    assert ready.status is not None and ready.status.admission_checks
    ready.status.admission_checks[0].state = "Ready"
    core.add(ready)
    assert core.workload("ns/w").state == "admitted"  # type: ignore[union-attr]
    # Settled at 1.5s: 4 x (1 - 0.5^0.5) = 1.1715728752538097 -> 1.171572875, + 2.
    assert e.resources == {"cpu": d("3.171572875")} and e.pending == {}
    assert e.last_update == at(1.5)
    core.advance(at(2.5))  # the next tick waits a whole interval after settling
    assert status(core) == ({"cpu": "3585786437n"}, at(2.5))  # 1.585786437 + 2


def test_penalty_is_dropped_when_the_workload_goes_away() -> None:
    core = world(
        config(), CHECK, checked_cluster_queue(), local_queue(), workload("w"), workload("x")
    )
    assert core.afs is not None
    core.cycle()
    core.cycle()
    e = core.afs.get(LQ)
    assert e is not None and e.pending == {"cpu": d("4")}
    core.delete("Workload", "ns", "w")
    assert e.pending == {"cpu": d("2")}
    core.finish("ns/x")
    assert e.pending == {}


def test_an_evicted_workload_keeps_one_penalty_when_it_reserves_again() -> None:
    cq = checked_cluster_queue()
    core = world(config("10s", "1s"), CHECK, cq, local_queue(), workload("w"))
    assert core.afs is not None
    core.cycle()
    e = core.afs.get(LQ)
    assert e is not None and e.pending == {"cpu": d("0.267868033")}
    held = copy.deepcopy(cq)
    held["spec"]["stopPolicy"] = "Hold"
    core.apply(obj(held))  # the reservation is taken back; the workload stays active
    assert core.workload("ns/w").state != "reserved"  # type: ignore[union-attr]
    assert e.pending == {"cpu": d("0.267868033")}
    core.apply(obj(cq))
    core.cycle()
    assert core.workload("ns/w").state == "reserved"  # type: ignore[union-attr]
    assert e.pending == {"cpu": d("0.267868033")}
    deactivated = copy.deepcopy(core.workloads["ns/w"])
    deactivated.spec.active = False
    core.apply(deactivated)
    assert e.pending == {}


def test_a_restarted_world_starts_from_the_persisted_usage() -> None:
    # The persisted lastUpdate (an hour ago) is not used: the clock of a seeded
    # entry starts when the LocalQueue is first reconciled (initializeAfsIfNeeded).
    core = world(config(), cluster_queue(), local_queue(consumed="3"))
    assert status(core) == ({"cpu": "3"}, T0)
    core.advance(at(1))
    assert status(core) == ({"cpu": "1500m"}, at(1))
    # Seeding happens once: a later apply with another status changes nothing.
    core.apply(obj(local_queue(consumed="100")))
    assert core._lq_usage(LQ) == 1.5


def test_zero_half_life_resets_usage_at_every_tick() -> None:
    core = world(config("0s", "1s"), cluster_queue(), local_queue(consumed="3"), workload("w"))
    assert core.afs is not None
    assert status(core) == ({}, T0)
    core.cycle()
    e = core.afs.get(LQ)
    assert e is not None and not e.has_pending_penalty()
    assert core._lq_usage(LQ) == 0.0
    core.advance(at(3))
    assert status(core) == ({}, at(3))


def test_no_status_without_the_configuration_or_the_gate() -> None:
    for cfg in (
        config_from_scenario({}),
        config_from_scenario(
            {
                "admissionFairSharing": {"usageHalfLifeTime": "1s"},
                "featureGates": {"AdmissionFairSharing": False},
            }
        ),
    ):
        core = world(cfg, cluster_queue(), local_queue(consumed="3"), workload("w"))
        core.cycle()
        core.advance(at(600))
        assert core.afs is None
        assert status(core) == (None, None)


def test_queues_without_admission_scope_keep_their_status_but_pay_no_penalty() -> None:
    cq = cluster_queue()
    del cq["spec"]["admissionScope"]
    core = world(config(), cq, local_queue(), workload("w", cpu="500m"))
    assert core.afs is not None
    core.cycle()
    e = core.afs.get(LQ)
    assert e is not None and e.pending == {} and e.resources == {}
    shown = []
    for s in range(1, 5):
        core.advance(at(s))
        shown.append(status(core)[0])
    # 500m enters at half each tick and never truncates to zero.
    assert shown == [{"cpu": "250m"}, {"cpu": "375m"}, {"cpu": "437500u"}, {"cpu": "468750u"}]


def test_a_stopped_local_queue_does_not_sample_until_it_restarts() -> None:
    core = world(config(), cluster_queue(), local_queue(consumed="8"))
    core.advance(at(1))
    assert status(core) == ({"cpu": "4"}, at(1))
    core.apply(obj(local_queue(stopPolicy="Hold")))
    core.advance(at(10))
    assert status(core) == ({"cpu": "4"}, at(1))
    assert core.next_timer() is None
    core.apply(obj(local_queue()))
    # One sample over the whole 9s: 4 x 0.5^9.
    assert status(core) == ({"cpu": "7812500n"}, at(10))


def test_inactive_cluster_queue_pauses_sampling() -> None:
    core = world(config(), cluster_queue(), local_queue(consumed="8"))
    held = cluster_queue(stopPolicy="Hold")
    core.apply(obj(held))
    core.advance(at(3))
    assert status(core) == ({"cpu": "8"}, T0)
    core.apply(obj(cluster_queue()))
    assert status(core) == ({"cpu": "1"}, at(3))


def test_deleting_a_local_queue_forgets_its_usage() -> None:
    core = world(config(), cluster_queue(), local_queue(consumed="8"))
    assert core.afs is not None
    core.delete("LocalQueue", "ns", "lq")
    assert core.afs.get(LQ) is None and core.next_timer() is None
    core.add(obj(local_queue()))
    assert status(core) == ({}, T0)


def test_the_queue_order_is_fixed_when_the_cluster_queue_is_created() -> None:
    """Kueue builds a ClusterQueue's comparator once (TODO(#8) in manager.go):
    adding admissionScope later charges penalties (the scheduler cache reads
    the new spec) but does not reorder the queue until the queue is rebuilt."""
    cq = cluster_queue()
    del cq["spec"]["admissionScope"]
    core = world(
        config(),
        cq,
        local_queue("busy", consumed="8"),
        local_queue("idle"),
        workload("old", "busy", cpu="8"),
        workload("new", "idle", cpu="8"),
    )
    assert core.afs is not None
    core.apply(obj(cluster_queue()))
    assert core.cycle().admitted == ["ns/old"]
    e = core.afs.get("ns/busy")
    assert e is not None and e.resources == {"cpu": d("12")}  # 8 + 8 x 0.5


def test_preemption_takes_the_more_used_local_queue_first() -> None:
    core = world(config(), cluster_queue())
    infos = []
    for name, queue, prio in [("a", "lq-a", 5), ("b", "lq-b", 1), ("c", "lq-a", 0)]:
        w = obj(workload(name, queue))
        w.metadata.creation_timestamp = T0
        info = WorkloadInfo(w, [], prio, "cq")
        infos.append(info)
    usage = {"lq-a": 3.0, "lq-b": 1.0}
    p = Preemptor(
        core.snap,
        fair_sharing=False,
        strategies=(),
        eviction_ts=True,
        now=T0,
        lq_usage=lambda w: usage[w.queue_name],
    )
    p._sort(infos, p._order_key("other"), lambda w: w)
    # lq-a's two before lq-b's, each LocalQueue's own by priority.
    assert [i.key for i in infos] == ["ns/c", "ns/a", "ns/b"]
    p.lq_usage = None
    p._sort(infos, p._order_key("other"), lambda w: w)
    assert [i.key for i in infos] == ["ns/c", "ns/b", "ns/a"]
