"""The resource handlers: get, list, create, update, patch, delete, and the
status and scale subresources, over the control plane's store, every write
through the same decoding, defaulting, validation and admission hooks the
embedded control plane applies (the store's hooks; ``served.decode_body``).

Handlers are synchronous: the server's single asyncio loop calls them
between awaits, so the store is only ever touched from one thread.
"""

from __future__ import annotations

import base64
import bisect
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import msgspec

from kuota.api.errors import invalid as invalid_field
from kuota.server import status as st
from kuota.server.fieldselectors import parse_field_selector
from kuota.server.served import Served, decode_body, encode
from kuota.store import (
    AlreadyExists,
    BadRequest,
    Conflict,
    Gone,
    Invalid,
    NotFound,
    StoreError,
    clone,
    selector_matcher,
)
from kuota.store.memory import MemoryStore

# Groups whose kinds are custom resources on a real cluster (CRDs): an update
# must carry a resourceVersion there, and strategic merge patch is refused.
BUILTIN_GROUPS = frozenset(
    {
        "",
        "apps",
        "batch",
        "scheduling.k8s.io",
        "node.k8s.io",
        "events.k8s.io",
        "rbac.authorization.k8s.io",
        "apiextensions.k8s.io",
        "resource.k8s.io",
        "autoscaling",
        "policy",
        "networking.k8s.io",
    }
)
JOB_ORPHAN_WARNING = (
    "child pods are preserved by default when jobs are deleted; set "
    "propagationPolicy=Background to remove them or set propagationPolicy=Orphan "
    "to suppress this warning"
)


@dataclass
class Request:
    """One resource request, parsed from its path and query."""

    served: Served
    namespace: str  # "" for cluster-scoped kinds or all namespaces
    name: str = ""
    subresource: str = ""
    query: Mapping[str, str] = field(default_factory=dict)
    user: Any = None  # the authenticated UserInfo (told to admission webhooks)
    # Checks a write before it is made: (new object, stored one or None);
    # RBAC's escalation prevention (auth/escalation.py).
    guard: Callable[[Any, Any], None] | None = None

    @property
    def dry_run(self) -> bool:
        return self.query.get("dryRun", "") == "All"


@dataclass
class Reply:
    body: Any
    code: int = 200
    warnings: list[str] = field(default_factory=list)
    durable: Any = None  # awaited before answering: the write is on disk


def parse_bool(value: str | None) -> bool:
    """Go's strconv.ParseBool, as kube-apiserver reads boolean parameters."""
    if value is None or value == "":
        return False
    if value in ("1", "t", "T", "true", "True", "TRUE"):
        return True
    if value in ("0", "f", "F", "false", "False", "FALSE"):
        return False
    raise st.bad_request(f"invalid boolean value {value!r}")


def store_error(err: StoreError, served: Served, name: str) -> st.ApiError:
    """A store refusal as the API server's Status."""
    if isinstance(err, NotFound):
        return st.not_found(served.group, served.resource, name)
    if isinstance(err, AlreadyExists):
        return st.already_exists(served.group, served.resource, name)
    if isinstance(err, Conflict):
        return st.conflict(served.group, served.resource, name)
    if isinstance(err, Invalid):
        return st.invalid(served.group, served.kind, name, err.errors)
    if isinstance(err, Gone):
        return st.gone(str(err))
    if isinstance(err, BadRequest):
        return st.bad_request(str(err))
    # (a ValidatingAdmissionPolicy's denial carries the details kubectl prints)
    return st.ApiError(err.code, err.reason, str(err), details=getattr(err, "details", None))


class Continue(msgspec.Struct, array_like=True):
    rv: str
    namespace: str
    name: str


def encode_continue(rv: str, namespace: str, name: str) -> str:
    return base64.urlsafe_b64encode(msgspec.json.encode(Continue(rv, namespace, name))).decode()


def decode_continue(token: str) -> Continue:
    try:
        return msgspec.json.decode(base64.urlsafe_b64decode(token.encode()), type=Continue)
    except (ValueError, msgspec.DecodeError, msgspec.ValidationError):
        raise st.bad_request(f"continue key is not valid: {token!r}") from None


class Resources:
    """The handlers, over one control plane's store."""

    def __init__(
        self,
        store: MemoryStore,
        gates: Mapping[str, bool],
        now: Callable[[], datetime],
        on_write: Callable[[], None],
        begin_write: Callable[[], Any] = lambda: None,
    ) -> None:
        self.store = store
        # Called before each store write; returns what the caller awaits
        # before answering (the group commit's durability).
        self.begin_write = begin_write
        self.gates = gates
        self.now = now
        self.on_write = on_write
        # kuota.webhooks.caller.WebhookCaller: the registered admission webhooks.
        self.webhooks: Any = None
        # (rtype, store revision) -> the sorted (namespace, name) keys of a
        # listing: a paginated list reads each page by bisection.
        self._keys: dict[Any, tuple[int, list[tuple[str, str]], list[Any]]] = {}

    # -------------------------------------------------------------- reads
    def get(self, req: Request) -> Any:
        s = req.served
        try:
            obj = self.store.get(s.rtype, req.namespace, req.name)
        except NotFound:
            raise st.not_found(s.group, s.resource, req.name) from None
        if req.subresource == "scale":
            return scale_of(obj, encode(obj, s))
        return obj

    def list_items(self, req: Request) -> tuple[list[Any], str, str, int | None]:
        """The page of objects a list asks for: (objects or wire dicts when a
        field selector read them, resourceVersion, continue token, remaining)."""
        s, q = req.served, req.query
        label = q.get("labelSelector", "")
        fsel = parse_field_selector(q.get("fieldSelector", ""), s.group, s.kind)
        try:
            limit = int(q.get("limit", "0") or 0)
        except ValueError:
            raise st.bad_request(f"invalid limit {q.get('limit')!r}") from None
        token = q.get("continue", "")
        if token and q.get("resourceVersion", "") not in ("", "0"):
            raise st.bad_request("specifying resource version is not allowed when using continue")
        start = decode_continue(token) if token else None
        ns = req.namespace if s.namespaced and req.namespace else None
        try:
            matcher = selector_matcher(label)
        except ValueError as err:
            raise st.bad_request(str(err)) from None
        items, keys = self._listing(s, ns)
        rv = str(self.store.resource_version)
        begin = 0
        if start is not None:
            rv = start.rv
            begin = bisect.bisect_right(keys, (start.namespace, start.name))
        out: list[Any] = []
        i = begin
        n = len(items)
        while i < n and (limit <= 0 or len(out) < limit):
            obj = items[i]
            i += 1
            if label and not matcher(obj.metadata.labels):
                continue
            if fsel is not None and not fsel(encode(obj, s)):
                continue
            out.append(obj)
        cont, remaining = "", None
        if limit > 0 and i < n:
            last = items[i - 1].metadata
            cont = encode_continue(rv, last.namespace or "", last.name)
            if not label and fsel is None:
                remaining = n - i
        return out, rv, cont, remaining

    def _listing(self, s: Served, ns: str | None) -> tuple[list[Any], list[tuple[str, str]]]:
        key = (s.rtype, ns)
        rev = self.store.resource_version
        hit = self._keys.get(key)
        if hit is not None and hit[0] == rev:
            return hit[2], hit[1]
        items = self.store.list(s.rtype, ns).items
        keys = [(o.metadata.namespace or "", o.metadata.name) for o in items]
        if len(self._keys) > 64:
            self._keys.clear()
        self._keys[key] = (rev, keys, items)
        return items, keys

    # -------------------------------------------------------------- writes
    def create(self, req: Request, raw: Any) -> Reply:
        s = req.served
        if s.namespaced and not req.namespace:
            raise st.ApiError(
                405,
                "MethodNotAllowed",
                f"the server does not allow this method on the requested resource: "
                f"create {s.resource} needs a namespace",
            )
        if self.webhooks is not None:
            raw = self.webhooks.admit_request(req, "CREATE", raw, None)
        obj = decode_body(raw, s, req.namespace, self.gates)
        name = obj.metadata.name or obj.metadata.generate_name
        if obj.metadata.resource_version:
            raise st.bad_request("resourceVersion should not be set on objects to be created")
        if req.guard is not None:
            req.guard(obj, None)
        if req.dry_run:
            return Reply(encode(obj, s), 201)
        durable = self.begin_write()
        try:
            created = self.store.create(obj)
        except StoreError as err:
            raise store_error(err, s, name) from None
        self.on_write()
        return Reply(created, 201, durable=durable)

    def update(self, req: Request, raw: Any, *, patch: bool = False) -> Reply:
        s = req.served
        if req.subresource == "scale":
            return self._update_scale(req, raw)
        if self.webhooks is not None:
            raw = self.webhooks.admit_request(req, "UPDATE", raw, lambda: self._wire_of(req))
        obj = decode_body(raw, s, req.namespace, self.gates, name=req.name)
        if not obj.metadata.resource_version and s.group not in BUILTIN_GROUPS:
            raise st.invalid(
                s.group,
                s.kind,
                req.name,
                [
                    invalid_field(
                        "metadata.resourceVersion", "0x0", "must be specified for an update"
                    )
                ],
            )
        if req.guard is not None:
            try:
                old = self.store.get(s.rtype, req.namespace, req.name)
            except NotFound:
                old = None
            req.guard(obj, old)
        if req.dry_run:
            if req.subresource != "status" and s.spec.status_subresource:
                # As the write would store it: the main resource keeps its
                # status (kubectl diff shows no status change).
                with contextlib.suppress(NotFound):
                    live = self.store.get(s.rtype, req.namespace, req.name)
                    obj = msgspec.structs.replace(obj, status=live.status)
            return Reply(encode(obj, s))
        durable = self.begin_write()
        try:
            if req.subresource == "status":
                out = self.store.update_status(obj)
            else:
                out = self.store.update(obj)
        except StoreError as err:
            raise store_error(err, s, req.name) from None
        self.on_write()
        return Reply(out, durable=durable)

    def _wire_of(self, req: Request) -> dict[str, Any] | None:
        try:
            return encode(self.store.get(req.served.rtype, req.namespace, req.name), req.served)
        except NotFound:
            return None

    def _update_scale(self, req: Request, raw: Any) -> Reply:
        s = req.served
        if not isinstance(raw, dict) or not isinstance(raw.get("spec"), dict):
            raise st.bad_request("the body must be an autoscaling/v1 Scale with spec.replicas")
        replicas = raw["spec"].get("replicas")
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise st.invalid(
                "autoscaling",
                "Scale",
                req.name,
                [invalid_field("spec.replicas", replicas, "must be greater than or equal to 0")],
            )
        try:
            cur = self.store.get(s.rtype, req.namespace, req.name)
        except NotFound:
            raise st.not_found(s.group, s.resource, req.name) from None
        want = (raw.get("metadata") or {}).get("resourceVersion")
        if want and want != cur.metadata.resource_version:
            raise st.conflict(s.group, s.resource, req.name)
        wire = encode(cur, s)
        wire.setdefault("spec", {})["replicas"] = replicas
        wire.pop("status", None)
        obj = decode_body(wire, s, req.namespace, self.gates, name=req.name)
        durable = self.begin_write()
        try:
            out = self.store.update(obj)
        except StoreError as err:
            raise store_error(err, s, req.name) from None
        self.on_write()
        return Reply(scale_of(out, encode(out, s)), durable=durable)

    def delete(self, req: Request, options: Mapping[str, Any]) -> Reply:
        s = req.served
        policy = options.get("propagationPolicy") or req.query.get("propagationPolicy")
        if options.get("orphanDependents") is True or parse_bool(req.query.get("orphanDependents")):
            policy = "Orphan"
        warnings: list[str] = []
        if policy is None and s.group == "batch" and s.kind == "Job":
            policy = "Orphan"  # batch/v1 Job's default (its registry's strategy)
            warnings.append(JOB_ORPHAN_WARNING)
        if policy not in (None, "Orphan", "Background", "Foreground"):
            raise st.invalid(
                s.group,
                s.kind,
                req.name,
                [
                    invalid_field(
                        "propagationPolicy",
                        policy,
                        'must be "Orphan", "Background" or "Foreground"',
                    )
                ],
            )
        pre = options.get("preconditions") or {}
        try:
            cur = self.store.get(s.rtype, req.namespace, req.name)
        except NotFound:
            raise st.not_found(s.group, s.resource, req.name) from None
        if pre.get("uid") and pre["uid"] != cur.metadata.uid:
            raise st.ApiError(
                409,
                "Conflict",
                f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: "
                f"{cur.metadata.uid}",
            )
        if req.dry_run:
            return Reply(st.success(s.group, s.resource, req.name, cur.metadata.uid), 200, warnings)
        durable = self.begin_write()
        try:
            if policy == "Orphan":
                self._orphan(cur.metadata.uid)
            elif policy == "Foreground":
                self._delete_dependents(cur.metadata.uid)
            left = self.store.delete(
                s.rtype, req.namespace, req.name, resource_version=pre.get("resourceVersion")
            )
        except StoreError as err:
            raise store_error(err, s, req.name) from None
        self.on_write()
        if left is not None:
            return Reply(left, 200, warnings, durable)
        return Reply(
            st.success(s.group, s.resource, req.name, cur.metadata.uid), 200, warnings, durable
        )

    def _dependents(self, uid: str) -> list[tuple[Any, Any]]:
        return [
            (rtype, obj)
            for rtype, obj in self.store.objects()
            if any(r.uid == uid for r in obj.metadata.owner_references or ())
        ]

    def _orphan(self, uid: str) -> None:
        """Orphan: the dependents lose their reference to the owner (the
        garbage collector's orphan finalizer), so none is collected."""
        for _, obj in self._dependents(uid):
            new = clone(obj)
            new.metadata.owner_references = [
                r for r in new.metadata.owner_references or () if r.uid != uid
            ] or None
            self.store.update(new)

    def _delete_dependents(self, uid: str) -> None:
        """Foreground: dependents go before their owner."""
        for rtype, obj in self._dependents(uid):
            self._delete_dependents(obj.metadata.uid)
            with contextlib.suppress(NotFound):
                self.store.delete(rtype, obj.metadata.namespace, obj.metadata.name)

    def delete_collection(self, req: Request, options: Mapping[str, Any]) -> Reply:
        items, _, _, _ = self.list_items(
            Request(req.served, req.namespace, query={**req.query, "limit": "0", "continue": ""})
        )
        for obj in items:
            self.delete(
                Request(
                    req.served, obj.metadata.namespace or "", obj.metadata.name, query=req.query
                ),
                options,
            )
        return Reply(
            {
                "kind": f"{req.served.kind}List",
                "apiVersion": req.served.api_version,
                "metadata": {},
                "items": [encode(o, req.served) for o in items],
            }
        )


def scale_of(obj: Any, wire: dict[str, Any]) -> dict[str, Any]:
    """autoscaling/v1 Scale of an object with a scale subresource."""
    meta = wire.get("metadata") or {}
    spec, status = wire.get("spec") or {}, wire.get("status") or {}
    sel = spec.get("selector") or {}
    selector = ",".join(f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items()))
    if "hpaPodSelector" in status:
        selector = status["hpaPodSelector"]
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": spec.get("replicas", 1)},
        "status": {"replicas": status.get("replicas", 0), "selector": selector},
    }
