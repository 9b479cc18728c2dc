"""Kubeflow Trainer v2 in the embedded cluster: the TrainJob controller that
makes a TrainJob's JobSet (the JobSet operator, ``kuota.cluster.jobset``,
runs it)."""
