"""LeaderWorkerSet's API group ``leaderworkerset.x-k8s.io`` (``v1``)."""
