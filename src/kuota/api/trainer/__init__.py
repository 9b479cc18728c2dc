"""trainer.kubeflow.org: Kubeflow Trainer v2's TrainJob and its runtimes."""
