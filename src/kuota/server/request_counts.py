"""kube-apiserver's ``apiserver_request_total`` counter: the resource
requests served, by verb, group, version, resource and subresource, on
serve's ``/metrics`` (the cluster bench reads it to count a run's requests
per workload). Counted as the request is routed, before it is decided, so
a refused request counts too (without kube-apiserver's ``code`` label)."""

from __future__ import annotations

Key = tuple[str, str, str, str, str]  # verb, group, version, resource, subresource


class RequestCounts:
    def __init__(self) -> None:
        self.counts: dict[Key, int] = {}

    def add(self, key: Key) -> None:
        counts = self.counts
        counts[key] = counts.get(key, 0) + 1

    def render(self) -> bytes:
        """The Prometheus text exposition of the counter."""
        out = [
            "# HELP apiserver_request_total Counter of apiserver requests broken out"
            " for each verb, group, version, resource and subresource.",
            "# TYPE apiserver_request_total counter",
        ]
        for (verb, group, version, resource, sub), n in sorted(self.counts.items()):
            labels = (
                f'verb="{verb}",group="{group}",version="{version}",'
                f'resource="{resource}",subresource="{sub}"'
            )
            out.append(f"apiserver_request_total{{{labels}}} {n}")
        return ("\n".join(out) + "\n").encode()
