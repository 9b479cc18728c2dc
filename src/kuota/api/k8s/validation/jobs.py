"""batch/v1 Job and CronJob (``pkg/apis/batch/validation``)."""

from __future__ import annotations

import re
from typing import Final

from kuota.api import names
from kuota.api.errors import (
    child,
    invalid,
    not_supported,
    required,
    too_long,
)
from kuota.api.k8s.batch import CronJob, Job, JobSpec
from kuota.api.k8s.corev1 import PodTemplateSpec
from kuota.api.k8s.cron import CronError, parse_schedule
from kuota.api.k8s.validation.objectmeta import (
    Errors,
    nonnegative,
    validate_annotations,
    validate_label_selector,
    validate_labels,
    validate_object_meta,
)
from kuota.api.k8s.validation.podspec import validate_pod_template_spec
from kuota.api.meta import selector_matches

MAX_PARALLELISM_INDEXED = 100_000
MAX_FAILED_INDEXES_INDEXED = 100_000
COMPLETIONS_SOFT_LIMIT = 100_000
PARALLELISM_LIMIT_HIGH_COMPLETIONS = 10_000
MAX_FAILED_INDEXES_HIGH_COMPLETIONS = 10_000
MAX_MANAGED_BY_LENGTH = 63


def _validate_managed_by(value: str, path: str) -> Errors:
    if not value:
        return [required(path, "")]
    host, sep, rest = value.partition("/")
    if not sep or not host or not rest:
        return [invalid(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    errs = [invalid(path, host, m) for m in names.is_dns1123_subdomain(host)]
    if len(value) > MAX_MANAGED_BY_LENGTH:
        errs.append(too_long(path, MAX_MANAGED_BY_LENGTH))
    return errs


def _validate_indexed(spec: JobSpec, path: str) -> Errors:
    errs: Errors = []
    if spec.completions is None:
        errs.append(required(child(path, "completions"), "when completion mode is Indexed"))
    if spec.parallelism > MAX_PARALLELISM_INDEXED:
        errs.append(
            invalid(
                child(path, "parallelism"),
                spec.parallelism,
                f"must be less than or equal to {MAX_PARALLELISM_INDEXED} when completion mode is Indexed",
            )
        )
    mfi_path = child(path, "maxFailedIndexes")
    mfi = spec.max_failed_indexes
    if spec.completions is not None and mfi is not None and mfi > spec.completions:
        errs.append(invalid(mfi_path, mfi, "must be less than or equal to completions"))
    if mfi is not None and mfi > MAX_FAILED_INDEXES_INDEXED:
        errs.append(
            invalid(mfi_path, mfi, f"must be less than or equal to {MAX_FAILED_INDEXES_INDEXED}")
        )
    high = (
        f"when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
    )
    if (
        spec.completions is not None
        and spec.completions > COMPLETIONS_SOFT_LIMIT
        and spec.backoff_limit_per_index is not None
    ):
        if mfi is None:
            errs.append(
                required(
                    mfi_path,
                    f"must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}",
                )
            )
        if spec.parallelism > PARALLELISM_LIMIT_HIGH_COMPLETIONS:
            errs.append(
                invalid(
                    child(path, "parallelism"),
                    spec.parallelism,
                    f"must be less than or equal to {PARALLELISM_LIMIT_HIGH_COMPLETIONS} {high}",
                )
            )
        if mfi is not None and mfi > MAX_FAILED_INDEXES_HIGH_COMPLETIONS:
            errs.append(
                invalid(
                    mfi_path,
                    mfi,
                    f"must be less than or equal to {MAX_FAILED_INDEXES_HIGH_COMPLETIONS} {high}",
                )
            )
    return errs


def _validate_job_spec(spec: JobSpec, path: str) -> Errors:
    errs: Errors = []
    for field_name, value in (
        ("parallelism", spec.parallelism),
        ("completions", spec.completions),
        ("activeDeadlineSeconds", spec.active_deadline_seconds),
        ("backoffLimit", spec.backoff_limit),
        ("ttlSecondsAfterFinished", spec.ttl_seconds_after_finished),
        ("backoffLimitPerIndex", spec.backoff_limit_per_index),
        ("maxFailedIndexes", spec.max_failed_indexes),
    ):
        if value is not None:
            errs += nonnegative(value, child(path, field_name))
    if spec.max_failed_indexes is not None and spec.backoff_limit_per_index is None:
        errs.append(
            required(child(path, "backoffLimitPerIndex"), "when maxFailedIndexes is specified")
        )
    if spec.managed_by is not None:
        errs += _validate_managed_by(spec.managed_by, child(path, "managedBy"))
    if spec.completion_mode not in ("NonIndexed", "Indexed"):
        errs.append(
            not_supported(
                child(path, "completionMode"), spec.completion_mode, ["NonIndexed", "Indexed"]
            )
        )
    if spec.completion_mode == "Indexed":
        errs += _validate_indexed(spec, path)
    else:
        for field_name, value in (
            ("backoffLimitPerIndex", spec.backoff_limit_per_index),
            ("maxFailedIndexes", spec.max_failed_indexes),
        ):
            if value is not None:
                errs.append(
                    invalid(child(path, field_name), value, "requires indexed completion mode")
                )
    if spec.success_policy is not None and spec.completion_mode != "Indexed":
        errs.append(
            invalid(
                child(path, "successPolicy"),
                spec.success_policy,
                "requires indexed completion mode",
            )
        )
    prp = spec.pod_replacement_policy
    if prp is not None:
        allowed = (
            ["Failed"] if spec.pod_failure_policy is not None else ["Failed", "TerminatingOrFailed"]
        )
        if prp not in allowed:
            errs.append(not_supported(child(path, "podReplacementPolicy"), prp, allowed))

    template_path = child(path, "template")
    errs += validate_pod_template_spec(spec.template, template_path)
    rp_path = child(child(template_path, "spec"), "restartPolicy")
    rp = spec.template.spec.restart_policy if spec.template.spec else None
    if rp in (None, "Always"):
        errs.append(required(rp_path, 'valid values: "OnFailure", "Never"'))
    elif rp not in ("OnFailure", "Never"):
        errs.append(not_supported(rp_path, rp, ["OnFailure", "Never"]))
    elif spec.pod_failure_policy is not None and rp != "Never":
        errs.append(
            invalid(rp_path, rp, 'only "Never" is supported when podFailurePolicy is specified')
        )

    # The selector is generated when absent; one the user gave must select the pods.
    if spec.selector is not None:
        errs += validate_label_selector(spec.selector, child(path, "selector"))
        labels = spec.template.metadata.labels
        if not selector_matches(spec.selector, labels):
            errs.append(
                invalid(
                    child(template_path, "metadata.labels"),
                    dict(labels or {}),
                    "`selector` does not match template `labels`",
                )
            )
    return errs


def validate_job(job: Job) -> Errors:
    errs = validate_object_meta(job.metadata, True, names.is_dns1123_subdomain)
    spec = job.spec if job.spec is not None else JobSpec(template=PodTemplateSpec())
    errs += _validate_job_spec(spec, "spec")
    if spec.completion_mode == "Indexed" and spec.completions is not None and spec.completions > 0:
        # Indexed pods are named <job>-<index>, which must be a DNS label.
        # The API server checks the name it generated from generateName:
        # checked here with the longest such name (5 valid random characters
        # after the base truncated as the store truncates it).
        name = job.metadata.name or _generated_name_shape(job.metadata.generate_name)
        hostname = f"{name}-{spec.completions - 1}"
        if names.is_dns1123_label(hostname):
            errs.append(
                invalid(
                    "metadata.name" if job.metadata.name else "metadata.generateName",
                    job.metadata.name or job.metadata.generate_name,
                    f"will not able to create pod with invalid DNS label: {hostname}",
                )
            )
    return errs


def _generated_name_shape(generate_name: str) -> str:
    """The longest name the store generates from ``generate_name``
    (kube-apiserver's ``names.SimpleNameGenerator``: base cut to 58, then 5
    characters from an alphabet of valid DNS label characters)."""
    return generate_name[:_MAX_GENERATED_BASE] + "x" * _GENERATED_SUFFIX


_MAX_GENERATED_BASE: Final = 58
_GENERATED_SUFFIX: Final = 5


# ---------------------------------------------------------------------- CronJob
CRONJOB_NAME_MAX = 52  # the Job's name appends "-" and up to 10 digits of minutes
_CONCURRENCY_POLICIES = ("Allow", "Forbid", "Replace")
_TIME_ZONE_PART = re.compile(r"^[A-Za-z\.\-_0-9+]{1,14}$")


def _validate_time_zone(tz: str | None, path: str) -> Errors:
    """``validateTimeZone`` without loading the zone (the controller reports an
    unknown zone with an UnknownTimeZone event, as Kubernetes does at sync)."""
    if tz is None:
        return []
    if not tz:
        return [invalid(path, tz, "timeZone must be nil or non-empty string")]
    for part in tz.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TIME_ZONE_PART.match(part):
            msg = f"unknown time zone {tz}: invalid time zone name part {part!r}"
            return [invalid(path, tz, msg)]
    if tz.lower() == "local":
        return [
            invalid(
                path,
                tz,
                "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
            )
        ]
    return []


def validate_cron_job(cj: CronJob) -> Errors:
    errs = validate_object_meta(cj.metadata, True, names.is_dns1123_subdomain)
    if len(cj.metadata.name) > CRONJOB_NAME_MAX:
        errs.append(
            invalid(
                "metadata.name",
                cj.metadata.name,
                f"must be no more than {CRONJOB_NAME_MAX} characters",
            )
        )
    spec = cj.spec
    if spec is None:
        return [*errs, required("spec", "")]
    if not spec.schedule:
        errs.append(required("spec.schedule", ""))
    else:
        try:
            parse_schedule(spec.schedule)
        except CronError as err:
            errs.append(invalid("spec.schedule", spec.schedule, str(err)))
        if "TZ" in spec.schedule:
            errs.append(
                invalid(
                    "spec.schedule",
                    spec.schedule,
                    "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
                )
            )
    errs += _validate_time_zone(spec.time_zone, "spec.timeZone")
    if spec.starting_deadline_seconds is not None:
        errs += nonnegative(spec.starting_deadline_seconds, "spec.startingDeadlineSeconds")
    if spec.concurrency_policy not in _CONCURRENCY_POLICIES:
        errs.append(
            not_supported("spec.concurrencyPolicy", spec.concurrency_policy, _CONCURRENCY_POLICIES)
        )
    errs += nonnegative(spec.successful_jobs_history_limit, "spec.successfulJobsHistoryLimit")
    errs += nonnegative(spec.failed_jobs_history_limit, "spec.failedJobsHistoryLimit")
    tmpl = spec.job_template
    errs += validate_labels(tmpl.metadata.labels, "spec.jobTemplate.metadata.labels")
    errs += validate_annotations(tmpl.metadata.annotations, "spec.jobTemplate.metadata.annotations")
    if tmpl.spec is None:
        errs.append(required("spec.jobTemplate.spec", ""))
    else:
        errs += _validate_job_spec(tmpl.spec, "spec.jobTemplate.spec")
    return errs
