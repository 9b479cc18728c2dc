"""``kuota get`` reaches every stored kind, by the names kubectl takes (the
api registry's plural, singular, short names), by object name too, and
prints tables as kubectl does: sized to the terminal, full lines in a pipe,
never a column lost to a long message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kuota.cli.main import main

WORLDS = Path(__file__).parent.parent / "fixtures" / "worlds"

MORE = """apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: research}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: gold}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: prov}
spec: {controllerName: example.com/prov}
"""


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> str:
    d = tmp_path_factory.mktemp("kinds")
    more = d / "more.yaml"
    more.write_text(MORE)
    r = CliRunner().invoke(
        main,
        ["run", str(WORLDS / "small.yaml"), str(more), "--state", str(d / "s"), "--no-live"],
    )
    assert r.exit_code == 0, r.output
    return str(d / "s")


def get(state: str, *args: str, env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    r = CliRunner().invoke(main, ["get", *args, "--state", state], env=env)
    return r.exit_code, r.output.splitlines()


@pytest.mark.parametrize(
    ("names", "head", "row"),
    [
        (("resourceflavors", "rf", "flavor", "resourceflavor"), ["NAME", "AGE"], ["default"]),
        (("cohorts", "co", "cohort.kueue.x-k8s.io"), ["NAME", "AGE"], ["research"]),
        (("workloadpriorityclasses", "wpc"), ["NAME", "VALUE"], ["gold", "1000"]),
        (("admissionchecks", "ac"), ["NAME", "AGE"], ["prov"]),
        (("namespaces", "ns"), ["NAME", "STATUS", "AGE"], ["default", "Active"]),
    ],
)
def test_every_stored_kind_by_every_name(
    state: str, names: tuple[str, ...], head: list[str], row: list[str]
) -> None:
    for name in names:
        code, lines = get(state, name)
        assert code == 0, lines
        assert lines[0].split() == head, (name, lines)
        assert any(line.split()[: len(row)] == row for line in lines[1:]), (name, lines)


def test_get_by_name_and_kubectls_not_found(state: str) -> None:
    code, lines = get(state, "workloads")
    (ok,) = [line.split()[0] for line in lines[1:] if line.startswith("job-ok-")]
    code, lines = get(state, "wl", ok)
    assert code == 0 and [line.split()[0] for line in lines] == ["NAME", ok]
    code, lines = get(state, "wl", ok, "nope")
    assert code == 1
    assert 'Error from server (NotFound): workloads.kueue.x-k8s.io "nope" not found' in lines
    assert ok in "\n".join(lines)  # the one found is still printed
    code, lines = get(state, "jobs", "nope")
    assert (code, lines) == (1, ['Error from server (NotFound): jobs.batch "nope" not found'])
    r = CliRunner().invoke(main, ["get", "rf", "default", "-o", "json", "--state", state])
    assert r.exit_code == 0
    doc = json.loads(r.output)
    assert (doc["kind"], doc["metadata"]["name"]) == ("ResourceFlavor", "default")


def test_events_fit_the_terminal_and_a_pipe_gets_full_lines(state: str) -> None:
    head = ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    code, full = get(state, "events", env={"COLUMNS": ""})  # a pipe
    assert code == 0 and full[0].split() == head
    longest = max(len(line) for line in full)
    assert longest > 100  # the messages as they are: nothing cut
    assert not any(line.endswith("...") for line in full)
    for width in (100, 60):  # at 60 the other columns alone are wider: kept whole
        code, lines = get(state, "events", env={"COLUMNS": str(width)})
        assert code == 0 and lines[0].split() == head
        assert len(lines) == len(full)
        if width == 100:
            assert all(len(line) <= width for line in lines), lines
        for cut, whole in zip(lines[1:], full[1:], strict=True):
            # every column but the message is whole; the message is cut
            assert cut.split()[:3] == whole.split()[:3]
            assert whole.startswith(cut.removesuffix("..."))
