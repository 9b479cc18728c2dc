"""Fixtures the cluster-mode tests share with serve's: where the dashboard's
screenshots are kept."""

from tests.server.ui.conftest import artifacts

__all__ = ["artifacts"]
