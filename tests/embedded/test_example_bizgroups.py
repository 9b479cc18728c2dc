"""examples/bizgroups runs as its README says: serving's 8-H100 job is
refused at creation with the group, key and numbers; nlp-2 waits on the
bizrq check for nlp's H100s and is admitted when nlp-1 ends; vision's
20 GPU-hours run out at 03:00 (4x3 + 4x2), vision-2 runs on to 04:00
(24 GPU-hours used) and vision-3 is held."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from kuota.cli.main import main

WORLD = Path(__file__).parents[2] / "examples" / "bizgroups" / "world.yaml"


def cli(*args: str, code: int = 0) -> str:
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == code, r.output
    assert "Traceback" not in r.output
    return " ".join(r.output.split())


def _yaml(*args: str) -> Any:
    return yaml.safe_load(CliRunner().invoke(main, [*args, "-o", "yaml"]).output)


def test_the_bizgroups_example(tmp_path: Path) -> None:
    state = str(tmp_path / "state")
    out = cli("run", str(WORLD), "--state", state, "--no-live", "--until", "1h", code=1)
    assert "Job/serving/big-infer" in out
    assert "bizrq serving: limits.nvidia.com/gpu.H100 needs 8, 6 of 6 left" in out
    out = cli("describe", "job", "nlp-2", "-n", "nlp", "--state", state)
    assert '"bizrq" (bizrq nlp: limits.nvidia.com/gpu.H100 needs 4, 2 of 6 left)' in out

    cli("run", "--state", state, "--no-live", code=1)  # resumed to the end
    nlp2 = _yaml("get", "job", "nlp-2", "-n", "nlp", "--state", state)
    started = nlp2["status"]["startTime"]
    assert started == "2026-01-01T02:00:00Z"  # when nlp-1 gave its H100s back
    vision = _yaml("get", "bizrq", "vision", "--state", state)["status"]
    assert vision["used"]["cash/limits.nvidia.com/gpu"] == "24"  # 4x3 + 4x3 GPU-hours
    cond = {c["type"]: c for c in vision["conditions"]}["BudgetExhausted"]
    assert (cond["status"], cond["lastTransitionTime"]) == ("True", "2026-01-01T03:00:00Z")
    assert (
        _yaml("get", "job", "vision-2", "-n", "vision", "--state", state)["status"]["succeeded"]
        == 1
    )
    out = cli("describe", "job", "vision-3", "-n", "vision", "--state", state)
    assert "bizrq vision: budget cash/limits.nvidia.com/gpu is spent (24 of 20 used)" in out
    nlp = _yaml("get", "bizrq", "nlp", "--state", state)["status"]
    assert nlp["used"]["cash/limits.nvidia.com/gpu"] == "16"  # 4x2 + 4x2
    research = _yaml("get", "bizrq", "research", "--state", state)["status"]
    assert research["used"]["cash/limits.nvidia.com/gpu"] == "80"  # granted: 20 + 60
