"""A Job's counts are Go int32s: the API server refuses a parallelism or
completions beyond 2**31 - 1 when it decodes the Job, as the Workload Kueue
builds from it would refuse the podSet count. ``kuota validate`` and
``kuota run`` refuse it up front with the field path (a parallelism of
2**31 once passed validate, and the Workload's refusal then failed the Job
reconcile for ever)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from kuota.cli.main import main

JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: huge, namespace: default}
spec:
  FIELD: VALUE
  template:
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
"""


def _job(tmp_path: Path, field: str, value: int) -> str:
    p = tmp_path / "job.yaml"
    p.write_text(JOB.replace("FIELD", field).replace("VALUE", str(value)))
    return str(p)


@pytest.mark.parametrize("field", ["parallelism", "completions", "backoffLimit"])
def test_validate_refuses_a_count_beyond_int32_with_its_path(tmp_path: Path, field: str) -> None:
    r = CliRunner().invoke(main, ["validate", _job(tmp_path, field, 2**31)])
    assert r.exit_code == 1, r.output
    assert f"spec.{field}: Invalid value: 2147483648: must be a 32-bit integer" in r.output
    assert "Traceback" not in r.output


def test_the_largest_int32_is_accepted(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["validate", _job(tmp_path, "completions", 2**31 - 1)])
    assert r.exit_code == 0, r.output


def test_run_refuses_it_before_running(tmp_path: Path) -> None:
    r = CliRunner().invoke(main, ["run", _job(tmp_path, "parallelism", 2**31), "--no-live"])
    assert r.exit_code == 2, r.output  # an input error, as every command exits
    assert "spec.parallelism" in r.output and "nothing was run" in r.output
