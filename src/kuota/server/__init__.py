"""``kuota serve``: the Kubernetes API over the embedded control plane.

An outer layer over the store, beside ``sim``: it speaks kube-apiserver's
HTTP API (discovery, CRUD, watch, tables, Status errors, Kueue's visibility
API) to kubectl and client libraries, and pumps the control plane's manager
on its one asyncio loop. The pure core is untouched: every write goes
through the store's admission hooks and the api layer's decoding.
"""
