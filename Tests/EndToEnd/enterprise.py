"""Enterprise-Managed Authorization (issue 41): the person signs in once, at the organisation's identity
provider, and `latchkey token --resource` reaches each MCP server its policy allows with no page of its
own: two real sandboxes, one the identity provider, one an MCP server's authorization server that takes
its ID-JAGs."""

import json
import os
import re
import shutil
import subprocess
import time
import urllib.request

from agent import Sandbox, allow_gdbus, gdbus
from harness import BIN, add_by_issuer, admin, assert_no_secrets, expect, sign_in
from zero_config import resource_answer

RESOURCES = ("/api/me", "/api/notes", "/api/open")


def token(resource, *extra, display=True):
    """`latchkey token --resource …` as a script runs it; without `display`, where no window could show."""
    environment = dict(os.environ)
    if not display:
        environment.pop("DISPLAY", None)
        environment.pop("WAYLAND_DISPLAY", None)
    return subprocess.run([os.path.join(BIN, "latchkey"), "token", "--resource", resource, *extra],
                          capture_output=True, text=True, timeout=120, env=environment)


def provider_files(home):
    """The person's provider files, read, each with its id."""
    directory = os.path.join(home.config, "latchkey")
    files = []
    for name in sorted(os.listdir(directory)):
        if name.endswith(".json"):
            with open(os.path.join(directory, name)) as f:
                file = json.load(f)
            file.setdefault("id", name[:-len(".json")])  # a file made for an issuer is named by its id alone
            files.append(file)
    return files


def registered_client(home, resource):
    """The provider file Latchkey wrote for `resource`, with the client it registered at its server."""
    file = next((file for file in provider_files(home) if file.get("resource") == resource), None)
    expect(file is not None, f"no provider file for {resource}")
    return file


def enterprise_sign_in(home):
    idp = Sandbox(log=os.path.join(home.root, "idp.log"))
    server = Sandbox("--trust-idp", idp.base, "--access-token-ttl", "4", log=os.path.join(home.root, "server.log"))
    try:
        # The identity provider, added in the window by its issuer, marked as the organisation's; signed in once.
        window = home.launch()
        try:
            window.wait_status("Not signed in")

            def mark_as_the_organisations(dialog):
                window.press(window.find("check box", "My organisation's identity provider", exact=False, root=dialog))
                window.screenshot("01-add-the-identity-provider")
            host = add_by_issuer(window, idp.base, before_add=mark_as_the_organisations)
            sign_in(window, home)
            window.wait_status(f"Signed in with {host}")
        finally:
            window.quit()
        idp_file = next(file for file in provider_files(home) if file.get("issuer", "").rstrip("/") == idp.base)
        expect(idp_file.get("enterprise_idp") is True, f"the identity provider's file: {idp_file}")
        idp_id = idp_file["id"]
        resources = [server.base + path for path in RESOURCES]

        # Before the organisation allows anything: each server's refusal said, then its own sign-in
        # (which nobody is here for). Latchkey registered itself at the server meanwhile.
        for resource in resources:
            refused = token(resource, "--no-interaction")
            expect(refused.returncode == 6 and refused.stdout == "", f"refused {resource}: {refused.returncode} {refused.stderr!r}")
            expect(f"your organisation's identity provider, does not let you use {resource}" in refused.stderr
                   and "Signing in at the server itself." in refused.stderr, f"the sentence: {refused.stderr!r}")
            file = registered_client(home, resource)
            expect(file.get("grant") == "id_jag" and file.get("identity_provider") == idp_id, f"the provider file: {file}")

        # The organisation's policy: Ada may use the three servers, under the client ids Latchkey has there.
        policy = [{"user": "ada", "audience": server.base, "resource": resource, "scopes": ["openid", "profile"],
                   "client_id": registered_client(home, resource)["client_id"]} for resource in resources]
        admin(idp.base, "/_admin/id-jag-policy", policy)

        # The window, on the third server: Sign in asks nobody anything (no page opens), and says how.
        grants_before = admin(server.base, "/_admin/stats")["id_jags_redeemed"]
        window = home.launch("--resource", resources[2])
        try:
            window.wait_status("Not signed in", timeout=30)
            window.press(window.wait_sensitive("Sign in"))
            window.wait_status("Signed in through your organisation's identity provider", timeout=30)
            window.screenshot("02-signed-in-through-the-identity-provider")
        finally:
            window.quit()
        expect(admin(server.base, "/_admin/stats")["id_jags_redeemed"] == grants_before + 1, "the window's token came of an ID-JAG")
        tokens = {}
        ada = resource_answer(resources[0], token(resources[0], display=False).stdout.strip())[1]["sub"]
        for resource in resources:
            answer = token(resource, display=False)
            expect(answer.returncode == 0 and answer.stderr == "", f"{resource}: {answer.returncode} {answer.stderr!r}")
            tokens[resource] = answer.stdout.strip()
            code, body = resource_answer(resource, tokens[resource])
            expect(code == 200 and body["sub"] == ada, f"{resource} takes its token, Ada's: {code} {body}")
        code, _ = resource_answer(resources[1], tokens[resources[0]])
        expect(code == 401, f"each token is for its server alone: {code}")
        idp_stats, server_stats = admin(idp.base, "/_admin/stats"), admin(server.base, "/_admin/stats")
        expect(idp_stats["authorization_code_grants"] == 1, f"one sign-in, at the identity provider: {idp_stats}")
        # Three at least: on a slow run a token may be past half its four seconds by the time it is asked again.
        expect(server_stats["authorization_code_grants"] == 0 and server_stats["id_jags_redeemed"] >= 3
               and server_stats["id_jags_redeemed"] == idp_stats["id_jags_issued"],
               f"no page at the MCP server, an ID-JAG taken for each token: {server_stats} {idp_stats}")

        # Past the servers' four-second tokens (a slower run only makes them older): a new ID-JAG, no page.
        issued = admin(idp.base, "/_admin/stats")["id_jags_issued"]
        time.sleep(4.5)
        again = token(resources[0], display=False)
        expect(again.returncode == 0 and again.stdout.strip() != tokens[resources[0]], f"minted again: {again.returncode} {again.stderr!r}")
        expect(resource_answer(resources[0], again.stdout.strip())[0] == 200, "the new token is taken")
        expect(admin(idp.base, "/_admin/stats")["id_jags_issued"] == issued + 1, "one ID-JAG more")
        expect(admin(idp.base, "/_admin/stats")["authorization_code_grants"] == 1, "and still one sign-in")

        # The organisation stops allowing the second server: the window's Sign in says so, then shows the
        # server's own sign-in page, and the person signs in there.
        admin(idp.base, "/_admin/id-jag-policy", policy[:1])
        window = home.launch("--resource", resources[1])
        try:
            window.wait_status("Not signed in", timeout=30)
            sign_in(window, home)  # Sign in, then the server's own page
            window.wait_status("does not let you use", timeout=30)
            expect("Signed in at the server itself." in window.status(), f"the window says so: {window.status()!r}")
            window.screenshot("03-the-servers-own-sign-in-after-a-refusal")
        finally:
            window.quit()
        expect(admin(server.base, "/_admin/stats")["authorization_code_grants"] == 1, "the server's own sign-in, once")
        assert_no_secrets(home, [os.path.join(home.root, "latchkey.log")], extra=list(tokens.values()) + [again.stdout.strip()])
    finally:
        server.stop()
        idp.stop()


def write_json(path, value, mode=0o600):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(value, f)
    os.chmod(path, mode)


def client_under_test(home, scenario, context):
    """What the suite hands a client (MCP_CONFORMANCE_CONTEXT), set up as a person or an admin sets up
    Latchkey: the MCP server's provider file with the client the scenario registered there and, for
    enterprise-managed-authorization, the organisation's identity provider and the sign-in there the
    context carries (the suite gives the ID token; it runs no sign-in page)."""
    resource = context["server_url"]
    config, state = os.path.join(home.config, "latchkey"), os.path.join(home.state, "latchkey")
    metadata = json.load(urllib.request.urlopen(resource.rsplit("/", 1)[0] + "/.well-known/oauth-protected-resource/mcp", timeout=10))
    as_base = metadata["authorization_servers"][0]
    server = {"id": "127-0-0-1-" + resource.split(":")[2].replace("/", "-"), "display_name": f"Conformance {scenario}",
              "issuer": as_base, "token_endpoint": "/token", "resource": resource, "origin": "resource",
              "client_id": context["client_id"], "scopes": []}
    if scenario == "enterprise-managed-authorization":
        idp = {"id": "conformance-idp", "display_name": "Conformance IdP", "issuer": context["idp_issuer"],
               "authorization_endpoint": "/authorize", "token_endpoint": context["idp_token_endpoint"],
               "client_id": context["idp_client_id"], "client_authentication": "none", "redirect_uri": "http://127.0.0.1/callback",
               "scopes": ["openid"], "enterprise_idp": True}
        write_json(os.path.join(config, "conformance-idp.json"), idp)
        now = int(time.time())
        write_json(os.path.join(state, "conformance-idp.json"), {
            "access_token": "conformance-idp-session", "token_type": "Bearer", "id_token": context["idp_id_token"],
            "expires_at": now + 3600, "received_at": now, "signed_in_at": now,
            "issued_by": f"{context['idp_client_id']} at http://127.0.0.1/token"})
        server.update({"grant": "id_jag", "identity_provider": "conformance-idp", "client_secret": context["client_secret"]})
    elif scenario == "client-credentials-basic":
        server.update({"grant": "client_credentials", "client_secret": context["client_secret"]})
    else:
        key = os.path.join(home.root, "conformance-client-key.pem")
        with open(key, "w") as f:
            f.write(context["private_key_pem"])
        os.chmod(key, 0o600)
        server.update({"grant": "client_credentials", "client_authentication": "private_key_jwt", "private_key_file": key})
    write_json(os.path.join(config, server["id"] + ".json"), server)
    return resource


def mcp_ext_auth_conformance(home):
    """The MCP conformance suite's auth/enterprise-managed-authorization, auth/client-credentials-basic and
    auth/client-credentials-jwt, re-created (Tests/EndToEnd/mcp_ext_auth_server.py): `latchkey token
    --resource` gets the MCP server's token (an ID-JAG traded, or the client's own) with no window and
    no display; `latchkey curl --resource` calls initialize, tools/list and tools/call with it; every
    check the suite makes is SUCCESS."""
    for scenario in ("enterprise-managed-authorization", "client-credentials-basic", "client-credentials-jwt"):
        for directory in (os.path.join(home.config, "latchkey"), os.path.join(home.state, "latchkey")):
            shutil.rmtree(directory, ignore_errors=True)
        server = subprocess.Popen(["/usr/bin/python3", os.path.join(os.path.dirname(__file__), "mcp_ext_auth_server.py"), scenario],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            context = json.loads(server.stdout.readline())
            resource = client_under_test(home, scenario, context)
            answer = token(resource, display=False)
            expect(answer.returncode == 0 and answer.stdout.strip(), f"latchkey token, {scenario}: {answer.returncode} {answer.stderr!r}")
            for number, method in enumerate(("initialize", "tools/list", "tools/call"), 1):
                message = {"jsonrpc": "2.0", "id": number, "method": method,
                           "params": {"initialize": {"protocolVersion": "2025-11-25", "capabilities": {},
                                                     "clientInfo": {"name": "latchkey curl", "version": "1"}},
                                      "tools/call": {"name": "test-tool", "arguments": {}}}.get(method, {})}
                sent = subprocess.run([os.path.join(BIN, "latchkey"), "curl", "--resource", resource, "--", "-sS", "-f", "-X", "POST",
                                       "-H", "Content-Type: application/json", "-d", json.dumps(message), resource],
                                      capture_output=True, text=True, timeout=60)
                expect(sent.returncode == 0 and "result" in json.loads(sent.stdout or "{}"),
                       f"{method}, {scenario}: {sent.returncode} {sent.stdout!r} {sent.stderr!r}")
            with urllib.request.urlopen(resource.rsplit("/", 1)[0] + "/_checks", timeout=30) as reply:
                checks = json.load(reply)
            failed = [check for check in checks if check["status"] != "SUCCESS"]
            expect(checks and not failed, f"the suite's checks, {scenario}: {failed or checks}")
        finally:
            server.kill()
            server.wait(10)


SCENARIOS = {"enterprise_sign_in": enterprise_sign_in, "mcp_ext_auth_conformance": mcp_ext_auth_conformance}


def client_key_kept(home):
    """A machine's key that Latchkey makes and keeps (`latchkey client-key`): its public key printed
    and registered at the provider, the provider file naming no key file, then `latchkey token` gets
    the client's own token with no person (client credentials, private_key_jwt); the key is shown
    again, not made again, and never printed."""
    made = subprocess.run([os.path.join(BIN, "latchkey"), "client-key", "--provider", "machine"], capture_output=True, text=True, timeout=60)
    expect(made.returncode == 0 and "a new key, kept in" in made.stderr, f"client-key: {made.returncode} {made.stderr!r}")
    jwks = json.loads(made.stdout)
    key = jwks["keys"][0]
    expect(key["kty"] == "EC" and key["alg"] == "ES256" and "d" not in key, f"a public key alone: {sorted(key)}")
    again = subprocess.run([os.path.join(BIN, "latchkey"), "client-key", "--provider", "machine"], capture_output=True, text=True, timeout=60)
    expect(again.returncode == 0 and json.loads(again.stdout) == jwks and "the key kept" in again.stderr, f"shown again: {again.stderr!r}")
    config = os.path.join(home.root, "machine-sandbox.json")
    write_json(config, {"users": [{"username": "ada", "password": "engine", "name": "Ada", "email": "ada@sandbox.example"}],
                        "clients": [{"client_id": "build-bot", "name": "A build machine", "jwks": [key]}]})
    sandbox = Sandbox("--config", config, log=os.path.join(home.root, "sandbox.log"))
    try:
        write_json(os.path.join(home.config, "latchkey", "machine.json"), {
            "id": "machine", "issuer": sandbox.base, "token_endpoint": "/token", "grant": "client_credentials",
            "client_id": "build-bot", "client_authentication": "private_key_jwt", "scopes": ["deploy"],
            "resource": sandbox.base + "/api/open"})
        answer = subprocess.run([os.path.join(BIN, "latchkey"), "token", "--provider", "machine", "--no-interaction"],
                                capture_output=True, text=True, timeout=60, env={k: v for k, v in os.environ.items() if k != "DISPLAY"})
        expect(answer.returncode == 0 and answer.stdout.strip().startswith("sbx_at_"), f"the machine's token: {answer.returncode} {answer.stderr!r}")
        stats = admin(sandbox.base, "/_admin/stats")
        expect(stats["client_assertions"] == 1 and stats["client_credentials_grants"] == 1, f"one assertion, one grant: {stats}")
        code, body = resource_answer(sandbox.base + "/api/open", answer.stdout.strip())
        expect(code == 200 and body["sub"] == "build-bot" and body["scopes"] == ["deploy"], f"the API takes it, as the machine's: {code} {body}")
        expect(answer.stdout.strip() not in made.stderr + again.stderr, "no token where the key was said")

        # The agent serves it to a program allowed for it (gdbus, allowed beforehand), with no person: the kept
        # token first, then, asked for a new one, the grant asked again in the machine's name.
        allow_gdbus("machine")
        kept = gdbus("--method", "io.github.latchkey.Agent1.GetToken", "machine", "{}")
        expect(kept.returncode == 0 and answer.stdout.strip() in kept.stdout, f"the agent's token: {kept.returncode} {kept.stderr!r}")
        renewed = gdbus("--method", "io.github.latchkey.Agent1.GetToken", "machine", "{'min-valid': <-1>}")
        expect(renewed.returncode == 0 and answer.stdout.strip() not in renewed.stdout, f"minted anew: {renewed.returncode} {renewed.stderr!r}")
        expect(admin(sandbox.base, "/_admin/stats")["client_credentials_grants"] == 2, "the agent asked the grant once")
        fresh = re.search(r"'(sbx_at_[^']+)'", renewed.stdout).group(1)
        expect(resource_answer(sandbox.base + "/api/open", fresh)[0] == 200, "and the API takes the agent's token")
    finally:
        sandbox.stop()


SCENARIOS["client_key_kept"] = client_key_kept
