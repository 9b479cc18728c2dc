"""kuota.quota.requests: what a Workload podSet requests, as Kueue computes it
(AdjustResources, PodRequests, excluded prefixes, transformations) and Kueue's
nomination-time resource validation with its exact messages."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kuota.api import base
from kuota.api.k8s import LimitRange, PodSpec, RuntimeClass
from kuota.api.kueue.config import Resources, ResourceTransformation
from kuota.api.kueue.types import PodSet, Workload
from kuota.api.quantity import BINARY_SI, DECIMAL_SI, Quantity
from kuota.quota.requests import (
    RequestContext,
    adjust_template,
    limit_range_violations,
    pod_requests,
    podset_requests,
    podset_total_requests,
    requests_over_limits,
    resource_quantity,
    resource_value,
    scale_requests,
    summarize_limit_ranges,
    validate_podset_resources,
    validate_workload_resources,
)

Doc = dict[str, Any]
INT64_MAX = 2**63 - 1


def container(name: str, requests: Doc | None = None, limits: Doc | None = None, **kw: Any) -> Doc:
    c: Doc = {"name": name, **kw}
    res: Doc = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    if res:
        c["resources"] = res
    return c


def sidecar(name: str, requests: Doc) -> Doc:
    return container(name, requests, restartPolicy="Always")


def podset(
    containers: list[Doc], init: list[Doc] | None = None, count: int = 1, **spec: Any
) -> PodSet:
    s: Doc = {"containers": containers, **spec}
    if init is not None:
        s["initContainers"] = init
    doc = {"name": "main", "count": count, "template": {"spec": s}}
    return msgspec.convert(doc, PodSet, dec_hook=base.dec_hook)


def spec_of(ps: PodSet) -> PodSpec:
    assert ps.template.spec is not None
    return ps.template.spec


def limit_range(*items: Doc, name: str = "lr") -> LimitRange:
    doc = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"limits": list(items)},
    }
    return msgspec.convert(doc, LimitRange, dec_hook=base.dec_hook)


def runtime_class(name: str, pod_fixed: Doc | None) -> RuntimeClass:
    doc: Doc = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "handler": "h"}
    doc["metadata"] = {"name": name}
    if pod_fixed is not None:
        doc["overhead"] = {"podFixed": pod_fixed}
    return msgspec.convert(doc, RuntimeClass, dec_hook=base.dec_hook)


def transformation(
    input: str, outputs: dict[str, str], strategy: str = "Retain", multiply_by: str = ""
) -> ResourceTransformation:
    return ResourceTransformation(
        input=input,
        strategy=strategy,
        multiply_by=multiply_by,
        outputs={k: Quantity(v) for k, v in outputs.items()},
    )


def wire(obj: Any) -> Any:
    return msgspec.to_builtins(obj, enc_hook=base.enc_hook)


NO_CTX = RequestContext()


# ------------------------------------------------------------------ units


def test_resource_value_cpu_in_milli_others_rounded_up() -> None:
    assert resource_value("cpu", Quantity("1.5")) == 1500
    assert resource_value("cpu", Quantity("1n")) == 1  # up to the next milli
    assert resource_value("memory", Quantity("1Ki")) == 1024
    assert resource_value("memory", Quantity("1500m")) == 2
    assert resource_value("example.com/gpu", Quantity("1")) == 1
    # Kueue's SafeValue clamps instead of overflowing.
    assert resource_value("memory", Quantity("1e30")) == INT64_MAX


def test_resource_quantity_formats() -> None:
    cpu = resource_quantity("cpu", 1500)
    assert (str(cpu), cpu.format) == ("1500m", DECIMAL_SI)
    mem = resource_quantity("memory", 2 * 1024**3)
    assert (str(mem), mem.format) == ("2Gi", BINARY_SI)
    # Canonicalised through its text: 1500 bytes print (and re-parse) as DecimalSI.
    odd = resource_quantity("memory", 1500)
    assert (str(odd), odd.format) == ("1500", DECIMAL_SI)
    assert str(resource_quantity("ephemeral-storage", 1024)) == "1Ki"
    assert str(resource_quantity("hugepages-2Mi", 4 * 1024**2)) == "4Mi"
    assert str(resource_quantity("example.com/gpu", 2048)) == "2048"
    assert str(resource_quantity("example.com/mem", 2048, binary={"example.com/mem"})) == "2Ki"


def test_resource_quantity_shares_one_quantity_per_value_and_unit() -> None:
    """Cached per value: cpu counts milli-units, other decimal resources units."""
    assert resource_quantity("cpu", 1000) == Quantity("1")
    assert resource_quantity("example.com/gpu", 1000) == Quantity("1000")
    assert resource_quantity("cpu", 1000) is resource_quantity("cpu", 1000)
    assert str(resource_quantity("cpu", 1000)) == "1"


@given(st.sampled_from(["cpu", "memory", "example.com/gpu"]), st.integers(0, 10**15))
def test_resource_quantity_inverts_resource_value(name: str, v: int) -> None:
    assert resource_value(name, resource_quantity(name, v)) == v


# ------------------------------------------------------------ PodRequests


def test_init_containers_max_regular_containers_sum() -> None:
    ps = podset(
        [container("a", {"cpu": "1", "memory": "1Gi"}), container("b", {"cpu": "2"})],
        init=[container("i1", {"cpu": "4"}), container("i2", {"memory": "3Gi"})],
    )
    # cpu: max(1+2, 4); memory: max(1Gi, 3Gi).
    assert pod_requests(spec_of(ps)) == {"cpu": 4000, "memory": 3 * 1024**3}


def test_init_container_below_sum_does_not_count() -> None:
    ps = podset(
        [container("a", {"cpu": "1"}), container("b", {"cpu": "2"})],
        init=[container("i", {"cpu": "2500m"})],
    )
    assert pod_requests(spec_of(ps)) == {"cpu": 3000}


def test_sidecars_add_to_steady_state_and_to_later_init_containers() -> None:
    ps = podset(
        [container("main", {"cpu": "1"})],
        init=[
            container("before", {"cpu": "2"}),
            sidecar("proxy", {"cpu": "500m"}),
            container("after", {"cpu": "2"}),
        ],
    )
    # steady: 1 + 0.5; "before" runs alone: 2; "after" runs with proxy: 2.5.
    assert pod_requests(spec_of(ps)) == {"cpu": 2500}


def test_sidecars_accumulate() -> None:
    ps = podset(
        [container("main", {"cpu": "1"})],
        init=[sidecar("s1", {"cpu": "1"}), sidecar("s2", {"cpu": "1"})],
    )
    assert pod_requests(spec_of(ps)) == {"cpu": 3000}


def test_sum_is_exact_and_rounded_once() -> None:
    ps = podset(
        [container("a", {"memory": "500m", "cpu": "1n"}), container("b", {"memory": "500m"})]
    )
    # 0.5 + 0.5 bytes is 1, not 2; a nano-cpu rounds up to one milli.
    assert pod_requests(spec_of(ps)) == {"cpu": 1, "memory": 1}


def test_overhead_is_added() -> None:
    ps = podset([container("a", {"cpu": "1"})], overhead={"cpu": "250m", "memory": "64Mi"})
    assert pod_requests(spec_of(ps)) == {"cpu": 1250, "memory": 64 * 1024**2}


def test_pod_level_requests_replace_container_sum_for_supported_resources() -> None:
    ps = podset(
        [container("a", {"cpu": "1", "memory": "1Gi", "example.com/gpu": "1"})],
        resources={"requests": {"cpu": "3", "example.com/gpu": "5"}},
        overhead={"cpu": "100m"},
    )
    # cpu from the pod level, plus overhead; an extended resource is not a pod-level
    # resource, so the container value stays; memory unset at pod level.
    assert pod_requests(spec_of(ps)) == {"cpu": 3100, "example.com/gpu": 1, "memory": 1024**3}


def test_zero_requests_are_kept() -> None:
    ps = podset([container("a", {"cpu": "0"})])
    assert pod_requests(spec_of(ps)) == {"cpu": 0}


# -------------------------------------------------------- AdjustResources


def test_runtime_class_overhead_when_template_overhead_empty() -> None:
    ctx = RequestContext(runtime_classes={"kata": runtime_class("kata", {"cpu": "250m"})})
    ps = podset([container("a", {"cpu": "1"})], runtimeClassName="kata")
    assert podset_requests(ps, ctx) == {"cpu": 1250}
    assert pod_requests(spec_of(ps)) == {"cpu": 1000}  # not applied by pod_requests itself


def test_runtime_class_overhead_not_applied_when_template_has_overhead() -> None:
    ctx = RequestContext(runtime_classes={"kata": runtime_class("kata", {"cpu": "250m"})})
    ps = podset([container("a", {"cpu": "1"})], runtimeClassName="kata", overhead={"cpu": "10m"})
    assert podset_requests(ps, ctx) == {"cpu": 1010}


def test_runtime_class_unknown_or_without_overhead_or_not_named() -> None:
    ctx = RequestContext(
        runtime_classes={
            "kata": runtime_class("kata", {"cpu": "250m"}),
            "plain": runtime_class("plain", None),
        }
    )
    for extra in ({"runtimeClassName": "missing"}, {"runtimeClassName": "plain"}, {}):
        ps = podset([container("a", {"cpu": "1"})], **extra)
        assert podset_requests(ps, ctx) == {"cpu": 1000}, extra


def test_limit_range_default_and_default_request() -> None:
    lr = limit_range(
        {
            "type": "Container",
            "default": {"cpu": "2", "memory": "1Gi"},
            "defaultRequest": {"cpu": "500m"},
        }
    )
    ctx = RequestContext(limit_ranges=[lr])
    ps = podset([container("a"), container("b", {"cpu": "1"}, {"memory": "2Gi"})])
    adjusted = adjust_template(ps.template, ctx).spec
    assert adjusted is not None
    a, b = adjusted.containers
    assert a.resources is not None and b.resources is not None
    assert a.resources.limits == {"cpu": Quantity("2"), "memory": Quantity("1Gi")}
    assert a.resources.requests == {"cpu": Quantity("500m"), "memory": Quantity("1Gi")}
    assert b.resources.limits == {"cpu": Quantity("2"), "memory": Quantity("2Gi")}
    # The API server defaults defaultRequest from default (memory 1Gi), and that
    # comes before b's own limit.
    assert b.resources.requests == {"cpu": Quantity("1"), "memory": Quantity("1Gi")}
    assert podset_requests(ps, ctx) == {"cpu": 1500, "memory": 2 * 1024**3}
    assert spec_of(ps).containers[0].resources is None  # input untouched


def test_limits_fill_requests_after_limit_range_defaults() -> None:
    # No defaultRequest for memory can come from this item, so the container's
    # own limit becomes its request.
    lr = limit_range({"type": "Container", "defaultRequest": {"cpu": "500m"}})
    ps = podset([container("a", None, {"memory": "2Gi"})])
    assert podset_requests(ps, RequestContext(limit_ranges=[lr])) == {
        "cpu": 500,
        "memory": 2 * 1024**3,
    }


def test_limit_range_applies_to_init_containers() -> None:
    lr = limit_range({"type": "Container", "defaultRequest": {"cpu": "3"}})
    ps = podset([container("a", {"cpu": "1"})], init=[container("i")])
    assert podset_requests(ps, RequestContext(limit_ranges=[lr])) == {"cpu": 3000}


def test_limit_range_api_defaults_max_to_default_and_min_to_default_request() -> None:
    # The API server defaults a Container item: default <- max, defaultRequest <-
    # default, then <- min. Kueue only ever sees such defaulted objects.
    lr = limit_range({"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "1Mi"}})
    ps = podset([container("a")])
    adjusted = adjust_template(ps.template, RequestContext(limit_ranges=[lr])).spec
    assert adjusted is not None and adjusted.containers[0].resources is not None
    assert adjusted.containers[0].resources.limits == {"cpu": Quantity("2")}
    assert adjusted.containers[0].resources.requests == {
        "cpu": Quantity("2"),
        "memory": Quantity("1Mi"),
    }


def test_limit_range_summary_first_default_lowest_max_highest_min() -> None:
    first = limit_range(
        {"type": "Container", "default": {"cpu": "1"}, "max": {"cpu": "4"}, "min": {"cpu": "1m"}},
        name="a",
    )
    second = limit_range(
        {"type": "Container", "default": {"cpu": "3"}, "max": {"cpu": "3"}, "min": {"cpu": "10m"}},
        name="b",
    )
    s = summarize_limit_ranges([first, second])["Container"]
    assert s.default == {"cpu": Quantity("1")}
    assert s.max == {"cpu": Quantity("3")}
    assert s.min == {"cpu": Quantity("10m")}


def test_limit_range_pod_type_defaults_pod_level_resources_only_when_set() -> None:
    lr = limit_range({"type": "Pod", "default": {"memory": "1Gi"}, "defaultRequest": {"cpu": "2"}})
    ctx = RequestContext(limit_ranges=[lr])
    with_pod_level = podset([container("a", {"cpu": "1"})], resources={"limits": {"cpu": "4"}})
    adjusted = adjust_template(with_pod_level.template, ctx).spec
    assert adjusted is not None and adjusted.resources is not None
    assert adjusted.resources.limits == {"cpu": Quantity("4"), "memory": Quantity("1Gi")}
    assert adjusted.resources.requests == {"cpu": Quantity("2"), "memory": Quantity("1Gi")}
    assert podset_requests(with_pod_level, ctx) == {"cpu": 2000, "memory": 1024**3}
    without = podset([container("a", {"cpu": "1"})])
    assert podset_requests(without, ctx) == {"cpu": 1000}
    assert spec_of(without).resources is None


def test_limits_become_missing_requests() -> None:
    ps = podset(
        [container("a", {"cpu": "1"}, {"cpu": "2", "memory": "1Gi"})],
        init=[container("i", None, {"example.com/gpu": "1"})],
    )
    assert podset_requests(ps, NO_CTX) == {"cpu": 1000, "example.com/gpu": 1, "memory": 1024**3}
    # PodRequests alone (no adjustment) sees only the explicit request.
    assert pod_requests(spec_of(ps)) == {"cpu": 1000}


def test_pod_level_limits_become_pod_level_requests() -> None:
    ps = podset([container("a", {"cpu": "1"})], resources={"limits": {"cpu": "3"}})
    assert podset_requests(ps, NO_CTX) == {"cpu": 3000}


def test_adjust_template_does_not_mutate_and_is_idempotent() -> None:
    lr = limit_range({"type": "Container", "default": {"cpu": "2"}, "defaultRequest": {"cpu": "1"}})
    ctx = RequestContext(
        limit_ranges=[lr], runtime_classes={"kata": runtime_class("kata", {"memory": "1Mi"})}
    )
    ps = podset(
        [container("a", None, {"memory": "1Gi"}), container("b")],
        init=[container("i", {"cpu": "1"})],
        runtimeClassName="kata",
        resources={"limits": {"cpu": "8"}},
    )
    before = wire(ps)
    once = adjust_template(ps.template, ctx)
    assert wire(ps) == before
    assert wire(adjust_template(once, ctx)) == wire(once)
    assert once.spec is not None and ps.template.spec is not None
    assert once.spec.containers[0].resources is not ps.template.spec.containers[0].resources
    podset_requests(ps, ctx)
    validate_podset_resources(ps, ctx)
    assert wire(ps) == before


# ------------------------------------- excluded prefixes, transformations


def test_excluded_prefixes() -> None:
    ps = podset(
        [container("a", {"cpu": "1", "example.com/gpu": "1", "example.org/nic": "2"})],
    )
    ctx = RequestContext(excluded_prefixes=("example.com/", "memory"))
    assert podset_requests(ps, ctx) == {"cpu": 1000, "example.org/nic": 2}


def test_replace_transformation() -> None:
    ps = podset([container("a", {"cpu": "1", "nvidia.com/mig-1g.5gb": "2"})])
    ctx = RequestContext(
        transformations=[
            transformation(
                "nvidia.com/mig-1g.5gb",
                {"example.com/accelerator-memory": "5Gi", "example.com/credits": "4"},
                strategy="Replace",
            )
        ]
    )
    assert podset_requests(ps, ctx) == {
        "cpu": 1000,
        "example.com/accelerator-memory": 10 * 1024**3,
        "example.com/credits": 8,
    }


def test_retain_transformation_keeps_input_and_sums_with_same_named_request() -> None:
    ps = podset([container("a", {"cpu": "2", "example.com/gpu": "1", "example.com/credits": "3"})])
    ctx = RequestContext(transformations=[transformation("cpu", {"example.com/credits": "500m"})])
    assert podset_requests(ps, ctx) == {
        "cpu": 2000,
        "example.com/credits": 4,  # 3 requested + 2 * 0.5 generated
        "example.com/gpu": 1,
    }


def test_transformation_products_are_exact_then_rounded_up() -> None:
    ps = podset([container("a", {"example.com/x": "3"})])
    ctx = RequestContext(transformations=[transformation("example.com/x", {"example.com/y": "1n"})])
    # 3 * 1e-9 is kept exactly, then rounded up to one unit.
    assert podset_requests(ps, ctx) == {"example.com/x": 3, "example.com/y": 1}


def test_transformation_multiply_by() -> None:
    ps = podset([container("a", {"example.com/gpu": "2", "example.com/gpu-memory": "10"})])
    t = transformation(
        "example.com/gpu", {"example.com/total-memory": "1"}, multiply_by="example.com/gpu-memory"
    )
    assert podset_requests(ps, RequestContext(transformations=[t])) == {
        "example.com/gpu": 2,  # Retain keeps the input unscaled
        "example.com/gpu-memory": 10,
        "example.com/total-memory": 20,
    }
    # Without the multiplier resource the input is used as is.
    alone = podset([container("a", {"example.com/gpu": "2"})])
    assert podset_requests(alone, RequestContext(transformations=[t])) == {
        "example.com/gpu": 2,
        "example.com/total-memory": 2,
    }


def test_negative_generated_totals_are_floored_not_subtracted_from_requests() -> None:
    ps = podset([container("a", {"example.com/gpu": "2", "example.com/credits": "5"})])
    t = transformation("example.com/gpu", {"example.com/credits": "-4"}, strategy="Replace")
    assert podset_requests(ps, RequestContext(transformations=[t])) == {"example.com/credits": 5}


def test_outputs_of_several_inputs_net_before_flooring() -> None:
    ps = podset([container("a", {"example.com/a": "3", "example.com/b": "1"})])
    ctx = RequestContext(
        transformations=[
            transformation("example.com/a", {"example.com/c": "2"}, strategy="Replace"),
            transformation("example.com/b", {"example.com/c": "-1"}, strategy="Replace"),
        ]
    )
    assert podset_requests(ps, ctx) == {"example.com/c": 5}


def test_excluded_before_transformed() -> None:
    ps = podset([container("a", {"example.com/gpu": "1"})])
    ctx = RequestContext(
        excluded_prefixes=("example.com/",),
        transformations=[transformation("example.com/gpu", {"credits": "1"})],
    )
    assert podset_requests(ps, ctx) == {}


def test_context_from_config_and_totals() -> None:
    res = Resources(
        exclude_resource_prefixes=("ignored/",),
        transformations=(transformation("cpu", {"credits": "1"}, strategy="Replace"),),
    )
    ctx = RequestContext.from_config(res)
    ps = podset([container("a", {"cpu": "1500m", "ignored/x": "1"})], count=4)
    assert podset_requests(ps, ctx) == {"credits": 2}
    assert podset_total_requests(ps, ctx) == {"credits": 8}
    assert podset_total_requests(ps, ctx, count=1) == {"credits": 2}
    assert scale_requests({"cpu": INT64_MAX}, 2) == {"cpu": INT64_MAX}


# -------------------------------------------------------------- validation

PATH0 = "spec.podSets[0].template.spec"


def test_valid_podset_passes() -> None:
    ps = podset([container("a", {"cpu": "1"}, {"cpu": "2"})])
    assert validate_podset_resources(ps, NO_CTX) is None


def test_requests_above_limits() -> None:
    ps = podset(
        [container("a", {"cpu": "1"}), container("b", {"cpu": "2", "memory": "2Gi"}, {"cpu": "1"})]
    )
    assert validate_podset_resources(ps, NO_CTX) == (
        "resources validation failed: "
        f'{PATH0}.containers[1]: Invalid value: ["cpu"]: requests must not exceed its limits'
    )
    [v] = requests_over_limits(spec_of(ps), PATH0)
    assert v.amounts == (("cpu", 2000, 1000),)


def test_requests_above_limits_several_errors_aggregate() -> None:
    ps = podset(
        [container("a", {"cpu": "2", "memory": "2Gi"}, {"cpu": "1", "memory": "1Gi"})],
        init=[container("i", {"cpu": "2"}, {"cpu": "1"})],
        resources={"requests": {"memory": "3Gi"}, "limits": {"memory": "2Gi"}},
    )
    assert validate_podset_resources(ps, NO_CTX, index=2) == (
        "resources validation failed: ["
        'spec.podSets[2].template.spec.initContainers[0]: Invalid value: ["cpu"]: '
        "requests must not exceed its limits, "
        'spec.podSets[2].template.spec.containers[0]: Invalid value: ["cpu","memory"]: '
        "requests must not exceed its limits, "
        'spec.podSets[2].template.spec.resources: Invalid value: ["memory"]: '
        "requests must not exceed its limits]"
    )


def test_requests_compared_in_kueue_units() -> None:
    # 1.2 and 1.5 bytes both round up to 2: Kueue does not see the difference.
    ps = podset([container("a", {"memory": "1500m"}, {"memory": "1200m"})])
    assert validate_podset_resources(ps, NO_CTX) is None


def test_limit_range_default_request_above_explicit_limit_fails() -> None:
    lr = limit_range({"type": "Container", "defaultRequest": {"cpu": "2"}})
    ps = podset([container("a", None, {"cpu": "1"})])
    msg = validate_podset_resources(ps, RequestContext(limit_ranges=[lr]))
    assert msg == (
        "resources validation failed: "
        f'{PATH0}.containers[0]: Invalid value: ["cpu"]: requests must not exceed its limits'
    )


def test_limit_range_container_max_and_min() -> None:
    lr = limit_range({"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "1Gi"}})
    ctx = RequestContext(limit_ranges=[lr])
    above = podset([container("a", {"cpu": "3", "memory": "2Gi"}, {"cpu": "3"})])
    assert validate_podset_resources(above, ctx) == (
        "resources didn't satisfy LimitRange constraints: "
        f'{PATH0}.containers[0]: Invalid value: ["cpu"]: '
        "requests must not be above the limitRange max"
    )
    below = podset([container("a", {"cpu": "1", "memory": "512Mi"})], init=[container("i")])
    # The init container gets memory 1Gi from the defaulted defaultRequest (min).
    assert validate_podset_resources(below, ctx) == (
        "resources didn't satisfy LimitRange constraints: "
        f'{PATH0}.containers[0]: Invalid value: ["memory"]: '
        "requests must not be below the limitRange min"
    )
    spec = adjust_template(below.template, ctx).spec
    assert spec is not None
    [v] = limit_range_violations(spec, ctx.limit_summary, PATH0)
    assert v.amounts == (("memory", 512 * 1024**2, 1024**3),)


def test_limit_range_pod_max_counts_total_with_overhead() -> None:
    lr = limit_range({"type": "Pod", "max": {"cpu": "2"}})
    ctx = RequestContext(limit_ranges=[lr])
    ok = podset([container("a", {"cpu": "1"}), container("b", {"cpu": "1"})])
    assert validate_podset_resources(ok, ctx) is None
    over = podset(
        [container("a", {"cpu": "1"}), container("b", {"cpu": "1"})], overhead={"cpu": "1m"}
    )
    assert validate_podset_resources(over, ctx) == (
        "resources didn't satisfy LimitRange constraints: "
        f'{PATH0}: Invalid value: ["cpu"]: requests must not be above the limitRange max'
    )


def test_limit_range_ratio_is_not_checked_by_kueue() -> None:
    lr = limit_range({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}})
    ps = podset([container("a", {"cpu": "100m"}, {"cpu": "4"})])
    assert validate_podset_resources(ps, RequestContext(limit_ranges=[lr])) is None


def test_requests_over_limits_reported_before_limit_ranges() -> None:
    lr = limit_range({"type": "Pod", "max": {"cpu": "1"}})
    wl_doc = {
        "metadata": {"name": "w", "namespace": "ns"},
        "spec": {
            "podSets": [
                {"name": "a", "template": {"spec": {"containers": [container("c", {"cpu": "2"})]}}},
                {
                    "name": "b",
                    "template": {
                        "spec": {"containers": [container("c", {"cpu": "2"}, {"cpu": "1"})]}
                    },
                },
            ]
        },
    }
    wl = msgspec.convert(wl_doc, Workload, dec_hook=base.dec_hook)
    ctx = RequestContext(limit_ranges=[lr])
    # podSet a's cpu 2 is above the max, but podSet b's request above its limit
    # is what Kueue reports, as it checks limits for every podSet first.
    assert validate_workload_resources(wl, ctx) == (
        "resources validation failed: spec.podSets[1].template.spec.containers[0]: "
        'Invalid value: ["cpu"]: requests must not exceed its limits'
    )
    wl.spec.pod_sets.pop()
    assert validate_workload_resources(wl, ctx) == (
        "resources didn't satisfy LimitRange constraints: "
        'spec.podSets[0].template.spec: Invalid value: ["cpu"]: '
        "requests must not be above the limitRange max"
    )


# ------------------------------------------------------------- properties

NAMES = st.sampled_from(["cpu", "memory", "example.com/gpu", "ignored.io/x", "ignored.io/y"])
AMOUNTS = st.sampled_from(["0", "1", "100m", "1500m", "2", "1Gi", "3Ki", "7", "1n"])
REQUESTS = st.dictionaries(NAMES, AMOUNTS, max_size=4)
CONTAINERS = st.lists(REQUESTS, max_size=4)
INIT = st.lists(st.tuples(REQUESTS, st.booleans()), max_size=4)


def build(containers: list[Doc], init: list[tuple[Doc, bool]]) -> PodSet:
    return podset(
        [container(f"c{i}", r) for i, r in enumerate(containers)],
        init=[
            container(f"i{i}", r, **({"restartPolicy": "Always"} if always else {}))
            for i, (r, always) in enumerate(init)
        ],
    )


@given(CONTAINERS, INIT)
def test_pod_requests_cover_every_container(
    containers: list[Doc], init: list[tuple[Doc, bool]]
) -> None:
    total = pod_requests(spec_of(build(containers, init)))
    for reqs in containers + [r for r, _ in init]:
        for name, amount in reqs.items():
            assert total[name] >= resource_value(name, Quantity(amount))
    # Regular containers and sidecars all run at once.
    steady: dict[str, int] = {}
    for reqs in containers + [r for r, always in init if always]:
        for name, amount in reqs.items():
            steady[name] = steady.get(name, 0) + Quantity(amount).nanos
    for name, nanos in steady.items():
        assert total[name] >= resource_value(name, Quantity.from_nanos(nanos))


@given(CONTAINERS, INIT)
def test_excluded_prefix_never_in_output(
    containers: list[Doc], init: list[tuple[Doc, bool]]
) -> None:
    ps = build(containers, init)
    ctx = RequestContext(excluded_prefixes=("ignored.io/",))
    out = podset_requests(ps, ctx)
    assert not any(k.startswith("ignored.io/") for k in out)
    full = podset_requests(ps, NO_CTX)
    assert out == {k: v for k, v in full.items() if not k.startswith("ignored.io/")}


@given(CONTAINERS, INIT, st.sampled_from(["Retain", "Replace"]), st.sampled_from(["-2", "1", "3"]))
def test_transformed_requests_are_never_negative(
    containers: list[Doc], init: list[tuple[Doc, bool]], strategy: str, factor: str
) -> None:
    ps = build(containers, init)
    t = transformation("example.com/gpu", {"memory": factor, "credits": factor}, strategy=strategy)
    out = podset_requests(ps, RequestContext(transformations=[t]))
    assert all(v >= 0 for v in out.values())
    plain = podset_requests(ps, NO_CTX)
    # Generated amounts only add: same-named requests are never reduced.
    assert out.get("memory", 0) >= plain.get("memory", 0)
    assert ("example.com/gpu" in out) == ("example.com/gpu" in plain and strategy == "Retain")


@pytest.mark.parametrize("count", [0, 1, 3])
def test_total_requests_scale_with_count(count: int) -> None:
    ps = podset([container("a", {"cpu": "250m", "memory": "1Mi"})], count=count)
    assert podset_total_requests(ps, NO_CTX) == {"cpu": 250 * count, "memory": count * 1024**2}
