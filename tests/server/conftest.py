"""``kuota serve`` as a subprocess on a free port in a temporary directory,
always stopped (SIGTERM, then SIGKILL) when the test ends."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

KUBECTL = shutil.which("kubectl") or (
    "/usr/bin/kubectl" if os.path.exists("/usr/bin/kubectl") else None
)
REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


@dataclass
class Served:
    proc: subprocess.Popen[str]
    state: Path
    url: str
    home: Path
    lines: list[str] = field(default_factory=list)

    @property
    def kubeconfig(self) -> Path:
        return self.state / "kubeconfig"

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "KUBECONFIG": str(self.kubeconfig),
            "HOME": str(self.home),
        }

    def kubectl(
        self, *args: str, input: str | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        assert KUBECTL is not None
        return subprocess.run(
            [KUBECTL, *args],
            env=self.env(),
            capture_output=True,
            text=True,
            input=input,
            timeout=timeout,
        )

    def ok(self, *args: str, input: str | None = None) -> str:
        r = self.kubectl(*args, input=input)
        assert r.returncode == 0, f"kubectl {' '.join(args)}: {r.stderr}"
        return r.stdout

    def json(self, *args: str) -> dict:
        return json.loads(self.ok(*args, "-o", "json"))

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode


def start_server(state: Path, *args: str, home: Path | None = None, timeout: float = 60) -> Served:
    """Start ``kuota serve`` and wait until it listens (its first line)."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kuota.cli.main",
            "serve",
            "--state",
            str(state),
            "--port",
            "0",
            *args,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=REPO,
    )
    lines: list[str] = []
    ready = threading.Event()
    url: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if "listening on " in line and not url:
                url.append(line.split("listening on ")[1].split(";")[0].strip())
                ready.set()
        ready.set()

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + timeout
    while not ready.wait(0.1):
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError("kuota serve did not start: " + "".join(lines))
    if not url:
        proc.wait(5)
        raise AssertionError("kuota serve exited: " + "".join(lines))
    home = home or state.parent / "home"
    home.mkdir(exist_ok=True)
    return Served(proc, state, url[0], home, lines)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[callable]:
    started: list[Served] = []

    def _start(*args: str, state: Path | None = None) -> Served:
        s = start_server(state or tmp_path / "state", *args, home=tmp_path / "home")
        started.append(s)
        return s

    yield _start
    for s in started:
        s.stop()


needs_kubectl = pytest.mark.skipif(
    KUBECTL is None, reason="kubectl is not installed (Debian: apt-get install kubernetes-client)"
)
