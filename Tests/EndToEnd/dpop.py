"""End-to-end: tokens bound to a key Latchkey holds (DPoP, RFC 9449; issue 39). The real app signs in
to the sandbox as a DPoP server that asks for its nonce, and shows the profile with a proof; a copy
of the stored refresh token without the key is refused and the sign-in goes on; plain curl with the
bound token is refused; `latchkey curl` (the front, without an agent and through one) and gdbus's
GetProvedToken get the resource's answer with a proof the key's holder signed."""

import json
import os
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
    fetched = latchkey("curl", "--provider", "mine", userinfo)
    expect(fetched.returncode == 0 and json.loads(fetched.stdout).get("name") == "Ada Lovelace",
           f"latchkey curl without an agent: {fetched.returncode} {fetched.stdout!r} {fetched.stderr!r}")
    expect(stats(sandbox)["userinfo_requests"] - before == 2, "the first proof was asked for the nonce, the second answered")
    # One request, to the URL named: never the token sent to a second place, nor to a host without a scheme.
    for arguments, words in (([userinfo, f"{sandbox.base}/api/me"], "one URL"), (["127.0.0.1:9/x"], "in full"),
                             (["--next", userinfo], "--next"), (["-K", "/dev/null", userinfo], "--config")):
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


SCENARIOS = {"dpop": dpop}
