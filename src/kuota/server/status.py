"""Errors as the API server answers them: ``Status`` objects with a reason, a
code and details (kubectl builds its messages from them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kuota.api.errors import FieldError

# Kubernetes' field.ErrorType -> its CauseType.
_CAUSE = {
    "Required value": "FieldValueRequired",
    "Invalid value": "FieldValueInvalid",
    "Unsupported value": "FieldValueNotSupported",
    "Duplicate value": "FieldValueDuplicate",
    "Forbidden": "FieldValueForbidden",
    "Too long": "FieldValueTooLong",
    "Too many": "FieldValueTooMany",
    "Not found": "FieldValueNotFound",
}


class ApiError(Exception):
    """A request refused: raised anywhere in a handler, answered as a Status."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details:
            out["details"] = self.details
        return out


def group_resource(group: str, resource: str) -> str:
    return f"{resource}.{group}" if group else resource


def not_found(group: str, resource: str, name: str) -> ApiError:
    return ApiError(
        404,
        "NotFound",
        f'{group_resource(group, resource)} "{name}" not found',
        details={"name": name, "group": group, "kind": resource},
    )


def already_exists(group: str, resource: str, name: str) -> ApiError:
    return ApiError(
        409,
        "AlreadyExists",
        f'{group_resource(group, resource)} "{name}" already exists',
        details={"name": name, "group": group, "kind": resource},
    )


def conflict(group: str, resource: str, name: str) -> ApiError:
    return ApiError(
        409,
        "Conflict",
        f"Operation cannot be fulfilled on {group_resource(group, resource)} "
        f'"{name}": the object has been modified; please apply your changes to the '
        "latest version and try again",
        details={"name": name, "group": group, "kind": resource},
    )


def causes_of(errors: Sequence[FieldError]) -> list[dict[str, str]]:
    out = []
    for err in errors:
        text = str(err)
        # The message after "path: " (kubectl prefixes the field itself).
        message = text[len(err.path) + 2 :] if err.path and text.startswith(err.path) else text
        out.append(
            {
                "reason": _CAUSE.get(err.type, "FieldValueInvalid"),
                "message": message,
                "field": err.path,
            }
        )
    return out


def invalid(group: str, kind: str, name: str, errors: Sequence[FieldError]) -> ApiError:
    """422: ``Kind.group "name" is invalid: [f: msg, ...]`` (details.kind is the Kind)."""
    shown = [str(e) for e in errors]
    listed = shown[0] if len(shown) == 1 else "[" + ", ".join(shown) + "]"
    gk = f"{kind}.{group}" if group else kind
    return ApiError(
        422,
        "Invalid",
        f'{gk} "{name}" is invalid: {listed}',
        details={"name": name, "group": group, "kind": kind, "causes": causes_of(errors)},
    )


def webhook_denied(webhook: str, errors: Sequence[FieldError]) -> ApiError:
    """403 from a validating webhook (controller-runtime turns a webhook's
    error into a Forbidden denial)."""
    shown = [str(e) for e in errors]
    msg = shown[0] if len(shown) == 1 else "[" + ", ".join(shown) + "]"
    return ApiError(403, "Forbidden", f'admission webhook "{webhook}" denied the request: {msg}')


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def gone(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def method_not_allowed() -> ApiError:
    return ApiError(
        405, "MethodNotAllowed", "the server does not allow this method on the requested resource"
    )


def success(group: str, resource: str, name: str, uid: str = "") -> dict[str, Any]:
    details: dict[str, Any] = {"name": name, "group": group, "kind": resource}
    if uid:
        details["uid"] = uid
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }
