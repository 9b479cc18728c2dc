"""apiextensions.k8s.io/v1: CustomResourceDefinitions a world or a client
brings, and the kinds they define (served, stored and validated against
their structural schema as kube-apiserver does)."""

from kuota.api.apiextensions.crd_types import GROUP, CustomResourceDefinition
from kuota.api.apiextensions.custom_kinds import register_crd, rules_schema

__all__ = ["GROUP", "CustomResourceDefinition", "register_crd", "rules_schema"]
