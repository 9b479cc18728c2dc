"""``kuota.dev/duration`` on a Job's own metadata is never read (the
simulated kubelet reads the pod template's): the Job's pods would run for
ever, silently. ``validate`` and ``run`` warn, naming where it belongs."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from kuota.cli.main import main

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: j
  annotations: {kuota.dev/duration: 5m}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
"""
WHERE = "spec.template.metadata.annotations"


def test_validate_warns(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    r = CliRunner().invoke(main, ["validate", str(tmp_path / "job.yaml")])
    assert r.exit_code == 0, r.output  # a warning, as the API server would store it
    assert "metadata.annotations[kuota.dev/duration]: not read on a Job" in r.output
    assert WHERE in r.output


def test_run_warns_and_the_template_place_is_quiet(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    r = CliRunner().invoke(main, ["run", str(tmp_path / "job.yaml"), "--no-live"])
    assert "not read on a Job" in r.output, r.output
    good = JOB.replace("  annotations: {kuota.dev/duration: 5m}\n", "").replace(
        "  template:\n", "  template:\n    metadata: {annotations: {kuota.dev/duration: 5m}}\n"
    )
    (tmp_path / "job.yaml").write_text(good)
    r = CliRunner().invoke(main, ["validate", str(tmp_path / "job.yaml")])
    assert r.exit_code == 0 and "warning" not in r.output, r.output
