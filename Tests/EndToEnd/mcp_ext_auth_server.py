#!/usr/bin/env python3
"""The MCP conformance suite's ext-auth client scenarios, re-created from its source
(modelcontextprotocol/conformance c321dd3, src/scenarios/client/auth/enterprise-managed-authorization.ts
and client-credentials.ts, with helpers/createAuthServer.ts and createServer.ts):

    /usr/bin/python3 Tests/EndToEnd/mcp_ext_auth_server.py SCENARIO

SCENARIO is enterprise-managed-authorization, client-credentials-basic or client-credentials-jwt.
The first line on stdout is the scenario's context as the suite hands it to a client
(MCP_CONFORMANCE_CONTEXT), with `server_url`, the MCP server's URL, added. The checks the suite makes,
each SUCCESS or FAILURE with its description, are served at GET <server_url base>/_checks.

Servers, each on a port of its own on 127.0.0.1:
- MCP server: RFC 9728 metadata at /.well-known/oauth-protected-resource/mcp naming the
  authorization server; POST /mcp without a token the suite takes (test-token…, cc-token…) is 401
  with resource_metadata; with one, JSON-RPC initialize, tools/list and tools/call are answered.
- Authorization server: RFC 8414 metadata (grant_types_supported as the scenario has it, PKCE S256,
  token_endpoint_auth_methods_supported); POST /token answers the scenario's grant alone, checked as
  the suite checks it.
- With enterprise-managed-authorization, the identity provider: OpenID discovery and POST /token,
  RFC 8693 exchange of the ID token the context carries for an ID-JAG (typ oauth-id-jag+jwt, signed
  with a key made for the person, five minutes), which the authorization server then verifies.
"""

import base64
import json
import sys
import threading
import time
import urllib.parse
import uuid
from http.server import ThreadingHTTPServer

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature

from conformance_http import JSONHandler, b64url, b64url_decode

SCENARIO = sys.argv[1] if len(sys.argv) > 1 else "enterprise-managed-authorization"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
XAA_CLIENT, XAA_SECRET, IDP_CLIENT = "conformance-test-xaa-client", "conformance-test-xaa-secret", "conformance-test-idp-client"
CC_CLIENT, CC_SECRET = "conformance-test-client", "conformance-test-secret"
DEMO_USER = "demo-user@example.com"


def sign(claims, key, header):
    """An ES256 JWS of `claims`."""
    signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(claims).encode())}"
    r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return f"{signing_input}.{b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def verified(jwt, public_key, audiences=None, issuer=None, tolerance=0):
    """The claims of `jwt` as jose.jwtVerify gives them: signature, aud among `audiences`, iss, exp; or raises ValueError."""
    parts = jwt.split(".")
    if len(parts) != 3:
        raise ValueError("not a compact JWS")
    header, claims, signature = json.loads(b64url_decode(parts[0])), json.loads(b64url_decode(parts[1])), b64url_decode(parts[2])
    if header.get("alg") != "ES256" or len(signature) != 64:
        raise ValueError("not ES256")
    try:
        der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
        public_key.verify(der, f"{parts[0]}.{parts[1]}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        raise ValueError("signature verification failed") from None
    if audiences is not None:
        aud = claims.get("aud")
        if not any(a in audiences for a in (aud if isinstance(aud, list) else [aud])):
            raise ValueError('unexpected "aud" claim value')
    if issuer is not None and claims.get("iss") != issuer:
        raise ValueError('unexpected "iss" claim value')
    if "exp" in claims and time.time() - tolerance >= claims["exp"]:
        raise ValueError('"exp" claim timestamp check failed')
    return header, claims


class Checks:
    def __init__(self):
        self.lock = threading.Lock()
        self.list = []

    def add(self, check_id, status, description):
        with self.lock:
            self.list.append({"id": check_id, "status": status, "description": description})

    def graded(self):
        """As getChecks: a step the client never took is a FAILURE of its own."""
        with self.lock:
            checks = list(self.list)
        ids = {check["id"] for check in checks}
        expected = {
            "enterprise-managed-authorization": [("complete-flow-token-exchange", "Client did not perform token exchange"),
                                                 ("complete-flow-jwt-bearer", "Client did not perform JWT bearer grant exchange")],
            "client-credentials-basic": [("client-credentials-basic-auth", "Client did not make a token request")],
            "client-credentials-jwt": [("client-credentials-jwt-verified", "Client did not make a token request")],
        }[SCENARIO]
        for check_id, description in expected:
            if check_id not in ids:
                checks.append({"id": check_id, "status": "FAILURE", "description": description})
        return checks


CHECKS = Checks()
IDP_KEY = ec.generate_private_key(ec.SECP256R1())
CC_KEY = ec.generate_private_key(ec.SECP256R1())
GRANT_KEYS = {}
URLS = {}


class Handler(JSONHandler):
    @property
    def role(self):
        return next(role for role, url in URLS.items() if url.endswith(f":{self.server.server_address[1]}"))

    def do_GET(self):
        path, role = urllib.parse.urlsplit(self.path).path, self.role
        if role == "mcp" and path == "/.well-known/oauth-protected-resource/mcp":
            return self.answer(200, {"resource": f"{URLS['mcp']}/mcp", "authorization_servers": [URLS["as"]]})
        if role == "mcp" and path == "/_checks":
            return self.answer(200, CHECKS.graded())
        if role == "as" and path == "/.well-known/oauth-authorization-server":
            grants = {"enterprise-managed-authorization": [JWT_BEARER]}.get(SCENARIO, ["client_credentials"])
            methods = ["private_key_jwt"] if SCENARIO == "client-credentials-jwt" else ["client_secret_basic"]
            document = {
                "issuer": URLS["as"], "authorization_endpoint": f"{URLS['as']}/authorize", "token_endpoint": f"{URLS['as']}/token",
                "registration_endpoint": f"{URLS['as']}/register", "response_types_supported": ["code"],
                "grant_types_supported": grants, "code_challenge_methods_supported": ["S256"],
                "authorization_response_iss_parameter_supported": True, "token_endpoint_auth_methods_supported": methods}
            if SCENARIO == "client-credentials-jwt":
                document["token_endpoint_auth_signing_alg_values_supported"] = ["ES256"]
            return self.answer(200, document)
        if role == "idp" and path == "/.well-known/openid-configuration":
            return self.answer(200, {"issuer": URLS["idp"], "authorization_endpoint": f"{URLS['idp']}/authorize",
                                     "token_endpoint": f"{URLS['idp']}/token", "jwks_uri": f"{URLS['idp']}/.well-known/jwks.json",
                                     "grant_types_supported": [TOKEN_EXCHANGE]})
        self.answer(404, {"error": "not_found"})

    def do_POST(self):
        path, role = urllib.parse.urlsplit(self.path).path, self.role
        if role == "mcp" and path == "/mcp":
            return self.mcp()
        if role == "idp" and path == "/token":
            return self.exchange(self.form())
        if role == "as" and path == "/token":
            return self.token(self.form())
        self.answer(404, {"error": "not_found"})

    # The identity provider (the scenario's startIdpServer).
    def exchange(self, form):
        if form.get("grant_type") != TOKEN_EXCHANGE:
            CHECKS.add("complete-flow-token-exchange", "FAILURE", f"IdP expected token-exchange grant, got {form.get('grant_type')}")
            return self.answer(400, {"error": "unsupported_grant_type"})
        missing = []
        if not form.get("subject_token"):
            missing.append("subject_token")
        if form.get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token":
            missing.append("subject_token_type")
        if form.get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag":
            missing.append("requested_token_type")
        missing += [name for name in ("audience", "resource") if not form.get(name)]
        if missing:
            CHECKS.add("complete-flow-token-exchange", "FAILURE", f"Token exchange missing or invalid required parameters: {', '.join(missing)}")
            return self.answer(400, {"error": "invalid_request"})
        try:
            _, claims = verified(form["subject_token"], IDP_KEY.public_key(), audiences=[IDP_CLIENT], issuer=URLS["idp"])
        except (ValueError, KeyError) as error:
            CHECKS.add("complete-flow-token-exchange", "FAILURE", f"Token exchange failed: {error}")
            return self.answer(400, {"error": "invalid_grant", "error_description": "Invalid ID token"})
        CHECKS.add("complete-flow-token-exchange", "SUCCESS", "Successfully exchanged IDP ID token for ID-JAG at IdP with all required parameters")
        key = ec.generate_private_key(ec.SECP256R1())
        GRANT_KEYS[claims["sub"]] = key.public_key()
        now = int(time.time())
        jag = sign({"sub": claims["sub"], "resource": form["resource"], "client_id": XAA_CLIENT, "iss": URLS["idp"],
                    "aud": form["audience"], "iat": now, "exp": now + 300, "jti": str(uuid.uuid4())},
                   key, {"alg": "ES256", "typ": "oauth-id-jag+jwt"})
        self.answer(200, {"access_token": jag, "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A"})

    # The authorization server (createAuthServer's token endpoint with the scenario's onTokenRequest).
    def token(self, form):
        grant = form.get("grant_type")
        if SCENARIO == "enterprise-managed-authorization":
            if grant != JWT_BEARER:
                return self.answer(400, {"error": "unsupported_grant_type"})
            return self.jwt_bearer(form)
        if grant != "client_credentials":
            CHECKS.add("client-credentials-grant-type", "FAILURE", f"Expected grant_type=client_credentials, got {grant}")
            return self.answer(400, {"error": "unsupported_grant_type"})
        if SCENARIO == "client-credentials-basic":
            credentials = self.basic()
            if credentials != (CC_CLIENT, CC_SECRET):
                CHECKS.add("client-credentials-basic-auth", "FAILURE",
                           "Missing or invalid Authorization header for Basic auth" if credentials is None else "Invalid client credentials")
                return self.answer(401, {"error": "invalid_client"})
            CHECKS.add("client-credentials-basic-auth", "SUCCESS", "Client correctly authenticated with client_secret_basic")
        else:
            if form.get("client_assertion_type") != ASSERTION_TYPE:
                CHECKS.add("client-credentials-assertion-type", "FAILURE", f"Invalid client_assertion_type: {form.get('client_assertion_type')}")
                return self.answer(401, {"error": "invalid_client"})
            base = URLS["as"].rstrip("/")
            try:
                _, claims = verified(form.get("client_assertion", ""), CC_KEY.public_key(), audiences=[base, base + "/"], tolerance=30)
            except (ValueError, KeyError) as error:
                CHECKS.add("client-credentials-jwt-verified", "FAILURE", f"JWT verification failed: {error}")
                return self.answer(401, {"error": "invalid_client"})
            for claim in ("iss", "sub"):
                if claims.get(claim) != CC_CLIENT:
                    CHECKS.add(f"client-credentials-jwt-{claim}", "FAILURE", f"JWT {claim} claim does not match expected client_id")
                    return self.answer(401, {"error": "invalid_client"})
            CHECKS.add("client-credentials-jwt-verified", "SUCCESS", "Client credentials JWT verified successfully")
        scopes = form["scope"].split(" ") if form.get("scope") else []
        self.answer(200, {"access_token": f"cc-token-{int(time.time() * 1000)}", "token_type": "Bearer", "expires_in": 3600,
                          **({"scope": " ".join(scopes)} if scopes else {})})

    def basic(self):
        """The Basic credentials as the suite reads them (each part URL-decoded), None without."""
        header = self.headers.get("Authorization") or ""
        if not header.startswith("Basic "):
            return None
        decoded = base64.b64decode(header[len("Basic "):]).decode()
        if ":" not in decoded:
            return ("", "")
        client, secret = decoded.split(":", 1)
        return urllib.parse.unquote(client), urllib.parse.unquote(secret)

    def jwt_bearer(self, form):
        credentials = self.basic()
        if credentials is None:
            CHECKS.add("complete-flow-jwt-bearer", "FAILURE", "Missing or invalid Authorization header for client_secret_basic authentication")
            return self.answer(401, {"error": "invalid_client"})
        if credentials != (XAA_CLIENT, XAA_SECRET):
            CHECKS.add("complete-flow-jwt-bearer", "FAILURE", "Invalid client credentials")
            return self.answer(401, {"error": "invalid_client"})
        assertion = form.get("assertion")
        if not assertion:
            CHECKS.add("complete-flow-jwt-bearer", "FAILURE", "Missing assertion parameter")
            return self.answer(400, {"error": "invalid_request"})
        try:
            header = json.loads(b64url_decode(assertion.split(".")[0]))
            if header.get("typ") != "oauth-id-jag+jwt":
                CHECKS.add("complete-flow-jwt-bearer", "FAILURE", f"ID-JAG has wrong typ header: expected oauth-id-jag+jwt, got {header.get('typ')}")
                return self.answer(400, {"error": "invalid_grant"})
            subject = json.loads(b64url_decode(assertion.split(".")[1])).get("sub")
            if subject not in GRANT_KEYS:
                raise ValueError("Unknown authorization grant")
            base = URLS["as"].rstrip("/")
            _, claims = verified(assertion, GRANT_KEYS[subject], audiences=[base, base + "/"], tolerance=30)
        except (ValueError, KeyError, IndexError) as error:
            CHECKS.add("complete-flow-jwt-bearer", "FAILURE", f"JWT bearer grant failed: {error}")
            return self.answer(400, {"error": "invalid_grant"})
        if claims.get("client_id") != credentials[0]:
            CHECKS.add("complete-flow-jwt-bearer", "FAILURE", "ID-JAG client_id does not match authenticating client")
            return self.answer(400, {"error": "invalid_grant"})
        if claims.get("resource") != f"{URLS['mcp']}/mcp":
            CHECKS.add("complete-flow-jwt-bearer", "FAILURE", f"ID-JAG resource ({claims.get('resource')}) does not match MCP server resource")
            return self.answer(400, {"error": "invalid_grant"})
        CHECKS.add("complete-flow-jwt-bearer", "SUCCESS", "Successfully verified client auth, ID-JAG claims, and exchanged for access token")
        scopes = form["scope"].split(" ") if form.get("scope") else []
        self.answer(200, {"access_token": f"test-token-{int(time.time() * 1000)}", "token_type": "Bearer", "expires_in": 3600,
                          **({"scope": " ".join(scopes)} if scopes else {})})

    # The MCP server (createServer with the mock token verifier).
    def mcp(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        scheme, _, token = (self.headers.get("Authorization") or "").partition(" ")
        metadata = f"{URLS['mcp']}/.well-known/oauth-protected-resource/mcp"
        if scheme.lower() != "bearer" or not token.startswith(("test-token", "cc-token")):
            if token:
                CHECKS.add("invalid-bearer-token", "FAILURE", "Client presented a token the server does not take")
            return self.answer(401, {"error": "invalid_token"}, headers=[("WWW-Authenticate", f'Bearer resource_metadata="{metadata}"')])
        CHECKS.add("valid-bearer-token", "SUCCESS", "Client presented a valid bearer token")
        self.answer_mcp(body, "conformance-ext-auth")


def serve(role):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    URLS[role] = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()


if __name__ == "__main__":
    for role in ("mcp", "as", "idp"):
        serve(role)
    context = {"server_url": f"{URLS['mcp']}/mcp"}
    if SCENARIO == "enterprise-managed-authorization":
        now = int(time.time())
        context.update({
            "client_id": XAA_CLIENT, "client_secret": XAA_SECRET, "idp_client_id": IDP_CLIENT, "idp_issuer": URLS["idp"],
            "idp_token_endpoint": f"{URLS['idp']}/token",
            "idp_id_token": sign({"sub": DEMO_USER, "email": DEMO_USER, "aud": IDP_CLIENT, "iss": URLS["idp"], "iat": now, "exp": now + 3600},
                                 IDP_KEY, {"alg": "ES256"})})
    elif SCENARIO == "client-credentials-basic":
        context.update({"client_id": CC_CLIENT, "client_secret": CC_SECRET})
    else:
        pem = CC_KEY.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
        context.update({"client_id": CC_CLIENT, "private_key_pem": pem, "signing_algorithm": "ES256"})
    print(json.dumps(context), flush=True)
    threading.Event().wait()
