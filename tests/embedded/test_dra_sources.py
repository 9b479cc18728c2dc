"""Counter- and capacity-based DRA quota (``deviceClassMappings[].sources``):
Kueue charges them from the devices ResourceSlices publish, which kuota does
not keep. Kueue's own counter sample (site/static/examples/dra, copied in
``kueue_examples/dra``) with its docs' Configuration is therefore not
admitted on device counts: it waits with the error Kueue gives when no
ResourceSlice device matches (pkg/dra/counters.go processCounterCharge)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kuota.cli.main import main

DRA = Path(__file__).parent / "kueue_examples" / "dra"
# The counter Configuration of Kueue's "Set up DRA" page
# (site/content/en/docs/tasks/manage/setup_dra.md), and the DeviceClass.
CONFIG = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
resources:
  deviceClassMappings:
  - name: gpu.memory
    deviceClassNames:
    - gpu.example.com
    sources:
    - counter:
        name: memory
        driver: gpu.example.com
        deviceSelector:
          cel:
            expression: "device.driver == 'gpu.example.com'"
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
"""


def _workloads(state: Path) -> list[dict[str, Any]]:
    r = CliRunner().invoke(main, ["get", "workloads", "-A", "--state", str(state), "-o", "json"])
    assert r.exit_code == 0, r.output
    items: list[dict[str, Any]] = json.loads(r.output)["items"]
    return items


def test_counter_sample_waits_with_kueues_no_matching_devices_error(tmp_path: Path) -> None:
    world = tmp_path / "world"
    world.mkdir()
    (world / "config.yaml").write_text(CONFIG)
    for name in ("sample-dra-counter-queues.yaml", "sample-dra-counter-job.yaml"):
        (world / name).write_text((DRA / name).read_text())
    state = tmp_path / "state"
    r = CliRunner().invoke(main, ["run", str(world), "--state", str(state), "--until", "5m"])
    assert r.exit_code == 0, r.output
    (wl,) = _workloads(state)
    assert "admission" not in wl["status"]  # not charged as a device count
    cond = next(c for c in wl["status"]["conditions"] if c["type"] == "QuotaReserved")
    assert (cond["status"], cond["reason"]) == ("False", "Misconfigured")
    assert cond["message"] == (
        "spec.podSets[0].template.spec.resourceClaims[0].devices.requests[0]: Internal error:"
        " insufficient matching devices for counter driver: 0 device(s) match but 1 requested"
    )
