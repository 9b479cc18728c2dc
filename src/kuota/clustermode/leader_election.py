"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's
leaderelection package runs it for controller-runtime (Kueue's manager).

A candidate tries every ``retry_period`` to take or renew the Lease. It
may take one that is free (no holder: released at a clean shutdown) or
whose record it has seen unchanged for ``lease_duration`` (client-go
measures expiry with its own clock from when it last saw the record
change, never with the holder's timestamps); the leader renews, and if no
renewal succeeds for ``renew_deadline`` it has lost the lease and must
stop. Writes are compare-and-set on the Lease's resourceVersion, so two
candidates never both succeed. Runs on the kube store's I/O loop: a long
reconcile round on the manager's thread never delays a renewal."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from lightkube import ApiError

from kuota.store.kinds import resource_for
from kuota.store.kube.kubewire import lk_resource

LEASE = resource_for("coordination.k8s.io/v1", "Lease")
_JITTER = 1.2  # client-go's JitterFactor for the acquire retries


def _micro_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class LeaseConfig:
    namespace: str
    name: str
    identity: str
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


class LeaderElector:
    def __init__(self, client: Any, cfg: LeaseConfig, log: Any) -> None:
        self.client = client
        self.cfg = cfg
        self.log = log
        self._res = lk_resource(LEASE)
        # The record as last seen and when (monotonic): client-go's observedRecord/Time.
        self._observed: tuple[Any, ...] | None = None
        self._observed_at = 0.0
        self.is_leader = False
        self.transitions = 0

    async def _try(self) -> bool:
        """client-go's tryAcquireOrRenew: True if this candidate holds the
        Lease afterwards."""
        cfg = self.cfg
        now = _micro_now()
        try:
            lease = await self.client.get(self._res, cfg.name, namespace=cfg.namespace)
        except ApiError as err:
            if err.status.code != 404:
                raise
            body = self._res(
                {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {"name": cfg.name, "namespace": cfg.namespace},
                    "spec": {
                        "holderIdentity": cfg.identity,
                        "leaseDurationSeconds": int(cfg.lease_duration),
                        "acquireTime": now,
                        "renewTime": now,
                        "leaseTransitions": 0,
                    },
                }
            )
            try:
                await self.client.create(body, namespace=cfg.namespace)
            except ApiError:
                return False  # (another candidate created it first)
            self._observe(body["spec"])
            return True
        spec = dict(lease.get("spec") or {})
        self._observe(spec)
        holder = spec.get("holderIdentity") or ""
        mine = holder == cfg.identity
        duration = float(spec.get("leaseDurationSeconds") or cfg.lease_duration)
        if holder and not mine and self._observed_at + duration > time.monotonic():
            return False  # held, and not expired as this candidate sees it
        new = {
            **spec,
            "holderIdentity": cfg.identity,
            "leaseDurationSeconds": int(cfg.lease_duration),
            "renewTime": now,
            "acquireTime": spec.get("acquireTime") if mine else now,
            "leaseTransitions": int(spec.get("leaseTransitions") or 0) + (0 if mine else 1),
        }
        lease["spec"] = new  # (the resourceVersion read above: compare-and-set)
        try:
            await self.client.replace(lease, namespace=cfg.namespace)
        except ApiError as err:
            if err.status.code in (409, 404):
                return False
            raise
        self._observe(new)
        return True

    def _observe(self, spec: dict[str, Any]) -> None:
        record = tuple(
            spec.get(k) for k in ("holderIdentity", "renewTime", "acquireTime", "leaseTransitions")
        )
        if record != self._observed:
            self._observed = record
            self._observed_at = time.monotonic()

    async def _attempt(self) -> bool:
        try:
            return await asyncio.wait_for(self._try(), timeout=self.cfg.retry_period * 2)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # the API server unreachable: not leading this round
            self.log.warning("lease attempt failed", lease=self.cfg.name, error=repr(err))
            return False

    async def acquire(self) -> None:
        """Until this candidate leads."""
        while not await self._attempt():
            await asyncio.sleep(self.cfg.retry_period * (1 + random.random() * (_JITTER - 1)))
        self.is_leader = True
        self.log.info(
            "leader elected",
            lease=f"{self.cfg.namespace}/{self.cfg.name}",
            identity=self.cfg.identity,
        )

    async def keep(self, on_lost: Callable[[], None]) -> None:
        """Renew every retry period; ``on_lost`` when none succeeded for the
        renew deadline (the process must stop leading: it exits)."""
        last_ok = time.monotonic()
        while self.is_leader:
            await asyncio.sleep(self.cfg.retry_period)
            if await self._attempt():
                last_ok = time.monotonic()
            elif time.monotonic() - last_ok >= self.cfg.renew_deadline:
                self.is_leader = False
                self.log.error("leader election lost", lease=self.cfg.name)
                on_lost()

    async def release(self) -> None:
        """Give the Lease up (controller-runtime's LeaderElectionReleaseOnCancel):
        the next candidate need not wait for it to expire."""
        if not self.is_leader:
            return
        self.is_leader = False
        cfg = self.cfg
        try:
            lease = await self.client.get(self._res, cfg.name, namespace=cfg.namespace)
            spec = dict(lease.get("spec") or {})
            if spec.get("holderIdentity") != cfg.identity:
                return
            now = _micro_now()
            spec.update(holderIdentity="", leaseDurationSeconds=1, renewTime=now, acquireTime=now)
            lease["spec"] = spec
            await self.client.replace(lease, namespace=cfg.namespace)
            self.log.info("lease released", lease=cfg.name)
        except Exception as err:
            self.log.warning("lease release failed", lease=cfg.name, error=repr(err))
