"""A MultiKueueCluster's Active condition through ``kuota run`` and ``kuota
get``, for what needs no worker: Kueue's reasons for a kubeconfig it cannot
use (``multikueuecluster.go``'s loadClientConfig: a missing Secret, an
insecure kubeconfig) and kuota's own for a simulated run, whose virtual time
reaches no worker."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kuota.cli.main import main

SETUP = Path(__file__).parents[3] / "examples" / "multikueue" / "manager" / "setup.yaml"


def _kubeconfig(cluster: dict[str, Any]) -> str:
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "c", "cluster": cluster}],
            "users": [{"name": "u", "user": {"token": "t"}}],
            "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "c",
        }
    )


def test_kubeconfig_problems_and_virtual_time(tmp_path: Path) -> None:
    world = tmp_path / "world"
    world.mkdir()
    (world / "setup.yaml").write_text(SETUP.read_text())
    good = tmp_path / "good.kubeconfig"
    good.write_text(_kubeconfig({"server": "https://127.0.0.1:1"}))
    insecure = _kubeconfig({"server": "https://127.0.0.1:1", "insecure-skip-tls-verify": True})
    (world / "more.yaml").write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "worker2-secret", "namespace": "kueue-system"},
                "data": {"kubeconfig": base64.b64encode(insecure.encode()).decode()},
            }
        )
        + "\n---\n"
        + json.dumps(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta1",
                "kind": "MultiKueueCluster",
                "metadata": {"name": "by-path"},
                "spec": {"kubeConfig": {"locationType": "Path", "location": str(good)}},
            }
        )
    )
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", str(world), "--state", str(state)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["get", "multikueueclusters", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    got = {
        c["metadata"]["name"]: next(x for x in c["status"]["conditions"] if x["type"] == "Active")
        for c in json.loads(r.output)["items"]
    }
    assert {n: (c["status"], c["reason"], c["message"]) for n, c in got.items()} == {
        "worker1": (
            "False",
            "BadKubeConfig",
            'load client config failed: secrets "worker1-secret" not found',
        ),
        "worker2": (
            "False",
            "InsecureKubeConfig",
            "load client config failed: insecure TLS verification is not allowed for cluster c",
        ),
        "by-path": (
            "False",
            "ClientConnectionFailed",
            "not connected in virtual time: run the manager with kuota serve",
        ),
    }
    r = CliRunner().invoke(main, ["get", "admissionchecks", "--state", str(state), "-o", "json"])
    [ac] = json.loads(r.output)["items"]
    [active] = ac["status"]["conditions"]
    assert (active["reason"], active["message"]) == (
        "NoUsableClusters",
        "Inactive clusters: [worker1 worker2]",
    )
