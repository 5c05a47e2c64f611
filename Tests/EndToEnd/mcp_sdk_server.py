#!/usr/bin/env python3
"""An MCP server with the official MCP Python SDK's own OAuth authorization server,
on 127.0.0.1 only, for interop tests of an OAuth client (Latchkey).

    .build/python-peers/bin/python Tests/EndToEnd/mcp_sdk_server.py [--port N] [--scope mcp] [--send-iss]
        [--advertise-iss] [--no-validate-resource] [--access-token-lifetime SECONDS] [--verbose]

--port 0 (the default) binds a free port. The first line on stdout is the port,
and nothing else goes to stdout (the convention of Tests/TestSupport/PythonServer.swift);
a short summary goes to stderr. Stop it with SIGTERM/SIGINT (or SIGKILL).

Needs the `mcp` package (2.3.0; Python >= 3.10), which `scripts/install-deps.sh test` puts in a
virtual environment of its own, .build/python-peers: Debian packages no `mcp`.

What it serves, all from the SDK (mcp.server.mcpserver.MCPServer.streamable_http_app):
  GET  /.well-known/oauth-protected-resource/mcp   RFC 9728 metadata: resource http://127.0.0.1:P/mcp,
                                                   authorization_servers [http://127.0.0.1:P]
  GET  /.well-known/oauth-authorization-server     RFC 8414 metadata, issuer http://127.0.0.1:P
  POST /register                                   RFC 7591 dynamic client registration
  GET|POST /authorize                              code flow, PKCE S256 required; redirect_uri is
                                                   compared with the registered ones (no port variance)
  POST /token                                      authorization_code (+PKCE) and refresh_token grants
  POST /revoke                                     RFC 7009
  /mcp                                             the protected resource (MCP streamable HTTP):
                                                   no/invalid token -> 401 + WWW-Authenticate with
                                                   resource_metadata=".../.well-known/oauth-protected-resource/mcp"
What this script adds to the SDK:
  * an in-memory OAuthAuthorizationServerProvider whose authorize() approves at once
    (no login page): /authorize answers 302 straight to redirect_uri?code=…&state=…
  * opt-in: --send-iss puts iss=<issuer> in the success redirect (the SDK's own error redirects
    never carry it); --advertise-iss swaps the SDK's metadata route for the same document plus
    authorization_response_iss_parameter_supported: true (the SDK cannot say it otherwise)
  * GET /mcp with a valid token (and no `Accept: text/event-stream`) answers 200 with a
    JSON description of the token, so a plain HTTP client has something to fetch; it is
    reached only through the SDK's RequireAuthMiddleware. POST /mcp is real MCP (JSON responses).
"""

import argparse
import copy
import secrets
import socket
import sys
import time

import uvicorn
from starlette.responses import JSONResponse

from mcp.server.auth.handlers.metadata import MetadataHandler
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import build_metadata, cors_middleware
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

CODE_LIFETIME = 300  # seconds an authorization code stays usable
SUBJECT = "test-user"  # the one "resource owner" every grant is for


class AutoApproveProvider(OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]):
    """Everything in dicts; every authorization request is approved at once.

    The SDK's handlers do the protocol checks before calling these methods (client exists,
    redirect_uri registered, scope registered, PKCE, code/refresh token belongs to the client,
    expiry, client authentication); what is here is storage plus a few policies marked below.
    """

    def __init__(self, issuer: str, resource: str, default_scopes: list[str], token_lifetime: int, send_iss: bool):
        self.issuer = issuer
        self.resource = resource
        self.default_scopes = default_scopes
        self.token_lifetime = token_lifetime
        self.send_iss = send_iss
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access_tokens: dict[str, AccessToken] = {}
        self.refresh_tokens: dict[str, RefreshToken] = {}
        self.pair: dict[str, str] = {}  # access <-> refresh, both ways, for revocation and rotation

    # --- RFC 7591 registration (the SDK's RegistrationHandler validated and minted client_id/secret) ---
    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id] = client_info

    # --- /authorize: called only after the SDK checked client_id, redirect_uri and scope ---
    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        # Policy of this script, not the SDK's: a `resource` (RFC 8707) other than ours is refused.
        # The AuthorizeError becomes a 302 to redirect_uri?error=invalid_target&state=… (SDK handler).
        if params.resource is not None and params.resource.rstrip("/") != self.resource:
            raise AuthorizeError("invalid_target", f"unknown resource {params.resource}; this server is {self.resource}")
        scopes = params.scopes or (client.scope.split() if client.scope else list(self.default_scopes))
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=scopes,
            expires_at=time.time() + CODE_LIFETIME,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=SUBJECT,
        )
        # Auto-approve: straight back to the client. The SDK never adds `iss` (RFC 9207) by itself;
        # with --send-iss this provider does (advertised in the metadata only with --advertise-iss).
        return construct_redirect_uri(
            str(params.redirect_uri), code=code, state=params.state, iss=self.issuer if self.send_iss else None
        )

    # --- /token, authorization_code grant (SDK checked client auth, client_id, expiry, redirect_uri, PKCE) ---
    async def load_authorization_code(self, client: OAuthClientInformationFull, authorization_code: str):
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        if self.codes.pop(authorization_code.code, None) is None:  # single use
            raise TokenError("invalid_grant", "authorization code already used")
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    # --- /token, refresh_token grant (SDK checked client_id, expiry, and that scopes only narrow) ---
    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str):
        return self.refresh_tokens.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self._forget(refresh_token.token)  # rotation: the old refresh token and its access token die
        return self._issue(client.client_id, scopes, refresh_token.resource)

    # --- the resource side: ProviderTokenVerifier calls this for every Bearer token ---
    async def load_access_token(self, token: str) -> AccessToken | None:
        access = self.access_tokens.get(token)
        if access and access.expires_at and access.expires_at < time.time():
            return None
        return access

    # --- /revoke (RFC 7009): either token of a pair revokes both ---
    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self._forget(token.token)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = "at_" + secrets.token_urlsafe(32), "rt_" + secrets.token_urlsafe(32)
        self.access_tokens[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + self.token_lifetime,
            resource=resource,
            subject=SUBJECT,
            claims={"iss": self.issuer},
        )
        self.refresh_tokens[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject=SUBJECT
        )
        self.pair[access], self.pair[refresh] = refresh, access
        return OAuthToken(
            access_token=access, expires_in=self.token_lifetime, scope=" ".join(scopes), refresh_token=refresh
        )

    def _forget(self, token: str) -> None:
        other = self.pair.pop(token, None)
        if other:
            self.pair.pop(other, None)
        for t in (token, other):
            self.access_tokens.pop(t, None)
            self.refresh_tokens.pop(t, None)


def answer_plain_get(mcp_transport):
    """Wraps the SDK's MCP transport (inside RequireAuthMiddleware, so only authenticated
    requests get here): a plain GET gets 200 + who the token is for; anything else is MCP."""

    async def app(scope, receive, send):
        accept = dict(scope["headers"]).get(b"accept", b"").decode()
        if scope["method"] == "GET" and "text/event-stream" not in accept:
            user = scope["user"]
            assert isinstance(user, AuthenticatedUser)
            t = user.access_token
            body = {"ok": True, "client_id": t.client_id, "sub": t.subject, "scope": " ".join(t.scopes),
                    "resource": t.resource, "expires_at": t.expires_at}
            await JSONResponse(body)(scope, receive, send)
        else:
            await mcp_transport(scope, receive, send)

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free one; default)")
    parser.add_argument("--scope", default="mcp", help="the one scope registered, advertised and required (default mcp)")
    parser.add_argument("--send-iss", action="store_true", help="add iss (RFC 9207) to the authorization response")
    parser.add_argument("--advertise-iss", action="store_true",
                        help="patch the SDK's AS metadata to say authorization_response_iss_parameter_supported: true")
    parser.add_argument("--no-validate-resource", action="store_true",
                        help="accept tokens not bound to this resource (issued without `resource`)")
    parser.add_argument("--access-token-lifetime", type=int, default=3600)
    parser.add_argument("--verbose", action="store_true", help="uvicorn info + access log on stderr")
    args = parser.parse_args()

    # Bind first: the issuer and resource URLs must carry the real port.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)  # connections made before uvicorn starts wait in the backlog
    port = sock.getsockname()[1]
    issuer = f"http://127.0.0.1:{port}"  # no trailing slash: AuthSettings keeps it as written
    resource = f"{issuer}/mcp"

    provider = AutoApproveProvider(issuer, resource, [args.scope], args.access_token_lifetime, args.send_iss)
    auth = AuthSettings(
        issuer_url=issuer,  # the SDK allows http only for localhost/127.0.0.1/[::1]
        resource_server_url=resource,  # turns on the PRM route and resource_metadata= in 401s
        validate_token_resource=not args.no_validate_resource,  # token's `resource` must be `resource`
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=[args.scope], default_scopes=[args.scope]
        ),
        revocation_options=RevocationOptions(enabled=True),
        required_scopes=[args.scope],  # a token without it gets 403 insufficient_scope; also PRM scopes_supported
    )
    server = MCPServer("latchkey-interop", auth_server_provider=provider, auth=auth,
                       log_level="INFO" if args.verbose else "WARNING")

    @server.tool()
    def echo(text: str) -> str:
        """Returns its argument (something to call over MCP with the token)."""
        return text

    # Stateless + JSON: each POST /mcp is answered with one JSON body (no SSE, no session id needed).
    app = server.streamable_http_app(stateless_http=True, json_response=True, host="127.0.0.1")
    for route in app.router.routes:
        if getattr(route, "path", None) == "/mcp":  # endpoint is the SDK's RequireAuthMiddleware
            route.endpoint.app = answer_plain_get(route.endpoint.app)
        if args.advertise_iss and getattr(route, "path", None) == "/.well-known/oauth-authorization-server":
            # The SDK has no setting for this (build_metadata never sets it): rebuild the same
            # document with the flag and swap the route's ASGI app, CORS wrapper and all.
            metadata = build_metadata(auth.issuer_url, auth.service_documentation_url,
                                      auth.client_registration_options, auth.revocation_options)
            metadata.authorization_response_iss_parameter_supported = True
            route.app = cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"])

    log_config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    log_config["handlers"]["access"]["stream"] = "ext://sys.stderr"  # stdout carries the port line only
    config = uvicorn.Config(app, log_level="info" if args.verbose else "warning", access_log=args.verbose,
                            log_config=log_config, lifespan="on")
    print(port, flush=True)
    print(f"MCP SDK OAuth server: issuer {issuer}, resource {resource}", file=sys.stderr, flush=True)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
