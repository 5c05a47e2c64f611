"""make bench's agent sections (bench.py calls these).

token: a warm `latchkey token` (a stored token, nothing to renew) as a whole process, through
the agent and without one, against `gh auth token` reading its stored token and `cat` of the
token file (the floor), and Debian's `oidc-token` asking the same agent on the same socket; and the agent's answer over its socket, asked by the least client
there is (Benchmarks/baselines/agent-ask.c), against the same `cat`. Each round runs every
command once, in turn; medians of the rounds. Then the agent's resident memory, idle after serving
them all, against Debian's oidc-agent (its processes together) after answering as many requests.

load: 64 caller processes (Benchmarks/baselines/agent-caller.c) asking the agent at once, without pause, for BENCH_LOAD_SECONDS (600 by
default), while the sandbox issues 30-second access tokens and single-use rotating refresh
tokens (replaying a used one revokes the whole grant): every call must succeed, and each
token must be renewed exactly once (renewals = distinct tokens - 1).
"""

import base64
import hashlib
import http.client
import json
import os
import re
import secrets
import shutil
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import driver  # noqa: E402
import harness  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_TOKEN_ROUNDS", "200"))
# Another build of the front (`latchkey`) to measure beside this one's `latchkey curl`: BENCH_BEFORE_FRONT=path.
BEFORE_FRONT = os.environ.get("BENCH_BEFORE_FRONT")
LOAD_SECONDS = int(os.environ.get("BENCH_LOAD_SECONDS", "600"))
CALLERS = 64


def run_ms(argv, env):
    """One whole process, from spawn to its end, with its output discarded (ms)."""
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        started = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)])
        _, status = os.waitpid(pid, 0)
        elapsed = (time.perf_counter() - started) * 1000
    finally:
        os.close(null)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{argv} ended with {os.waitstatus_to_exitcode(status)}")
    return elapsed


def provider_home(name, issuer):
    """A home with the provider `mine` (the sandbox preset at `issuer`), agent socket directory and all."""
    home = harness.Home(name, under=os.path.join(harness.ROOT, "bench-output", "homes"))
    with open(os.path.join(harness.ROOT, "data", "providers", "sandbox.json")) as f:
        preset = json.load(f)
    preset.update({"id": "mine", "display_name": "My sandbox", "issuer": issuer})
    os.makedirs(os.path.join(home.config, "latchkey"), exist_ok=True)
    with open(os.path.join(home.config, "latchkey", "mine.json"), "w") as f:
        json.dump(preset, f)
    os.makedirs(os.path.join(home.state, "latchkey"), mode=0o700, exist_ok=True)
    return home


def keep_token(home, token, provider_id="mine"):
    """The token file and the account list a sign-in to `provider_id` leaves (a program is allowed for the person signed in)."""
    os.makedirs(os.path.join(home.state, "latchkey"), mode=0o700, exist_ok=True)
    path = os.path.join(home.state, "latchkey", f"{provider_id}.json")
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        json.dump(token, f)
    accounts = os.path.join(home.state, "latchkey", "accounts")
    os.makedirs(accounts, mode=0o700, exist_ok=True)
    with open(os.path.join(accounts, f"{provider_id}.accounts.json"), "w") as f:
        json.dump({"accounts": [{"key": provider_id, "subject": hashlib.sha256(b"bench-subject").hexdigest(), "name": "Ada"}]}, f)
    return path


def start_agent(binary, env, log):
    """The agent, with no display (nobody to ask: the programs measured are allowed beforehand)."""
    quiet = {k: v for k, v in env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS")}
    agent = subprocess.Popen([binary, "agent", "--log-level", "notice"], env=quiet, stdout=log, stderr=log)
    sock = os.path.join(env["XDG_RUNTIME_DIR"], "latchkey", "agent.sock")
    deadline = time.monotonic() + 20
    while not os.path.exists(sock) and time.monotonic() < deadline:
        time.sleep(0.02)
    return agent, sock


def token_rows(bin_dir, baselines):
    """Warm latchkey token (through the agent, and without one), gh auth token, cat; agent-ask, cat."""
    home = provider_home("token", "http://127.0.0.1:9")
    now = int(time.time())
    token_file = keep_token(home, {
        "access_token": "bench-access-token", "refresh_token": "bench-refresh-token", "token_type": "Bearer",
        "expires_at": now + 86400, "received_at": now, "issued_by": "latchkey-desktop at http://127.0.0.1/token"})
    os.makedirs(os.path.join(home.config, "gh"), exist_ok=True)
    with open(os.path.join(home.config, "gh", "hosts.yml"), "w") as f:
        f.write("github.com:\n    oauth_token: gho_bench0123456789\n    user: ada\n    git_protocol: https\n")
    env = dict(os.environ, **home.env)
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)  # no keyring: the sign-in is in its file, as for gh
    latchkey = os.path.join(bin_dir, "latchkey")
    ask = os.path.join(baselines, "agent-ask")
    gh = shutil.which("gh")
    oidc_token = shutil.which("oidc-token") or "/usr/bin/oidc-token"
    preload = dict(env, LD_PRELOAD=os.path.join(baselines, "cloexec-sockets.so"))
    # Each command with the environment it runs in: oidc-token (and cat, to measure what the preload
    # costs) with its sockets close-on-exec (Benchmarks/baselines/cloexec-sockets.c).
    commands = {
        "latchkey": ([latchkey, "token", "--provider", "mine"], env), "gh": ([gh, "auth", "token"], env),
        "cat": (["/bin/cat", token_file], env), "ask": ([ask, "mine"], env), "oidc_token": ([oidc_token, "mine"], preload),
        "cat_preloaded": (["/bin/cat", token_file], preload),
    }
    samples = {key: [] for key in ("latchkey_alone", *commands)}
    # Without an agent first: the app does the work itself.
    for _ in range(max(20, ROUNDS // 5)):
        samples["latchkey_alone"].append(run_ms(*commands["latchkey"]))
    with open(os.path.join(home.root, "agent.log"), "ab") as log:
        agent, sock = start_agent(latchkey, env, log)
        try:
            preload["OIDC_SOCK"] = sock  # oidc-token asks the same agent, on the same socket
            # latchkey token asks for the program that ran it: this interpreter, which runs others, so it is
            # allowed with what it runs (the agent would otherwise ask each time, and nobody is there to answer).
            for program, extra in ((sys.executable, ["--including-what-it-runs"]), (ask, []), (oidc_token, [])):
                subprocess.run([latchkey, "agent", "allow", os.path.realpath(program), "mine", *extra], env=env, check=True,
                               stdout=subprocess.DEVNULL)
            for key in commands:
                run_ms(*commands[key])  # warm-up round
            for _ in range(ROUNDS):
                for key in commands:
                    samples[key].append(run_ms(*commands[key]))
            samples["agent_rss"] = idle_rss(agent.pid)
        finally:
            agent.terminate()
            agent.wait(10)
    samples["oidc_agent_rss"] = oidc_agent_rss(home, env, oidc_token, ROUNDS * 2)
    return samples


def idle_rss(pid):
    """Resident MiB of pid and its descendants, once it has been idle a moment."""
    time.sleep(1)
    pids = [pid, *driver.descendants(pid)]
    total = 0
    for one in pids:
        try:
            with open(f"/proc/{one}/status") as f:
                total += next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0)
        except OSError:
            pass
    return total / 1024


def oidc_agent_rss(home, env, oidc_token, requests):
    """Debian's oidc-agent on a socket of its own (in the console, as one process tree), idle after
    answering `requests` of oidc-token's: it holds no account (it would need an https issuer), so
    each is its refusal, the same request path up to the account."""
    sock = os.path.join(home.runtime, "oidc-agent.sock")
    agent = subprocess.Popen(["oidc-agent", "--console", "--no-autoload", "-a", sock], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not os.path.exists(sock) and time.monotonic() < deadline:
            time.sleep(0.02)
        asking = dict(env, OIDC_SOCK=sock)
        for _ in range(requests):
            subprocess.run([oidc_token, "mine"], env=asking, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return idle_rss(agent.pid)
    finally:
        agent.terminate()
        agent.wait(10)


def authorization_code(base, redirect):
    """The sandbox's sign-in page answered as a browser would (ada, Allow): (code, PKCE verifier)."""
    host, port = base.split("//")[1].split(":")
    verifier = secrets.token_urlsafe(32)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    query = urllib.parse.urlencode({"response_type": "code", "client_id": "latchkey-desktop", "redirect_uri": redirect,
                                    "scope": "openid profile email offline_access", "state": "bench", "nonce": "n",
                                    "code_challenge": challenge, "code_challenge_method": "S256"})
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        connection.request("GET", "/authorize?" + query)
        page = connection.getresponse().read().decode()
        request_id = re.search(r'name="request_id" value="([^"]+)"', page).group(1)
        connection.request("POST", "/authorize", urllib.parse.urlencode(
            {"request_id": request_id, "username": "ada", "password": "engine", "action": "allow"}),
            {"Content-Type": "application/x-www-form-urlencoded"})
        answer = connection.getresponse()
        answer.read()
        return urllib.parse.parse_qs(urllib.parse.urlsplit(answer.getheader("Location")).query)["code"][0], verifier
    finally:
        connection.close()


def code_exchange(base, code, verifier, redirect, dpop=None):
    """POST /token for the code on a fresh connection (with a DPoP proof, `dpop`): (milliseconds of that request
    alone, the token answer)."""
    host, port = base.split("//")[1].split(":")
    body = urllib.parse.urlencode({"grant_type": "authorization_code", "code": code, "redirect_uri": redirect,
                                   "client_id": "latchkey-desktop", "code_verifier": verifier})
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        started = time.monotonic()
        connection.request("POST", "/token", body,
                           {"Content-Type": "application/x-www-form-urlencoded", **({"DPoP": dpop} if dpop else {})})
        reply = connection.getresponse()
        text = reply.read()
        elapsed = (time.monotonic() - started) * 1000
    finally:
        connection.close()
    if reply.status != 200:
        raise RuntimeError(f"token endpoint answered {reply.status}")
    return elapsed, json.loads(text)


def sign_in_over_http(base):
    """A sign-in to the sandbox as a browser and the app would make it; the token answer."""
    redirect = "http://127.0.0.1/callback"
    code, verifier = authorization_code(base, redirect)
    return code_exchange(base, code, verifier, redirect)[1]


def signed_in_home(name, base):
    """A home signed in to the sandbox at `base`, over HTTP, as the app signs in; its environment."""
    home = provider_home(name, base)
    tokens = sign_in_over_http(base)
    now = time.time()
    keep_token(home, {
        "access_token": tokens["access_token"], "refresh_token": tokens["refresh_token"], "token_type": "Bearer",
        "expires_at": now + tokens["expires_in"], "received_at": now, "scope": tokens.get("scope"),
        "issued_by": "latchkey-desktop at http://127.0.0.1/token"})
    return home, dict(os.environ, **home.env)


def load_run(bin_dir, baselines, sandbox_process_factory):
    """64 caller processes for LOAD_SECONDS against 30-second tokens; counts calls, failures, renewals and tokens."""
    load = caller_load("load", bin_dir, baselines, sandbox_process_factory, (None,))
    return {"seconds": LOAD_SECONDS, "callers": CALLERS, "calls": load["calls"], "failed": load["failed"],
            "refreshes": load["stats"]["refresh_grants"], "distinct_tokens": len(load["seen"][None]),
            "expected_renewals": LOAD_SECONDS / 15}


def caller_load(name, bin_dir, baselines, sandbox_process_factory, scope_sets):
    """CALLERS agent-caller processes for LOAD_SECONDS against 30-second tokens, asking in turn for each of
    `scope_sets` (None: the whole sign-in): calls made, failed, the distinct tokens each set was handed, the
    sandbox's counts."""
    process, base = sandbox_process_factory(["--access-token-ttl", "30"])
    try:
        home, env = signed_in_home(name, base)
        latchkey = os.path.join(bin_dir, "latchkey")
        caller = os.path.join(baselines, "agent-caller")
        with open(os.path.join(home.root, "agent.log"), "ab") as log:
            agent, _ = start_agent(latchkey, env, log)
            try:
                subprocess.run([latchkey, "agent", "allow", caller, "mine"], env=env, check=True, stdout=subprocess.DEVNULL)
                callers = [(scopes, subprocess.Popen([caller, "mine", str(LOAD_SECONDS), *([scopes] if scopes else [])],
                                                     env=env, stdout=subprocess.PIPE, text=True))
                           for scopes in (scope_sets[index % len(scope_sets)] for index in range(CALLERS))]
                outputs = [(scopes, c.communicate(timeout=LOAD_SECONDS + 120)[0].splitlines()) for scopes, c in callers]
                for (scopes, c), (_, lines) in zip(callers, outputs):
                    if not lines:
                        raise RuntimeError(f"a caller for {scopes or 'the whole sign-in'} ended with {c.returncode}, saying nothing")
            finally:
                agent.terminate()
                agent.wait(10)
        calls = failed = 0
        seen = {scopes: set() for scopes in scope_sets}
        for scopes, lines in outputs:
            _, made, _, refused = lines[0].split()
            calls, failed = calls + int(made), failed + int(refused)
            seen[scopes].update(lines[1:])
        with urllib.request.urlopen(base + "/_admin/stats", timeout=10) as response:
            stats = json.loads(response.read())
        return {"calls": calls, "failed": failed, "seen": seen, "stats": stats}
    finally:
        process.terminate()
        process.wait(10)


def narrowed_rows(bin_dir, baselines, sandbox_process_factory):
    """Issue 38: the agent's warm answer for a narrowed token (one scope, by token exchange), against its
    answer for the sign-in's own token, asked alternately by the least client."""
    process, base = sandbox_process_factory([])
    try:
        home, env = signed_in_home("narrowed", base)
        latchkey = os.path.join(bin_dir, "latchkey")
        ask = os.path.join(baselines, "agent-ask")
        commands = {"whole": ([ask, "mine"], env), "narrowed": ([ask, "mine", "email"], env)}
        samples = {key: [] for key in commands}
        with open(os.path.join(home.root, "agent.log"), "ab") as log:
            agent, _ = start_agent(latchkey, env, log)
            try:
                subprocess.run([latchkey, "agent", "allow", ask, "mine"], env=env, check=True, stdout=subprocess.DEVNULL)
                for key in commands:
                    run_ms(*commands[key])  # warm-up round: the narrowed token is made here, once
                for _ in range(ROUNDS):
                    for key in commands:
                        samples[key].append(run_ms(*commands[key]))
            finally:
                agent.terminate()
                agent.wait(10)
        with urllib.request.urlopen(base + "/_admin/stats", timeout=10) as response:
            samples["exchanges"] = json.loads(response.read())["token_exchanges"]
        return samples
    finally:
        process.terminate()
        process.wait(10)


# The scope sets the narrowed load's callers ask for, in turn: the whole sign-in, and two narrowings.
SCOPE_SETS = (None, "email", "openid profile")


def narrowed_load_run(bin_dir, baselines, sandbox_process_factory):
    """Issue 38: 64 caller processes for LOAD_SECONDS against 30-second tokens, a third each asking for the
    whole sign-in, for `email` and for `openid profile`; counts calls, failures, and per scope set the
    distinct tokens handed out against the renewals (refreshes, exchanges) that made them."""
    load = caller_load("narrowed-load", bin_dir, baselines, sandbox_process_factory, SCOPE_SETS)
    return {"seconds": LOAD_SECONDS, "callers": CALLERS, "calls": load["calls"], "failed": load["failed"],
            "refreshes": load["stats"]["refresh_grants"], "exchanges": load["stats"]["token_exchanges"],
            "distinct_whole": len(load["seen"][None]),
            "distinct_narrowed": {k: len(v) for k, v in load["seen"].items() if k}}


def median(values):
    return statistics.median(values) if values else float("nan")



def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


class Prover:
    """A DPoP key (P-256) and the proofs it signs (RFC 9449 §4.2), made here with python3-cryptography."""

    def __init__(self):
        from cryptography.hazmat.primitives.asymmetric import ec
        self.key = ec.generate_private_key(ec.SECP256R1())
        numbers = self.key.public_key().public_numbers()
        self.jwk = {"crv": "P-256", "kty": "EC", "x": b64url(numbers.x.to_bytes(32, "big")), "y": b64url(numbers.y.to_bytes(32, "big"))}

    @property
    def stored(self):
        """The private key as Latchkey keeps it with a sign-in (Token.dpop_key): the scalar, base64url."""
        return b64url(self.key.private_numbers().private_value.to_bytes(32, "big"))

    def proof(self, method, url, access_token=None):
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
        header = b64url(json.dumps({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk}).encode())
        claims = {"jti": secrets.token_urlsafe(16), "htm": method, "htu": url, "iat": int(time.time())}
        if access_token:
            claims["ath"] = b64url(hashlib.sha256(access_token.encode()).digest())
        claims = b64url(json.dumps(claims).encode())
        r, s = decode_dss_signature(self.key.sign(f"{header}.{claims}".encode(), ec.ECDSA(hashes.SHA256())))
        return f"{header}.{claims}.{b64url(r.to_bytes(32, 'big') + s.to_bytes(32, 'big'))}"


def curl_rows(bin_dir, baselines, sandbox_process_factory):
    """Issue 39: `latchkey curl` warm (the front asks the agent for the token, and a proof, then runs curl)
    against plain curl with the token in a header file, the same request to the sandbox's UserInfo: a
    bearer sign-in (curl is run as it is), and a DPoP-bound one (its answer kept aside in case the
    resource asks for its nonce) against plain curl with that token and a fresh proof made beforehand
    (the same work for the server). Each round runs each once."""
    bearer_process, bearer_base = sandbox_process_factory([])
    dpop_process, dpop_base = sandbox_process_factory(["--dpop", "on"])
    agents = []
    try:
        bearer_home, bearer_env = signed_in_home("curl-bearer", bearer_base)
        prover = Prover()
        redirect = "http://127.0.0.1/callback"
        code, verifier = authorization_code(dpop_base, redirect)
        tokens = code_exchange(dpop_base, code, verifier, redirect, dpop=prover.proof("POST", dpop_base + "/token"))[1]
        if tokens.get("token_type") != "DPoP":
            raise RuntimeError(f"the sandbox did not bind the sign-in: {tokens.get('token_type')}")
        dpop_home = provider_home("curl-dpop", dpop_base)
        now = time.time()
        keep_token(dpop_home, {
            "access_token": tokens["access_token"], "refresh_token": tokens["refresh_token"], "token_type": "DPoP",
            "expires_at": now + tokens["expires_in"], "received_at": now, "scope": tokens.get("scope"), "dpop_key": prover.stored,
            "issued_by": "latchkey-desktop at http://127.0.0.1/token"})
        dpop_env = dict(os.environ, **dpop_home.env)
        latchkey = os.path.join(bin_dir, "latchkey")
        header_file = os.path.join(bearer_home.root, "header")
        with open(os.open(header_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            f.write(f"Authorization: Bearer {json.load(open(os.path.join(bearer_home.state, 'latchkey', 'mine.json')))['access_token']}\n")
        curl = shutil.which("curl")
        quiet = ["-sS", "-f", "-o", "/dev/null"]
        commands = {
            "curl": ([curl, *quiet, "-H", f"@{header_file}", bearer_base + "/userinfo"], bearer_env),
            "latchkey_bearer": ([latchkey, "curl", "--provider", "mine", "--", *quiet, bearer_base + "/userinfo"], bearer_env),
            "latchkey_dpop": ([latchkey, "curl", "--provider", "mine", "--", *quiet, dpop_base + "/userinfo"], dpop_env),
        }
        if BEFORE_FRONT:  # another build of the front, in the same rounds (an A/B run)
            commands["before_bearer"] = ([BEFORE_FRONT, "curl", "--provider", "mine", "--", *quiet, bearer_base + "/userinfo"], bearer_env)
            commands["before_dpop"] = ([BEFORE_FRONT, "curl", "--provider", "mine", "--", *quiet, dpop_base + "/userinfo"], dpop_env)
        for home, env in ((bearer_home, bearer_env), (dpop_home, dpop_env)):
            log = open(os.path.join(home.root, "agent.log"), "ab")
            agent, _ = start_agent(latchkey, env, log)
            agents.append(agent)
            # latchkey curl asks for the program that ran it: this interpreter, which runs others.
            subprocess.run([latchkey, "agent", "allow", "--including-what-it-runs", os.path.realpath(sys.executable), "mine"],
                           env=env, check=True, stdout=subprocess.DEVNULL)
            if BEFORE_FRONT:  # not Latchkey's own front (that is the one beside the agent): a program of its own
                subprocess.run([latchkey, "agent", "allow", "--including-what-it-runs", os.path.realpath(BEFORE_FRONT), "mine"], env=env, check=True,
                               stdout=subprocess.DEVNULL)
        # Plain curl with the bound token needs a fresh proof each time (a proof is good once): made before each round.
        dpop_token = tokens["access_token"]
        proved_file = os.path.join(dpop_home.root, "header")
        commands["curl_dpop"] = ([curl, *quiet, "-H", f"@{proved_file}", dpop_base + "/userinfo"], dpop_env)

        def prove():
            with open(os.open(proved_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
                f.write(f"Authorization: DPoP {dpop_token}\nDPoP: {prover.proof('GET', dpop_base + '/userinfo', dpop_token)}\n")
        samples = {key: [] for key in commands}
        prove()
        for key in commands:
            run_ms(*commands[key])  # warm-up round
        for _ in range(ROUNDS):
            prove()
            for key in commands:
                samples[key].append(run_ms(*commands[key]))
        return samples
    finally:
        for agent in agents:
            agent.terminate()
            agent.wait(10)
        for process in (bearer_process, dpop_process):
            process.terminate()
            process.wait(10)
