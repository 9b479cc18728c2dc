"""CEL as kube-apiserver evaluates it (``k8s.io/apiserver/pkg/cel``): the
expressions of CRDs' ``x-kubernetes-validations`` and of
ValidatingAdmissionPolicies.

The runtime is cel-expr-python, Google's C++ CEL (cel-cpp) wrapped for
Python: the reference implementation cel-go (kube-apiserver's) is held to by
the same conformance tests, and it evaluates in C++. On top of CEL's standard
library it gets what Kubernetes' base environment adds, as far as kuota's
users' rules need: the strings and optional-types extensions, and Kubernetes'
lists (``isSorted``, ``sum``, ``min``, ``max``, ``indexOf``,
``lastIndexOf``), sets (``sets.contains``, ``sets.equivalent``,
``sets.intersects``), regex (``find``, ``findAll``) and quantity
(``quantity``, ``isQuantity``, comparisons, arithmetic, conversions)
libraries, and its ip, cidr and url libraries (``cel_net``: ``ip``,
``isIP``, ``ip.isCanonical``, ``family``, ``isLoopback``...; ``cidr``,
``isCIDR``, ``containsIP``, ``containsCIDR``, ``masked``, ``prefixLength``;
``url``, ``isURL``, ``getScheme``, ``getHost``, ``getHostname``, ``getPort``,
``getEscapedPath``, ``getQuery``). Not there: ``string()`` of an IP or CIDR,
the format and authorizer libraries.

Variables are typed ``dyn`` (kube-apiserver types them from the schema): a
type mismatch kube-apiserver refuses when the CRD is written is found here
when a rule runs, as the same message. Runtime errors are reworded as cel-go
words them (``no such key: x``), since kube-apiserver quotes them.

Pure: no I/O.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "CRD_VARIABLES",
    "POLICY_VARIABLES",
    "CelError",
    "Compiled",
    "compile_expr",
    "optional_old_self",
]

CRD_VARIABLES: Final = ("self", "oldSelf")
POLICY_VARIABLES: Final = (
    "object",
    "oldObject",
    "request",
    "params",
    "namespaceObject",
    "variables",
)


class CelError(Exception):
    """A rule that does not compile, or an evaluation that failed: the
    message as cel-go words it. ``unsupported``: the rule calls a function
    of Kubernetes' environment kuota's has not (url, ip, cidr, format...)."""

    def __init__(self, message: str, unsupported: str = "") -> None:
        super().__init__(message)
        self.unsupported = unsupported


# cel-cpp's runtime errors, as cel-go words them (kube-apiserver quotes cel-go).
_REWORDED: Final = (
    (re.compile(r'^NOT_FOUND: Key not found in map : "?(.*?)"?$'), r"no such key: \1"),
    (re.compile(r"^\w+: No matching overloads found : (.*)$"), r"no such overload: \1"),
    (re.compile(r"^\w+: Index error: index=(-?\d+) size=\d+$"), r"index out of bounds: \1"),
    (re.compile(r"^\w+: divide by zero$"), "division by zero"),
    (re.compile(r"^\w+: modulus by zero$"), "modulus by zero"),
    (re.compile(r"^[A-Z_]+: (.*)$"), r"\1"),
)


def _cel_go(message: str) -> str:
    for pattern, repl in _REWORDED:
        if pattern.match(message):
            return pattern.sub(repl, message)
    return message


@dataclass(frozen=True, slots=True)
class Compiled:
    """One compiled expression, and whether it reads ``oldSelf`` (a
    transition rule: kube-apiserver runs it only where an old value
    exists)."""

    source: str
    program: Any
    uses_old_self: bool

    def eval(self, data: Mapping[str, Any]) -> Any:
        """The value, or CelError with cel-go's message."""
        try:
            result = self.program.eval(data=data)
        except RuntimeError as err:  # an error the runtime raises rather than returns
            raise CelError(_cel_go(str(err))) from None
        if result.type() == _library().ERROR:
            raise CelError(_cel_go(str(result.value())))
        return _plain(result.value())


def _plain(v: Any) -> Any:
    if isinstance(v, list):
        return [_plain(x.value() if hasattr(x, "value") else x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x.value() if hasattr(x, "value") else x) for k, x in v.items()}
    return v


def _library() -> Any:
    from kuota.api import cel_library  # (on first use: see its docstring)

    return cel_library


_OLD_SELF: Final = re.compile(r"\boldSelf\b")
_UNDECLARED: Final = re.compile(r"undeclared reference to '([\w.]+)'")
_NET_STRING: Final = re.compile(
    r"no matching overload for 'string' applied to '\(map\(string, dyn\)\)'"
)


@functools.lru_cache(maxsize=4096)
def compile_expr(source: str, variables: tuple[str, ...] = CRD_VARIABLES) -> Compiled:
    """``source`` compiled in the environment of ``variables``; CelError
    with the compiler's message (its first line: kube-apiserver prints
    cel-go's, which differs past it) when it does not compile."""
    try:
        program = _library().env(variables).compile(source)
    except RuntimeError as err:
        text = str(err).removeprefix("INVALID_ARGUMENT: ").strip()
        m = _UNDECLARED.search(text)
        name = m.group(1) if m else ""
        called = bool(name) and bool(re.search(rf"\b{re.escape(name.split('.')[-1])}\s*\(", source))
        if name and not called:
            # A library namespace: format.dns1123Label() names 'format'.
            member = re.search(rf"\b{re.escape(name)}((?:\.\w+)+)\s*\(", source)
            if member:
                name, called = name + member.group(1), True
        if not called and _NET_STRING.search(text) and re.search(r"\b(ip|cidr)\s*\(", source):
            # string(ip) / string(cidr): Kubernetes' overloads kuota's CEL lacks.
            name, called = "string", True
        raise CelError(f"compilation failed: {text}", name if called else "") from None
    # A rule is a transition rule when it names oldSelf (cel-go asks the
    # checked AST; a word boundary outside string literals is as good here).
    uses_old = bool(_OLD_SELF.search(re.sub(r"'[^']*'|\"[^\"]*\"", "", source)))
    return Compiled(source, program, uses_old)


_LITERAL: Final = re.compile(r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""")


def optional_old_self(source: str) -> str:
    """A rule with ``optionalOldSelf: true`` made to read ``oldSelf`` as an
    optional (none where there is no old value, which the caller then binds
    as null), as kube-apiserver's optional activation gives it."""
    parts = _LITERAL.split(source)
    for i in range(0, len(parts), 2):  # (odd parts are string literals)
        parts[i] = _OLD_SELF.sub(
            "(oldSelf == null ? optional.none() : optional.of(oldSelf))", parts[i]
        )
    return "".join(parts)
