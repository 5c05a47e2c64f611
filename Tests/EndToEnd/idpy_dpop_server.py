#!/usr/bin/env python3
"""An independent DPoP authorization server for interop tests: IdentityPython's idpyoidc (5.0.0,
from PyPI) with its own DPoP add-on, as it ships, behind a small HTTP front on 127.0.0.1.

    .build/python-peers/bin/python Tests/EndToEnd/idpy_dpop_server.py

The first line on stdout is the port. One public client, `latchkey-desktop` (no secret, PKCE S256,
a redirect URI http://127.0.0.1[:any port]/callback); the person `ada` is signed in at once (no
login page). Endpoints: /.well-known/openid-configuration, /authorization, /token (DPoP proofs
required, tokens bound to the proof's key, refresh tokens too), /userinfo (the DPoP scheme).

What this front adds to idpyoidc, and why (idpyoidc 5.0.0 as found):
  * `dpop_signing_alg_values_supported` put back into its discovery: Server() rebuilds the
    document after the add-on wrote it there;
  * the redirect URI's port taken as RFC 8252 §7.3 says (registered on the fly);
  * its add-on's exceptions answered as `invalid_dpop_proof` (401 with a DPoP challenge at
    UserInfo, 400 elsewhere) instead of a crash.
Its checks are its own, including where they differ from RFC 9449: it compares `ath` with the
*hex* SHA-256 of the token (§4.2 says base64url), so a client that follows the RFC is refused at
UserInfo; that is what the interop test shows, and Latchkey must say it and keep the sign-in.
"""

import json
import os
import socket
import sys
import tempfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlparse

from idpyoidc.server import Server
from idpyoidc.server.configure import OPConfiguration

listening = socket.socket()
listening.bind(("127.0.0.1", 0))
PORT = listening.getsockname()[1]
ISSUER = f"http://127.0.0.1:{PORT}"
HERE = tempfile.mkdtemp(prefix="idpy-")  # where idpyoidc writes its keys
os.chdir(HERE)

CONFIGURATION = {
    "issuer": ISSUER,
    "httpc_params": {"verify": False},
    "keys": {"key_defs": [{"type": "RSA", "use": ["sig"]}, {"type": "EC", "crv": "P-256", "use": ["sig"]}],
             "uri_path": "jwks.json", "private_path": "private/jwks.json", "read_only": False},
    "endpoint": {
        "provider_info": {"path": ".well-known/openid-configuration",
                          "class": "idpyoidc.server.oidc.provider_config.ProviderConfiguration",
                          "kwargs": {"client_authn_method": None}},
        "authorization": {"path": "authorization", "class": "idpyoidc.server.oidc.authorization.Authorization",
                          "kwargs": {"client_authn_method": None, "response_types_supported": ["code"],
                                     "response_modes_supported": ["query"]}},
        "token": {"path": "token", "class": "idpyoidc.server.oidc.token.Token", "kwargs": {"client_authn_method": ["public"]}},
        "userinfo": {"path": "userinfo", "class": "idpyoidc.server.oidc.userinfo.UserInfo",
                     "kwargs": {"client_authn_method": ["dpop"]}},
    },
    "add_on": {
        "pkce": {"function": "idpyoidc.server.oauth2.add_on.pkce.add_support",
                 "kwargs": {"essential": True, "code_challenge_methods": {"S256": "S256"}}},
        "dpop": {"function": "idpyoidc.server.oauth2.add_on.dpop.add_support",
                 "kwargs": {"dpop_signing_alg_values_supported": ["ES256"], "dpop_endpoints": ["token", "userinfo"]}},
    },
    "authentication": {"anon": {"acr": "urn:oasis:names:tc:SAML:2.0:ac:classes:unspecified",
                                "class": "idpyoidc.server.user_authn.user.NoAuthn", "kwargs": {"user": "ada"}}},
    "userinfo": {"class": "idpyoidc.server.user_info.UserInfo",
                 "kwargs": {"db": {"ada": {"name": "Ada Lovelace", "email": "ada@idpy.example", "email_verified": True}}}},
    "token_handler_args": {
        "jwks_def": {"private_path": "private/token_jwks.json", "read_only": False,
                     "key_defs": [{"type": "oct", "bytes": 24, "use": ["enc"], "kid": "code"},
                                  {"type": "oct", "bytes": 24, "use": ["enc"], "kid": "refresh"}]},
        "code": {"kwargs": {"lifetime": 600}},
        "token": {"class": "idpyoidc.server.token.jwt_token.JWTToken", "kwargs": {"lifetime": 3600}},
        "refresh": {"kwargs": {"lifetime": 86400}},
        "id_token": {"class": "idpyoidc.server.token.id_token.IDToken", "kwargs": {}},
    },
    "authz": {"class": "idpyoidc.server.authz.AuthzHandling", "kwargs": {"grant_config": {
        "expires_in": 2592000, "usage_rules": {
            "authorization_code": {"supports_minting": ["access_token", "refresh_token", "id_token"], "max_usage": 1,
                                   "expires_in": 120},
            "access_token": {"expires_in": 3600},
            "refresh_token": {"supports_minting": ["access_token", "refresh_token"], "expires_in": 86400}}}}},
}

SERVER = Server(OPConfiguration(CONFIGURATION, base_path=HERE), cwd=HERE)
SERVER.context.cdb["latchkey-desktop"] = {
    "client_id": "latchkey-desktop", "redirect_uris": [("http://127.0.0.1/callback", {})], "token_endpoint_auth_method": "none",
    "response_types_supported": ["code"], "grant_types_supported": ["authorization_code", "refresh_token"],
    "allowed_scopes": ["openid", "profile", "email"]}
SERVER.context.provider_info["dpop_signing_alg_values_supported"] = SERVER.context.add_on["dpop"]["algs_supported"]
PATHS = {urlparse(endpoint.full_path).path: name for name, endpoint in SERVER.endpoint.items()}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *arguments):
        pass

    def serve(self, method):
        url = urlparse(self.path)
        if url.path == "/jwks.json":  # the keys its ID tokens are signed with
            return self.send(200, [("Content-Type", "application/json")], json.dumps(SERVER.context.keyjar.export_jwks()).encode())
        name = PATHS.get(url.path)
        if not name:
            return self.send(404, [], b"")
        endpoint = SERVER.endpoint[name]
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode() if method == "POST" else url.query
        request = dict(parse_qsl(body))
        if name == "authorization":
            redirect = urlparse(request.get("redirect_uri", ""))
            if redirect.scheme == "http" and redirect.hostname == "127.0.0.1" and redirect.path == "/callback":
                SERVER.context.cdb["latchkey-desktop"]["redirect_uris"].append((request["redirect_uri"], {}))
        http_info = {"headers": {k.lower(): v for k, v in self.headers.items()}, "url": ISSUER + url.path, "method": method}
        try:
            parsed = endpoint.parse_request(request, http_info=http_info)
            if "error" in parsed:
                return self.error(name, parsed.to_dict())
            extra = {"issue_refresh": True} if name == "token" else {}
            processed = endpoint.process_request(parsed, http_info=http_info, **extra)
            if "error" in processed:
                return self.error(name, processed.to_dict() if hasattr(processed, "to_dict") else dict(processed))
            response = endpoint.do_response(request=parsed, **processed)
        except Exception as error:  # the add-on raises plain exceptions for a proof it does not take
            return self.error(name, {"error": "invalid_dpop_proof", "error_description": f"{type(error).__name__}: {error}"})
        if endpoint.response_placement == "url":
            return self.send(302, [("Location", response["response"])], b"")
        self.send(200, list(response["http_headers"]), str(response["response"]).encode())

    def error(self, name, answer):
        headers = [("Content-Type", "application/json")]
        status = 400
        if name == "userinfo":
            status = 401
            error = str(answer.get("error", "invalid_token")).replace('"', "")
            description = str(answer.get("error_description", "")).replace('"', "'")
            headers.append(("WWW-Authenticate", f'DPoP algs="ES256", error="{error}", error_description="{description}"'))
        self.send(status, headers, json.dumps(answer).encode())

    def send(self, status, headers, body):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.serve("GET")

    def do_POST(self):
        self.serve("POST")


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler, bind_and_activate=False)
    server.socket = listening
    listening.listen(16)
    print(PORT, flush=True)
    sys.stdout.close()
    server.serve_forever()
