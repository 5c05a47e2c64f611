#!/usr/bin/env python3
"""The MCP conformance suite's client scenarios `auth/dpop` and `auth/dpop-nonce`, re-created
(modelcontextprotocol/conformance, src/scenarios/client/auth/dpop.ts and its helpers, v0.2.0-alpha.11):
an authorization server and an MCP server on 127.0.0.1 that take DPoP-bound tokens alone, and the
checks the suite makes of a client, each SUCCESS or FAILURE, served at GET /_checks.

    /usr/bin/python3 Tests/EndToEnd/mcp_dpop_server.py [--nonce]

The first line on stdout is the port. With --nonce, the token endpoint asks for its nonce
(400 use_dpop_nonce, DPoP-Nonce: conformance-as-dpop-nonce) and the MCP endpoint for its own
(401 WWW-Authenticate: DPoP error="use_dpop_nonce", DPoP-Nonce: conformance-rs-dpop-nonce), as
the suite does: a fixed nonce each, which every later proof must carry.

Authorization server (the suite's createAuthServer): RFC 8414 metadata at
/.well-known/oauth-authorization-server (dpop_signing_alg_values_supported ES256, PKCE S256, no
scopes); POST /register answers any client; GET /authorize redirects at once with a code, the
state and iss; POST /token checks PKCE and the DPoP proof (one header, typ dpop+jwt, an asymmetric
alg, a public jwk, its signature, a jti, htm POST, htu the token endpoint, iat within 300 s) and
answers a JWT access token bound to the proof's key (cnf.jkt), token_type DPoP.
MCP server (createServer with createDpopResourceAuth): RFC 9728 metadata at
/.well-known/oauth-protected-resource/mcp; POST /mcp without Authorization is 401
`DPoP resource_metadata=…`; with one, the proof is checked as at the token endpoint plus htm the
request's, htu /mcp, ath the token's hash, the key the token's cnf.jkt; its jti must be new. A
proof that is not right is recorded and the request served all the same, as the suite does.
JSON-RPC initialize, notifications, tools/list and tools/call are answered.

Checks, by the suite's ids: sep-1932-client-token-request-proof, sep-1932-client-dpop-auth-scheme,
sep-1932-client-fresh-proof, and with --nonce sep-1932-client-as-nonce and sep-1932-client-rs-nonce.
"""

import hashlib
import json
import secrets
import sys
import threading
import time
import urllib.parse
from http.server import ThreadingHTTPServer

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from conformance_http import JSONHandler, b64url, b64url_decode

NONCE_MODE = "--nonce" in sys.argv
AS_NONCE, RS_NONCE = "conformance-as-dpop-nonce", "conformance-rs-dpop-nonce"


def thumbprint(jwk):
    canonical = json.dumps({"crv": jwk["crv"], "kty": jwk["kty"], "x": jwk["x"], "y": jwk["y"]}, separators=(",", ":"))
    return b64url(hashlib.sha256(canonical.encode()).digest())


def normal(url):
    """Scheme and host lower case, a single trailing slash of the path dropped (the suite's normalisation)."""
    parts = urllib.parse.urlsplit(url)
    path = parts.path[:-1] if parts.path.endswith("/") and len(parts.path) > 1 else parts.path
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{path}"


def check_proof(headers, method, url, access_token=None):
    """The proof in `headers` as the suite checks it: (its claims and key's thumbprint, None) or (None, why not)."""
    values = headers.get_all("DPoP") or []
    if len(values) != 1 or "," in values[0]:
        return None, "exactly one DPoP header"
    parts = values[0].split(".")
    if len(parts) != 3:
        return None, "a JWS in compact form"
    try:
        header, claims = json.loads(b64url_decode(parts[0])), json.loads(b64url_decode(parts[1]))
        signature = b64url_decode(parts[2])
    except ValueError:
        return None, "a JWS in compact form"
    if header.get("typ") != "dpop+jwt":
        return None, "typ dpop+jwt"
    if header.get("alg") not in ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"):
        return None, "an asymmetric alg"
    jwk = header.get("jwk")
    if not isinstance(jwk, dict) or "d" in jwk:
        return None, "a public jwk"
    if header["alg"] != "ES256" or jwk.get("kty") != "EC" or jwk.get("crv") != "P-256":
        return None, "an ES256 key (all this re-creation checks)"
    try:
        key = ec.EllipticCurvePublicNumbers(int.from_bytes(b64url_decode(jwk["x"]), "big"), int.from_bytes(b64url_decode(jwk["y"]), "big"),
                                            ec.SECP256R1()).public_key()
        der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
        key.verify(der, f"{parts[0]}.{parts[1]}".encode(), ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError, KeyError):
        return None, "a signature that verifies with its jwk"
    if not isinstance(claims.get("jti"), str):
        return None, "a jti"
    if claims.get("htm") != method:
        return None, f"htm {method}"
    htu = claims.get("htu", "")
    if not isinstance(htu, str) or "?" in htu or "#" in htu or normal(htu) != normal(url):
        return None, f"htu {url}"
    if not isinstance(claims.get("iat"), (int, float)) or abs(time.time() - claims["iat"]) > 300:
        return None, "iat within 300 s"
    if access_token is not None:
        if claims.get("ath") != b64url(hashlib.sha256(access_token.encode("ascii")).digest()):
            return None, "ath the hash of the access token"
        try:
            bound = json.loads(b64url_decode(access_token.split(".")[1]))["cnf"]["jkt"]
        except (ValueError, KeyError, IndexError):
            return None, "an access token of this server's"
        if bound != thumbprint(jwk):
            return None, "the key the access token is bound to"
    return (claims, thumbprint(jwk)), None


class Checks:
    """What the suite records of the client, and its grading."""

    def __init__(self):
        self.lock = threading.Lock()
        self.token_requests = 0
        self.token_proof_error = None
        self.authenticated = 0
        self.non_dpop_scheme = None
        self.proof_errors = []
        self.jtis = set()
        self.replayed = False
        self.as_challenged = self.as_honored = self.rs_challenged = self.rs_honored = False

    def graded(self):
        with self.lock:
            checks = {
                "sep-1932-client-token-request-proof": (
                    "FAILURE" if self.token_requests == 0 or self.token_proof_error else "SUCCESS",
                    "never completed an authorization_code token request" if self.token_requests == 0
                    else self.token_proof_error or ""),
                "sep-1932-client-dpop-auth-scheme": (
                    "SUCCESS" if self.authenticated and not self.non_dpop_scheme else "FAILURE",
                    "never presented an access token" if not self.authenticated else (self.non_dpop_scheme or "")),
                "sep-1932-client-fresh-proof": (
                    "SUCCESS" if self.authenticated and not self.proof_errors and not self.replayed else "FAILURE",
                    "reused a DPoP proof (duplicate jti)" if self.replayed else "; ".join(self.proof_errors[:3])),
            }
            if NONCE_MODE:
                checks["sep-1932-client-as-nonce"] = ("SUCCESS" if self.as_challenged and self.as_honored else "FAILURE", "")
                checks["sep-1932-client-rs-nonce"] = ("SUCCESS" if self.rs_challenged and self.rs_honored else "FAILURE", "")
            return {name: {"status": status, "detail": detail} for name, (status, detail) in checks.items()}


CHECKS = Checks()
CHALLENGES = {}


class Handler(JSONHandler):
    @property
    def base(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def do_GET(self):
        path = urllib.parse.urlsplit(self.path)
        if path.path == "/.well-known/oauth-protected-resource/mcp":
            return self.answer(200, {"resource": f"{self.base}/mcp", "authorization_servers": [self.base]})
        if path.path == "/.well-known/oauth-authorization-server":
            return self.answer(200, {
                "issuer": self.base, "authorization_endpoint": f"{self.base}/authorize", "token_endpoint": f"{self.base}/token",
                "registration_endpoint": f"{self.base}/register", "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"], "code_challenge_methods_supported": ["S256"],
                "authorization_response_iss_parameter_supported": True, "token_endpoint_auth_methods_supported": ["none"],
                "dpop_signing_alg_values_supported": ["ES256"]})
        if path.path == "/authorize":
            query = {k: v[0] for k, v in urllib.parse.parse_qs(path.query).items()}
            CHALLENGES["test-auth-code"] = query.get("code_challenge")
            location = query["redirect_uri"] + ("&" if "?" in query["redirect_uri"] else "?") + urllib.parse.urlencode(
                {"code": "test-auth-code", "state": query.get("state", ""), "iss": self.base})
            return self.answer(302, headers=[("Location", location)])
        if path.path == "/_checks":
            return self.answer(200, CHECKS.graded())
        self.answer(404, {"error": "not_found"})

    def do_POST(self):
        path = urllib.parse.urlsplit(self.path).path
        if path == "/register":
            metadata = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            return self.answer(201, {"client_id": "test-client-id", "client_secret": "test-client-secret",
                                     "client_name": metadata.get("client_name", ""), "redirect_uris": metadata.get("redirect_uris", [])})
        if path == "/token":
            return self.token(self.form())
        if path == "/mcp":
            return self.mcp()
        self.answer(404, {"error": "not_found"})

    def token(self, form):
        if form.get("grant_type") != "authorization_code":
            return self.answer(400, {"error": "unsupported_grant_type"})
        verifier = form.get("code_verifier", "")
        if b64url(hashlib.sha256(verifier.encode()).digest()) != CHALLENGES.get(form.get("code")):
            return self.answer(400, {"error": "invalid_grant", "error_description": "PKCE verification failed"})
        proved, why = check_proof(self.headers, "POST", f"{self.base}/token")
        with CHECKS.lock:
            CHECKS.token_requests += 1
            if why and not CHECKS.token_proof_error:
                CHECKS.token_proof_error = f"did not present a valid DPoP proof at the token endpoint: {why}"
        if not self.headers.get("DPoP"):
            return self.answer(200, {"access_token": "test-token-" + secrets.token_hex(8), "token_type": "Bearer", "expires_in": 3600})
        if why:
            return self.answer(400, {"error": "invalid_dpop_proof", "error_description": why})
        claims, key = proved
        if NONCE_MODE:
            if claims.get("nonce") != AS_NONCE:
                with CHECKS.lock:
                    CHECKS.as_challenged = True
                return self.answer(400, {"error": "use_dpop_nonce", "error_description": "Authorization server requires a DPoP nonce"},
                                   headers=[("DPoP-Nonce", AS_NONCE)])
            with CHECKS.lock:
                CHECKS.as_honored = CHECKS.as_challenged
        now = int(time.time())
        header = b64url(json.dumps({"alg": "ES256", "typ": "at+jwt"}).encode())
        payload = b64url(json.dumps({"iss": self.base, "sub": "conformance-test-subject", "aud": form.get("resource") or "urn:conformance-test-resource",
                                     "iat": now, "exp": now + 3600, "cnf": {"jkt": key}}).encode())
        self.answer(200, {"access_token": f"{header}.{payload}.{b64url(secrets.token_bytes(64))}", "token_type": "DPoP", "expires_in": 3600})

    def mcp(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        authorization = self.headers.get("Authorization")
        metadata = f"{self.base}/.well-known/oauth-protected-resource/mcp"
        if not authorization:
            return self.answer(401, {"error": "unauthorized"}, headers=[("WWW-Authenticate", f'DPoP resource_metadata="{metadata}"')])
        scheme, _, token = authorization.partition(" ")
        proved, why = check_proof(self.headers, "POST", f"{self.base}/mcp", access_token=token.strip())
        with CHECKS.lock:
            CHECKS.authenticated += 1
            if scheme.lower() != "dpop":
                CHECKS.non_dpop_scheme = f"non-DPoP Authorization scheme ({scheme})"
            if why:
                CHECKS.proof_errors.append(f"missing or malformed: {why}")
            elif proved[0]["jti"] in CHECKS.jtis:
                CHECKS.replayed = True
            else:
                CHECKS.jtis.add(proved[0]["jti"])
        if NONCE_MODE and proved and proved[0].get("nonce") != RS_NONCE:
            with CHECKS.lock:
                CHECKS.rs_challenged = True
            return self.answer(401, {"error": "use_dpop_nonce"}, headers=[
                ("WWW-Authenticate", f'DPoP error="use_dpop_nonce", resource_metadata="{metadata}"'), ("DPoP-Nonce", RS_NONCE)])
        if NONCE_MODE and proved:
            with CHECKS.lock:
                CHECKS.rs_honored = CHECKS.rs_challenged
        self.answer_mcp(body, "conformance-dpop")


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()
