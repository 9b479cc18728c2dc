"""The pods of a SparkApplication, two ways.

``template_for``: the pod template Kueue counts (Kueue's
``sparkapplication_podset.go``, adapted from the operator's pod defaulter):
an empty pod of one container (``spark-kubernetes-driver`` or
``spark-kubernetes-executor``) given the role's volumes, init and sidecar
containers, priority class, node selector, affinity, tolerations, the CPU
request ``coreRequest`` and limit ``coreLimit``, the memory request
``memory`` and limit ``memoryLimit`` (Java units made Kubernetes ones), the
GPU limit, and the metadata of its ``template`` with its labels and
annotations. Kueue reads neither ``cores`` nor the memory overhead.

``spark_resources``: what spark-submit asks for the pod it makes (Spark's
``BasicDriverFeatureStep`` / ``BasicExecutorFeatureStep``): CPU ``coreRequest``
else ``cores``, memory ``memory`` plus its overhead (``memoryOverhead``, else
the overhead factor times the memory, at least 384MiB; the factor is the
role's ``spark.*.memoryOverheadFactor``, else ``memoryOverheadFactor``, else
0.1, or 0.4 for a Python or R application) as request and limit.

Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Final

from kuota.api.k8s.corev1 import Container, PodSpec, PodTemplateSpec, ResourceRequirements
from kuota.api.meta import ObjectMeta
from kuota.api.quantity import Quantity
from kuota.api.spark import spark_types as s

__all__ = [
    "DRIVER",
    "DRIVER_CONTAINER",
    "EXECUTOR",
    "EXECUTOR_CONTAINER",
    "java_to_k8s_memory",
    "spark_resources",
    "template_for",
]

DRIVER: Final = "driver"
EXECUTOR: Final = "executor"
DRIVER_CONTAINER: Final = "spark-kubernetes-driver"  # SparkDriverContainerName
EXECUTOR_CONTAINER: Final = "spark-kubernetes-executor"  # Spark3DefaultExecutorContainerName
_EXECUTOR_CONTAINER_LOOKUP: Final = "executor"  # SparkExecutorContainerName (findContainer)
LOCAL_DIR_PREFIX: Final = "spark-local-dir-"  # SparkLocalDirVolumePrefix
MIN_OVERHEAD_MIB: Final = 384
_JVM_FACTOR: Final = 0.1
_NON_JVM_FACTOR: Final = 0.4

# pkg/util unitMap: Java memory suffixes and their Kubernetes units.
_UNITS: Final = (
    ("kb", "Ki"),
    ("mb", "Mi"),
    ("gb", "Gi"),
    ("tb", "Ti"),
    ("pb", "Pi"),
    ("k", "Ki"),
    ("m", "Mi"),
    ("g", "Gi"),
    ("t", "Ti"),
    ("p", "Pi"),
)


def java_to_k8s_memory(memory: str) -> str:
    """ConvertJavaMemoryStringToK8sMemoryString: the first Java suffix the
    lower-cased string ends with, cut off the string as written (so ``1G``
    keeps its ``G``: Kubernetes then refuses it, as in the operator)."""
    low = memory.lower()
    for unit, k8s in _UNITS:
        if low.endswith(unit):
            return (memory[: -len(unit)] if memory.endswith(unit) else memory) + k8s
    return memory


def _role(app: s.SparkApplication, role: str) -> s.DriverSpec | s.ExecutorSpec:
    return app.spec.driver if role == DRIVER else app.spec.executor


def _quantity(text: str, what: str) -> Quantity:
    try:
        return Quantity.parse(text)
    except ValueError as err:
        raise ValueError(f"failed to parse {what} {text}: {err}") from None


def template_for(app: s.SparkApplication, role: str) -> PodTemplateSpec:
    """buildDriverPodTemplateSpec / buildExecutorPodTemplateSpec (mutateSparkPod).
    Raises ValueError for a CPU or memory Kubernetes cannot parse."""
    r = _role(app, role)
    name = DRIVER_CONTAINER if role == DRIVER else EXECUTOR_CONTAINER
    main = Container(name=name)
    spec = PodSpec(containers=[main])
    # addVolumes: the mounted volumes of spec.volumes (local dirs skipped).
    by_name = {v.get("name"): v for v in app.spec.volumes or () if isinstance(v, dict)}
    added: set[str] = set()
    for m in r.volume_mounts or ():
        mname = m.get("name", "") if isinstance(m, dict) else ""
        if mname.startswith(LOCAL_DIR_PREFIX) or mname not in by_name:
            continue
        if mname not in added:
            spec.volumes = [*(spec.volumes or ()), by_name[mname]]
            added.add(mname)
        main.volume_mounts = [*(main.volume_mounts or ()), m]
    # addInitContainers, addSidecarContainers (a name and image already there: skipped)
    spec.init_containers = []
    for c in r.init_containers or ():
        if not any(x.name == c.name and x.image == c.image for x in spec.init_containers):
            spec.init_containers.append(c)
    for c in r.sidecars or ():
        if not any(x.name == c.name and x.image == c.image for x in spec.containers):
            spec.containers.append(c)
    if r.priority_class_name:
        spec.priority_class_name = r.priority_class_name
    spec.node_selector = dict(r.node_selector or {})
    if r.affinity is not None:
        spec.affinity = r.affinity
    spec.tolerations = list(r.tolerations or ())
    requests: dict[str, Quantity] = {}
    limits: dict[str, Quantity] = {}
    if r.core_request is not None:
        requests["cpu"] = _quantity(r.core_request, "CPU requests")
    if r.core_limit is not None:
        limits["cpu"] = _quantity(r.core_limit, "CPU limit")
    if r.memory is not None:
        requests["memory"] = _quantity(java_to_k8s_memory(r.memory), "memory requests")
    if r.memory_limit is not None:
        limits["memory"] = _quantity(java_to_k8s_memory(r.memory_limit), "memory limit")
    if r.gpu is not None and r.gpu.name and r.gpu.quantity > 0:
        limits[r.gpu.name] = Quantity(r.gpu.quantity)
    if requests or limits:
        main.resources = ResourceRequirements(requests=requests or None, limits=limits or None)
    # addObjectMeta: the template's metadata with the role's labels and annotations.
    if r.template is None:
        meta = ObjectMeta(labels=r.labels, annotations=r.annotations)
    else:
        base = r.template.metadata
        meta = ObjectMeta(
            labels={**(base.labels or {}), **(r.labels or {})},
            annotations={**(base.annotations or {}), **(r.annotations or {})},
        )
    return PodTemplateSpec(metadata=meta, spec=spec)


# ---------------------------------------------------------------- spark-submit
_JAVA_BYTES: Final = re.compile(r"([0-9]+)([a-z]+)?")
_JAVA_UNITS: Final = {
    "b": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "t": 1 << 40,
    "tb": 1 << 40,
    "p": 1 << 50,
    "pb": 1 << 50,
}


def java_mib(text: str) -> int:
    """JavaUtils.byteStringAsMb: a Java byte string in MiB (no suffix: MiB).
    Raises ValueError as Spark's ``NumberFormatException`` does."""
    low = text.strip().lower()
    m = _JAVA_BYTES.fullmatch(low)
    if m is None:
        raise ValueError(f"Size must be specified as bytes (b), kibibytes (k), ... Invalid: {text}")
    value, suffix = int(m.group(1)), m.group(2)
    if suffix is None:
        return value
    unit = _JAVA_UNITS.get(suffix)
    if unit is None:
        raise ValueError(f'Invalid suffix: "{suffix}"')
    return value * unit // (1 << 20)


def _factor(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"spark.kubernetes.memoryOverheadFactor: invalid {text!r}") from None


def spark_resources(app: s.SparkApplication, role: str) -> ResourceRequirements:
    """The resources of the pod spark-submit makes for the role (the Spark
    container's). Raises ValueError where spark-submit would fail."""
    r = _role(app, role)
    conf = app.spec.spark_conf or {}
    prefix = f"spark.{role}."
    mem_mib = java_mib(r.memory or conf.get(prefix + "memory") or "1g")
    overhead_text = r.memory_overhead or conf.get(prefix + "memoryOverhead")
    if overhead_text is not None:
        overhead = java_mib(overhead_text)
    else:
        factor = _factor(conf.get(prefix + "memoryOverheadFactor"))
        if factor is None:
            factor = _factor(
                app.spec.memory_overhead_factor or conf.get("spark.kubernetes.memoryOverheadFactor")
            )
        if factor is None:
            factor = _NON_JVM_FACTOR if app.spec.type in ("Python", "R") else _JVM_FACTOR
        minimum = java_mib(conf.get(prefix + "minMemoryOverhead") or f"{MIN_OVERHEAD_MIB}m")
        overhead = max(int(factor * mem_mib), minimum)
    memory = Quantity.parse(f"{mem_mib + overhead}Mi")
    cores = r.core_request or conf.get(f"spark.kubernetes.{role}.request.cores")
    cpu = _quantity(cores, "CPU requests") if cores else Quantity(r.cores or 1)
    requests = {"cpu": cpu, "memory": memory}
    limits = {"memory": memory}
    if r.core_limit is not None:
        limits["cpu"] = _quantity(r.core_limit, "CPU limit")
    if r.memory_limit is not None:  # the operator's pod webhook overrides Spark's
        limits["memory"] = _quantity(java_to_k8s_memory(r.memory_limit), "memory limit")
    if r.gpu is not None and r.gpu.name and r.gpu.quantity > 0:
        limits[r.gpu.name] = Quantity(r.gpu.quantity)
    return ResourceRequirements(requests=requests, limits=limits)
