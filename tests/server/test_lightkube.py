"""A Python client (lightkube, async) against ``kuota serve``: list, watch,
create, replace with a 409 Conflict on a stale resourceVersion, retried."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lightkube import ApiError, AsyncClient, KubeConfig
from lightkube.generic_resource import create_global_resource, create_namespaced_resource
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.batch_v1 import Job
from lightkube.resources.core_v1 import Namespace
from tests.server.conftest import EXAMPLES

ClusterQueue = create_global_resource("kueue.x-k8s.io", "v1beta2", "ClusterQueue", "clusterqueues")
LocalQueue = create_namespaced_resource("kueue.x-k8s.io", "v1beta2", "LocalQueue", "localqueues")


def _job(name: str) -> Job:
    return Job.from_dict(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {
                "name": name,
                "namespace": "vision",
                "labels": {"kueue.x-k8s.io/queue-name": "default"},
                "annotations": {"kuota.dev/duration": "1h"},
            },
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [
                            {"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}
                        ],
                    }
                }
            },
        }
    )


def test_lightkube_lists_watches_writes_and_retries_a_conflict(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    srv = serve(str(EXAMPLES / "quickstart" / "world.yaml"))

    async def scenario() -> None:
        client = AsyncClient(config=KubeConfig.from_file(srv.kubeconfig))
        try:
            names = sorted([cq.metadata.name async for cq in client.list(ClusterQueue)])
            assert names == ["team-nlp", "team-vision"]
            lqs = [lq async for lq in client.list(LocalQueue, namespace="vision")]
            assert [lq["spec"]["clusterQueue"] for lq in lqs] == ["team-vision"]
            # A watch from now on sees a Job created after it started.
            seen: list[tuple[str, str]] = []

            async def watch() -> None:
                async for kind, job in client.watch(Job, namespace="vision"):
                    seen.append((kind, job.metadata.name))
                    if job.metadata.name == "lk-1":
                        return

            task = asyncio.create_task(watch())
            await asyncio.sleep(0.5)
            created = await client.create(_job("lk-1"))
            assert created.metadata.uid and created.metadata.resourceVersion
            await asyncio.wait_for(task, 20)
            assert ("ADDED", "lk-1") in seen
            # Two writers from the same read: the second gets 409 and retries.
            ns1 = await client.get(Namespace, "vision")
            ns2 = await client.get(Namespace, "vision")
            ns1.metadata.labels = {**(ns1.metadata.labels or {}), "team": "one"}
            await client.replace(ns1)
            ns2.metadata.labels = {**(ns2.metadata.labels or {}), "owner": "two"}
            try:
                await client.replace(ns2)
            except ApiError as err:
                assert err.status.code == 409 and err.status.reason == "Conflict"
            else:
                raise AssertionError("a stale resourceVersion was accepted")
            fresh = await client.get(Namespace, "vision")
            fresh.metadata.labels = {**(fresh.metadata.labels or {}), "owner": "two"}
            await client.replace(fresh)
            final = await client.get(Namespace, "vision")
            assert (
                final.metadata.labels["team"] == "one" and final.metadata.labels["owner"] == "two"
            )
            # Not found is a Status the client understands.
            try:
                await client.get(Job, "nope", namespace="vision")
            except ApiError as err:
                assert err.status.code == 404 and err.status.reason == "NotFound"
            else:
                raise AssertionError("a missing Job was found")
            await client.create(Namespace(metadata=ObjectMeta(name="scratch")))
        finally:
            await client.close()

    asyncio.run(scenario())
