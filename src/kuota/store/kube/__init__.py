"""The kube store: the store protocol over a real Kubernetes API server
(cluster mode), beside the memory store (embedded mode)."""

from kuota.store.kube.kubestore import KubeStore, load_kubeconfig
from kuota.store.kube.kubewire import Forbidden, Unavailable

__all__ = ["Forbidden", "KubeStore", "Unavailable", "load_kubeconfig"]
