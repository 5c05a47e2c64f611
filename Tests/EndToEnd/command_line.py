"""End-to-end: starting latchkey — what it refuses, and what it does when its
sandbox child never answers."""

import http.server
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import threading
import time

from harness import BIN, ROOT, expect
from driver import Latchkey, wait_until


def bad_numbers(home):
    """Numbers that once trapped in the transport end in a sentence and exit status 64."""
    for value in ("inf", "nan", "1e999", "0", "-3", "1e300"):
        result = subprocess.run(
            [os.path.join(BIN, "latchkey"), f"--network-timeout={value}"], capture_output=True, text=True, timeout=60)
        expect(result.returncode == 64, f"--network-timeout {value}: exit {result.returncode}, stderr {result.stderr!r}")
        expect("--network-timeout must be a number of seconds from 1 to 3600" in result.stderr,
               f"--network-timeout {value} says why: {result.stderr!r}")


def narrowing_refusals(home):
    """A scope that is no scope, or an audience that is no URL, is refused on the command line (64) with a
    sentence, before anything is asked of anyone."""
    for words, said in ((["token", "--provider", "github", "--scope", 'repo"x'], "is not a scope"),
                        (["token", "--provider", "github", "--audience", "kubernetes"], "--audience must be a resource's URL"),
                        (["agent", "allow", "/usr/bin/gdbus", "github", "--scope", "a\\b"], "is not a scope")):
        result = subprocess.run([os.path.join(BIN, "latchkey"), *words], capture_output=True, text=True, timeout=60)
        expect(result.returncode == 64 and said in result.stderr, f"latchkey {' '.join(words)}: {result.returncode} {result.stderr!r}")


def plain_launch_refusals(home):
    """`latchkey` alone opens the window without the command-line parser: where it cannot, it says
    what `latchkey window` says, with the same exit status."""
    without_display = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    without_display.update(home.env)
    without_display.pop("LATCHKEY_LOG_LEVEL", None)
    for words in ([], ["window"]):
        result = subprocess.run([os.path.join(BIN, "latchkey"), *words], env=without_display, capture_output=True, text=True,
                                timeout=60)
        expect(result.returncode == 1, f"latchkey {' '.join(words)} without a display: exit {result.returncode}")
        expect("needs a graphical session: neither DISPLAY nor WAYLAND_DISPLAY is set" in result.stderr,
               f"latchkey {' '.join(words)} without a display says why: {result.stderr!r}")
    # A log level the parser would refuse is refused the parser's way, by either.
    for words in ([], ["window"]):
        result = subprocess.run([os.path.join(BIN, "latchkey"), *words], env=dict(os.environ, **home.env, LATCHKEY_LOG_LEVEL="loud"),
                                capture_output=True, text=True, timeout=60)
        expect(result.returncode == 64, f"latchkey {' '.join(words)} with LATCHKEY_LOG_LEVEL=loud: exit {result.returncode}")
        expect("Unknown LATCHKEY_LOG_LEVEL loud" in result.stderr, f"it says which: {result.stderr!r}")


def silent_sandbox(home):
    """A sandbox child that is alive but never prints: the app says so within its limit
    and stays usable, instead of "Starting…" for ever."""
    # Installed the usual way: programs in <prefix>/bin, presets in <prefix>/share.
    prefix = os.path.join(home.root, "install")
    install = os.path.join(prefix, "bin")
    os.makedirs(install, exist_ok=True)
    for name in ("latchkey", "latchkey-app", "libLatchkeyWebSignIn.so"):
        shutil.copy2(os.path.join(BIN, name), install)
    shutil.copytree(os.path.join(ROOT, "data", "providers"), os.path.join(prefix, "share", "latchkey", "providers"))
    fake = os.path.join(install, "latchkey-sandbox")
    with open(fake, "w") as f:
        # Holds its output open and says nothing (its input never gets a byte to echo).
        f.write("#!/bin/sh\nexec cat\n")
    os.chmod(fake, 0o755)
    app = Latchkey(os.path.join(install, "latchkey"), home.root, home.shots)
    try:
        app.wait_status("did not answer within 10 seconds", timeout=40)
        expect(app.process.poll() is None, "the app still runs")
        app.screenshot("01-sandbox-silent")
        children = subprocess.run(["pgrep", "-f", fake], capture_output=True, text=True).stdout.split()
        expect(children == [], f"the silent child was stopped: {children}")
    finally:
        app.quit()


def planted_preset(home):
    """`latchkey` started by bare name (argv[0] "latchkey") from a directory a stranger
    prepared: ../share/latchkey/providers/github.json beside it names a listener of
    theirs. With a stored GitHub sign-in due for refresh, the listener gets nothing."""
    work = os.path.join(home.root, "downloads", "unpacked")
    planted_dir = os.path.join(home.root, "downloads", "share", "latchkey", "providers")
    os.makedirs(work, exist_ok=True)
    os.makedirs(planted_dir, exist_ok=True)
    heard = os.path.join(home.root, "listener-heard.txt")
    listener = subprocess.Popen(
        [sys.executable, "-c", LISTENER, heard], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    port = int(listener.stdout.readline())
    base = f"http://127.0.0.1:{port}"
    with open(os.path.join(ROOT, "data", "providers", "github.json")) as f:
        preset = json.load(f)
    preset.update({"authorization_endpoint": f"{base}/login/oauth/authorize", "token_endpoint": f"{base}/login/oauth/access_token",
                   "userinfo_endpoint": f"{base}/user"})
    with open(os.path.join(planted_dir, "github.json"), "w") as f:
        json.dump(preset, f)
    # The person's own setup and sign-in: credentials, and a token GitHub issued, due for refresh.
    os.makedirs(os.path.join(home.config, "latchkey"), exist_ok=True)
    with open(os.path.join(home.config, "latchkey", "github.json"), "w") as f:
        json.dump({"client_id": "Iv1.person", "client_secret": "persons-secret-123"}, f)
    state = os.path.join(home.state, "latchkey")
    os.makedirs(state, mode=0o700, exist_ok=True)
    with open(os.path.join(state, "github.json"), "w") as f:
        json.dump({"access_token": "gho_persons_access_token", "refresh_token": "ghr_persons_refresh_token",
                   "token_type": "Bearer", "expires_at": time.time() + 5, "received_at": time.time() - 28000,
                   "issued_by": "Iv1.person at https://github.com/login/oauth/access_token"}, f)
    os.chmod(os.path.join(state, "github.json"), 0o600)
    environment = {"PATH": BIN + os.pathsep + os.environ.get("PATH", "")}
    app = Latchkey("latchkey", home.root, home.shots, args=("--provider", "github", "--network-timeout", "5"),
                   env=environment, cwd=work)
    try:
        app.wait_status("GitHub")
        # The refresh due at launch has gone wherever it went once this is logged.
        wait_until("the launch refresh to end", lambda: "renew the sign-in at launch" in open(app.log_path).read()
                   or "Access token refreshed" in open(app.log_path).read(), 30)
        app.screenshot("01-after-launch-refresh")
    finally:
        app.quit()
        listener.kill()
        listener.wait()
    said = open(heard).read() if os.path.exists(heard) else ""
    expect(said == "", f"the planted listener received requests: {said!r}")


LISTENER = """
import http.server, sys
class Heard(http.server.BaseHTTPRequestHandler):
    def answer(self):
        open(sys.argv[1], "a").write(self.command + " " + self.path + "\\n")
        self.send_response(500); self.send_header("Content-Length", "0"); self.end_headers()
    do_GET = do_POST = answer
    def log_message(self, *args): pass
server = http.server.HTTPServer(("127.0.0.1", 0), Heard)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


class Resource(http.server.BaseHTTPRequestHandler):
    """A resource that answers with the Authorization header it got (404 under /missing), and counts."""
    requests = []

    def do_GET(self):
        Resource.requests.append(self.path)
        body = json.dumps({"authorization": self.headers.get("Authorization")}).encode()
        self.send_response(404 if self.path.startswith("/missing") else 200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class StandInAgent:
    """The agent's socket (LATCHKEY_AGENT_SOCK), answering each request with `answer`, or with nothing
    until the asker goes when it is None; `asked` is set once a request has come."""

    def __init__(self, path):
        self.path, self.answer, self.asked = path, None, threading.Event()
        self.listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listening.bind(path)
        self.listening.listen(8)
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            connection, _ = self.listening.accept()
            with connection:
                request = connection.recv(65536)
                self.asked.set()
                if json.loads(request).get("request") != "access_token":
                    continue
                if self.answer is None:
                    connection.recv(1)  # until the asker closes (or is killed)
                else:
                    connection.sendall(json.dumps(self.answer).encode())


def curl_started_early(home):
    """latchkey curl starts curl while the agent works on the request (so that its load overlaps the
    agent's answer): the token reaches it, curl's own status is the command's, a refusal ends it unused,
    and the front killed while the agent has not answered leaves curl without a URL: nothing is sent."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Resource)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    agent = StandInAgent(os.path.join(home.root, "agent.sock"))
    environment = dict(os.environ, **home.env, LATCHKEY_AGENT_SOCK=agent.path)
    latchkey = os.path.join(BIN, "latchkey")

    def run(*arguments, cwd=None):
        return subprocess.run([latchkey, "curl", "--provider", "mine", "--", *arguments], env=environment, capture_output=True,
                              text=True, timeout=120, cwd=cwd)

    try:
        # A token with characters curl's configuration quotes, to a URL with some too.
        agent.answer = {"status": "success", "access_token": 'token-"quoted"\\back', "token_type": "bearer"}
        fetched = run("-sS", f'{base}/notes?q="x"')
        expect(fetched.returncode == 0 and json.loads(fetched.stdout)["authorization"] == 'Bearer token-"quoted"\\back'
               and Resource.requests == ['/notes?q="x"'], f"latchkey curl with the agent's token: {fetched} {Resource.requests}")
        missing = run("-sS", "-f", "--url", f"{base}/missing")
        expect(missing.returncode == 22 and Resource.requests[-1] == "/missing", f"curl's own status: {missing.returncode} {missing.stderr!r}")
        joined = run("-sS", "-HAccept: application/json", f"{base}/joined")  # a value joined to its option, holding a ':'
        expect(joined.returncode == 0 and Resource.requests[-1] == "/joined", f"-HAccept: … joined: {joined}")
        # The longest URL taken (4096 bytes): sent whole. (Past 2000 bytes the front asks through `latchkey token`
        # and curl is not started early, so the early curl's URL line, 2 × 2000 + 9 bytes at most with every
        # character escaped, always fits the one pipe write that child.c checks for.)
        long_path = "/long?q="
        long_path += "x" * (4096 - len(base) - len(long_path))
        long = run("-sS", f"{base}{long_path}")
        expect(long.returncode == 0 and Resource.requests[-1] == long_path, f"a 4 KiB URL: {long.returncode} {long.stderr!r}")
        dashed = run("-sS", "--", f"{base}/dashed")  # `-- URL`, last: curl's own way to say what follows is the URL
        expect(dashed.returncode == 0 and Resource.requests[-1] == "/dashed", f"-- before the URL: {dashed}")
        # --remote-name-all holds for the URLs after it: the URL keeps its place, so it is curl's as before.
        folder = os.path.join(home.root, "downloads")
        os.makedirs(folder)
        named = run("-sS", "--remote-name-all", f"{base}/named", cwd=folder)
        expect(named.returncode == 0 and named.stdout == "" and os.path.exists(os.path.join(folder, "named")),
               f"--remote-name-all: {named} {os.listdir(folder)}")
        agent.answer = {"status": "failure", "error": "You said no to this program.", "kind": "Denied"}
        before = len(Resource.requests)
        refused = run("-sS", f"{base}/notes")
        expect(refused.returncode == 5 and "You said no to this program." in refused.stderr and refused.stdout == ""
               and len(Resource.requests) == before, f"a refusal: {refused} {Resource.requests}")
        # Whatever answers on the socket (a forwarded agent) puts no second line into curl's headers: none would
        # read a file of them (@path), nor send a raw carriage return.
        for token in ("tok\n@/etc/passwd", "tok\rX-Evil: 1", "tok en"):
            agent.answer = {"status": "success", "access_token": token, "token_type": "Bearer"}
            odd = run("-sS", f"{base}/notes")
            expect(odd.returncode == 1 and "which no token has" in odd.stderr and len(Resource.requests) == before,
                   f"a token with {token!r}: {odd} {Resource.requests}")
        agent.answer = {"status": "success", "access_token": "tok", "token_type": "DPoP", "dpop_proof": "a.b.c\rX-Evil: 1"}
        odd = run("-sS", f"{base}/notes")
        expect(odd.returncode == 1 and "proof with spaces" in odd.stderr and len(Resource.requests) == before, f"a proof with a CR: {odd}")

        # The front killed (SIGKILL: nothing of it runs) while the agent has not answered: curl, started, ends unheard.
        agent.answer, agent.asked = None, threading.Event()
        front = subprocess.Popen([latchkey, "curl", "--provider", "mine", "--", "-sS", f"{base}/notes"], env=environment,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        expect(agent.asked.wait(120), "the front asked the stand-in agent")
        children = f"/proc/{front.pid}/task/{front.pid}/children"

        def started():  # the child, once it is curl (forked, it is the front until its exec)
            for child in open(children).read().split():
                with open(f"/proc/{child}/cmdline") as f:
                    arguments = f.read().split("\0")
                if arguments[0] == "curl":
                    return int(child), arguments
        curl, arguments = wait_until("curl to be started beside the question", started, 60)
        # Without its URL, whose place a flag keeps: an option before it that the front does not know, and curl
        # takes a value for (--proxy1.0), takes the same argument as in curl alone, never the one after it.
        expect(arguments[:3] == ["curl", "--globoff", "-K"] and arguments[4:] == ["-sS", "--globoff", ""],
               f"curl started without its URL, its place kept: {arguments}")
        ended = os.pidfd_open(curl)
        front.kill()
        front.wait(60)
        expect(select.select([ended], [], [], 60)[0], "curl ended with the front")
        os.close(ended)
        said = front.stderr.read().decode()
        expect(len(Resource.requests) == before and front.stdout.read() == b"", f"nothing was sent: {Resource.requests} {said!r}")
    finally:
        server.shutdown()


def unknown_provider(home):
    """With no agent, a provider that is not one of yours is one sentence and status 1, as a refusal of the
    agent's is: never a usage line (`latchkey curl` runs `latchkey token`, whose usage is not the one typed).
    (Through the agent, a program not allowed learns nothing, not even that: `agent_programs`.)"""
    said = "latchkey: There is no provider called “nope”; `latchkey status` lists them.\n"
    for words in (["token", "--provider", "nope"], ["curl", "--provider", "nope", "https://example.invalid/"]):
        result = subprocess.run([os.path.join(BIN, "latchkey"), *words], capture_output=True, text=True, timeout=60)
        expect(result.returncode == 1 and result.stderr == said and result.stdout == "",
               f"latchkey {words[0]} --provider nope: {result.returncode} {result.stderr!r}")
    # A name with a terminal's escape in it is said without the escape, as the agent says it.
    result = subprocess.run([os.path.join(BIN, "latchkey"), "token", "--provider", "no\x1b]0;owned\x07pe"],
                            capture_output=True, text=True, timeout=60)
    expect(result.returncode == 1 and "There is no provider called" in result.stderr and "\x1b" not in result.stderr
           and "\x07" not in result.stderr, f"an escape in the name: {result.returncode} {result.stderr!r}")


SCENARIOS = {"unknown_provider": unknown_provider, "curl_started_early": curl_started_early, "bad_numbers": bad_numbers, "narrowing_refusals": narrowing_refusals, "plain_launch_refusals": plain_launch_refusals, "silent_sandbox": silent_sandbox, "planted_preset": planted_preset}
