"""JobSet (``jobset.x-k8s.io``), the kind Kueue runs multi-job AI workloads as."""
