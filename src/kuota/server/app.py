"""The aiohttp application: routes, authentication and authorization, content
negotiation (JSON, YAML in, Tables out) and errors as Status objects."""

from __future__ import annotations

import functools
import secrets
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import structlog
import yaml
from aiohttp import web

from kuota import __version__
from kuota.api.errors import invalid as invalid_field
from kuota.server import discovery, patching, predict_route, protobody
from kuota.server import status as st
from kuota.server.auth import (
    Attributes,
    Authenticator,
    Authorizer,
    Unauthorized,
    UserInfo,
    escalation,
    forbidden_details,
    forbidden_message,
)
from kuota.server.auth import identity_reviews as idr
from kuota.server.auth import review as rv
from kuota.server.auth.aggregate import Aggregator
from kuota.server.auth.impersonate import ImpersonationDenied, ImpersonationInvalid, impersonate
from kuota.server.auth.protowire import ProtoError
from kuota.server.auth.satokens import ServiceAccountTokens, token_request
from kuota.server.crds import builtin_crd_names, crd_objects, crd_write
from kuota.server.hub import Hub
from kuota.server.pod_log import pod_log
from kuota.server.request_counts import RequestCounts
from kuota.server.rest import BUILTIN_GROUPS, Reply, Request, Resources, parse_bool
from kuota.server.served import Served, encode, lookup
from kuota.server.tables import TABLE_TYPE, table
from kuota.server.ui import routes as ui
from kuota.server.visibility import pending_workloads
from kuota.server.watching import watch, wire_json
from kuota.server.webhook_calls import NeedsWebhooks
from kuota.store import NotFound, StoreError
from kuota.webhooks import admission_notes

# (kuota keeps no audit log: a request's audit annotations are logged)
_audit = structlog.get_logger("kuota.audit")

_JSON = msgspec.json.Encoder()
_VERBS = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def json_response(
    body: Any, code: int = 200, content_type: str = "application/json"
) -> web.Response:
    return web.Response(
        body=_JSON.encode(body),
        status=code,
        content_type=None,
        headers={"Content-Type": content_type},
    )


def status_response(err: st.ApiError) -> web.Response:
    return json_response(err.status(), err.code)


def _wants_table(request: web.Request) -> bool:
    accept = request.headers.get("Accept", "")
    return "as=Table" in accept


class ApiServer:
    def __init__(
        self,
        cp: Any,
        hub: Hub,
        authn: Authenticator,
        authz: Authorizer,
        address: str,
    ) -> None:
        self.cp = cp
        self.hub = hub
        self.authn = authn
        self.authz = authz
        self.address = address
        self.aggregate = Aggregator(cp.store)
        self.metrics: Any = None  # KueueMetrics, served at /metrics when set
        self.requests = RequestCounts()  # apiserver_request_total, on /metrics too
        self.res = Resources(
            cp.store, cp.config.feature_gates, cp.clock.now, self._written, hub.begin_write
        )
        # Service-account tokens (kubectl create token): this server issues
        # them and its authenticator accepts them. A key of its own until
        # keep_tokens_in names the state directory's.
        self.sa_tokens = ServiceAccountTokens(secrets.token_bytes(32), self._account_uid)
        authn.issued = self.sa_tokens.verify

    def keep_tokens_in(self, directory: Path) -> None:
        """Sign service-account tokens with the key kept in ``directory``:
        the tokens outlive a restart on the same state."""
        self.sa_tokens = ServiceAccountTokens.in_dir(directory, self._account_uid)
        self.authn.issued = self.sa_tokens.verify

    def _account_uid(self, namespace: str, name: str) -> str | None:
        sa = lookup("", "v1", "serviceaccounts")
        assert sa is not None
        try:
            uid: str = self.cp.store.get(sa.rtype, namespace, name).metadata.uid
        except NotFound:
            return None
        return uid

    def _written(self) -> None:
        self.aggregate()  # in the client's commit, as the controller's write would follow it
        self.hub.written()

    # ---------------------------------------------------------------- app
    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._middleware], client_max_size=16 * 1024 * 1024)
        r = app.router
        for path in ("/healthz", "/livez", "/readyz"):
            r.add_get(path, self._health)
        r.add_get("/version", self._version)
        r.add_get("/metrics", self._metrics)
        r.add_get("/api", self._api)
        r.add_get("/api/", self._api)
        r.add_get("/api/v1", self._api_v1)
        r.add_get("/apis", self._apis)
        r.add_get("/apis/", self._apis)
        r.add_get("/apis/{group}", self._group)
        r.add_get("/apis/{group}/{version}", self._group_version)
        predict_route.install(app, self)
        r.add_route("*", "/api/v1/{rest:.+}", self._core)
        r.add_route("*", "/apis/{group}/{version}/{rest:.+}", self._grouped)
        r.add_get("/openapi/v2", self._openapi_v2)
        r.add_get("/openapi/v3", self._openapi_v3)
        r.add_get("/openapi/v3/{path:.+}", self._openapi_v3_doc)
        ui.install(app, self)
        return app

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        # What the request's admission adds (ValidatingAdmissionPolicies'
        # Warn action): Warning headers; its audit annotations are logged.
        with admission_notes.collect() as notes:
            resp = await self._handle(request, handler)
        if not resp.prepared:
            for w in notes.warnings:
                resp.headers.add("Warning", admission_notes.warning_header(w))
        if notes.annotations:
            _audit.info(
                "audit annotations",
                verb=request.method,
                path=request.path,
                annotations=notes.annotations,
            )
        return resp

    async def _handle(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            peer = request.transport.get_extra_info("peercert") if request.transport else None
            try:
                request["user"] = self.authn.authenticate(request.headers, peer)
            except Unauthorized:
                return status_response(st.ApiError(401, "Unauthorized", "Unauthorized"))
            request["user"] = self._impersonated(request)
            if not _is_resource(request.path) and not ui.is_ui(request.path):
                self._authorize_path(request)
            return await handler(request)
        except st.ApiError as err:
            return status_response(err)
        except web.HTTPException as exc:
            if exc.status == 404:
                return status_response(
                    st.ApiError(404, "NotFound", "the server could not find the requested resource")
                )
            if exc.status == 405:
                return status_response(st.method_not_allowed())
            raise
        except StoreError as err:  # the store itself failed (a journal write)
            return status_response(st.ApiError(500, "InternalError", str(err)))

    def _impersonated(self, request: web.Request) -> UserInfo:
        h = request.headers
        try:
            return impersonate(
                self.authz,
                request["user"],
                h.get("Impersonate-User", ""),
                h.getall("Impersonate-Group", []),
                h.get("Impersonate-Uid", ""),
            )
        except ImpersonationDenied as err:
            raise st.ApiError(
                403,
                "Forbidden",
                forbidden_message(err.attrs),
                details=forbidden_details(err.attrs),
            ) from None
        except ImpersonationInvalid as err:
            raise st.bad_request(str(err)) from None

    def _authorize_path(self, request: web.Request) -> None:
        user: UserInfo = request["user"]
        attrs = Attributes(user, request.method.lower(), False, path=request.path)
        self._check(attrs)

    def _check(self, attrs: Attributes) -> None:
        allowed, _ = self.authz.authorize(attrs)
        if not allowed:
            raise st.ApiError(
                403, "Forbidden", forbidden_message(attrs), details=forbidden_details(attrs)
            )

    async def _review(self, request: web.Request, resource: str) -> web.Response:
        if request.method != "POST":
            raise st.method_not_allowed()
        try:
            answer = rv.review(
                self.authz, request["user"], resource, await request.read(), request.content_type
            )
        except rv.ReviewError as err:
            raise st.bad_request(str(err)) from None
        return json_response(answer, 201)

    async def _identity_review(self, request: web.Request, resource: str) -> web.Response:
        if request.method != "POST":
            raise st.method_not_allowed()
        if resource == idr.SELF:
            return json_response(idr.self_subject_review(request["user"]), 201)
        try:
            answer = idr.token_review(self.authn, await request.read())
        except idr.IdentityReviewError as err:
            raise st.bad_request(str(err)) from None
        return json_response(answer, 201)

    async def _token_request(self, request: web.Request, namespace: str, name: str) -> web.Response:
        """``kubectl create token NAME``: a TokenRequest for the account."""
        body = await _body(request)
        uid = self._account_uid(namespace, name)
        if uid is None:
            raise st.not_found("", "serviceaccounts", name)
        now = datetime.now(UTC)  # (tokens age in wall-clock time, whatever --speed)
        out, errors = token_request(self.sa_tokens, namespace, name, uid, body, now)
        if out is None:
            raise st.invalid(
                "authentication.k8s.io",
                "TokenRequest",
                name,
                [invalid_field(path, value, why) for path, value, why in errors],
            )
        return json_response(out, 201)

    # ---------------------------------------------------------------- non-resource
    async def _health(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _metrics(self, request: web.Request) -> web.Response:
        if self.metrics is None:
            raise web.HTTPNotFound()
        return web.Response(
            body=self.metrics.render() + self.requests.render(),
            headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"},
        )

    async def _version(self, request: web.Request) -> web.Response:
        return json_response(
            {
                "major": "1",
                "minor": "32",
                "gitVersion": f"v1.32.0-kuota.{__version__}",
                "gitCommit": "kuota",
                "gitTreeState": "clean",
                "buildDate": "2026-01-01T00:00:00Z",
                "goVersion": "go1.23",
                "compiler": "gc",
                "platform": "linux/amd64",
            }
        )

    def _aggregated(self, request: web.Request) -> bool:
        return "as=APIGroupDiscoveryList" in request.headers.get("Accept", "")

    async def _api(self, request: web.Request) -> web.Response:
        if self._aggregated(request):
            return json_response(
                discovery.aggregated(core=True), content_type=discovery.AGGREGATED_TYPE
            )
        return json_response(discovery.api_versions(self.address))

    async def _apis(self, request: web.Request) -> web.Response:
        if self._aggregated(request):
            return json_response(
                discovery.aggregated(core=False), content_type=discovery.AGGREGATED_TYPE
            )
        return json_response(discovery.api_group_list())

    async def _api_v1(self, request: web.Request) -> web.Response:
        body = discovery.resource_list("", "v1")
        assert body is not None
        return json_response(body)

    async def _group(self, request: web.Request) -> web.Response:
        body = discovery.api_group(request.match_info["group"])
        if body is None:
            raise web.HTTPNotFound()
        return json_response(body)

    async def _group_version(self, request: web.Request) -> web.Response:
        body = discovery.resource_list(request.match_info["group"], request.match_info["version"])
        if body is None:
            raise web.HTTPNotFound()
        return json_response(body)

    async def _openapi_v2(self, request: web.Request) -> web.Response:
        try:
            from kuota.server import openapi
        except ImportError:
            raise web.HTTPNotFound() from None
        return web.Response(body=openapi.v2_document(), content_type="application/json")

    async def _openapi_v3(self, request: web.Request) -> web.Response:
        try:
            from kuota.server import openapi
        except ImportError:
            raise web.HTTPNotFound() from None
        return json_response(openapi.v3_index())

    async def _openapi_v3_doc(self, request: web.Request) -> web.Response:
        try:
            from kuota.server import openapi
        except ImportError:
            raise web.HTTPNotFound() from None
        doc = openapi.v3_document(request.match_info["path"])
        if doc is None:
            raise web.HTTPNotFound()
        return web.Response(
            body=doc,
            headers={"Content-Type": "application/json", "Cache-Control": "public, immutable"},
        )

    # ---------------------------------------------------------------- resources
    async def _core(self, request: web.Request) -> web.StreamResponse:
        return await self._resource(request, "", "v1", request.match_info["rest"])

    async def _grouped(self, request: web.Request) -> web.StreamResponse:
        m = request.match_info
        return await self._resource(request, m["group"], m["version"], m["rest"])

    async def _resource(
        self, request: web.Request, group: str, version: str, rest: str
    ) -> web.StreamResponse:
        parts = [p for p in rest.split("/") if p]
        namespace = ""
        if (
            len(parts) >= 3
            and parts[0] == "namespaces"
            and not (len(parts) == 3 and group == "" and parts[2] in ("status", "finalize"))
        ):
            namespace, parts = parts[1], parts[2:]
        if not parts or len(parts) > 3:
            raise web.HTTPNotFound()
        resource = parts[0]
        name = parts[1] if len(parts) > 1 else ""
        sub = parts[2] if len(parts) > 2 else ""
        query = dict(request.query)
        method = request.method
        verb = _VERBS.get(method, method.lower())
        if method == "GET" and not name:
            verb = "watch" if parse_bool(query.get("watch")) else "list"
        elif method == "DELETE" and not name:
            verb = "deletecollection"
        self.requests.add((verb, group, version, resource, sub))
        self._check(
            Attributes(
                request["user"],
                verb,
                True,
                path=request.path,
                api_group=group,
                api_version=version,
                resource=resource,
                subresource=sub,
                namespace=namespace,
                name=name,
            )
        )
        if group == rv.GROUP and resource in (rv.ACCESS, rv.RULES, rv.SUBJECT) and not name:
            return await self._review(request, resource)
        if group == idr.GROUP and resource in (idr.SELF, idr.TOKEN) and not name:
            return await self._identity_review(request, resource)
        if group == discovery.VISIBILITY_GROUP:
            return json_response(
                pending_workloads(self.cp, version, resource, namespace, name, sub, query)
            )
        if (
            group == discovery.CRD_GROUP
            and version == "v1"
            and resource == "customresourcedefinitions"
            and not sub
            and (name in builtin_crd_names() or (not name and method == "GET" and verb == "list"))
        ):
            if method != "GET":  # kuota's CRDs are built in: only a dry run writes them
                body, code = crd_write(
                    method, name, query, request.content_type, await request.read()
                )
                return json_response(body, code)
            return self._crds(method, name)
        # Other CustomResourceDefinitions are stored: their kinds are served
        # once created (cluster/apiserver/crd_registration.py).
        served = lookup(group, version, resource)
        if served is None:
            raise web.HTTPNotFound()
        if served.namespaced and namespace == "" and name:
            raise web.HTTPNotFound()
        if not served.namespaced and namespace:
            raise web.HTTPNotFound()
        if group == "" and resource == "serviceaccounts" and sub == "token" and name:
            if method != "POST":
                raise st.method_not_allowed()
            return await self._token_request(request, namespace, name)
        if group == "" and resource == "pods" and sub == "log" and name and method == "GET":
            pod = self.res.get(Request(served, namespace, name, "", query, request["user"]))
            return web.Response(text=pod_log(pod, query), content_type="text/plain")
        if sub and not (
            (sub == "status" and served.spec.status_subresource)
            or (sub == "scale" and served.spec.scale_subresource)
        ):
            raise web.HTTPNotFound()
        req = Request(served, namespace, name, sub, query, request["user"])
        if group == escalation.GROUP and served.kind in escalation.KINDS:
            req.guard = functools.partial(
                escalation.check_write, self.authz, request["user"], served.kind, namespace
            )
        warnings = _deprecation(served)
        reply: Reply | None = None
        if method == "GET":
            if name:
                reply = Reply(await self._read(req))
            elif verb == "watch":
                return await watch(request, req, self.res, self.hub, _wants_table(request))
            else:
                return await self._list(request, req, warnings)
        elif method == "POST" and not name:
            body = await _body(request)
            reply = await _admitted(lambda: self.res.create(req, body))
        elif method == "PUT" and name:
            body = await _body(request)
            reply = await _admitted(lambda: self.res.update(req, body))
        elif method == "PATCH" and name:
            data = await request.read()
            reply = await _admitted(lambda: self._patch(req, request.content_type, data))
        elif method == "DELETE":
            raw = await request.read()
            options = _decode(raw, request.content_type) if raw.strip() else {}
            if not isinstance(options, dict):
                raise st.bad_request("DeleteOptions must be an object")
            reply = (
                self.res.delete(req, options) if name else self.res.delete_collection(req, options)
            )
        else:
            raise st.method_not_allowed()
        if reply.durable is not None:
            try:
                await reply.durable
            except Exception as err:  # the journal failed: the write is not kept
                raise st.ApiError(
                    500, "InternalError", f"the write was not stored: {err}"
                ) from None
        return self._reply(request, served, reply, warnings)

    def _reply(
        self, request: web.Request, served: Served, reply: Reply, warnings: list[str]
    ) -> web.Response:
        body = reply.body
        if _wants_table(request) and not isinstance(body, dict):
            out = json_response(
                table(
                    served,
                    [body],
                    self.cp.clock.now(),
                    include=request.query.get("includeObject", "Metadata"),
                ),
                reply.code,
                TABLE_TYPE,
            )
        elif isinstance(body, dict):
            out = json_response(body, reply.code)
        else:  # a stored object: its JSON is shared with its watch events
            out = web.Response(
                body=wire_json(body, served),
                status=reply.code,
                content_type=None,
                headers={"Content-Type": "application/json"},
            )
        for w in [*warnings, *reply.warnings]:
            out.headers.add("Warning", f'299 - "{w}"')
        return out

    async def _read(self, req: Request) -> Any:
        """A get, answered once what it shows is durable (hub.until_durable):
        the object's revision, or for a 404 the store's (a delete in flight)."""
        try:
            obj = self.res.get(req)
        except st.ApiError as err:
            if err.code == 404:
                await self.hub.until_durable(self.cp.store.resource_version)
            raise
        rv = obj.metadata.resource_version if hasattr(obj, "metadata") else None
        await self.hub.until_durable(int(rv) if rv else self.cp.store.resource_version)
        return obj

    async def _list(self, request: web.Request, req: Request, warnings: list[str]) -> web.Response:
        s = req.served
        items, rv, cont, remaining = self.res.list_items(req)
        await self.hub.until_durable(int(rv))
        if _wants_table(request):
            body = table(
                s,
                items,
                self.cp.clock.now(),
                resource_version=rv,
                cont=cont,
                include=req.query.get("includeObject", "Metadata"),
            )
            out = json_response(body, content_type=TABLE_TYPE)
        else:
            meta: dict[str, Any] = {"resourceVersion": rv}
            if cont:
                meta["continue"] = cont
            if remaining is not None:
                meta["remainingItemCount"] = remaining
            out = json_response(
                {
                    "kind": f"{s.kind}List",
                    "apiVersion": s.api_version,
                    "metadata": meta,
                    "items": [encode(o, s) for o in items],
                }
            )
        for w in warnings:
            out.headers.add("Warning", f'299 - "{w}"')
        return out

    def _patch(self, req: Request, content_type: str, raw: bytes) -> Reply:
        s = req.served
        if content_type not in patching.PATCH_TYPES:
            raise st.ApiError(
                415,
                "UnsupportedMediaType",
                f"the body of the request was in an unknown format - accepted media types "
                f"include: {', '.join(patching.PATCH_TYPES)}",
            )
        patch = patching.parse_patch(content_type, raw)
        try:
            live_obj = self.res.get(Request(s, req.namespace, req.name, "", req.query))
        except st.ApiError as err:
            if err.code != 404 or content_type != patching.APPLY:
                raise
            live_obj = None
        live = encode(live_obj, s) if live_obj is not None else None
        if req.subresource == "scale" and live is not None:
            scale = self.res.get(req)
            patched = patching.apply(
                content_type,
                scale,
                patch,
                gvk=("autoscaling", "v1", "Scale"),
                builtin=True,
                manager=req.query.get("fieldManager", ""),
                force=False,
                now=self._now(),
            )
            return self.res.update(req, patched)
        patched = patching.apply(
            content_type,
            live,
            patch,
            gvk=(s.group, s.version.name, s.kind),
            builtin=s.group in BUILTIN_GROUPS,
            manager=req.query.get("fieldManager", ""),
            force=parse_bool(req.query.get("force")),
            now=self._now(),
        )
        if live is None:
            return self.res.create(
                Request(s, req.namespace, "", "", req.query, req.user, guard=req.guard), patched
            )
        meta = patched["metadata"] = patched.get("metadata") or {}
        meta.setdefault("resourceVersion", live["metadata"].get("resourceVersion"))
        if req.subresource != "status":
            patched.pop("status", None)
        return self.res.update(req, patched)

    def _now(self) -> str:
        return self.cp.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ")

    def _crds(self, method: str, name: str) -> web.Response:
        if method != "GET":
            raise st.method_not_allowed()
        crds = crd_objects()
        if not name:  # kuota's own, then those clients created
            served = lookup(discovery.CRD_GROUP, "v1", "customresourcedefinitions")
            assert served is not None
            crds = crds + [encode(o, served) for o in self.cp.store.list(served.rtype).items]
        if name:
            for c in crds:
                if c["metadata"]["name"] == name:
                    return json_response(c)
            raise st.not_found(discovery.CRD_GROUP, "customresourcedefinitions", name)
        return json_response(
            {
                "kind": "CustomResourceDefinitionList",
                "apiVersion": "apiextensions.k8s.io/v1",
                "metadata": {"resourceVersion": "1"},
                "items": crds,
            }
        )


def _is_resource(path: str) -> bool:
    """A resource request (authorized by its attributes), not a discovery or
    other non-resource path."""
    parts = path.strip("/").split("/")
    return (parts[0] == "api" and len(parts) >= 3) or (parts[0] == "apis" and len(parts) >= 4)


def _deprecation(served: Served) -> list[str]:
    if served.version.deprecated:
        storage = served.spec.api_version(served.spec.storage_version)
        return [f"{served.api_version} {served.kind} is deprecated; use {storage}"]
    return []


def _decode(raw: bytes, content_type: str) -> Any:
    try:
        if "yaml" in content_type:
            return yaml.safe_load(raw)
        return msgspec.json.decode(raw)
    except (msgspec.DecodeError, yaml.YAMLError) as err:
        raise st.bad_request(f"the body of the request could not be decoded: {err}") from None


async def _admitted(write: Callable[[], Reply]) -> Reply:
    """``write()``, after the admission webhooks it needs (webhook_calls)."""
    for _ in range(3):
        try:
            return write()
        except NeedsWebhooks as need:
            await need.run()
    raise st.ApiError(409, "Conflict", "the object changed while admission webhooks were called")


async def _body(request: web.Request) -> Any:
    ct = request.content_type
    if ct == "application/vnd.kubernetes.protobuf":
        try:  # (kubectl create namespace/configmap/secret/serviceaccount)
            return protobody.decode(await request.read())
        except protobody.UnsupportedProtobuf as err:
            raise st.ApiError(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types "
                f"include: application/json, application/yaml ({err})",
            ) from None
        except ProtoError as err:
            raise st.bad_request(f"the body of the request could not be decoded: {err}") from None
    return _decode(await request.read(), ct)
