"""The AppWrapper controller's terminal and retryable exit codes
(project-codeflare/appwrapper@b47a99ee internal/controller/appwrapper/
appwrapper_controller.go: getPodStatus's terminalFailure, resetOrFail,
terminalExitCodes / retryableExitCodes; api/v1beta2/appwrapper_types.go's
``workload.codeflare.dev.appwrapper/terminalExitCodes`` and
``retryableExitCodes`` annotations), through ``kuota run``: a failure whose
pod exited with a terminal code fails the AppWrapper whatever its retries
left; with retryable codes given, only those reset it. The pods' exit codes
come from the simulated kubelet (``kuota.dev/exit-code``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner

from kuota.api.appwrapper import appwrapper_types as v
from kuota.cli.main import main
from kuota.cluster.appwrapper.appwrapper_controller import exit_codes

from .test_appwrapper import CONFIG, NODES, QUEUES, _cond, _get, _job_wrapper, _run

ANN = "workload.codeflare.dev.appwrapper/"


def test_parsing_of_exit_codes() -> None:
    """appwrapper_controller_test.go "Parsing of terminal exits codes"."""
    aw = msgspec.convert(
        {
            "apiVersion": "workload.codeflare.dev/v1beta2",
            "kind": "AppWrapper",
            "metadata": {
                "name": "a",
                "annotations": {
                    ANN + "terminalExitCodes": "3,10,abc,42",
                    ANN + "retryableExitCodes": "x,10,20",
                },
            },
            "spec": {"components": []},
        },
        v.AppWrapper,
    )
    assert exit_codes(aw, "terminalExitCodes") == [3, 10, 42]
    assert exit_codes(aw, "retryableExitCodes") == [10, 20]


def _failing(code: str, annotations: dict[str, str], backoff: int = 0) -> dict[str, Any]:
    """An AppWrapper whose Job's pods fail after 5 minutes with exit ``code``."""
    aw = _job_wrapper("flaky", "5m")
    aw["metadata"]["annotations"] = {ANN + k: val for k, val in annotations.items()}
    job = aw["spec"]["components"][0]["template"]
    job["spec"]["backoffLimit"] = backoff
    job["spec"]["template"]["metadata"]["annotations"]["kuota.dev/exit-code"] = code
    return aw


@pytest.mark.parametrize(
    ("code", "annotations", "resets"),
    [
        # a terminal code: Failed at the first failure, retries left unused
        ("42", {"terminalExitCodes": "3,10,abc,42"}, 0),
        # another code: reset as usual until the retry limit (1) is spent
        ("7", {"terminalExitCodes": "3,10,abc,42", "retryLimit": "1"}, 1),
        # retryable codes given: one of them resets ...
        ("20", {"retryableExitCodes": "x,10,20", "retryLimit": "1"}, 1),
        # ... any other non-zero code is terminal
        ("7", {"retryableExitCodes": "x,10,20"}, 0),
        # a code both terminal and retryable is terminal
        ("10", {"terminalExitCodes": "10", "retryableExitCodes": "10,20"}, 0),
    ],
    ids=["terminal", "not-terminal", "retryable", "not-retryable", "both"],
)
def test_failed_component_exit_code_decides_reset_or_fail(
    tmp_path: Path, code: str, annotations: dict[str, str], resets: int
) -> None:
    """The Job fails with its pod (backoffLimit 0): FailedComponent, then
    resetOrFail with the pods' terminalFailure."""
    state = _run(tmp_path, CONFIG, QUEUES, NODES, _failing(code, annotations))
    [got] = _get(state, "appwrappers")
    st = got["status"]
    assert st["phase"] == "Failed", st
    assert st.get("resettingCount", 0) == resets
    unhealthy = _cond(got, "Unhealthy")
    assert unhealthy is not None and unhealthy["reason"] == "FailedComponent"
    # The first failure at 00:05; a reset adds a 90 s pause and another 5 minutes.
    assert unhealthy["lastTransitionTime"] == (
        "2026-01-01T00:05:00Z" if resets == 0 else "2026-01-01T00:11:30Z"
    )
    [wl] = _get(state, "workloads")
    fin = _cond(wl, "Finished")
    assert fin is not None and fin["reason"] == "Failed", fin


def test_failed_pods_with_a_terminal_code_fail_after_the_grace_period(tmp_path: Path) -> None:
    """The Job retries its pod (backoffLimit 3), so the component has not
    failed: the failed pod is given failureGracePeriod (1m) to recover, then
    its terminal code fails the AppWrapper rather than resetting it."""
    aw = _failing("42", {"terminalExitCodes": "42"}, backoff=3)
    state = _run(tmp_path, CONFIG, QUEUES, NODES, aw)
    [got] = _get(state, "appwrappers")
    st = got["status"]
    assert st["phase"] == "Failed", st
    assert st.get("resettingCount", 0) == 0
    unhealthy = _cond(got, "Unhealthy")
    assert unhealthy is not None
    assert (unhealthy["reason"], unhealthy["lastTransitionTime"]) == (
        "FoundFailedPods",
        "2026-01-01T00:05:00Z",
    )


def test_failed_pod_shows_its_exit_code(tmp_path: Path) -> None:
    """The simulated kubelet's side: a pod annotated ``kuota.dev/exit-code``
    fails with its containers terminated with that code (a Job outside
    Kueue, whose failed pod stays)."""
    job = _failing("42", {})["spec"]["components"][0]["template"]
    job["metadata"]["namespace"] = "default"
    state = _run(tmp_path, CONFIG, NODES, job)
    pods = _get(state, "pods")
    assert pods
    for pod in pods:
        (cs,) = pod["status"]["containerStatuses"]
        assert cs["state"]["terminated"]["exitCode"] == 42
        assert cs["state"]["terminated"]["reason"] == "Error"


@pytest.mark.parametrize(
    ("annotations", "message"),
    [
        ({"kuota.dev/exit-code": "0"}, "must be an integer from 1 to 255"),
        ({"kuota.dev/exit-code": "x"}, "must be an integer from 1 to 255"),
        (
            {"kuota.dev/exit-code": "3", "kuota.dev/fail": "false"},
            'a run that ends with an exit code fails: kuota.dev/fail must not be "false"',
        ),
    ],
)
def test_validate_refuses_a_bad_exit_code(
    tmp_path: Path, annotations: dict[str, str], message: str
) -> None:
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        msgspec.json.encode(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "namespace": "default", "annotations": annotations},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            }
        ).decode()
    )
    r = CliRunner().invoke(main, ["validate", str(pod)])
    assert r.exit_code != 0
    assert "metadata.annotations[kuota.dev/exit-code]" in r.output, r.output
    assert message in r.output, r.output
