"""make soak (issue 40 §4): a month of rotating tokens, compressed, with the agent and the keyring
restarted under it.

The sandbox issues two-second access tokens (GitLab's two hours, compressed 3600 times) and
single-use rotating refresh tokens that end when left idle (--refresh-token-ttl, unsaid, as most
providers do). 64 callers ask the agent for the busy account's token without pause — oidc-token
on its socket, `latchkey token` (the front), git's credential helper and gdbus's GetToken, 16 each —
until the sign-in has been renewed SOAK_RENEWALS times (360 by default: a month of two-hour
tokens). Meanwhile, at random moments, the agent is ended (SIGTERM or kill -9) and started again,
and the keyring daemon is replaced (its login keyring unlocked again). A second account is signed in
and left alone past its refresh token's idle life; asked once at the end, it is found ended.

Counted: calls and failed calls per kind of caller (and which failed calls were in flight when
the agent was killed), the agent's questions and sign-in windows (prompts), renewals against
distinct tokens handed out, whether the busy sign-in is still signed in, and the notifications
the desktop's service was sent. Run with the CI-sized defaults, or SOAK_RENEWALS=20 for a quick look.
"""

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "EndToEnd"))
# The release build, for the agent the session bus starts too (harness reads this at import).
os.environ.setdefault("LATCHKEY_BIN_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".build", "release"))

import agent_bench  # noqa: E402
import harness  # noqa: E402
from activation import listening_socket, start_on  # noqa: E402
from agent import own_provider  # noqa: E402
from keyrings import start_keyring  # noqa: E402

ROOT = harness.ROOT
BIN = harness.BIN
RENEWALS = int(os.environ.get("SOAK_RENEWALS", "360"))
CALLERS = int(os.environ.get("SOAK_CALLERS", "64"))
IDLE_LIFE = 20
SEED = int(os.environ.get("SOAK_SEED", str(int(time.time()))))
# As the Debian package sets the agent up (latchkey-agent.socket under systemd --user): the soak is the
# service manager, holding the socket and starting each agent on it; the bus, asked for the agent while
# none runs, waits for the one the soak starts (as SystemdService= has systemd start it). 0: the agent
# makes its own socket and the bus starts it, as without systemd.
ACTIVATION = os.environ.get("SOAK_ACTIVATION", "1") != "0"


def sandbox():
    process = subprocess.Popen(
        [os.path.join(BIN, "latchkey-sandbox"), "--port", "0", "--exit-with-stdin", "--access-token-ttl", "2",
         "--refresh-token-ttl", str(IDLE_LIFE), "--no-say-refresh-token-ttl"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return process, process.stdout.readline().decode().strip().split(" ", 1)[1]


class Soak:
    def __init__(self):
        # Made fresh outside, before the session bus: the agent it starts has this home too.
        self.home = harness.Home("month-soak", fresh=False, under=os.path.join(ROOT, "bench-output"))
        self.env = dict(os.environ, **self.home.env)
        self.latchkey = os.path.join(BIN, "latchkey")
        self.lock = threading.Lock()
        self.calls = {}
        self.failed = {}
        self.failures = []
        self.tokens = set()
        self.stop = threading.Event()
        self.agent = None
        self.kills = []  # (time, how)
        self.prompts = set()

    def sign_in(self, provider_id, base):
        """Signs in over HTTP as the app does, and keeps the tokens as the app would in a file (which the agent's
        first load moves into the keyring)."""
        tokens = agent_bench.sign_in_over_http(base)
        now = time.time()
        agent_bench.keep_token(self.home, {
            "access_token": tokens["access_token"], "refresh_token": tokens["refresh_token"], "token_type": "Bearer",
            "expires_at": now + tokens["expires_in"], "received_at": now, "signed_in_at": now, "scope": tokens.get("scope"),
            "issued_by": "latchkey-desktop at http://127.0.0.1/token"}, provider_id)

    def start_agent(self):
        if ACTIVATION:
            # Its socket is there all along: what connects meanwhile waits in it for this agent.
            self.agent = start_on(self.listener, os.path.join(self.home.root, "agent.log"), level="notice", environment=self.env)
            return
        log = open(os.path.join(self.home.root, "agent.log"), "ab")
        self.agent = subprocess.Popen([self.latchkey, "agent", "--log-level", "notice"], env=self.env, stdout=log, stderr=log)
        sock = os.path.join(self.home.runtime, "latchkey", "agent.sock")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not os.path.exists(sock):
            time.sleep(0.01)

    def report_so_far(self):
        with self.lock:
            print(f"calls {self.calls}, failed {self.failed}", file=sys.stderr)
            for when, kind, detail in self.failures[:5]:
                print(f"  failed {kind} at {when:.1f}: {detail}", file=sys.stderr)

    def record(self, kind, ok, detail, token=None, started=None):
        with self.lock:
            self.calls[kind] = self.calls.get(kind, 0) + 1
            if token:
                self.tokens.add(token)
            if not ok:
                self.failed[kind] = self.failed.get(kind, 0) + 1
                if len(self.failures) < 500:
                    self.failures.append((started or time.time(), kind, detail[-300:]))

    def caller(self, kind, argv, env, stdin=None, token_of=lambda out: out.strip()):
        while not self.stop.is_set():
            started = time.time()
            try:
                result = subprocess.run(argv, env=env, input=stdin, capture_output=True, text=True, timeout=120)
                token = token_of(result.stdout) if result.returncode == 0 else None
                self.record(kind, result.returncode == 0 and bool(token), f"{result.returncode} {result.stderr}", token, started)
            except subprocess.TimeoutExpired:
                self.record(kind, False, "no answer within 120 s")

    def watch_prompts(self):
        """Any question of the agent's, or sign-in of its, shown meanwhile: a prompt."""
        while not self.stop.is_set():
            for pid, words in harness.command_lines():
                if words[0].endswith(b"latchkey-app") and len(words) > 1 and words[1] == b"agent":
                    self.prompts.add((pid, b" ".join(words[1:3]).decode()))
                elif words[0].endswith(b"gcr-prompter"):
                    self.prompts.add((pid, "the keyring's password prompt"))
            time.sleep(0.2)

    def chaos(self, rng):
        """At random moments: the agent ended (SIGTERM, or kill -9) and started again, or the keyring replaced."""
        while not self.stop.wait(rng.uniform(10, 40)):
            how = rng.choice(["SIGTERM", "kill -9", "keyring"])
            self.kills.append((time.time(), how))
            if how == "keyring":
                # As a crash and the next login's PAM do: the daemon gone, a new one started with the login keyring unlocked.
                subprocess.run(["pkill", "-f", "gnome-keyring-daemon"], capture_output=True)
                time.sleep(rng.uniform(0, 1))
                start_keyring()
                continue
            self.agent.send_signal(signal.SIGTERM if how == "SIGTERM" else signal.SIGKILL)
            self.agent.wait(30)
            self.start_agent()

    def run(self):
        rng = random.Random(SEED)
        start_keyring()
        self.env = dict(os.environ, **self.home.env)
        process, base = sandbox()
        try:
            git_host = "git.soak.example"
            sandbox_at = types.SimpleNamespace(base=base)
            own_provider(self.home, sandbox_at, "busy", display_name="Busy", git_hosts=[git_host], git_username="oauth2")
            own_provider(self.home, sandbox_at, "idle", display_name="Idle")
            self.sign_in("busy", base)
            self.sign_in("idle", base)
            recorder = subprocess.Popen(
                [sys.executable, os.path.join(ROOT, "Tests", "EndToEnd", "notification_server.py"),
                 os.path.join(self.home.root, "notifications.jsonl")], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert recorder.stdout.readline().strip() == b"ready"
            if ACTIVATION:
                self.listener, _ = listening_socket(self.home)
            self.start_agent()
            oidc_token = "/usr/bin/oidc-token"
            gdbus = "/usr/bin/gdbus"
            git = "/usr/bin/git"
            for program, extra in ((sys.executable, ["--including-what-it-runs"]), (oidc_token, []), (gdbus, []), (git, [])):
                for provider in ("busy", "idle"):
                    subprocess.run([self.latchkey, "agent", "allow", *extra, os.path.realpath(program), provider], env=self.env,
                                   check=True, capture_output=True)
            bin_dir = os.path.join(self.home.root, "bin")
            os.makedirs(bin_dir, exist_ok=True)
            # As make install puts them: the helper (a copy: it finds latchkey beside itself) and latchkey.
            shutil.copy(os.path.join(ROOT, "data", "git-credential-latchkey"), bin_dir)
            if not os.path.exists(os.path.join(bin_dir, "latchkey")):
                os.symlink(self.latchkey, os.path.join(bin_dir, "latchkey"))
            with open(os.path.join(self.home.home, ".gitconfig"), "w") as f:
                f.write("[credential]\n\thelper = latchkey\n")
            # oidc-token leaves its socket open across exec, so the agent cannot tell it from what it might run and
            # asks each time; with its sockets close-on-exec (as make bench runs it) it can be allowed always.
            oidc_env = dict(self.env, OIDC_SOCK=os.path.join(self.home.runtime, "latchkey", "agent.sock"),
                            LD_PRELOAD=os.path.join(ROOT, "bench-output", "baselines", "cloexec-sockets.so"))
            git_env = dict(self.env, PATH=bin_dir + os.pathsep + self.env["PATH"], GIT_TERMINAL_PROMPT="0")
            # gdbus's options typed: it learns the types from the agent's introspection, and with no agent
            # running (the moment after a kill -9, while the bus starts the next) it would guess "{}" a string.
            kinds = [
                ("oidc-token", [oidc_token, "busy"], oidc_env, None, lambda out: out.strip()),
                ("latchkey token", [self.latchkey, "token", "--provider", "busy"], self.env, None, lambda out: out.strip()),
                ("git", [git, "credential", "fill"], git_env, f"protocol=https\nhost={git_host}\n\n",
                 lambda out: next((line[9:] for line in out.splitlines() if line.startswith("password=")), None)),
                ("gdbus", [gdbus, "call", "--session", "--dest", "io.github.latchkey.Agent", "--object-path",
                           "/io/github/latchkey/Agent1", "--method", "io.github.latchkey.Agent1.GetToken", "busy", "@a{sv} {}"],
                 self.env, None, lambda out: out.split("'")[1] if "'" in out else None),
            ]
            threads = [threading.Thread(target=self.caller, args=kinds[n % len(kinds)], daemon=True) for n in range(CALLERS)]
            threads += [threading.Thread(target=self.watch_prompts, daemon=True), threading.Thread(target=self.chaos, args=(rng,), daemon=True)]
            started = time.time()
            for thread in threads:
                thread.start()
            stats = {}
            progress = (0, time.time())
            while True:
                time.sleep(2)
                stats = harness.admin(base, "/_admin/stats")
                # Renewals stopped for a minute (the sign-in lost, the agent stuck): said, not waited for without end.
                if stats.get("refresh_grants", 0) > progress[0]:
                    progress = (stats["refresh_grants"], time.time())
                elif time.time() - progress[1] > 60:
                    print("no renewal for 60 s: stopped", file=sys.stderr, flush=True)
                    break
                print(f"{time.time() - started:6.0f} s: {stats.get('refresh_grants')} renewals, {sum(self.calls.values())} calls, "
                      f"{sum(self.failed.values())} failed", file=sys.stderr, flush=True)
                if stats.get("refresh_grants", 0) >= RENEWALS:
                    break
            self.stop.set()
            for thread in threads:
                thread.join(150)
            seconds = time.time() - started
            # The account left alone, asked once: ended, and said so once.
            idle = subprocess.run([self.latchkey, "token", "--provider", "idle", "--no-interaction"], env=self.env, capture_output=True,
                                  text=True, timeout=60)
            time.sleep(2)
            status = subprocess.run([self.latchkey, "status", "--format", "json"], env=self.env, capture_output=True, text=True,
                                    timeout=60)
            busy = next(a for a in json.loads(status.stdout)["accounts"] if a["provider"] == "busy")
            stats = harness.admin(base, "/_admin/stats")
            with open(os.path.join(self.home.root, "notifications.jsonl")) as f:
                notices = [json.loads(line) for line in f if line.strip()]
            recorder.stdin.close()
            return {
                "seed": SEED, "activation": ACTIVATION, "seconds": round(seconds), "callers": CALLERS, "renewals": stats.get("refresh_grants"),
                "distinct_tokens": len(self.tokens), "calls": self.calls, "failed": self.failed, "failures": self.failures,
                "chaos": self.kills, "prompts": sorted(self.prompts), "busy_state": busy["state"], "idle_exit": idle.returncode,
                "idle_said": idle.stderr.strip(), "notifications": [(n["summary"], n["urgency"]) for n in notices],
            }
        finally:
            self.stop.set()
            self.report_so_far()
            if self.agent:
                self.agent.terminate()
            process.terminate()


def main():
    result = Soak().run()
    with open(os.path.join(ROOT, "soak-results.json"), "w") as f:
        json.dump(result, f, indent=2)
    print(json.dumps({k: v for k, v in result.items() if k != "failures"}, indent=1))
    for when, kind, detail in result["failures"][:5]:
        print(f"failed {kind} at {when:.1f}: {detail}")
    kills = [when for when, how in result["chaos"] if how == "kill -9"]
    print(f"\n{result['seconds']} s, {result['renewals']} renewals for {result['distinct_tokens']} tokens handed out; "
          f"{sum(result['calls'].values())} calls, {sum(result['failed'].values())} failed; {len(result['chaos'])} disruptions "
          f"({len(kills)} kill -9); {len(result['prompts'])} prompts; busy account {result['busy_state']}; "
          f"{len(result['notifications'])} notifications")
    # Each failed call, by the disruption it came within two seconds of (none: it came of nothing the soak did).
    near = {}
    for when, kind, _ in result["failures"]:
        cause = next((how for at, how in result["chaos"] if -2 <= when - at <= 2), "none")
        near[f"{kind} after {cause}"] = near.get(f"{kind} after {cause}", 0) + 1
    print(f"failed calls by cause (the first 50): {near}")
    # One renewal per expiry: every renewal's token was handed out (the sign-in's first may have expired unasked).
    renewed_once = result["distinct_tokens"] - 1 <= result["renewals"] <= result["distinct_tokens"]
    ok = (sum(result["failed"].values()) == 0 and not result["prompts"] and result["busy_state"] == "signed-in"
          and len(result["notifications"]) == 1 and renewed_once)
    return 0 if ok else 1


if __name__ == "__main__":
    if os.environ.get("LATCHKEY_SOAK_INSIDE") != "1":
        session = harness.Home("month-soak", under=os.path.join(ROOT, "bench-output"))
        os.environ["LATCHKEY_SOAK_INSIDE"] = "1"
        waits = "/usr/bin/gdbus wait --session --timeout 60 io.github.latchkey.Agent" if ACTIVATION else None
        sys.exit(subprocess.run(
            ["dbus-run-session", f"--config-file={harness.session_config(session, agent_exec=waits)}", "--", sys.executable, __file__,
             *sys.argv[1:]],
            env=os.environ).returncode)
    sys.exit(main())
