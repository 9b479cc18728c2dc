"""The two ways a patch is refused, as kube-apiserver words them."""

from __future__ import annotations


class PatchError(Exception):
    """A patch that cannot be applied (bad document, failed ``test`` op, bad
    directive); the server answers 422 (or 400 for an undecodable body)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ApplyConflict(Exception):
    """Server-side apply of fields another manager owns, without ``force``.

    ``causes`` are (field path, message) pairs, the message as kube-apiserver
    writes it: ``conflict with "kubectl-client-side-apply" using batch/v1``.
    """

    def __init__(self, causes: list[tuple[str, str]]) -> None:
        self.causes = causes
        lines = [f"{msg}: {path}" for path, msg in causes]
        super().__init__(f"Apply failed with {len(causes)} conflict(s): " + "; ".join(lines))
