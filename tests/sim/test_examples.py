"""The example designs in examples/traces/ run on slices of the shipped
traces (tests/data/sim/*-slice.csv: rows copied unchanged from
../shared/traces/, see tests/data/sim/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kuota.cli.main import main

ROOT = Path(__file__).parent.parent.parent
EXAMPLES = ROOT / "examples" / "traces"
DATA = ROOT / "tests" / "data" / "sim"


def run(tmp_path: Path, *args: str) -> dict:  # type: ignore[type-arg]
    out = tmp_path / "r.json"
    r = CliRunner().invoke(main, ["simulate", *args, "--json", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    return json.loads(out.read_text())


def test_openb_designs_on_a_slice(tmp_path: Path) -> None:
    doc = run(
        tmp_path,
        "--trace",
        str(DATA / "openb-slice.csv"),
        "--world",
        str(EXAMPLES / "openb" / "shared-pool.yaml"),
        "--compare",
        str(EXAMPLES / "openb" / "qos-cohort.yaml"),
    )
    assert list(doc) == ["shared-pool", "qos-cohort"]
    for d in doc.values():
        assert d["jobs"] == 150 and d["finished"] == 150
        assert set(d["teams"]) == {"BE", "Burstable", "LS"}
        assert d["nominal_gpus"] == 48
    assert doc["qos-cohort"]["teams"]["LS"]["queue"] == "ls/ls"


def test_openb_with_its_node_list(tmp_path: Path) -> None:
    doc = run(
        tmp_path,
        "--trace",
        str(DATA / "openb-slice.csv"),
        "--world",
        str(EXAMPLES / "openb" / "shared-pool.yaml"),
        "--nodes",
        str(DATA / "openb-nodes-slice.csv"),
    )
    assert doc["finished"] == 150
    assert doc["nodes_from"] == "the node list (30 nodes)"
    # G2 4 x 8, T4 2 x 2 + 2 x 4, G3 4 x 8, P100 4 x 2, V100M32 4 x 8, V100M16 4 x 4, A10 2 x 1
    assert doc["gpu_capacity"] == 32 + 12 + 32 + 8 + 32 + 16 + 2


def test_dlrm_designs_on_a_slice(tmp_path: Path) -> None:
    doc = run(
        tmp_path,
        "--trace",
        str(DATA / "dlrm-slice.csv"),
        "--world",
        str(EXAMPLES / "dlrm" / "shared-fleet.yaml"),
        "--compare",
        str(EXAMPLES / "dlrm" / "per-app-quota.yaml"),
        "--mapping",
        str(EXAMPLES / "dlrm" / "mapping.yaml"),
        "--jobs",
        "2",
        "--html",
        str(tmp_path / "r.html"),
    )
    assert list(doc) == ["shared-fleet", "per-app-quota"]
    # 31 teams: the side-by-side table shows the ones the plots show, the rest
    # together and folded
    html = (tmp_path / "r.html").read_text()
    assert "The 7 teams with the most GPU-hours in shared-fleet, as the plots show" in html
    assert "<tr><td>24 other teams</td>" in html
    assert "<details><summary>all 31 teams (click to show)</summary>" in html
    for d in doc.values():
        assert d["jobs"] == 200 and d["nominal_gpus"] == 3300
    assert doc["per-app-quota"]["teams"]["app_0"]["cluster_queue"] == "app-0"
    assert doc["shared-fleet"]["teams"]["app_0"]["cluster_queue"] == "fleet"


def test_readme_commands_name_files_that_exist() -> None:
    text = (EXAMPLES / "README.md").read_text()
    for word in text.split():
        if word.startswith("examples/traces/") and word.endswith((".yaml", ".py")):
            assert (ROOT / word).exists(), word


def test_openb_in_milli_gpus_on_a_slice(tmp_path: Path) -> None:
    doc = run(
        tmp_path,
        "--trace",
        str(DATA / "openb-slice.csv"),
        "--world",
        str(EXAMPLES / "openb" / "shared-pool-milli.yaml"),
        "--mapping",
        str(EXAMPLES / "openb" / "milli.mapping.yaml"),
    )
    assert (doc["fractional_gpus"], doc["gpu_resource"]) == ("milli", "kuota.dev/gpu-milli")
    assert doc["finished"] == 150 and doc["nominal_gpus"] == 48
