"""``kuota predict`` served: ``POST /apis/kuota.dev/v1alpha1/namespaces/NS/predictions``
with a job manifest (JSON or YAML) as the body answers the prediction as
``kuota predict --json`` prints it (``admitted_now``, ``flavor``, ``reason``,
the 0-based positions, ``estimated_start``, and its basis: the expected end
of every running or waiting workload and which rule gave it).

Nothing is written: the job is created in a fork of the server's present
(``embedded.fork``), so asking is allowed to whoever may create that job in
that namespace (RBAC's ``create`` on the job's own resource), as a dry run
would be. The fork runs on the server's loop: it is a copy of the present run
forward in virtual time, typically milliseconds to a second, and no thread may
touch the live store the fork shares its objects with.
"""

from __future__ import annotations

from typing import Any

import msgspec
import yaml
from aiohttp import web

from kuota.embedded.fork import fork, snapshot
from kuota.server import status as st
from kuota.server.auth import Attributes, forbidden_details, forbidden_message
from kuota.server.prediction import CannotPredict, predict
from kuota.server.served import SERVED, Served, decode_body

PATH = "/apis/kuota.dev/v1alpha1/namespaces/{namespace}/predictions"


def prediction_path(namespace: str) -> str:
    return PATH.replace("{namespace}", namespace)


def install(app: web.Application, api: Any) -> None:
    """Add the route; before the generic ``/apis/...`` route, which would take it."""

    async def handler(request: web.Request) -> web.Response:
        if request.method != "POST":
            raise st.method_not_allowed()
        namespace = request.match_info["namespace"]
        raw = _manifest(await request.read(), request.content_type)
        served = _served_of(raw)
        attrs = Attributes(
            request["user"],
            "create",
            True,
            path=request.path,
            api_group=served.group,
            api_version=served.version.name,
            resource=served.resource,
            namespace=namespace,
        )
        if not api.authz.authorize(attrs)[0]:
            raise st.ApiError(
                403, "Forbidden", forbidden_message(attrs), details=forbidden_details(attrs)
            )
        cp = api.cp
        job = decode_body(raw, served, namespace, cp.config.feature_gates, source="prediction")
        state = snapshot(cp.store, cp.clock.now())
        try:
            result = predict(fork(state, cp.config, openshift=cp.policy.openshift), job)
        except CannotPredict as err:
            raise st.ApiError(
                422, "Invalid", f"{served.kind} {namespace}/{job.metadata.name}: {err}"
            ) from None
        return web.json_response(result.to_json())

    app.router.add_route("*", PATH, handler)


def _manifest(body: bytes, content_type: str) -> dict[str, Any]:
    """The request's job manifest: JSON, else YAML (one document)."""
    if not body.strip():
        raise st.bad_request("predictions: the body of the request is empty: send a job manifest")
    try:
        if "json" in content_type or body.lstrip()[:1] == b"{":
            raw = msgspec.json.decode(body)
        else:
            docs = [d for d in yaml.safe_load_all(body) if d is not None]
            if len(docs) != 1:
                raise st.bad_request(
                    f"predictions: the body holds {len(docs)} YAML documents; send one job"
                )
            raw = docs[0]
    except (msgspec.DecodeError, yaml.YAMLError) as err:
        raise st.bad_request(f"predictions: the body could not be decoded: {err}") from None
    if not isinstance(raw, dict):
        raise st.bad_request("predictions: the body must be one job manifest (an object)")
    return raw


def _served_of(raw: dict[str, Any]) -> Served:
    """The served kind the manifest names by apiVersion and kind."""
    av, kind = raw.get("apiVersion"), raw.get("kind")
    if not isinstance(av, str) or not av or not isinstance(kind, str) or not kind:
        raise st.bad_request(
            "predictions: the manifest needs apiVersion and kind (e.g. batch/v1 Job)"
        )
    for served in SERVED.values():
        if served.api_version == av and served.kind == kind:
            if not served.namespaced:
                raise st.bad_request(
                    f"predictions: {kind} ({av}) is cluster-scoped; a job to predict is namespaced"
                )
            return served
    raise st.bad_request(f'predictions: no kind "{kind}" is registered for version "{av}"')
