"""kuota's annotations that tell the simulated kubelet how a pod runs: named
apart from the kubelet so that reading a world (``kuota validate``) need not
import the kubelet and the cluster under it."""

from __future__ import annotations

from typing import Final

DURATION_ANNOTATION: Final = "kuota.dev/duration"
FAIL_ANNOTATION: Final = "kuota.dev/fail"
# The exit code a failing run's containers end with (1-255; implies
# kuota.dev/fail), written to the pod's containerStatuses.
EXIT_CODE_ANNOTATION: Final = "kuota.dev/exit-code"


def exit_code_error(code: str, fail: str | None) -> str:
    """Why ``kuota.dev/exit-code`` cannot be read ("" when it can): an
    integer from 1 to 255 (a failing container's), on a run not said to
    succeed."""
    if not (code.isascii() and code.isdigit()) or not 1 <= int(code) <= 255:
        return "must be an integer from 1 to 255"
    if fail == "false":
        return f'a run that ends with an exit code fails: {FAIL_ANNOTATION} must not be "false"'
    return ""
