"""End-to-end: tokens bound to a key Latchkey holds (DPoP, RFC 9449; issue 39). The real app signs in
to the sandbox as a DPoP server that asks for its nonce, and shows the profile with a proof; a copy
of the stored refresh token without the key is refused and the sign-in goes on; plain curl with the
bound token is refused; `latchkey curl` (the front, without an agent and through one) and gdbus's
GetProvedToken get the resource's answer with a proof the key's holder signed."""

import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request

from accounts import profile_shows
from agent import DEST, Sandbox, agent_without_display, latchkey, own_provider, signed_in, stored
from harness import assert_no_secrets, expect


def stats(sandbox):
    with urllib.request.urlopen(f"{sandbox.base}/_admin/stats", timeout=30) as reply:
        return json.load(reply)


def refresh_status(sandbox, refresh_token):
    """The token endpoint's answer to a refresh with `refresh_token` and no proof: (status, error)."""
    body = urllib.parse.urlencode({"grant_type": "refresh_token", "refresh_token": refresh_token,
                                   "client_id": "latchkey-desktop"}).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(f"{sandbox.base}/token", data=body), timeout=30) as reply:
            return reply.status, None
    except urllib.error.HTTPError as refused:
        return refused.code, json.load(refused).get("error")


def one_json(text):
    """`text` read as one JSON object; {} when it is anything else (two of them, a status before it)."""
    try:
        read = json.loads(text)
    except ValueError:
        return {}
    return read if isinstance(read, dict) else {}


def curl(*arguments):
    return subprocess.run(["curl", "-sS", *arguments], capture_output=True, text=True, timeout=60)


def dpop(home):
    """Signed in in the window with DPoP (the sandbox asks for its nonce): bound as its introspection
    says, the key kept with the sign-in; Get my profile proves it at UserInfo; the refresh token copied out
    of the store is refused without the key, and latchkey token goes on; plain curl with the token is
    refused where latchkey curl is answered, through the app and through the agent; gdbus gets a proof
    from GetProvedToken; latchkey token says the token needs one."""
    sandbox = Sandbox("--dpop", "nonce", "--access-token-ttl", "600")
    own_provider(home, sandbox, dpop=True)
    window = signed_in(home)
    profile_shows(window, "Ada Lovelace")
    window.screenshot("01-dpop-profile")
    window_log = window.log_path
    window.quit()
    kept = stored(home)
    expect(kept["token_type"] == "DPoP" and kept.get("dpop_key"), "the sign-in is bound, its key kept with it")
    userinfo = f"{sandbox.base}/userinfo"
    secrets = [kept["access_token"], kept["refresh_token"], kept["dpop_key"]]

    # A copy of the refresh token is worthless without the key; the sign-in is not harmed by its use.
    status, error = refresh_status(sandbox, kept["refresh_token"])
    expect(status == 400 and error == "invalid_dpop_proof", f"a copied refresh token: {status} {error}")
    plain = curl("-H", f"Authorization: Bearer {kept['access_token']}", "-w", "%{http_code}", "-o", "/dev/null", userinfo)
    expect(plain.stdout == "401", f"plain curl with the bound token as Bearer: {plain.stdout!r}")

    # Without an agent: the app signs the proof; the resource's nonce is answered once.
    told = latchkey("token", "--provider", "mine")
    expect(told.returncode == 0 and "token_type DPoP" in told.stderr, f"latchkey token says a proof is needed: {told.stderr!r}")
    before = stats(sandbox)["userinfo_requests"]
    # A base64url nonce may begin with "-": passed on to latchkey token, it must not be read as an option.
    urllib.request.urlopen(urllib.request.Request(f"{sandbox.base}/_admin/dpop-nonce", data=b"nonce=-dash-first"), timeout=30).read()
    fetched = latchkey("curl", "--provider", "mine", userinfo)
    expect(fetched.returncode == 0 and json.loads(fetched.stdout).get("name") == "Ada Lovelace",
           f"latchkey curl without an agent: {fetched.returncode} {fetched.stdout!r} {fetched.stderr!r}")
    expect(stats(sandbox)["userinfo_requests"] - before == 2, "the first proof was asked for the nonce, the second answered")
    # One request, to the URL named: never the token sent to a second place, nor to a host without a scheme.
    for arguments, words in (([userinfo, f"{sandbox.base}/api/me"], "one URL"), (["127.0.0.1:9/x"], "in full"),
                             (["--next", userinfo], "--next"), (["-K", "/dev/null", userinfo], "--config"),
                             (["-sK/dev/null", userinfo], "--config"), (["-s:", userinfo], "-:"),
                             ([userinfo, "--", "-s@127.0.0.1:9"], "a second --"), (["--no-globoff", userinfo], "--no-globoff"),
                             # curl takes any unique start of a long option: --nex is --next, --no-glob is --no-globoff.
                             (["--nex", userinfo], "in full"), (["--conf", "/dev/null", userinfo], "in full"),
                             (["--no-glob", userinfo], "in full"), (["--ur", userinfo], "in full")):
        refused = latchkey("curl", "--provider", "mine", "--", *arguments)
        expect(refused.returncode == 64 and words in refused.stderr, f"latchkey curl {arguments}: {refused.returncode} {refused.stderr!r}")
    refused = latchkey("token", "--provider", "mine", "--dpop-url", userinfo)
    expect(refused.returncode == 64 and "--format header or json" in refused.stderr, f"--dpop-url with --format token: {refused.stderr!r}")
    refused = latchkey("token", "--provider", "mine", "--format", "json", "--dpop-url", f"{sandbox.base}/token")
    expect(refused.returncode != 0 and "own endpoints" in refused.stderr, f"a proof for the token endpoint: {refused.stderr!r}")
    header = latchkey("token", "--provider", "mine", "--format", "header", "--dpop-url", userinfo)
    lines = header.stdout.splitlines()
    expect(len(lines) == 2 and lines[0].startswith("Authorization: DPoP ") and lines[1].startswith("DPoP: ")
           and not header.stderr, f"latchkey token --format header --dpop-url: {header.stdout.count(chr(10))} lines {header.stderr!r}")

    # Through the agent: the front asks it for the token and the proof; gdbus gets them from GetProvedToken.
    agent = agent_without_display(home)
    try:
        # latchkey curl asks for the program that ran it: this interpreter, which runs others.
        for program, extra in ((sys.executable, ["--including-what-it-runs"]), ("/usr/bin/gdbus", [])):
            allowed = latchkey("agent", "allow", *extra, os.path.realpath(program), "mine")
            expect(allowed.returncode == 0, f"agent allow {program}: {allowed.stderr!r}")
        fetched = latchkey("curl", "--provider", "mine", "--", "-H", "Accept: application/json", userinfo)
        expect(fetched.returncode == 0 and json.loads(fetched.stdout).get("sub"),
               f"latchkey curl through the agent: {fetched.returncode} {fetched.stdout!r} {fetched.stderr!r}")
        # The resource's nonce renewed before each: the first try (kept aside) is asked for it, the second answered,
        # and only the second is seen: curl started early writing to Latchkey's files (-i: its header lines too),
        # or to the person's own (-o), or — with -w, which writes to standard output — started afterwards.
        saved = os.path.join(home.root, "profile.json")
        for turn, (arguments, check) in enumerate((
                (["-i"], lambda out: out.count("HTTP/1.1 ") == 1 and "HTTP/1.1 200" in out and '"sub"' in out),
                (["-o", saved], lambda out: out == "" and json.load(open(saved)).get("sub")),
                # The answer, then 200 — and nothing of the first try before it (its "401"): all before "200\n"
                # is one JSON document. (A bare "401" in the output would match the sandbox's port: 41401.)
                (["-w", "%{http_code}\n"], lambda out: out.endswith("}200\n") and one_json(out[:-len("200\n")]).get("sub")))):
            urllib.request.urlopen(urllib.request.Request(f"{sandbox.base}/_admin/dpop-nonce", data=f"nonce=turn-{turn}".encode()),
                                   timeout=30).read()
            before = stats(sandbox)["userinfo_requests"]
            fetched = latchkey("curl", "--provider", "mine", "--", "-sS", *arguments, userinfo)
            expect(fetched.returncode == 0 and check(fetched.stdout) and stats(sandbox)["userinfo_requests"] - before == 2,
                   f"latchkey curl {arguments} through the agent, asked for the nonce: {fetched.returncode} {fetched.stdout!r} {fetched.stderr!r}")
        called = subprocess.run(["gdbus", "call", "--session", *DEST, "--method", "io.github.latchkey.Agent1.GetProvedToken", "mine", "{}",
                                 "GET", userinfo], capture_output=True, text=True, timeout=60)
        expect(called.returncode == 0, f"GetProvedToken: {called.stderr!r}")
        parts = called.stdout.split("'")
        token, token_type, proof = parts[1], parts[3], parts[-2]
        expect(token_type == "DPoP" and proof.count(".") == 2, f"GetProvedToken answers a DPoP token and a proof: {token_type}")
        answered = curl("-H", f"Authorization: DPoP {token}", "-H", f"DPoP: {proof}", userinfo)
        expect(json.loads(answered.stdout).get("name") == "Ada Lovelace", "gdbus's proof is taken by the resource")
        again = curl("-H", f"Authorization: DPoP {token}", "-H", f"DPoP: {proof}", "-w", "%{http_code}", "-o", "/dev/null", userinfo)
        expect(again.stdout == "401", "a proof is good once")
        secrets += [token, proof]
    finally:
        agent.terminate()
        agent.wait(10)
    assert_no_secrets(home, [window_log, os.path.join(home.root, "agent.log")], extra=secrets)


class Swtpm:
    """Debian's software TPM on unix sockets bound here first (a connection waits for it, nothing polls);
    stopped, it is a TPM that went away; started again on its state, the same TPM."""

    def __init__(self, directory):
        self.directory = directory
        self.tcti = f"swtpm:path={directory}/sock"
        self.process = None
        self.start()

    def start(self):
        sockets = []
        for name in ("sock", "sock.ctrl"):
            path = os.path.join(self.directory, name)
            if os.path.exists(path):
                os.unlink(path)
            listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listening.bind(path)
            listening.listen(16)
            sockets.append(listening)
        command, control = (s.fileno() for s in sockets)
        self.process = subprocess.Popen(
            ["swtpm", "socket", "--tpm2", "--tpmstate", f"dir={self.directory}", "--server", f"type=unixio,fd={command}",
             "--ctrl", f"type=unixio,fd={control}", "--flags", "not-need-init,startup-clear"],
            pass_fds=(command, control), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for s in sockets:
            s.close()
        # Answered once before anything of Latchkey's asks: its start, however slow, is not theirs to wait out.
        tools = dict(os.environ, TPM2TOOLS_TCTI=self.tcti, TSS2_LOG="all+NONE")
        subprocess.run(["tpm2", "getrandom", "4"], env=tools, capture_output=True, timeout=120, check=True)

    def stop(self):
        self.process.kill()
        self.process.wait(10)
        for name in ("sock", "sock.ctrl"):
            os.unlink(os.path.join(self.directory, name))


def dpop_tpm(home):
    """The key in a TPM (swtpm): the real app signs in with a key made there and shows the profile with
    the TPM's proofs; latchkey status says where the key is; tpm2-tools loads what is kept and sees it
    fixed to that TPM; latchkey curl works without an agent and through one, after the agent's restart;
    the TPM gone is a sentence and nothing is lost; the same TPM again, and it all works again."""
    directory = os.path.join("/tmp", f"swtpm-e2e-{os.getpid()}")
    os.makedirs(directory, exist_ok=True)
    tpm = Swtpm(directory)
    os.environ["LATCHKEY_TPM"] = tpm.tcti  # what Latchkey's programs started from here keep their keys in
    try:
        sandbox = Sandbox("--dpop", "on", "--access-token-ttl", "600")
        own_provider(home, sandbox, dpop=True)
        window = signed_in(home)
        profile_shows(window, "Ada Lovelace")
        window.find("label", "Its tokens are bound to a key kept in the TPM, which never lets it out.", exact=False)
        window.screenshot("01-dpop-tpm-profile")
        window_log = window.log_path
        window.quit()
        kept = stored(home)
        expect(kept["dpop_key"].startswith("tpm2."), "the sign-in's key was made in the TPM")
        status = latchkey("status")
        expect("bound to a key kept in the TPM" in status.stdout, f"latchkey status: {status.stdout!r}")

        # From outside: the blobs kept load under that TPM's storage key, fixed to it.
        _, tcti, public, private = kept["dpop_key"].split(".")
        for name, part in (("key.pub", public), ("key.priv", private)):
            with open(os.path.join(directory, name), "wb") as f:
                f.write(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
        tools = dict(os.environ, TPM2TOOLS_TCTI=tpm.tcti, TSS2_LOG="all+NONE")

        def tpm2(*arguments):
            done = subprocess.run(["tpm2", *arguments], env=tools, capture_output=True, text=True, cwd=directory, timeout=60)
            subprocess.run(["tpm2", "flushcontext", "-t"], env=tools, capture_output=True, timeout=60)
            return done
        tpm2("createprimary", "-C", "o", "-g", "sha256", "-G", "ecc", "-a",
             "fixedtpm|fixedparent|sensitivedataorigin|userwithauth|noda|restricted|decrypt", "-c", "srk.ctx")
        expect(tpm2("load", "-C", "srk.ctx", "-u", "key.pub", "-r", "key.priv", "-c", "key.ctx").returncode == 0, "tpm2 load")
        described = tpm2("readpublic", "-c", "key.ctx").stdout
        expect("fixedtpm" in described and "fixedparent" in described, f"tpm2 readpublic: {described!r}")

        userinfo = f"{sandbox.base}/userinfo"
        fetched = latchkey("curl", "--provider", "mine", userinfo)
        expect(fetched.returncode == 0 and json.loads(fetched.stdout).get("name") == "Ada Lovelace",
               f"latchkey curl with the TPM's proof: {fetched.returncode} {fetched.stderr!r}")
        agent = agent_without_display(home)
        try:
            allowed = latchkey("agent", "allow", "--including-what-it-runs", os.path.realpath(sys.executable), "mine")
            expect(allowed.returncode == 0, f"agent allow: {allowed.stderr!r}")
            expect(latchkey("curl", "--provider", "mine", userinfo).returncode == 0, "latchkey curl through the agent")
        finally:
            agent.terminate()
            agent.wait(10)

        # The TPM goes away: a sentence, exit 1, and what is kept stays as it was.
        tpm.stop()
        gone = latchkey("curl", "--provider", "mine", userinfo)
        expect(gone.returncode == 1 and "The TPM that holds the sign-in's key" in gone.stderr and "Your sign-in is kept" in gone.stderr,
               f"latchkey curl with the TPM gone: {gone.returncode} {gone.stderr!r}")
        expect(not re.search(r"(ERROR|WARNING):(tcti|esys|sys|mu)\b", gone.stderr), f"tpm2-tss's own words, not quieted: {gone.stderr!r}")
        expect(stored(home) == kept, "nothing kept was changed or lost")

        # The same TPM again, and an agent started anew: it signs again.
        tpm.start()
        agent = agent_without_display(home)
        try:
            again = latchkey("curl", "--provider", "mine", userinfo)
            expect(again.returncode == 0 and json.loads(again.stdout).get("sub"), f"after the TPM came back: {again.stderr!r}")
        finally:
            agent.terminate()
            agent.wait(10)
        assert_no_secrets(home, [window_log, os.path.join(home.root, "agent.log")], extra=[kept["access_token"], kept["refresh_token"]])
    finally:
        os.environ.pop("LATCHKEY_TPM", None)
        if tpm.process and tpm.process.poll() is None:
            tpm.stop()
        shutil.rmtree(directory, ignore_errors=True)


def mcp_dpop_conformance(home):
    """The MCP conformance suite's auth/dpop and auth/dpop-nonce, re-created (Tests/EndToEnd/mcp_dpop_server.py):
    `latchkey token --resource` signs in at a server found from the MCP server's metadata, proving a key
    at the token request (and answering its nonce); `latchkey curl --resource` sends initialize, the
    initialized notification, tools/list and tools/call with the DPoP scheme and a fresh proof each,
    answering the MCP server's nonce; every check the suite makes is SUCCESS."""
    for mode in ([], ["--nonce"]):
        for directory in (os.path.join(home.config, "latchkey"), os.path.join(home.state, "latchkey")):
            shutil.rmtree(directory, ignore_errors=True)
        server = subprocess.Popen(["/usr/bin/python3", os.path.join(os.path.dirname(__file__), "mcp_dpop_server.py"), *mode],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            base = f"http://127.0.0.1:{server.stdout.readline().strip()}"
            resource = base + "/mcp"
            name = "mcp-dpop" + "".join(mode)
            out = os.path.join(home.root, f"{name}.out")
            app = home.launch("--resource", resource, command=("token",), stdout_path=out, log_name=f"{name}.log")
            try:
                status = app.process.wait(60)
            finally:
                app.quit()
            with open(out) as f, open(app.log_path) as log:
                token, said = f.read().strip(), log.read()
            expect(status == 0 and token, f"latchkey token --resource {mode}: {status} {said[-600:]!r}")
            messages = [
                {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "latchkey curl", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "test-tool", "arguments": {}}},
            ]
            for message in messages:
                sent = latchkey("curl", "--resource", resource, "--", "-sS", "-f", "-X", "POST", "-H", "Content-Type: application/json",
                                "-H", "Accept: application/json, text/event-stream", "-d", json.dumps(message), resource)
                expect(sent.returncode == 0, f"{message['method']} {mode}: {sent.returncode} {sent.stderr!r}")
                if "id" in message:
                    expect("result" in json.loads(sent.stdout), f"{message['method']} {mode}: {sent.stdout!r}")
            with urllib.request.urlopen(base + "/_checks", timeout=30) as reply:
                checks = json.load(reply)
            failed = {name: check for name, check in checks.items() if check["status"] != "SUCCESS"}
            expect(len(checks) == (5 if mode else 3) and not failed, f"the suite's checks {mode}: {failed or checks}")
        finally:
            server.kill()
            server.wait(10)


PEERS_PYTHON = os.path.join(os.path.dirname(__file__), "..", "..", ".build", "python-peers", "bin", "python")


def key_thumbprint(stored_key):
    """RFC 7638 thumbprint of a software DPoP key as Latchkey keeps it (the P-256 scalar, base64url)."""
    import hashlib
    from cryptography.hazmat.primitives.asymmetric import ec
    scalar = int.from_bytes(base64.urlsafe_b64decode(stored_key + "=" * (-len(stored_key) % 4)), "big")
    numbers = ec.derive_private_key(scalar, ec.SECP256R1()).public_key().public_numbers()
    encode = lambda n: base64.urlsafe_b64encode(n.to_bytes(32, "big")).decode().rstrip("=")  # noqa: E731
    canonical = json.dumps({"crv": "P-256", "kty": "EC", "x": encode(numbers.x), "y": encode(numbers.y)}, separators=(",", ":"))
    return base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).decode().rstrip("=")


def claims_of(jwt):
    part = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def idpy_dpop(home):
    """An independent DPoP server from PyPI, IdentityPython's idpyoidc 5.0.0 with its own DPoP add-on
    (Tests/EndToEnd/idpy_dpop_server.py): the real app signs in, proving its key at the token request,
    and idpyoidc binds the token to it (cnf.jkt is Latchkey's key); latchkey token renews it with a proof;
    the refresh token without the key is refused. idpyoidc compares a resource proof's ath as a hex
    hash, not base64url as RFC 9449 says: Get my profile is refused, which the window says, and the
    sign-in is kept."""
    server = subprocess.Popen([PEERS_PYTHON, os.path.join(os.path.dirname(__file__), "idpy_dpop_server.py")],
                              stdout=subprocess.PIPE, stderr=open(os.path.join(home.root, "idpy.log"), "ab"), text=True)
    try:
        base = f"http://127.0.0.1:{server.stdout.readline().strip()}"
        directory = os.path.join(home.config, "latchkey")
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "idpy.json"), "w") as f:
            json.dump({
                "id": "idpy", "display_name": "IdentityPython", "issuer": base, "authorization_endpoint": "/authorization",
                "token_endpoint": "/token", "userinfo_endpoint": "/userinfo", "jwks_uri": "/jwks.json",
                "client_id": "latchkey-desktop", "client_authentication": "none", "redirect_uri": "http://127.0.0.1/callback",
                "user_agents": ["embedded"], "scopes": ["openid", "profile", "email"], "pkce": True, "dpop": True,
                "profile": {"name": "name", "email": "email"}}, f)
        window = home.launch("--provider", "idpy")
        window.wait_status("IdentityPython")
        window.press(window.wait_sensitive("Sign in"))
        window.wait_status("Signed in")
        kept = stored(home, "idpy")
        expect(kept["token_type"] == "DPoP" and kept.get("dpop_key"), f"idpyoidc bound the sign-in: {kept.get('token_type')}")
        expect(claims_of(kept["access_token"])["cnf"]["jkt"] == key_thumbprint(kept["dpop_key"]),
               "idpyoidc's token carries Latchkey's key (cnf.jkt)")
        # Its resource proofs: idpyoidc wants ath as hex; refused, said, and kept.
        window.press(window.wait_sensitive("Get my profile"))
        window.wait_status("refused this computer's proof")
        window.screenshot("01-idpy-ath-refused")
        window_log = window.log_path
        window.quit()
        expect(stored(home, "idpy")["access_token"] == kept["access_token"], "the sign-in is kept")

        status, error = refresh_status(type("server", (), {"base": base})(), kept["refresh_token"])
        expect(status == 400, f"idpyoidc refuses the refresh token without a proof: {status} {error}")
        # More than its tokens ever last: renewed now (and then said to last less than asked, which it does).
        renewed = latchkey("token", "--provider", "idpy", "--min-valid", "86400")
        expect("its renewal gave no longer" in renewed.stderr, f"latchkey token renews with a proof: {renewed.stderr!r}")
        after = stored(home, "idpy")
        expect(after["access_token"] != kept["access_token"] and claims_of(after["access_token"])["cnf"]["jkt"]
               == key_thumbprint(kept["dpop_key"]), "renewed by idpyoidc, bound to the same key")
        assert_no_secrets(home, [window_log], extra=[kept["access_token"], kept["refresh_token"], kept["dpop_key"]])
    finally:
        server.kill()
        server.wait(10)


SCENARIOS = {"dpop": dpop, "dpop_tpm": dpop_tpm, "mcp_dpop_conformance": mcp_dpop_conformance, "idpy_dpop": idpy_dpop}
