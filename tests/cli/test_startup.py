"""What a command imports before it does anything: each pays for its own work
only. `kuota --version` and `kuota --help` import no command; `kuota get`
does not import the control plane, the scheduler or the simulator; `kuota
validate` no controller and no rich. Structural (the modules a real process
imports, from `python -X importtime`), not timed: the figures are in the
README's and the lead's notes."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from kuota.cli.main import LAZY_COMMANDS, main

WORLDS = Path(__file__).parent.parent / "fixtures" / "worlds"
REPO = Path(__file__).parent.parent.parent

# What the command-line entry point runs (kuota's console script, the same
# on every branch), under -X importtime, which lists every module imported.
ENTRY = "import sys; sys.argv[0] = 'kuota'; from kuota.cli.main import main; main()"

# The heavy parts: the embedded control plane, the admission core, the
# simulated cluster, the simulator and benchmarks, the controllers, and the
# libraries only some commands need.
CONTROL_PLANE = ("kuota.embedded.controlplane", "kuota.controllers.kueue")
CORE = ("kuota.scheduler", "kuota.queueing")
CLUSTER = (
    "kuota.cluster.kubescheduler",
    "kuota.cluster.controllers.kubelet",
    "kuota.cluster.controllers.job_controller",
    "kuota.cluster.wiring",
)
SIMULATOR = ("kuota.sim.simulate", "kuota.sim.bench", "kuota.sim.report", "kuota.sim.trace")
LIBRARIES = ("structlog", "aiohttp", "lightkube", "cryptography", "prometheus_client")


def imported(*args: str) -> list[str]:
    """The modules `kuota ARGS...` imports, in order; fails if it fails."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", ENTRY, *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", proc.stderr, re.M)


def heavy(modules: list[str], *prefixes: str) -> list[str]:
    return [m for m in modules if m.startswith(prefixes)]


@pytest.mark.parametrize("args", [["--version"], ["--help"]])
def test_version_and_help_import_no_command(args: list[str]) -> None:
    modules = imported(*args)
    assert "click" in modules  # the listing is real
    kuota = {m for m in modules if m.startswith("kuota")}
    # the group and its tables only: no API, store, core, cluster, simulator
    assert kuota <= {
        "kuota",
        "kuota.cli",
        "kuota.cli.main",
        "kuota.cli.lazy_group",
        "kuota.cli.lazy_choice",
        "kuota.runtime",
        "kuota.runtime.gcpolicy",
    }, sorted(kuota)
    assert heavy(modules, "rich", "yaml", "msgspec", *LIBRARIES) == []


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> str:
    d = tmp_path_factory.mktemp("state")
    r = CliRunner().invoke(
        main, ["run", str(WORLDS / "small.yaml"), "--state", str(d), "--no-live"]
    )
    assert r.exit_code == 0, r.output
    return str(d)


@pytest.mark.parametrize("resource", ["workloads", "clusterqueues", "pods"])
def test_get_does_not_import_the_control_plane(state: str, resource: str) -> None:
    modules = imported("get", resource, "-A", "--state", state)
    assert "kuota.store.readonly" in modules  # it did read the state
    assert heavy(modules, *CONTROL_PLANE, *CORE, *CLUSTER, *SIMULATOR, *LIBRARIES) == []


def test_validate_imports_the_api_only() -> None:
    modules = imported("validate", str(WORLDS / "small.yaml"))
    assert "kuota.api.decode" in modules
    assert (
        heavy(
            modules,
            *CONTROL_PLANE,
            *CORE,
            *CLUSTER,
            "kuota.controllers",
            "kuota.store",
            *SIMULATOR,
            "rich",
            *LIBRARIES,
        )
        == []
    )


def test_help_lists_every_command_with_its_own_short_help() -> None:
    out = CliRunner().invoke(main, ["--help"], terminal_width=200).output
    listed = dict(re.findall(r"^  ([\w-]+)\s{2,}(.+)$", out.split("Commands:")[1], re.M))
    assert sorted(listed) == sorted(main.list_commands(click_context()))
    assert set(LAZY_COMMANDS) <= set(listed)
    for name in listed:
        cmd = main.get_command(click_context(), name)
        assert cmd is not None
        # the lazy table's help is the command's own (it cannot drift)
        assert listed[name] == cmd.get_short_help_str(200), name


def test_a_lazy_command_runs_and_an_unknown_one_is_a_usage_error() -> None:
    r = CliRunner().invoke(main, ["node", "--help"])
    assert r.exit_code == 0 and "cordon" in r.output
    r = CliRunner().invoke(main, ["nodes"])
    assert r.exit_code == 2 and "No such command 'nodes'" in r.output


def click_context() -> click.Context:
    return click.Context(main)
