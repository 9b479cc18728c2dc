"""Who is asking, and may they: kube-apiserver's authenticators
(``authn``), impersonation (``impersonate``), its RBAC authorizer (``rbac``)
with the bootstrap and Kueue roles (``bootstrap``), and the self reviews
``kubectl auth can-i`` sends (``review``)."""

from kuota.server.auth.authn import (
    ANONYMOUS,
    AUTHENTICATED,
    MASTERS,
    UNAUTHENTICATED,
    Attributes,
    Authenticator,
    Authorizer,
    MastersAuthorizer,
    TokenFileError,
    Unauthorized,
    UserInfo,
    forbidden_details,
    forbidden_message,
    load_token_file,
)
from kuota.server.auth.bootstrap import bootstrap_objects
from kuota.server.auth.rbac import RBACAuthorizer

__all__ = [
    "ANONYMOUS",
    "AUTHENTICATED",
    "MASTERS",
    "UNAUTHENTICATED",
    "Attributes",
    "Authenticator",
    "Authorizer",
    "MastersAuthorizer",
    "RBACAuthorizer",
    "TokenFileError",
    "Unauthorized",
    "UserInfo",
    "bootstrap_objects",
    "forbidden_details",
    "forbidden_message",
    "load_token_file",
]
