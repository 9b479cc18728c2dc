"""Kubernetes name and label syntax (apimachinery's ``validation`` package).

Each ``is_*`` function returns the list of reasons a value is not valid (empty when
it is), worded as Kubernetes words them, so errors read the same as the API server's.
Patterns are matched with ``fullmatch``: Go's ``$`` never matches before a trailing
newline, Python's does.

apimachinery v0.36 words lengths two ways: util/validation says "... characters",
api/validate/content (Kueue's Configuration checks) "... bytes"; ``unit`` chooses, and
``is_label_key`` is content's IsLabelKey beside util/validation's ``is_qualified_name``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

DNS1123_LABEL_FMT = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + r"(\." + DNS1123_LABEL_FMT + r")*"
DNS1035_LABEL_FMT = r"[a-z]([-a-z0-9]*[a-z0-9])?"
C_IDENTIFIER_FMT = r"[A-Za-z_][A-Za-z0-9_]*"
QUALIFIED_NAME_FMT = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_VALUE_FMT = r"(" + QUALIFIED_NAME_FMT + r")?"

_DNS1123_LABEL = re.compile(DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN = re.compile(DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL = re.compile(DNS1035_LABEL_FMT)
_QUALIFIED_NAME = re.compile(QUALIFIED_NAME_FMT)
_LABEL_VALUE = re.compile(LABEL_VALUE_FMT)
_C_IDENTIFIER = re.compile(C_IDENTIFIER_FMT)

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """apimachinery's RegexError, to the character: each example is followed
    by ", " and they are joined with " or " (so two spaces before "or")."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    ex = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {ex}regex used for validation is '{fmt}')"


def is_dns1123_label(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_LABEL_MAX:
        errs.append(f"must be no more than {DNS1123_LABEL_MAX} characters")
    if not _DNS1123_LABEL.fullmatch(value) and _DNS1123_SUBDOMAIN.fullmatch(value):
        # A valid subdomain and not a label: with the length checked, it is the dots.
        errs.append("must not contain dots")
    elif not _DNS1123_LABEL.fullmatch(value):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric "
                "characters or '-', and must start and end with an alphanumeric character",
                DNS1123_LABEL_FMT,
                "my-name",
                "123-abc",
            )
        )
    return errs


def is_dns1123_subdomain(value: str, unit: str = "characters") -> list[str]:
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX} {unit}")
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                "characters, '-' or '.', and must start and end with an alphanumeric character",
                DNS1123_SUBDOMAIN_FMT,
                "example.com",
            )
        )
    return errs


def is_dns1035_label(value: str) -> list[str]:
    errs = []
    if len(value) > DNS1123_LABEL_MAX:
        errs.append(f"must be no more than {DNS1123_LABEL_MAX} characters")
    if not _DNS1035_LABEL.fullmatch(value):
        errs.append(
            _regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                "start with an alphabetic character, and end with an alphanumeric character",
                DNS1035_LABEL_FMT,
                "my-name",
                "abc-123",
            )
        )
    return errs


_NAME_PART_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character"
)
_NAME_EXAMPLES = ("MyName", "my.name", "123-abc")


def is_qualified_name(value: str) -> list[str]:
    """A label key or annotation key: an optional DNS-subdomain prefix and a name."""
    too_many_parts = _regex_error(
        f"a qualified name {_NAME_PART_MSG} with an optional DNS subdomain prefix and '/'",
        QUALIFIED_NAME_FMT,
        *_NAME_EXAMPLES,
    )
    return _prefixed_name(value, "characters", too_many_parts, check_empty_name=False)


def is_label_key(value: str) -> list[str]:
    """api/validate/content's IsLabelKey: ``is_qualified_name`` worded in bytes, and
    an empty name part also reported as not matching the pattern."""
    too_many_parts = (
        "a valid label key "
        + _regex_error(_NAME_PART_MSG, QUALIFIED_NAME_FMT, *_NAME_EXAMPLES)
        + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
    )
    return _prefixed_name(value, "bytes", too_many_parts, check_empty_name=True)


def _prefixed_name(value: str, unit: str, too_many_parts: str, check_empty_name: bool) -> list[str]:
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + e for e in is_dns1123_subdomain(prefix, unit))
    else:
        return [too_many_parts]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX:
        errs.append(f"name part must be no more than {QUALIFIED_NAME_MAX} {unit}")
    if (name or check_empty_name) and not _QUALIFIED_NAME.fullmatch(name):
        errs.append(
            "name part " + _regex_error(_NAME_PART_MSG, QUALIFIED_NAME_FMT, *_NAME_EXAMPLES)
        )
    return errs


def is_label_value(value: str, unit: str = "characters") -> list[str]:
    errs = []
    if len(value) > LABEL_VALUE_MAX:
        errs.append(f"must be no more than {LABEL_VALUE_MAX} {unit}")
    if not _LABEL_VALUE.fullmatch(value):
        errs.append(
            _regex_error(
                "a valid label must be an empty string or consist of alphanumeric characters, "
                "'-', '_' or '.', and must start and end with an alphanumeric character",
                LABEL_VALUE_FMT,
                "MyValue",
                "my_value",
                "12345",
            )
        )
    return errs


def is_c_identifier(value: str) -> list[str]:
    if _C_IDENTIFIER.fullmatch(value):
        return []
    return [
        _regex_error(
            "a valid C identifier must start with alphabetic character or '_', followed by a "
            "string of alphanumeric characters or '_'",
            C_IDENTIFIER_FMT,
            "my_name",
            "MY_NAME",
            "MyName",
        )
    ]


def _valid_memo(check: Callable[[str], list[str]]) -> Callable[[str], bool]:
    """The predicate ``not check(value)``. Label keys, label values and
    namespaces repeat across objects, so valid values are remembered (a bounded
    number) and the reasons are worded only for an invalid one."""
    valid: set[str] = set()

    def ok(value: str) -> bool:
        if value in valid:
            return True
        if check(value):
            return False
        if len(valid) < 4096:
            valid.add(value)
        return True

    return ok


qualified_name_ok = _valid_memo(is_qualified_name)
label_value_ok = _valid_memo(is_label_value)
dns1123_label_ok = _valid_memo(is_dns1123_label)


def go_pattern(go_re: str) -> re.Pattern[str]:
    """Compile a Go (RE2) pattern of a CRD schema for Python.

    RE2 accepts an inline flag group mid-pattern (``^(?i)[a-z]...``); Python only
    at the start, so such a leading-group flag is hoisted. ``$`` becomes ``\\Z``
    because Go's ``$`` (without ``(?m)``) matches only at the very end.
    """
    flags = ""
    m = re.match(r"^(\^?)\(\?([imsU]+)\)", go_re)
    if m:
        flags = m.group(2).replace("U", "")
        go_re = m.group(1) + go_re[m.end() :]
    py = re.sub(r"(?<!\\)\$", r"\\Z", go_re)
    if flags:
        py = f"(?{flags})" + py
    return re.compile(py)
