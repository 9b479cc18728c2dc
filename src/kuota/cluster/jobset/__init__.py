"""The JobSet operator (kubernetes-sigs/jobset) in the embedded cluster: its
webhooks and the controller that runs a JobSet's child Jobs."""
