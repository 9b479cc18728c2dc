"""The writes of serve's in-process controllers through the registered
admission webhooks, as kube-apiserver admits a controller's writes: a Pod
the StatefulSet or Job controller creates reaches Kueue's pod webhook in
``kuota controller`` (another process) before it is stored, and so does
each object of a world arriving at its creationTimestamp (a user's
``kubectl apply`` at that instant).

The controllers run on the server's event loop and the webhook may read
from this server while it decides, so a call cannot block: a create that
webhooks match starts their calls on a thread and raises
``AdmissionPending``; the manager retries the reconcile (its rate limiter's
backoff) and the same create then takes the webhooks' answer. Reconciles
are level-based, so the retry asks for the same object.

Only creates are sent. kuota's controllers write binding and status as
updates of the object itself (kube-apiserver's pods/binding and status
subresources, which Kueue's rules do not match), so their updates are not."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from kuota.api.decode import decode_object, to_wire
from kuota.store.kinds import resource_type
from kuota.store.protocol import Invalid, ObjectStore, StoreError
from kuota.webhooks.caller import Attributes, Rejected, WebhookCaller

# Who the webhooks are told wrote (kube-controller-manager's own identity).
CONTROLLER_USER = {
    "username": "system:kube-controller-manager",
    "uid": "",
    "groups": ["system:authenticated"],
}


class AdmissionPending(Exception):
    """A create waits for its admission webhooks; retry the reconcile."""


class WebhookRefused(StoreError):
    """A webhook denied a controller's create (or failed under Fail)."""

    def __init__(self, refusal: Rejected) -> None:
        super().__init__(refusal.message)
        self.code, self.reason = refusal.code, refusal.reason


class WebhookedWrites:
    """``store`` as the in-process controllers write to it. ``done``: called
    (on a webhook thread) when a call ends, to make the loop reconcile."""

    def __init__(self, store: ObjectStore, done: Callable[[], None]) -> None:
        self._store = store
        self._caller = WebhookCaller(store)
        self._notify = done
        self._answers: dict[str, Any] = {}  # a create's key -> admitted wire dict or Rejected
        self._calling: set[str] = set()
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def create(self, obj: Any) -> Any:
        if self._caller.none_registered():
            return self._store.create(obj)
        raw = to_wire(obj)
        meta = raw.get("metadata") or {}
        group, _, resource = resource_type(obj)
        attrs = Attributes(
            operation="CREATE",
            group=group,
            version=str(raw["apiVersion"]).rpartition("/")[2],
            kind=obj.kind,
            resource=resource,
            subresource="",
            namespace=str(meta.get("namespace") or ""),
            name=str(meta.get("name") or ""),
            user=CONTROLLER_USER,
            dry_run=False,
        )
        plan = self._caller.plan(attrs, raw, None)
        if plan is None:
            return self._store.create(obj)
        key = json.dumps([group, resource, raw], sort_keys=True, default=str)
        with self._lock:
            answer = self._answers.pop(key, None)
            start = answer is None and key not in self._calling
            if start:
                self._calling.add(key)
        if answer is None:
            if start:
                threading.Thread(
                    target=self._call, args=(key, plan), name="webhook-call", daemon=True
                ).start()
            raise AdmissionPending(f"{obj.kind} {attrs.namespace}/{attrs.name}: webhooks called")
        if isinstance(answer, Rejected):
            raise WebhookRefused(answer)
        doc = decode_object(answer, source="admission webhooks")
        if not doc.ok:  # a patch that made the object invalid
            raise Invalid(doc.ref, doc.errors)
        return self._store.create(doc.obj)

    def _call(self, key: str, plan: Any) -> None:
        try:
            answer: Any = self._caller.run(*plan)
        except Rejected as err:
            answer = err
        except Exception as err:  # a caller bug: answered as the API server would
            answer = Rejected(500, "InternalError", f"Internal error occurred: {err}")
        with self._lock:
            self._calling.discard(key)
            self._answers[key] = answer
        self._notify()
