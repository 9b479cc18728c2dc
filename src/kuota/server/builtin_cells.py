"""The cells kube-apiserver's table printers compute for built-in kinds
(``pkg/printers/internalversion/printers.go``), from the wire form: one
function per kind, its cells in the order of the kind's columns in the api
registry (the default columns, then the ``-o wide`` ones)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

Wire = dict[str, Any]


def human_age(then: datetime, now: datetime) -> str:
    """k8s.io/apimachinery/pkg/util/duration.HumanDuration."""
    seconds = int((now - then).total_seconds())
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def _ts(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _age(w: Wire, now: datetime) -> str:
    t = _ts((w.get("metadata") or {}).get("creationTimestamp"))
    return human_age(t, now) if t is not None else "<unknown>"


def _cond(w: Wire, ctype: str) -> str | None:
    for c in (w.get("status") or {}).get("conditions") or ():
        if c.get("type") == ctype:
            return str(c.get("status"))
    return None


def _containers(pod_spec: Wire) -> tuple[str, str]:
    cs = pod_spec.get("containers") or []
    return (
        ",".join(c.get("name", "") for c in cs) or "<none>",
        ",".join(c.get("image", "") for c in cs) or "<none>",
    )


def _selector(sel: Any) -> str:
    if not isinstance(sel, dict):
        return "<none>"
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for e in sel.get("matchExpressions") or ():
        op = e.get("operator", "")
        vals = ",".join(e.get("values") or ())
        parts.append(
            {"In": f"{e.get('key')} in ({vals})", "NotIn": f"{e.get('key')} notin ({vals})"}.get(
                op, e.get("key", "") if op == "Exists" else f"!{e.get('key', '')}"
            )
        )
    return ",".join(parts) or "<none>"


def pod_status(w: Wire) -> str:
    """kubectl's printPod STATUS: the reason over the phase, then container
    reasons; a simulated pod has no container statuses, so a finished pod
    shows Completed or Error, as its container would."""
    st = w.get("status") or {}
    phase = st.get("phase") or "Pending"
    reason = st.get("reason") or phase
    for c in st.get("conditions") or ():
        if c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    statuses = st.get("containerStatuses") or []
    for cs in reversed(statuses):
        state = cs.get("state") or {}
        waiting, term = state.get("waiting") or {}, state.get("terminated")
        if waiting.get("reason"):
            reason = waiting["reason"]
        elif isinstance(term, dict):
            reason = term.get("reason") or f"ExitCode:{term.get('exitCode') or 0}"
    if not statuses and reason == phase:
        reason = {"Succeeded": "Completed", "Failed": "Error"}.get(phase, phase)
    if (w.get("metadata") or {}).get("deletionTimestamp") and phase not in (
        "Succeeded",
        "Failed",
    ):
        reason = "Terminating"
    return str(reason)


def _pod(w: Wire, now: datetime) -> list[Any]:
    spec, st = w.get("spec") or {}, w.get("status") or {}
    n = len(spec.get("containers") or ())
    statuses = st.get("containerStatuses") or []
    if statuses:
        ready = sum(1 for c in statuses if c.get("ready"))
        restarts = sum(int(c.get("restartCount") or 0) for c in statuses)
    else:
        running = st.get("phase") == "Running" and _cond(w, "Ready") in ("True", None)
        ready, restarts = (n if running else 0), 0
    gates = spec.get("readinessGates") or []
    return [
        f"{ready}/{n}",
        pod_status(w),
        str(restarts),
        _age(w, now),
        st.get("podIP") or "<none>",
        spec.get("nodeName") or "<none>",
        st.get("nominatedNodeName") or "<none>",
        f"0/{len(gates)}" if gates else "<none>",
    ]


def _namespace(w: Wire, now: datetime) -> list[Any]:
    return [(w.get("status") or {}).get("phase") or "Active", _age(w, now)]


def _node(w: Wire, now: datetime) -> list[Any]:
    ready = _cond(w, "Ready")
    status = "Ready" if ready in ("True", None) else "NotReady"
    if (w.get("spec") or {}).get("unschedulable"):
        status += ",SchedulingDisabled"
    labels = (w.get("metadata") or {}).get("labels") or {}
    roles = sorted(k.partition("/")[2] for k in labels if k.startswith("node-role.kubernetes.io/"))
    info = (w.get("status") or {}).get("nodeInfo") or {}
    addrs = {
        a.get("type"): a.get("address") for a in (w.get("status") or {}).get("addresses") or ()
    }
    return [
        status,
        ",".join(roles) or "<none>",
        _age(w, now),
        info.get("kubeletVersion") or "",
        addrs.get("InternalIP") or "<none>",
        addrs.get("ExternalIP") or "<none>",
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
    ]


def _limitrange(w: Wire, now: datetime) -> list[Any]:
    return [(w.get("metadata") or {}).get("creationTimestamp") or ""]


def _priorityclass(w: Wire, now: datetime) -> list[Any]:
    return [str(w.get("value", 0)), str(bool(w.get("globalDefault"))).lower(), _age(w, now)]


def _runtimeclass(w: Wire, now: datetime) -> list[Any]:
    return [w.get("handler", ""), _age(w, now)]


def _job(w: Wire, now: datetime) -> list[Any]:
    spec, st = w.get("spec") or {}, w.get("status") or {}
    status = "Running"
    for ctype, word in (
        ("Complete", "Complete"),
        ("Failed", "Failed"),
        ("Suspended", "Suspended"),
        ("FailureTarget", "FailureTarget"),
        ("SuccessCriteriaMet", "SuccessCriteriaMet"),
    ):
        if _cond(w, ctype) == "True":
            status = word
            break
    if (w.get("metadata") or {}).get("deletionTimestamp"):
        status = "Terminating"
    completions = spec.get("completions")
    parallelism = spec.get("parallelism", 1)
    done = st.get("succeeded", 0) or 0
    shown = f"{done}/{completions}" if completions is not None else f"{done}/1 of {parallelism}"
    if completions is None and parallelism in (None, 1):
        shown = f"{done}/1"
    start, end = _ts(st.get("startTime")), _ts(st.get("completionTime"))
    duration = human_age(start, end or now) if start is not None else ""
    names, images = _containers(((spec.get("template") or {}).get("spec")) or {})
    return [
        status,
        shown,
        duration,
        _age(w, now),
        names,
        images,
        _selector(spec.get("selector")),
    ]


def _cronjob(w: Wire, now: datetime) -> list[Any]:
    spec, st = w.get("spec") or {}, w.get("status") or {}
    last = _ts(st.get("lastScheduleTime"))
    tmpl = (((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}).get(
        "spec"
    ) or {}
    names, images = _containers(tmpl)
    return [
        spec.get("schedule", ""),
        spec.get("timeZone") or "<none>",
        str(bool(spec.get("suspend"))),
        str(len(st.get("active") or ())),
        human_age(last, now) if last else "<none>",
        _age(w, now),
        names,
        images,
        "<none>",
    ]


def _daemonset(w: Wire, now: datetime) -> list[Any]:
    spec, st = w.get("spec") or {}, w.get("status") or {}
    sel = (((spec.get("template") or {}).get("spec")) or {}).get("nodeSelector") or {}
    return [
        str(st.get("desiredNumberScheduled", 0)),
        str(st.get("currentNumberScheduled", 0)),
        str(st.get("numberReady", 0)),
        str(st.get("updatedNumberScheduled", 0)),
        str(st.get("numberAvailable", 0)),
        ",".join(f"{k}={v}" for k, v in sorted(sel.items())) or "<none>",
        _age(w, now),
        *_template_wide(spec),
    ]


def _template_wide(spec: Wire, selector: bool = True) -> list[str]:
    """The -o wide cells of a pod-template owner (printers.go): CONTAINERS,
    IMAGES and, but for a StatefulSet, SELECTOR."""
    names, images = _containers(((spec.get("template") or {}).get("spec")) or {})
    return [names, images, *([_selector(spec.get("selector"))] if selector else [])]


def _replicaset(w: Wire, now: datetime) -> list[Any]:
    spec, st = w.get("spec") or {}, w.get("status") or {}
    return [
        str(spec.get("replicas", 1)),
        str(st.get("replicas", 0)),
        str(st.get("readyReplicas", 0)),
        _age(w, now),
        *_template_wide(spec),
    ]


def _deployment(w: Wire, now: datetime) -> list[Any]:
    spec, st = w.get("spec") or {}, w.get("status") or {}
    return [
        f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
        str(st.get("updatedReplicas", 0)),
        str(st.get("availableReplicas", 0)),
        _age(w, now),
        *_template_wide(spec),
    ]


def _statefulset(w: Wire, now: datetime) -> list[Any]:
    spec, st = w.get("spec") or {}, w.get("status") or {}
    return [
        f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
        _age(w, now),
        *_template_wide(spec, selector=False),
    ]


def _controllerrevision(w: Wire, now: datetime) -> list[Any]:
    owners = (w.get("metadata") or {}).get("ownerReferences") or []
    ctl = next((o for o in owners if o.get("controller")), None)
    owner = (
        f"{ctl.get('kind', '').lower()}.{ctl.get('apiVersion', '').partition('/')[0]}/{ctl.get('name')}"
        if ctl
        else "<none>"
    )
    return [owner, str(w.get("revision", 0)), _age(w, now)]


def _service(w: Wire, now: datetime) -> list[Any]:
    spec = w.get("spec") or {}
    ports = ",".join(f"{p.get('port')}/{p.get('protocol', 'TCP')}" for p in spec.get("ports") or ())
    sel = spec.get("selector") or {}
    return [
        spec.get("type") or "ClusterIP",
        spec.get("clusterIP") or "<none>",
        "<none>",
        ports or "<none>",
        _age(w, now),
        ",".join(f"{k}={v}" for k, v in sorted(sel.items())) or "<none>",
    ]


def _event(w: Wire, now: datetime) -> list[Any]:
    io = w.get("involvedObject") or {}
    seen = _ts(w.get("lastTimestamp")) or _ts((w.get("metadata") or {}).get("creationTimestamp"))
    return [
        human_age(seen, now) if seen else "<unknown>",
        w.get("type") or "",
        w.get("reason") or "",
        f"{str(io.get('kind', '')).lower()}/{io.get('name', '')}",
        w.get("message") or "",
    ]


def _podtemplate(w: Wire, now: datetime) -> list[Any]:
    tmpl = w.get("template") or {}
    names, images = _containers(tmpl.get("spec") or {})
    labels = (tmpl.get("metadata") or {}).get("labels") or {}
    shown = ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>"
    return [names, images, shown]


def _admission_policy(w: Wire, now: datetime) -> list[Any]:
    spec = w.get("spec") or {}
    pk = spec.get("paramKind")
    kind = f"{pk.get('apiVersion', '')}/{pk.get('kind', '')}" if pk else "<unset>"
    return [len(spec.get("validations") or ()), kind, _age(w, now)]


def _admission_policy_binding(w: Wire, now: datetime) -> list[Any]:
    spec = w.get("spec") or {}
    ref = spec.get("paramRef")
    shown = "<unset>"
    if ref and ref.get("name"):
        shown = f"{ref.get('namespace') or '*'}/{ref['name']}"
    elif ref and ref.get("selector") is not None:
        shown = _selector(ref["selector"])
    return [spec.get("policyName", ""), shown, _age(w, now)]


def _hpa_metric(spec: Wire, status: Wire | None) -> str:
    """One metric of ``formatHPAMetrics``: current/target."""
    typ = spec.get("type")
    if typ in ("Resource", "ContainerResource"):
        src = spec.get("resource" if typ == "Resource" else "containerResource") or {}
        cur = (status or {}).get("resource" if typ == "Resource" else "containerResource") or {}
        target, current = src.get("target") or {}, cur.get("current") or {}
        name = src.get("name", "")
        if target.get("averageValue") is not None:
            shown = current.get("averageValue")
            return f"{name}: {shown if shown is not None else '<unknown>'}/{target['averageValue']}"
        now_ = current.get("averageUtilization")
        want = target.get("averageUtilization")
        return (
            f"{name}: {f'{now_}%' if now_ is not None else '<unknown>'}/"
            f"{f'{want}%' if want is not None else '<auto>'}"
        )
    if typ in ("Pods", "Object", "External"):
        key = typ.lower()
        target = (spec.get(key) or {}).get("target") or {}
        current = ((status or {}).get(key) or {}).get("current") or {}
        if target.get("averageValue") is not None:
            shown = current.get("averageValue") or "<unknown>"
            avg = " (avg)" if typ != "Pods" else ""
            return f"{shown}/{target['averageValue']}{avg}"
        return f"{current.get('value') or '<unknown>'}/{target.get('value') or '<unknown>'}"
    return "<unknown type>"


def _hpa(w: Wire, now: datetime) -> list[Any]:
    """printHorizontalPodAutoscaler, of the stored (autoscaling/v2) form."""
    spec, status = w.get("spec") or {}, w.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    metrics = spec.get("metrics") or []
    current = status.get("currentMetrics") or []
    shown = [
        _hpa_metric(m, current[i] if i < len(current) else None) for i, m in enumerate(metrics)
    ]
    targets = ", ".join(shown[:2]) or "<none>"
    if len(shown) > 2:
        targets += f" + {len(shown) - 2} more..."
    mn = spec.get("minReplicas")
    return [
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        targets,
        str(mn) if mn is not None else "<unset>",
        spec.get("maxReplicas", 0),
        status.get("currentReplicas", 0),
        _age(w, now),
    ]


def _resourcequota(w: Wire, now: datetime) -> list[Any]:
    """printResourceQuota: "name: used/hard" for each resource of status.hard,
    the limits.* ones in LIMIT, the rest in REQUEST."""
    status = w.get("status") or {}
    hard, used = status.get("hard") or {}, status.get("used") or {}
    request, limit = [], []
    for r in sorted(hard):
        cell = f"{r}: {used.get(r, '0')}/{hard[r]}"
        (limit if r.split(".", 1)[0] == "limits" and "." in r else request).append(cell)
    return [_age(w, now), ", ".join(request), ", ".join(limit)]


def _pdb(w: Wire, now: datetime) -> list[Any]:
    spec, status = w.get("spec") or {}, w.get("status") or {}
    mn, mx = spec.get("minAvailable"), spec.get("maxUnavailable")
    return [
        str(mn) if mn is not None else "N/A",
        str(mx) if mx is not None else "N/A",
        status.get("disruptionsAllowed", 0),
        _age(w, now),
    ]


def _ingress(w: Wire, now: datetime) -> list[Any]:
    spec = w.get("spec") or {}
    rules = spec.get("rules") or []
    hosts = [r["host"] for r in rules if r.get("host")][:3]
    shown = ",".join(hosts) or "*"
    if len(rules) > 3:
        shown += f" + {len(rules) - 3} more..."
    lb = ((w.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    addresses = ",".join(a.get("ip") or a.get("hostname") or "" for a in lb)
    if len(addresses) > 16:  # loadBalancerWidth, without -o wide
        addresses = addresses[:13] + "..."
    return [
        spec.get("ingressClassName") or "<none>",
        shown,
        addresses,
        "80, 443" if spec.get("tls") else "80",
        _age(w, now),
    ]


BUILTIN_CELLS: dict[tuple[str, str], Callable[[Wire, datetime], list[Any]]] = {
    ("", "Pod"): _pod,
    ("", "Namespace"): _namespace,
    ("", "Node"): _node,
    ("", "LimitRange"): _limitrange,
    ("", "Service"): _service,
    ("", "Event"): _event,
    ("", "PodTemplate"): _podtemplate,
    ("", "ResourceQuota"): _resourcequota,
    ("autoscaling", "HorizontalPodAutoscaler"): _hpa,
    ("policy", "PodDisruptionBudget"): _pdb,
    ("networking.k8s.io", "Ingress"): _ingress,
    ("scheduling.k8s.io", "PriorityClass"): _priorityclass,
    ("node.k8s.io", "RuntimeClass"): _runtimeclass,
    ("batch", "Job"): _job,
    ("batch", "CronJob"): _cronjob,
    ("apps", "DaemonSet"): _daemonset,
    ("apps", "ReplicaSet"): _replicaset,
    ("apps", "Deployment"): _deployment,
    ("apps", "StatefulSet"): _statefulset,
    ("apps", "ControllerRevision"): _controllerrevision,
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"): _admission_policy,
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding"): _admission_policy_binding,
}
