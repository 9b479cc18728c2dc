"""Reading scenario files (tests/scenarios/README.md) into the scenario model.

``load_scenario`` reads a file, checks its shape and every object in it as
``kuota validate`` does (raising ``ScenarioError`` with the same wording), and
stamps creation timestamps and UIDs by the README's conventions.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from kuota.api import errors as e
from kuota.api.decode import (
    KINDS_BY_NAME,
    REGISTRY,
    Document,
    YamlError,
    decode_object,
    load_yaml_documents,
)
from kuota.api.errors import FieldError, child, index, key
from kuota.api.kueue.config import ConfigError, KueueConfig, config_from_scenario, parse_duration
from kuota.api.quantity import Quantity, QuantityError
from kuota.sim.scenario_file import is_scenario, scenario_errors, scenario_objects
from kuota.sim.scenario_model import (
    EXPECTABLE_STATES,
    START,
    BizrqExpect,
    Expect,
    NotAScenario,
    ObjectRef,
    QueueExpect,
    RequeueExpect,
    Scenario,
    ScenarioError,
    Step,
    WorkloadExpect,
)

STAMP_STEP_INITIAL = timedelta(seconds=1)
STAMP_STEP_APPLIED = timedelta(milliseconds=1)
MAX_FILE_BYTES = 256 * 1024 * 1024

WORKLOAD_KEYS = (
    "state",
    "reason",
    "flavors",
    "count",
    "topology",
    "delayedTopologyRequest",
    "active",
    "requeueState",
)
DELAYED_STATES = ("Pending", "Ready", None)
QUEUE_KEYS = (
    "usage",
    "admittedUsage",
    "pendingWorkloads",
    "reservingWorkloads",
    "admittedWorkloads",
    "active",
    "reason",
)
EXPECT_KEYS = ("workloads", "preempted", "clusterQueues", "localQueues", "refused", "bizrqs")
BIZRQ_KEYS = ("used", "selfUsed", "hard")

_KEY_RE = re.compile(r"^[^/\s]+/[^/\s]+$")


def _document_error(file: str, docs: list[Document]) -> ScenarioError:
    return ScenarioError(
        file,
        [(f"{d.where}: {d.ref}", [d.shown(err) for err in d.errors]) for d in docs if not d.ok],
    )


def _file_error(path: Path, text: str, cls: type[ScenarioError] = ScenarioError) -> ScenarioError:
    return cls(str(path), [(f"{path}: {text}", [])])


# ============================================================================ loading
def _read(path: Path) -> list[Any]:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise _file_error(path, f"{size} bytes is more than kuota reads ({MAX_FILE_BYTES})")
        data = path.read_bytes()
    except OSError as err:
        raise _file_error(path, str(err.strerror or err)) from None
    try:
        return load_yaml_documents(data)
    except YamlError as err:
        raise _file_error(path, str(err)) from None


def load_scenarios(path: str | Path) -> list[Scenario]:
    """Every scenario of a file (usually one). Raises ``NotAScenario`` when the
    file holds none, ``ScenarioError`` when it cannot be read or is invalid."""
    p = Path(path)
    raws = _read(p)
    if not raws or not any(is_scenario(r) for r in raws):
        raise _file_error(
            p, "not a scenario (a mapping with steps or objects and no kind)", NotAScenario
        )
    out: list[Scenario] = []
    problems: list[tuple[str, list[str]]] = []
    for i, raw in enumerate(raws):
        if not is_scenario(raw):
            problems.append(
                (
                    f"{p} (document {i + 1}): not a scenario; a scenario file holds only scenarios",
                    [],
                )
            )
            continue
        try:
            out.append(_load_one(raw, str(p), i))
        except ScenarioError as err:
            problems += err.problems
    if problems:
        raise ScenarioError(str(p), problems)
    return out


def load_scenario(path: str | Path) -> Scenario:
    """The one scenario of a file. Raises ``ScenarioError`` (``NotAScenario``)."""
    scenarios = load_scenarios(path)
    if len(scenarios) != 1:
        raise _file_error(
            Path(path), f"holds {len(scenarios)} scenarios; load_scenarios reads them all"
        )
    return scenarios[0]


def scenario_config(raw: dict[str, Any], head: Document) -> KueueConfig | None:
    """The scenario's KueueConfig; None (with errors on ``head``) when Kueue would refuse it.

    Errors of a top-level ``featureGates`` are named there, not under ``config``."""
    gates = raw.get("featureGates")
    block = raw.get("config")
    top_level_gates = gates is not None and not (
        isinstance(block, dict) and "featureGates" in block
    )

    def moved(x: FieldError) -> FieldError:
        if top_level_gates and (
            x.path == "config.featureGates"
            or x.path.startswith(("config.featureGates.", "config.featureGates["))
        ):
            return FieldError(x.path.removeprefix("config."), x.type, x.detail, x.value)
        return x

    head.errors[:] = [moved(x) for x in head.errors]
    if any(x.path.startswith(("config", "featureGates")) for x in head.errors):
        return None  # scenario_errors has read the block and found it wanting
    if gates is not None and not (
        isinstance(gates, dict) and all(isinstance(v, bool) for v in gates.values())
    ):
        head.errors.append(
            e.invalid(
                "featureGates", _kind_of(gates), "must be a mapping of gate names to true/false"
            )
        )
        return None
    try:
        return config_from_scenario(block, gates)
    except ConfigError as err:
        head.errors += [moved(x) for x in err.errors]
        return None


def _load_one(raw: dict[str, Any], source: str, doc_index: int) -> Scenario:
    name = raw.get("name")
    head = Document(
        source=source, index=doc_index, kind="Scenario", name=name if isinstance(name, str) else ""
    )
    head.errors, head.warnings = scenario_errors(raw)
    cfg = scenario_config(raw, head)
    gates = cfg.feature_gates if cfg is not None else None

    docs: dict[str, Document] = {}
    for prefix, obj in scenario_objects(raw):
        docs[prefix] = decode_object(
            obj, source=source, index=doc_index, prefix=prefix, gates=gates
        )

    steps_raw = raw.get("steps")
    steps: list[Step] = []
    if isinstance(steps_raw, list) and not any(x.path.startswith("steps") for x in head.errors):
        for i, s in enumerate(steps_raw):
            steps.append(_parse_step(i, s, docs, head.errors))

    all_docs = [head, *docs.values()]
    if any(not d.ok for d in all_docs):
        raise _document_error(source, all_docs)
    assert cfg is not None
    warnings = [f"{d.where}: {d.ref}: {w}" for d in all_docs for w in d.warnings]

    objects = [docs[index("objects", i)].obj for i in range(len(raw.get("objects") or ()))]
    errs = _stamp(objects, steps)
    if errs:
        head.errors += errs
        raise _document_error(source, [head])
    return Scenario(
        name=head.name,
        file=source,
        config=cfg,
        objects=objects,
        steps=steps,
        about=str(raw.get("about") or "").strip(),
        source=str(raw.get("source") or ""),
        document=doc_index,
        warnings=warnings,
    )


# ----------------------------------------------------------------------------- steps
def _parse_step(
    i: int, s: dict[str, Any], docs: dict[str, Document], errs: list[FieldError]
) -> Step:
    sp = index("steps", i)
    step = Step(index=i, action="expect", text="expect")
    if "cycles" in s:
        step.action, step.cycles, step.text = "cycles", s["cycles"], f"cycles: {s['cycles']}"
    elif "settle" in s:
        step.action, step.text = "settle", "settle: true"
        if s["settle"] is not True:
            errs.append(e.invalid(child(sp, "settle"), s["settle"], "must be true"))
    elif "apply" in s:
        step.action = "apply"
        step.objects = [docs[index(child(sp, "apply"), j)].obj for j in range(len(s["apply"]))]
        shown = [docs[index(child(sp, "apply"), j)].ref for j in range(len(s["apply"]))]
        step.text = "apply: " + ", ".join(shown)
    elif "delete" in s:
        step.action = "delete"
        for j, item in enumerate(s["delete"]):
            ref = _parse_ref(item, index(child(sp, "delete"), j), errs)
            if ref is not None:
                step.refs.append(ref)
        step.text = "delete: " + ", ".join(str(x) for x in s["delete"])
    elif "finish" in s:
        step.action = "finish"
        for j, item in enumerate(s["finish"]):
            if _check_key(item, index(child(sp, "finish"), j), errs):
                step.keys.append(item)
        step.text = "finish: " + ", ".join(str(x) for x in s["finish"])
    elif "advance" in s:
        step.action = "advance"
        step.text = f"advance: {s['advance']}"
        step.duration = _parse_advance(s["advance"], child(sp, "advance"), errs)
    if "expect" in s:
        step.expect = _parse_expect(s["expect"], child(sp, "expect"), errs)
    return step


def _parse_advance(value: Any, path: str, errs: list[FieldError]) -> timedelta:
    if not isinstance(value, str):
        errs.append(e.invalid(path, value, 'must be a Go duration such as "90s" or "1m30s"'))
        return timedelta(0)
    try:
        d = parse_duration(value)
    except ValueError as err:
        errs.append(e.invalid(path, value, str(err)))
        return timedelta(0)
    if d < timedelta(0):
        errs.append(e.invalid(path, value, "the clock only moves forward"))
        return timedelta(0)
    return d


def _check_key(value: Any, path: str, errs: list[FieldError]) -> bool:
    if isinstance(value, str) and _KEY_RE.match(value):
        return True
    errs.append(e.invalid(path, value, "must be a workload key namespace/name"))
    return False


def _parse_ref(value: Any, path: str, errs: list[FieldError]) -> ObjectRef | None:
    """``Kind/ns/name``, ``Kind/name`` (cluster-scoped), or bare ``ns/name`` (a Workload)."""
    forms = "must be Kind/namespace/name, Kind/name (cluster-scoped) or namespace/name (a Workload)"
    if not isinstance(value, str):
        errs.append(e.invalid(path, value, forms))
        return None
    parts = value.split("/")
    if any(not p or p != p.strip() for p in parts) or len(parts) not in (2, 3):
        errs.append(e.invalid(path, value, forms))
        return None
    if len(parts) == 2 and parts[0] not in KINDS_BY_NAME:
        if parts[0][:1].isupper():
            errs.append(_unknown_kind(path, value, parts[0]))
            return None
        return ObjectRef("Workload", parts[0], parts[1])
    kind = parts[0]
    if kind not in KINDS_BY_NAME:
        errs.append(_unknown_kind(path, value, kind))
        return None
    namespaced = REGISTRY[(KINDS_BY_NAME[kind][0], kind)].namespaced
    if namespaced and len(parts) == 2:
        errs.append(e.invalid(path, value, f"{kind} is namespaced: write {kind}/namespace/name"))
        return None
    if not namespaced and len(parts) == 3:
        errs.append(e.invalid(path, value, f"{kind} is cluster-scoped: write {kind}/name"))
        return None
    return ObjectRef(kind, parts[1], parts[2]) if namespaced else ObjectRef(kind, "", parts[1])


def _unknown_kind(path: str, value: str, kind: str) -> FieldError:
    return e.invalid(
        path, value, f"unknown kind {kind!r}; kinds: {', '.join(sorted(KINDS_BY_NAME))}"
    )


# ----------------------------------------------------------------------------- expect
def _mapping(value: Any, path: str, errs: list[FieldError]) -> dict[Any, Any] | None:
    if isinstance(value, dict):
        return value
    errs.append(e.invalid(path, _kind_of(value), "must be a mapping"))
    return None


def _kind_of(value: Any) -> Any:
    return "object" if isinstance(value, dict | list) else value


def _unknown_keys(
    m: dict[Any, Any], path: str, known: tuple[str, ...], errs: list[FieldError]
) -> None:
    for k in m:
        if k not in known:
            errs.append(e.not_supported(child(path, str(k)), str(k), known))


def _strings(
    value: Any, path: str, errs: list[FieldError], allowed: tuple[str, ...] = ()
) -> tuple[str, ...] | None:
    """A string, or a non-empty list of strings meaning any of them."""
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(x, str) and x for x in items):
        errs.append(
            e.invalid(path, _kind_of(value), "must be a string or a non-empty list of strings")
        )
        return None
    if allowed:
        bad = [x for x in items if x not in allowed]
        if bad:
            errs.append(e.not_supported(path, bad[0], allowed))
            return None
    return tuple(items)


def _int(value: Any, path: str, errs: list[FieldError]) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        errs.append(e.invalid(path, _kind_of(value), "must be a non-negative integer"))
        return None
    return value


def _bool(value: Any, path: str, errs: list[FieldError]) -> bool | None:
    if not isinstance(value, bool):
        errs.append(e.invalid(path, _kind_of(value), "must be true or false"))
        return None
    return value


def _parse_expect(value: Any, path: str, errs: list[FieldError]) -> Expect | None:
    m = _mapping(value, path, errs)
    if m is None:
        return None
    _unknown_keys(m, path, EXPECT_KEYS, errs)
    out = Expect()
    if "workloads" in m:
        wp = child(path, "workloads")
        for k, v in (_mapping(m["workloads"], wp, errs) or {}).items():
            kp = key(wp, str(k))
            if _check_key(k, kp, errs):
                we = _parse_workload_expect(v, kp, errs)
                if we is not None:
                    out.workloads[k] = we
    if "preempted" in m:
        out.preempted = _parse_preempted(m["preempted"], child(path, "preempted"), errs)
    for field_name, attr, is_local in (
        ("clusterQueues", "cluster_queues", False),
        ("localQueues", "local_queues", True),
    ):
        if field_name not in m:
            continue
        qp = child(path, field_name)
        target: dict[str, QueueExpect] = getattr(out, attr)
        for k, v in (_mapping(m[field_name], qp, errs) or {}).items():
            kp = key(qp, str(k))
            if is_local and not _check_key(k, kp, errs):
                continue
            if not is_local and (not isinstance(k, str) or not k or "/" in k):
                errs.append(e.invalid(kp, str(k), "must be a ClusterQueue name"))
                continue
            qe = _parse_queue_expect(v, kp, errs)
            if qe is not None:
                target[k] = qe
    if "refused" in m:
        rp = child(path, "refused")
        out.refused = {}
        for k, v in (_mapping(m["refused"], rp, errs) or {}).items():
            kp = key(rp, str(k))
            if not isinstance(k, str) or k.count("/") not in (1, 2):
                errs.append(e.invalid(kp, str(k), "must be Kind/namespace/name or Kind/name"))
            elif not isinstance(v, str):
                errs.append(e.invalid(kp, _kind_of(v), "must be text the refusal's error contains"))
            else:
                out.refused[k] = v
    if "bizrqs" in m:
        bp = child(path, "bizrqs")
        for k, v in (_mapping(m["bizrqs"], bp, errs) or {}).items():
            be = _parse_bizrq_expect(v, key(bp, str(k)), errs)
            if be is not None:
                out.bizrqs[str(k)] = be
    return out


def _parse_bizrq_expect(value: Any, path: str, errs: list[FieldError]) -> BizrqExpect | None:
    m = _mapping(value, path, errs)
    if m is None:
        return None
    _unknown_keys(m, path, BIZRQ_KEYS, errs)
    out = BizrqExpect()
    for field_name, attr in (("used", "used"), ("selfUsed", "self_used"), ("hard", "hard")):
        if field_name in m:
            fp = child(path, field_name)
            got: dict[str, Quantity] = {}
            for r, q in (_mapping(m[field_name], fp, errs) or {}).items():
                try:
                    got[str(r)] = Quantity.from_value(q)
                except QuantityError as err:
                    errs.append(e.invalid(key(fp, str(r)), _kind_of(q), str(err)))
            setattr(out, attr, got)
    return out


def _parse_preempted(
    value: Any, path: str, errs: list[FieldError]
) -> list[str] | dict[str, tuple[str, ...]] | None:
    if isinstance(value, list):
        keys = [x for j, x in enumerate(value) if _check_key(x, index(path, j), errs)]
        return keys
    if isinstance(value, dict):
        out: dict[str, tuple[str, ...]] = {}
        for k, v in value.items():
            kp = key(path, str(k))
            if _check_key(k, kp, errs):
                reasons = _strings(v, kp, errs)
                if reasons is not None:
                    out[k] = reasons
        return out
    errs.append(
        e.invalid(path, _kind_of(value), "must be a list of workload keys or a map key: reason")
    )
    return None


def _parse_workload_expect(value: Any, path: str, errs: list[FieldError]) -> WorkloadExpect | None:
    m = _mapping(value, path, errs)
    if m is None:
        return None
    _unknown_keys(m, path, WORKLOAD_KEYS, errs)
    out = WorkloadExpect()
    if "state" in m:
        out.state = _strings(m["state"], child(path, "state"), errs, EXPECTABLE_STATES)
    if "reason" in m:
        out.reason = _strings(m["reason"], child(path, "reason"), errs)
    if "flavors" in m:
        fp = child(path, "flavors")
        flavors: dict[str, dict[str, str]] = {}
        for ps, res in (_mapping(m["flavors"], fp, errs) or {}).items():
            pp = key(fp, str(ps))
            rm = _mapping(res, pp, errs)
            if rm is None:
                continue
            flavors[str(ps)] = {}
            for r, f in rm.items():
                if not isinstance(f, str) or not f:
                    errs.append(e.invalid(key(pp, str(r)), _kind_of(f), "must be a flavor name"))
                else:
                    flavors[str(ps)][str(r)] = f
        out.flavors = flavors
    if "count" in m:
        cp = child(path, "count")
        counts: dict[str, int] = {}
        for ps, n in (_mapping(m["count"], cp, errs) or {}).items():
            v = _int(n, key(cp, str(ps)), errs)
            if v is not None:
                counts[str(ps)] = v
        out.count = counts
    if "topology" in m:
        tp = child(path, "topology")
        topology: dict[str, dict[str, int]] = {}
        for ps, doms in (_mapping(m["topology"], tp, errs) or {}).items():
            dp = key(tp, str(ps))
            topology[str(ps)] = {}
            for d, n in (_mapping(doms, dp, errs) or {}).items():
                v = _int(n, key(dp, str(d)), errs)
                if v is not None:
                    topology[str(ps)][str(d)] = v
        out.topology = topology
    if "delayedTopologyRequest" in m:
        dp = child(path, "delayedTopologyRequest")
        delayed: dict[str, str | None] = {}
        for ps, v in (_mapping(m["delayedTopologyRequest"], dp, errs) or {}).items():
            if v not in DELAYED_STATES:
                errs.append(
                    e.invalid(key(dp, str(ps)), _kind_of(v), "must be Pending, Ready or null")
                )
            else:
                delayed[str(ps)] = v
        out.delayed = delayed
    if "active" in m:
        out.active = _bool(m["active"], child(path, "active"), errs)
    if "requeueState" in m:
        out.check_requeue = True
        rp = child(path, "requeueState")
        rs = m["requeueState"]
        if rs is not None:
            rm = _mapping(rs, rp, errs)
            if rm is not None:
                _unknown_keys(rm, rp, ("count", "hasRequeueAt"), errs)
                out.requeue = RequeueExpect(
                    count=_int(rm["count"], child(rp, "count"), errs) if "count" in rm else None,
                    has_requeue_at=(
                        _bool(rm["hasRequeueAt"], child(rp, "hasRequeueAt"), errs)
                        if "hasRequeueAt" in rm
                        else None
                    ),
                )
    return out


def _parse_usage(value: Any, path: str, errs: list[FieldError]) -> dict[str, dict[str, Quantity]]:
    out: dict[str, dict[str, Quantity]] = {}
    for flavor, res in (_mapping(value, path, errs) or {}).items():
        fp = key(path, str(flavor))
        rm = _mapping(res, fp, errs)
        if rm is None:
            continue
        out[str(flavor)] = {}
        for r, q in rm.items():
            try:
                out[str(flavor)][str(r)] = Quantity.from_value(q)
            except QuantityError as err:
                errs.append(e.invalid(key(fp, str(r)), _kind_of(q), str(err)))
    return out


def _parse_queue_expect(value: Any, path: str, errs: list[FieldError]) -> QueueExpect | None:
    m = _mapping(value, path, errs)
    if m is None:
        return None
    _unknown_keys(m, path, QUEUE_KEYS, errs)
    out = QueueExpect()
    if "usage" in m:
        out.usage = _parse_usage(m["usage"], child(path, "usage"), errs)
    if "admittedUsage" in m:
        out.admitted_usage = _parse_usage(m["admittedUsage"], child(path, "admittedUsage"), errs)
    if "pendingWorkloads" in m:
        out.pending_workloads = _int(m["pendingWorkloads"], child(path, "pendingWorkloads"), errs)
    if "reservingWorkloads" in m:
        out.reserving_workloads = _int(
            m["reservingWorkloads"], child(path, "reservingWorkloads"), errs
        )
    if "admittedWorkloads" in m:
        out.admitted_workloads = _int(
            m["admittedWorkloads"], child(path, "admittedWorkloads"), errs
        )
    if "active" in m:
        out.active = _bool(m["active"], child(path, "active"), errs)
    if "reason" in m:
        out.reason = _strings(m["reason"], child(path, "reason"), errs)
    return out


# ----------------------------------------------------------------------------- stamping
def _ref_of(obj: Any) -> ObjectRef:
    return ObjectRef(obj.kind, obj.metadata.namespace or "", obj.metadata.name)


def synthetic_uid(n: int) -> str:
    """The n-th UID kuota makes: UUID-shaped, zero-padded so that it sorts in creation order."""
    return f"00000000-0000-4000-8000-{n:012d}"


def _stamp(objects: list[Any], steps: list[Step]) -> list[FieldError]:
    """Creation timestamps and UIDs by the README's conventions.

    Starting objects without a creationTimestamp are created one second apart in
    file order from START. An object applied later is new unless it exists
    (a starting or applied object, not deleted since): a new one is stamped
    ``max(clock, newest stamp + 1ms)``, 1 ms apart in the order given; an update
    keeps the creationTimestamp and UID it had, as the API server does. The
    clock starts at START and moves only with ``advance``. Missing UIDs are
    synthetic and sort in creation order.
    """
    errs: list[FieldError] = []
    uids = 0
    live: dict[ObjectRef, tuple[datetime, str]] = {}
    newest: datetime | None = None

    def new_uid() -> str:
        nonlocal uids
        uids += 1
        return synthetic_uid(uids)

    next_initial = START
    for i, obj in enumerate(objects):
        meta = obj.metadata
        ref = _ref_of(obj)
        if ref in live:
            errs.append(e.duplicate(index("objects", i), str(ref)))
        if meta.creation_timestamp is None:
            meta.creation_timestamp = next_initial
            next_initial += STAMP_STEP_INITIAL
        if not meta.uid:
            meta.uid = new_uid()
        newest = meta.creation_timestamp if newest is None else max(newest, meta.creation_timestamp)
        live[ref] = (meta.creation_timestamp, meta.uid)

    clock = START
    for step in steps:
        if step.action == "advance":
            clock += step.duration
        elif step.action == "delete":
            for ref in step.refs:
                live.pop(ref, None)
        elif step.action == "apply":
            for obj in step.objects:
                meta = obj.metadata
                ref = _ref_of(obj)
                if ref in live:
                    old_ts, old_uid = live[ref]
                    meta.creation_timestamp = meta.creation_timestamp or old_ts
                    meta.uid = meta.uid or old_uid
                else:
                    if meta.creation_timestamp is None:
                        after = newest + STAMP_STEP_APPLIED if newest is not None else clock
                        meta.creation_timestamp = max(clock, after)
                    if not meta.uid:
                        meta.uid = new_uid()
                newest = (
                    meta.creation_timestamp
                    if newest is None
                    else max(newest, meta.creation_timestamp)
                )
                live[ref] = (meta.creation_timestamp, meta.uid)
    return errs
