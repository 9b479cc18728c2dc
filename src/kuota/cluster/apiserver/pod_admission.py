"""The API server's admission plugins for pods that placement depends on, as
store admission hooks:

* **Priority**: a pod's ``priorityClassName`` (or the ``globalDefault``
  class when it names none) sets ``spec.priority`` and
  ``spec.preemptionPolicy``; the built-in ``system-node-critical`` and
  ``system-cluster-critical`` classes always exist. Unlike the API server,
  kuota leaves a pod alone when its class does not exist or when it gives
  ``spec.priority`` itself (worlds and tests often do) instead of refusing it.
* **DefaultTolerationSeconds**: a pod that does not tolerate the
  ``node.kubernetes.io/not-ready`` and ``node.kubernetes.io/unreachable``
  NoExecute taints gets a toleration of each for 300 s, so its node turning
  NotReady evicts it five minutes later (``controllers/taint_eviction.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kuota.api.core import PriorityClass, Toleration
from kuota.api.errors import FieldError
from kuota.api.openshift_scheduler import PROJECT_NODE_SELECTOR, parse_node_selector
from kuota.cluster.nodeutil import NOT_READY_TAINT, UNREACHABLE_TAINT
from kuota.store import Invalid, NotFound, clone
from kuota.store.protocol import ObjectStore, Operation, ResourceType

__all__ = [
    "DEFAULT_TOLERATION_SECONDS",
    "PRIORITY_CLASS",
    "SYSTEM_PRIORITY_CLASSES",
    "PodAdmission",
    "default_tolerations",
]

PRIORITY_CLASS: ResourceType = ("scheduling.k8s.io", "PriorityClass")
DEFAULT_TOLERATION_SECONDS = 300
SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": 2_000_001_000,
    "system-cluster-critical": 2_000_000_000,
}

Lookup = Callable[[ResourceType, str, str], Any | None]


def _tolerates_by_default(tolerations: Iterable[Toleration], key: str) -> bool:
    """Whether some toleration already covers ``key``:NoExecute (an empty
    key or effect counts, as the plugin checks)."""
    return any(
        (t.key == key or not t.key) and (t.effect == "NoExecute" or not t.effect)
        for t in tolerations
    )


def default_tolerations(tolerations: list[Toleration] | None) -> list[Toleration] | None:
    """``tolerations`` plus the default not-ready/unreachable ones it lacks
    (None: nothing to add)."""
    have = list(tolerations or ())
    added = [
        Toleration(
            key=key,
            operator="Exists",
            effect="NoExecute",
            toleration_seconds=DEFAULT_TOLERATION_SECONDS,
        )
        for key in (NOT_READY_TAINT, UNREACHABLE_TAINT)
        if not _tolerates_by_default(have, key)
    ]
    return [*have, *added] if added else None


class PodAdmission:
    """The Priority and DefaultTolerationSeconds plugins on pod creation.

    ``lookup(rtype, namespace, name)`` reads a stored object (None: absent);
    ``classes()`` lists the PriorityClasses (for the global default).
    """

    kinds = frozenset({("", "Pod")})  # the store runs this hook for pods only
    operations = frozenset({"CREATE"})  # both plugins act on creation only

    def __init__(
        self, lookup: Lookup, classes: Callable[[], Iterable[PriorityClass]] | None = None
    ) -> None:
        self.lookup = lookup
        self.classes = classes

    @classmethod
    def over(cls, store: Callable[[], ObjectStore]) -> PodAdmission:
        """The hook reading PriorityClasses from ``store()`` (built after its hooks)."""

        def lookup(rtype: ResourceType, namespace: str, name: str) -> Any | None:
            try:
                return store().get(rtype, namespace, name)
            except NotFound:
                return None

        return cls(lookup, lambda: store().list(PRIORITY_CLASS).items)

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if op != "CREATE" or new.kind != "Pod" or new.api_version != "v1" or new.spec is None:
            return new
        new = clone(new)
        spec = new.spec
        if spec.priority is None:
            resolved = self._priority(spec.priority_class_name)
            if resolved is not None:
                name, value, policy = resolved
                spec.priority_class_name = name or spec.priority_class_name
                spec.priority = value
                if spec.preemption_policy is None and policy is not None:
                    spec.preemption_policy = policy
        tols = default_tolerations(spec.tolerations)
        if tols is not None:
            spec.tolerations = tols
        return new

    def _priority(self, name: str | None) -> tuple[str | None, int, str | None] | None:
        if name:
            if name in SYSTEM_PRIORITY_CLASSES:
                return name, SYSTEM_PRIORITY_CLASSES[name], "PreemptLowerPriority"
            pc = self.lookup(PRIORITY_CLASS, "", name)
            if pc is None:
                return None
            return name, pc.value, pc.preemption_policy
        for pc in self.classes() if self.classes is not None else ():
            if pc.global_default:
                return pc.metadata.name, pc.value, pc.preemption_policy
        return None


NAMESPACE: ResourceType = ("", "Namespace")


class ProjectNodeSelector:
    """OpenShift's project node selector on pod creation: the namespace's
    ``openshift.io/node-selector`` annotation (an empty one means none), else
    the cluster's default (Scheduler ``spec.defaultNodeSelector``), is merged
    into the pod's nodeSelector; a pod that asks for another value of the same
    label is refused, as OpenShift refuses it."""

    kinds = frozenset({("", "Pod")})
    operations = frozenset({"CREATE"})

    def __init__(self, lookup: Lookup, default: Mapping[str, str]) -> None:
        self.lookup = lookup
        self.default = dict(default)

    def __call__(self, op: Operation, new: Any, old: Any | None) -> Any:
        if op != "CREATE" or new.kind != "Pod" or new.spec is None:
            return new
        selector = self._project_selector(new.metadata.namespace)
        if not selector:
            return new
        mine = new.spec.node_selector or {}
        clash = sorted(k for k, v in selector.items() if k in mine and mine[k] != v)
        if clash:
            raise Invalid(
                f'pods "{new.metadata.name or new.metadata.generate_name}"',
                [
                    FieldError(
                        f"spec.nodeSelector[{clash[0]}]",
                        "Forbidden",
                        "pod node label selector conflicts with its project node label selector",
                    )
                ],
            )
        if all(mine.get(k) == v for k, v in selector.items()):
            return new
        new = clone(new)
        new.spec.node_selector = {**mine, **selector}
        return new

    def _project_selector(self, namespace: str) -> Mapping[str, str]:
        ns = self.lookup(NAMESPACE, "", namespace) if namespace else None
        annotations = (ns.metadata.annotations or {}) if ns is not None else {}
        if PROJECT_NODE_SELECTOR in annotations:
            try:
                return parse_node_selector(annotations[PROJECT_NODE_SELECTOR])
            except ValueError:
                return {}  # OpenShift refuses such a namespace; an old one selects nothing
        return self.default
