"""Kuota's controllers over the store protocol: Kueue's controllers around the admission core
(kueue.py), the job framework and one package per job integration (jobs/<kind>/)."""
