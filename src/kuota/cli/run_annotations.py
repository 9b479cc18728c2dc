"""kuota's own annotations that tell the simulated kubelet how a pod runs
(``kuota.dev/duration``, ``kuota.dev/fail``): checked when a file is read, by
``validate`` and by every command that runs a world alike."""

from __future__ import annotations

from typing import Any

from kuota.api import errors as e
from kuota.api.kueue.config import parse_duration
from kuota.cluster.controllers.run_keys import (
    DURATION_ANNOTATION,
    EXIT_CODE_ANNOTATION,
    FAIL_ANNOTATION,
    exit_code_error,
)

# Where a kind carries the pod template whose annotations tell the simulated
# kubelet how a pod runs.
_POD_ANNOTATIONS = {
    "Pod": ("metadata.annotations", ()),
    "Job": ("spec.template.metadata.annotations", ("spec", "template")),
    "DaemonSet": ("spec.template.metadata.annotations", ("spec", "template")),
    "Deployment": ("spec.template.metadata.annotations", ("spec", "template")),
    "ReplicaSet": ("spec.template.metadata.annotations", ("spec", "template")),
    "StatefulSet": ("spec.template.metadata.annotations", ("spec", "template")),
    "LeaderWorkerSet": (
        "spec.leaderWorkerTemplate.workerTemplate.metadata.annotations",
        ("spec", "leader_worker_template", "worker_template"),
    ),
    # (the simulated Spark operator gives the application's to its driver)
    "SparkApplication": ("metadata.annotations", ()),
    "CronJob": (
        "spec.jobTemplate.spec.template.metadata.annotations",
        ("spec", "job_template", "spec", "template"),
    ),
}


def run_annotation_errors(obj: Any) -> list[e.FieldError]:
    """kuota's own annotations (``kuota.dev/duration``, ``kuota.dev/fail``) as
    the kubelet simulation reads them: refused when the world is read, not
    discovered as failed pods at the end of a run."""
    where = _POD_ANNOTATIONS.get(obj.kind)
    if where is None:
        return []
    path, attrs = where
    holder: Any = obj
    for a in attrs:
        holder = getattr(holder, a, None)
        if holder is None:
            return []
    ann = getattr(holder.metadata, "annotations", None) or {}
    errs: list[e.FieldError] = []
    raw = ann.get(DURATION_ANNOTATION)
    if raw is not None:
        try:
            if parse_duration(raw).total_seconds() < 0:
                errs.append(
                    e.invalid(e.key(path, DURATION_ANNOTATION), raw, "must not be negative")
                )
        except ValueError as err:
            errs.append(e.invalid(e.key(path, DURATION_ANNOTATION), raw, str(err)))
    fail = ann.get(FAIL_ANNOTATION)
    if fail is not None and fail not in ("true", "false"):
        errs.append(e.not_supported(e.key(path, FAIL_ANNOTATION), fail, ["true", "false"]))
    code = ann.get(EXIT_CODE_ANNOTATION)
    if code is not None:
        bad = exit_code_error(code, fail)
        if bad:
            errs.append(e.invalid(e.key(path, EXIT_CODE_ANNOTATION), code, bad))
    return errs


def run_annotation_warnings(obj: Any) -> list[str]:
    """kuota's run annotations on an owning object's own metadata, where the
    simulated kubelet never reads them (its pods would run for ever): a
    warning naming where they belong."""
    where = _POD_ANNOTATIONS.get(obj.kind)
    if where is None or not where[1]:
        return []
    own = getattr(obj.metadata, "annotations", None) or {}
    return [
        f"metadata.annotations[{key}]: not read on a {obj.kind}: the simulated "
        f"kubelet reads it from {where[0]}"
        for key in (DURATION_ANNOTATION, FAIL_ANNOTATION, EXIT_CODE_ANNOTATION)
        if key in own
    ]
