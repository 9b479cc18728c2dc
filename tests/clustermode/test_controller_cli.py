"""``kuota controller``'s input errors (exit 2, naming the flag or file and
the reason), and ``kuota serve --without-kueue`` leaving Jobs to an outside
Kueue."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner
from tests.clustermode.twoproc import wait_for, webhook_admitted
from tests.server.conftest import EXAMPLES, needs_kubectl, start_server

from kuota.cli.main import main


def _run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["controller", *args])
    return r.exit_code, r.output


def test_bad_configuration_file(tmp_path: Path) -> None:
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
        "leaderElection:\n  leaseDuration: soon\n"
    )
    code, out = _run("--config", str(cfg), "--kubeconfig", str(tmp_path / "none"))
    assert code == 2 and str(cfg) in out and "leaseDuration" in out
    code, out = _run("--config", str(tmp_path / "missing.yaml"))
    assert code == 2 and "missing.yaml" in out and "No such file" in out
    cfg.write_text("apiVersion: v1\nkind: ConfigMap\n")
    code, out = _run("--config", str(cfg))
    assert code == 2 and "kind: expected Configuration" in out


def test_bad_addresses_and_kubeconfig(tmp_path: Path) -> None:
    code, out = _run("--metrics-bind-address", "8443")
    assert code == 2 and "--metrics-bind-address '8443': expected HOST:PORT" in out
    code, out = _run("--health-probe-bind-address", "x:port")
    assert code == 2 and "--health-probe-bind-address" in out
    code, out = _run("--dashboard-bind-address", "localhost")
    assert code == 2 and "--dashboard-bind-address 'localhost': expected HOST:PORT" in out
    code, out = _run("--webhook-url", "http://laptop:9443")
    assert code == 2 and "--webhook-url" in out and "https://" in out
    code, out = _run("--kubeconfig", str(tmp_path / "nope"))
    assert code == 2 and f"--kubeconfig {tmp_path / 'nope'}" in out
    code, out = _run("--kubeconfig", str(tmp_path), "--sim-clock", str(tmp_path / "clock.json"))
    assert code == 2


@needs_kubectl
def test_without_kueue_jobs_wait_for_an_outside_kueue(tmp_path: Path) -> None:
    world = webhook_admitted(EXAMPLES / "quickstart", tmp_path / "world")
    served = start_server(
        tmp_path / "state", str(world), "--without-kueue", "--speed", "600", home=tmp_path / "home"
    )
    try:
        # Three Jobs came (20 minutes of the world between the first and the
        # third): a condition, not a sleep, so a loaded machine only waits longer.
        def three_jobs() -> list[dict[str, Any]] | str:
            items: list[dict[str, Any]] = served.json("get", "jobs", "-A")["items"]
            return items if len(items) >= 3 else f"{len(items)} jobs"

        jobs = wait_for(three_jobs, 120, "three Jobs created")
        assert all(j["spec"]["suspend"] for j in jobs)
        assert served.json("get", "workloads", "-A")["items"] == []
        assert served.json("get", "pods", "-A")["items"] == []
        r = served.kubectl(
            "get",
            "--raw",
            "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/team-vision/pendingworkloads",
        )
        assert r.returncode != 0 and "ServiceUnavailable" in r.stderr + r.stdout
        assert (tmp_path / "state" / "sim-clock.json").exists()
    finally:
        served.stop()
