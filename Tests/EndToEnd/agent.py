"""End-to-end: Latchkey's agent for other programs — the unmodified oidc-token of
Debian's oidc-agent-cli, gdbus, latchkey token and git — with the person's say
given in the agent's dialog through AT-SPI, as a person gives it."""

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

from driver import Atspi, Failure, Latchkey, StateChanges, is_, name, wait_until
from harness import BIN, ROOT, assert_no_secrets, command_lines, expect, sign_in

AGENT = ("latchkey-agent",)
DEST = ["--dest", "io.github.latchkey.Agent", "--object-path", "/io/github/latchkey/Agent1"]
OIDC_TOKEN = "/usr/bin/oidc-token"


class Sandbox:
    """The real latchkey-sandbox, on a port of its own, ending when this test lets go of its input."""

    def __init__(self, *arguments, log=None, command=None):
        """`command`: how the sandbox is started, instead of the build's (the installed one, for instance)."""
        self.log = log
        self.process = subprocess.Popen(
            [*(command or [os.path.join(BIN, "latchkey-sandbox")]), "--port", "0", "--exit-with-stdin", *arguments],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(log, "ab") if log else subprocess.DEVNULL)
        line = self.process.stdout.readline().decode().strip()
        expect(line.startswith("listening http://127.0.0.1:"), f"the sandbox said {line!r}")
        self.base = line[len("listening "):]

    def stop(self):
        self.process.stdin.close()
        self.process.wait(10)


def own_provider(home, sandbox, provider_id="mine", **extra):
    """A provider of the person's own on the sandbox: the sandbox preset with its issuer, in their config."""
    with open(os.path.join(ROOT, "data", "providers", "sandbox.json")) as f:
        preset = json.load(f)
    preset.update({"id": provider_id, "display_name": "My sandbox", "issuer": sandbox.base}, **extra)
    directory = os.path.join(home.config, "latchkey")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, f"{provider_id}.json"), "w") as f:
        json.dump(preset, f)


def signed_in(home, provider_id="mine"):
    """Signs in to the provider in the window, as a person does; returns the window, still open."""
    app = home.launch("--provider", provider_id)
    app.wait_status("My sandbox")
    sign_in(app, home)
    app.wait_status("Signed in")
    return app


def stored(home, provider_id="mine"):
    with open(os.path.join(home.state, "latchkey", f"{provider_id}.json")) as f:
        return json.load(f)


def gdbus(*arguments, timeout=60):
    return subprocess.run(["gdbus", "call", "--session", *DEST, *arguments], capture_output=True, text=True, timeout=timeout)


def oidc_token(home, *arguments):
    """oidc-token started in the background (it waits while the person is asked)."""
    environment = dict(os.environ, OIDC_SOCK=os.path.join(home.runtime, "latchkey", "agent.sock"))
    return subprocess.Popen([OIDC_TOKEN, *arguments], env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(process, timeout=60):
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def answer(home, label, shot, offered=None, shows=()):
    """The agent's question, answered with the button `label`; the dialog is looked at first: with
    `offered`, its answers are exactly those; it shows each label of `shows`."""
    agent = Latchkey.attached(AGENT, home.shots)
    dialog = agent.find("frame", "Allow a program to use your sign-in?", newest=True, timeout=30)
    button = agent.button(label, root=dialog)
    for text in shows:
        agent.find("label", text, root=dialog, timeout=5)
    if offered is not None:
        shown = [name(node) for node in agent.find_all("push button", root=dialog)]
        expect(shown == list(offered), f"the dialog offers {shown}, not {list(offered)}")
    agent.screenshot(shot)
    agent.press(button)
    return agent


# 200 GetToken calls at once on one bus connection, for names there are none of; says "busy N" once
# 100 were answered that the agent is busy, and waits for the rest.
FLOOD = r"""
import gi
gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib
bus = Gio.bus_get_sync(Gio.BusType.SESSION)
loop = GLib.MainLoop()
busy = [0]
def answered(source, result, _):
    try:
        bus.call_finish(result)
    except GLib.Error as error:
        if "busy" in error.message:
            busy[0] += 1
            if busy[0] == 100:
                print(f"busy {busy[0]}", flush=True)
for n in range(200):
    bus.call("io.github.latchkey.Agent", "/io/github/latchkey/Agent1", "io.github.latchkey.Agent1", "GetToken",
             GLib.Variant("(sa{sv})", (f"nope{n}", {})), None, Gio.DBusCallFlags.NONE, -1, None, answered, None)
loop.run()
"""


# oidc-token makes itself non-dumpable, so a person's agent (without CAP_SYS_PTRACE) cannot read which
# file it runs: it is asked about by the name it gives itself, once at a time.
HIDDEN_OIDC_TOKEN = "a program that hides which file it runs, named \u201coidc-token\u201d"


def agent_programs(home):
    """oidc-token, which hides which file it runs, is asked about by its name and allowed once at most;
    gdbus gets a token once the person answers "Always allow", and again with no question; revoked in
    the window, it is asked again; Deny ends oidc-token's request with Latchkey's sentence; another
    user is refused at the socket."""
    sandbox = Sandbox()
    own_provider(home, sandbox)
    window = signed_in(home)
    try:
        # D-Bus starts the agent: the first call is what any program's would be.
        listed = gdbus("--method", "io.github.latchkey.Agent1.ListProviders")
        expect(listed.returncode == 0 and "('mine', 'My sandbox', 'signed in;" in listed.stdout, f"ListProviders: {listed}")
        expect(stored(home)["access_token"] not in listed.stdout, "a token in the list")

        first = oidc_token(home, "mine")
        answer(home, "Allow once", "01-oidc-token-asked", offered=("Deny", "Allow once"), shows=("hidden (it calls itself oidc-token)",))
        status, out, err = finished(first)
        expect(status == 0 and out.strip() == stored(home)["access_token"], f"oidc-token: {status} {err!r}")

        # Another program, which hides nothing: allowed always, it gets the next token with no question.
        def get_token():
            return subprocess.Popen(["gdbus", "call", "--session", *DEST, "--method", "io.github.latchkey.Agent1.GetToken", "mine", "{}"],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        call = get_token()
        answer(home, "Always allow", "02-gdbus-asked", offered=("Deny", "Allow once", "Always allow"))
        status, out, err = finished(call)
        expect(status == 0 and stored(home)["access_token"] in out, f"gdbus GetToken: {status} {err!r}")
        status, out, err = finished(get_token(), timeout=20)
        expect(status == 0 and stored(home)["access_token"] in out, f"gdbus GetToken again, without a question: {status} {err!r}")
        gdbus_path = os.path.realpath(shutil.which("gdbus"))

        # One bus connection floods the agent with calls: past eight under way it is told the agent is
        # busy, and the program allowed is served as ever meanwhile.
        flood = subprocess.Popen(["/usr/bin/python3", "-c", FLOOD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            ready, _, _ = select.select([flood.stdout], [], [], 60)
            told = flood.stdout.readline().strip() if ready else ""
            expect(told.startswith("busy "), f"the flood was never told busy: {told!r} {flood.stderr.read() if flood.poll() is not None else ''}")
            status, out, err = finished(get_token(), timeout=30)
            expect(status == 0 and stored(home)["access_token"] in out, f"gdbus GetToken beside a flood: {status} {err!r}")
        finally:
            flood.kill()
            flood.wait(10)

        # The window lists what was always allowed, with its last use, and revokes it.
        window.press(window.button("Allowed programs"))
        programs = window.find("dialog", "Allowed programs")
        window.find("label", gdbus_path, root=programs)
        window.find("label", "My sandbox (ada@sandbox.example) · last got a token just now", root=programs, timeout=5)
        window.screenshot("03-allowed-programs")
        window.press(window.button("Revoke", root=programs))
        window.find("label", "No program is allowed yet.", root=programs, exact=False, timeout=10)
        window.screenshot("04-revoked")
        window.press(window.button("Close", root=programs))

        # A D-Bus caller that leaves while asked about: its question is taken back.
        leaving = get_token()
        agent = Latchkey.attached(AGENT, home.shots)
        agent.find("frame", "Allow a program to use your sign-in?", newest=True, timeout=30)
        leaving.kill()
        leaving.wait(10)
        agent.absent("frame", "Allow a program to use your sign-in?", timeout=20)

        call = get_token()
        answer(home, "Deny", "05-asked-again-after-revoke")
        status, out, err = finished(call)
        expect(status != 0 and stored(home)["access_token"] not in out, f"gdbus denied: {status} {out!r}")

        # oidc-token asked again (nothing was kept for it), and denied: Latchkey's sentence, by oidc-token.
        denied = oidc_token(home, "mine")
        answer(home, "Deny", "06-oidc-token-asked-again")
        status, out, err = finished(denied)
        expect(status == 1 and out == "", f"oidc-token denied: {status} {out!r}")
        # Named as the program is, with only what it asked for: no account, no provider's name (issue 36 §7).
        expect(f"Error: A{HIDDEN_OIDC_TOKEN[1:]} gets no token for “mine”: you have not allowed it that, or there is no such sign-in"
               in err, f"oidc-token's stderr: {err!r}")
        # Asking for a provider there is none of: the same words, and nobody asked (nobody answers here,
        # and the call ends all the same).
        guessed = oidc_token(home, "nope")
        status, out, err = finished(guessed)
        expect(status == 1 and out == "" and f"Error: A{HIDDEN_OIDC_TOKEN[1:]} gets no token for “nope”: you have not allowed it "
               "that, or there is no such sign-in" in err, f"oidc-token nope: {status} {err!r}")

        # Another uid, even one allowed past the directory's permissions, gets nothing. Becoming another
        # user takes root: a person who is not root runs this one step through sudo.
        socket = os.path.join(home.runtime, "latchkey", "agent.sock")
        as_root = [] if os.geteuid() == 0 else ["sudo", "env", f"PATH={os.environ['PATH']}"]
        stranger = subprocess.run(
            [*as_root, "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=+dac_override",
             "--ambient-caps=+dac_override", "env", f"OIDC_SOCK={socket}", OIDC_TOKEN, "mine"],
            capture_output=True, text=True, timeout=30)
        expect(stranger.returncode != 0 and stranger.stdout == "", f"another user got: {stranger}")
        wait_until("the refusal in the agent's log",
                   lambda: "Refused a connection from another user" in open(os.path.join(home.root, "agent.log")).read(), 10)
        # A second agent started by mistake yields to the first.
        second = subprocess.run([os.path.join(BIN, "latchkey"), "agent"], capture_output=True, text=True, timeout=30)
        expect(second.returncode == 0 and "already runs in this session" in second.stderr, f"a second agent: {second}")
    finally:
        window.quit()
        sandbox.stop()
    assert_no_secrets(home, [window.log_path, os.path.join(home.root, "agent.log")], extra=[stored(home)["access_token"]])


def git(home, *arguments, cwd=None, check=True):
    environment = dict(os.environ, PATH=os.path.join(home.home, "bin") + os.pathsep + os.environ.get("PATH", ""),
                       GIT_TERMINAL_PROMPT="0", GIT_CONFIG_NOSYSTEM="1")
    result = subprocess.run(["git", *arguments], cwd=cwd, env=environment, capture_output=True, text=True, timeout=120)
    if check:
        expect(result.returncode == 0, f"git {' '.join(arguments)}: {result.returncode} {result.stderr!r}")
    return result


def git_server(home, sandbox, **provider):
    """A git server taking the sandbox's tokens (`notes.git`, empty), the provider `mine` for its host, and
    git-credential-latchkey beside latchkey on PATH, as make install puts them; returns the server and its port."""
    server_root = os.path.join(home.root, "git-server")
    os.makedirs(server_root)
    git(home, "init", "-q", "--bare", "-b", "main", os.path.join(server_root, "notes.git"))
    git(home, "config", "http.receivepack", "true", cwd=os.path.join(server_root, "notes.git"))
    server = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests", "EndToEnd", "git_server.py"), server_root, sandbox.base],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    port = int(server.stdout.readline())
    own_provider(home, sandbox, git_hosts=[f"127.0.0.1:{port}"], git_username="oauth2", **provider)
    shutil.copy(os.path.join(ROOT, "data", "git-credential-latchkey"), os.path.join(home.home, "bin"))
    os.symlink(os.path.join(BIN, "latchkey"), os.path.join(home.home, "bin", "latchkey"))
    return server, port


def agent_git(home):
    """git clones and pushes over smart HTTP from a server that takes only the sandbox's tokens,
    through git-credential-latchkey and the agent (git asked about once); a token the server
    stops taking is renewed at the next get, and the sign-in is never removed."""
    sandbox = Sandbox()
    server, port = git_server(home, sandbox)
    with open(os.path.join(home.home, ".gitconfig"), "w") as f:
        f.write("[credential]\n\thelper = latchkey\n[user]\n\tname = Ada\n\temail = ada@example.com\n[init]\n\tdefaultBranch = main\n")
    window = signed_in(home)
    window.quit()
    try:
        gdbus("--method", "io.github.latchkey.Agent1.ListProviders")  # the bus starts the agent
        url = f"http://127.0.0.1:{port}/notes.git"
        work = os.path.join(home.root, "work")
        clone = subprocess.Popen(["git", "clone", "-q", url, work], env=dict(
            os.environ, PATH=os.path.join(home.home, "bin") + os.pathsep + os.environ["PATH"], GIT_TERMINAL_PROMPT="0"),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        answer(home, "Always allow", "01-git-asked")
        status, _, err = finished(clone)
        expect(status == 0, f"git clone: {err!r}")
        with open(os.path.join(work, "README"), "w") as f:
            f.write("pushed through Latchkey\n")
        git(home, "add", "README", cwd=work)
        git(home, "commit", "-q", "-m", "First", cwd=work)
        git(home, "push", "-q", "origin", "main", cwd=work)
        first = stored(home)["access_token"]

        # The server stops taking that token: the push fails, git erases it, and the next get renews it.
        urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/_refuse", data=first.encode()), timeout=10)
        with open(os.path.join(work, "README"), "a") as f:
            f.write("again\n")
        git(home, "commit", "-q", "-am", "Second", cwd=work)
        refused = git(home, "push", "-q", "origin", "main", cwd=work, check=False)
        expect(refused.returncode != 0, "the push with a refused token went through")
        expect(stored(home)["access_token"] == first, "erase removed or changed the sign-in")
        git(home, "push", "-q", "origin", "main", cwd=work)
        expect(stored(home)["access_token"] != first, "the refused token was not renewed")
        again = os.path.join(home.root, "again")
        git(home, "clone", "-q", url, again)
        log = git(home, "log", "--oneline", cwd=again).stdout
        expect("Second" in log and "First" in log, f"the server's history: {log!r}")
        # store changes nothing: the sign-in is Latchkey's.
        before = stored(home)
        git_store = subprocess.run([os.path.join(BIN, "latchkey"), "git-credential", "store"], input=(
            f"protocol=http\nhost=127.0.0.1:{port}\nusername=oauth2\npassword=something-else\n\n"), text=True, capture_output=True)
        expect(git_store.returncode == 0 and stored(home) == before, "store changed the sign-in")
    finally:
        server.kill()
        sandbox.stop()
    assert_no_secrets(home, [os.path.join(home.root, "agent.log")], extra=[stored(home)["access_token"]])


def latchkey(*arguments, environment=None):
    return subprocess.run([os.path.join(BIN, "latchkey"), *arguments], capture_output=True, text=True, timeout=60,
                          env=environment or os.environ)


def agent_without_display(home, *arguments):
    """`latchkey agent` started where there is no display to ask on (its log in agent.log), once it
    serves its socket."""
    environment = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    log = open(os.path.join(home.root, "agent.log"), "ab")
    agent = subprocess.Popen([os.path.join(BIN, "latchkey"), "agent", *arguments], env=environment, stdout=log, stderr=log)
    wait_until("the agent's socket", lambda: os.path.exists(os.path.join(home.runtime, "latchkey", "agent.sock")), 20)
    return agent


def agent_scripts(home):
    """latchkey token for scripts, without an agent and through one: --format token, header, json and
    exec-credential, --min-valid; an agent with no display to ask on says no, and how to allow the
    program; `latchkey agent allow` does, and the token then comes through the agent."""
    sandbox = Sandbox()
    own_provider(home, sandbox)
    window = signed_in(home)
    window.quit()
    agent = None
    try:
        token = stored(home)["access_token"]
        plain = latchkey("token", "--provider", "mine")
        expect(plain.returncode == 0 and plain.stdout == token + "\n", f"latchkey token with no agent: {plain}")
        header = latchkey("token", "--provider", "mine", "--format", "header")
        expect(header.stdout == f"Authorization: Bearer {token}\n", f"--format header: {header.stdout!r}")
        # README's way to hand it to curl: through a pipe, on no command line that ps shows.
        piped = subprocess.run(f"'{os.path.join(BIN, 'latchkey')}' token --provider mine --format header | curl -s -f -H @- {sandbox.base}/userinfo",
                               shell=True, capture_output=True, text=True, timeout=60)
        expect(piped.returncode == 0 and '"email":"ada@sandbox.example"' in piped.stdout.replace(" ", ""), f"| curl -H @-: {piped}")
        as_json = json.loads(latchkey("token", "--provider", "mine", "--format", "json").stdout)
        expect(as_json["token"] == token and as_json["token_type"] == "Bearer" and "openid" in as_json["scopes"]
               and 0 < as_json["expires_in"] <= 3600, f"--format json: {as_json}")
        too_long = latchkey("token", "--provider", "mine", "--min-valid", "7200")
        expect(too_long.returncode == 1 and "less than the 7200 asked" in too_long.stderr, f"--min-valid 7200: {too_long}")
        renewed = latchkey("token", "--provider", "mine", "--min-valid", "3590")
        expect(renewed.returncode == 0 and renewed.stdout.strip() != token, f"--min-valid renews: {renewed}")

        # An agent started where there is no display: it cannot ask, so it says no, and how to allow.
        agent = agent_without_display(home, "--log-level", "debug")
        refused = latchkey("token", "--provider", "mine")
        expect(refused.returncode == 5 and refused.stdout == "", f"no display: {refused}")
        # The program that ran latchkey token is this test's Python, which runs any script: the sentence
        # does not offer to allow it, and allowing it takes saying so.
        python = os.path.realpath(sys.executable)
        expect("has no display to ask you on; it runs other programs for anyone (a shell, an interpreter), so it is asked about "
               "each time" in refused.stderr and "latchkey agent allow" not in refused.stderr, f"the sentence: {refused.stderr!r}")
        plainly = latchkey("agent", "allow", python, "mine")
        expect(plainly.returncode != 0 and "runs other programs for anyone" in plainly.stderr
               and "--including-what-it-runs" in plainly.stderr, f"latchkey agent allow {python}: {plainly}")
        allowed = latchkey("agent", "allow", "--including-what-it-runs", python, "mine")
        expect(allowed.returncode == 0, f"latchkey agent allow --including-what-it-runs: {allowed}")
        listed = latchkey("agent", "list")
        expect(python in listed.stdout and "My sandbox" not in listed.stdout and "mine (ada@sandbox.example)" in listed.stdout,
               f"agent list: {listed.stdout!r}")
        through_agent = latchkey("token", "--provider", "mine", "--format", "exec-credential")
        credential = json.loads(through_agent.stdout)
        expect(credential["kind"] == "ExecCredential" and credential["status"]["token"] == stored(home)["access_token"],
               f"exec-credential through the agent: {through_agent}")
        wait_until("the agent to say it gave the token",
                   lambda: f"Token given program={python} provider=mine" in open(os.path.join(home.root, "agent.log")).read(), 10)
        # `latchkey token` through the agent is answered by the front alone, without loading the app:
        # a copy of the front with no app anywhere near it still answers, and hands anything else on.
        alone = os.path.join(home.root, "front-alone")
        os.makedirs(alone)
        shutil.copy(os.path.join(BIN, "latchkey"), alone)
        # A copy is not Latchkey's own front (another file): the agent asks about it for itself. Named
        # latchkey, it is taken for one that runs others, so allowing it takes saying so.
        expect(latchkey("agent", "allow", "--including-what-it-runs", os.path.join(alone, "latchkey"), "mine").returncode == 0,
               "allowing the copy")
        front = subprocess.run([os.path.join(alone, "latchkey"), "token", "--provider=mine", "--format", "header", "--min-valid", "60"],
                               capture_output=True, text=True, timeout=30)
        expect(front.returncode == 0 and front.stdout == f"Authorization: Bearer {stored(home)['access_token']}\n", f"the front: {front}")
        other = subprocess.run([os.path.join(alone, "latchkey"), "token", "--provider", "mine", "--format", "json"],
                               capture_output=True, text=True, timeout=30)
        expect(other.returncode == 1 and "its app (latchkey-app) is not beside it" in other.stderr, f"the front hands on: {other}")
        forgot = latchkey("agent", "forget", python, "mine")
        expect(forgot.returncode == 0 and latchkey("token", "--provider", "mine").returncode == 5, "forgotten: refused again")
    finally:
        if agent:
            agent.terminate()
            agent.wait(10)
        sandbox.stop()
    expect(not os.path.exists(os.path.join(home.runtime, "latchkey", "agent.sock")), "the agent took its socket with it")
    assert_no_secrets(home, [os.path.join(home.root, "agent.log")], extra=[stored(home)["access_token"]])


def agent_sign_in(home):
    """A program asks the agent over D-Bus to sign in: the sign-in window opens from the agent
    (no window of Latchkey's own), the person signs in through AT-SPI, the call returns, and the
    token is there for the next caller; SignOut forgets it."""
    sandbox = Sandbox()
    own_provider(home, sandbox)
    try:
        listed = gdbus("--method", "io.github.latchkey.Agent1.ListProviders")
        expect("('mine', 'My sandbox', 'signed out')" in listed.stdout, f"signed out at first: {listed}")
        accounts = gdbus("--method", "io.github.latchkey.Agent1.ListAccounts")
        expect("('mine', '-', 'signed-out', 'signed out')" in accounts.stdout, f"ListAccounts, signed out: {accounts}")
        call = subprocess.Popen(["gdbus", "call", "--session", "--timeout", "120", *DEST, "--method",
                                 "io.github.latchkey.Agent1.SignIn", "mine"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        agent = Latchkey.attached(AGENT, home.shots, timeout=30)
        username = agent.find("entry", "Username", timeout=30)
        agent.screenshot("01-sign-in-from-the-agent")
        agent.type_into(username, "ada")
        agent.type_into(agent.find("password text", "Password"), "engine")
        agent.press(agent.button("Allow"))
        status, out, err = finished(call)
        expect(status == 0 and out.strip() == "()", f"SignIn: {status} {err!r}")
        expect("signed in;" in gdbus("--method", "io.github.latchkey.Agent1.ListProviders").stdout, "signed in now")
        accounts = gdbus("--method", "io.github.latchkey.Agent1.ListAccounts").stdout
        expect("('mine', 'ada@sandbox.example', 'signed-in', 'signed in;" in accounts, f"ListAccounts, signed in: {accounts}")
        expect(os.path.exists(os.path.join(home.state, "latchkey", "mine.json")), "the sign-in is kept where the window keeps it")
        out = gdbus("--method", "io.github.latchkey.Agent1.SignOut", "mine")
        expect(out.returncode == 0 and "Signed out." in out.stdout, f"SignOut: {out}")
        expect(not os.path.exists(os.path.join(home.state, "latchkey", "mine.json")), "signed out: nothing kept")
        unknown = gdbus("--method", "io.github.latchkey.Agent1.SignIn", "nope")
        expect("io.github.latchkey.Agent1.Error.Invalid" in unknown.stderr and "There is no provider called" in unknown.stderr,
               f"an unknown provider: {unknown}")
    finally:
        sandbox.stop()
    assert_no_secrets(home, [os.path.join(home.root, "agent.log")])


def agent_sign_in_browser_stays_open(home):
    """SignIn over D-Bus for a provider that signs in in the browser: the browser the sign-in starts
    keeps running (as one does, when none ran before), and the call returns once the sign-in is done,
    not when the browser quits. The browser here records the page, then stays, holding whatever
    descriptors it was given; the person's answer comes from another device's browser."""
    sandbox = Sandbox()
    own_provider(home, sandbox, user_agent="browser")
    lingering = os.path.join(home.root, "browser.pid")
    with open(os.path.join(home.home, "bin", "record-url"), "w") as script:
        script.write(f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{home.opened}"\nsleep 300 &\necho $! > "{lingering}"\n')
    try:
        call = subprocess.Popen(["gdbus", "call", "--session", "--timeout", "120", *DEST, "--method",
                                 "io.github.latchkey.Agent1.SignIn", "mine"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_until("the browser to be given the sign-in page", lambda: home.opened_urls() and os.path.exists(lingering), 60)
        from no_browser import browser_elsewhere
        back = browser_elsewhere(home.opened_urls()[-1])
        expect(back.startswith("http://127.0.0.1:"), f"sent back to the loopback listener: {back}")
        with urllib.request.urlopen(back, timeout=30) as answer:
            expect(answer.status == 200, f"the listener answered {answer.status}")
        status, out, err = finished(call, timeout=30)
        expect(status == 0 and out.strip() == "()", f"SignIn returned once signed in, the browser still open: {status} {err!r}")
        expect("signed in;" in gdbus("--method", "io.github.latchkey.Agent1.ListProviders").stdout, "signed in now")
        with open(lingering) as f:
            expect(os.path.exists(f"/proc/{f.read().strip()}"), "the browser still runs")
    finally:
        if os.path.exists(lingering):
            with open(lingering) as f:
                try:
                    os.kill(int(f.read().strip()), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
        sandbox.stop()
    assert_no_secrets(home, [os.path.join(home.root, "agent.log")])


def dialog_processes(home):
    """The agent's question dialogs running now (`latchkey-app agent ask`), by pid: this scenario's
    alone (those of its home's agent), never those of a scenario running beside it."""
    mine = f"XDG_RUNTIME_DIR={home.runtime}".encode()
    found = []
    for pid, words in command_lines():
        if len(words) >= 3 and words[0].endswith(b"latchkey-app") and words[1:3] == [b"agent", b"ask"]:
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if mine in f.read().split(b"\0"):
                        found.append(pid)
            except OSError:
                continue
    return found


def allow_gdbus(provider="mine"):
    """`latchkey agent allow` for gdbus, the D-Bus caller of the scenarios; its path."""
    path = os.path.realpath(shutil.which("gdbus"))
    allowed = latchkey("agent", "allow", path, provider)
    expect(allowed.returncode == 0, f"latchkey agent allow gdbus: {allowed}")
    return path


def renewal_held(home, sandbox, sandbox_log, seconds, min_valid):
    """gdbus asking for a renewal (`min_valid`) that the sandbox holds `seconds` at its token endpoint;
    (the waiting gdbus, the agent's pid) once the renewal is under way."""
    allow_gdbus()
    urllib.request.urlopen(urllib.request.Request(sandbox.base + "/_admin/faults", data=json.dumps(
        {"endpoint": "token", "kind": "delay", "count": 1, "delay_seconds": seconds}).encode(),
        headers={"Content-Type": "application/json"}), timeout=10)
    waiting = subprocess.Popen(["gdbus", "call", "--session", *DEST, "--method", "io.github.latchkey.Agent1.GetToken", "mine",
                                f"{{'min-valid': <{min_valid}>}}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_until("the renewal under way", lambda: "injecting fault delay into /token" in open(sandbox_log).read(), 20)
    return waiting, agent_pid(home)


def agent_stuck_dialog_is_taken_back(home):
    """A question's dialog that hears nothing (stopped here; stuck opening a display that hangs, in
    life) while its program hangs up: the agent takes the question back and ends the dialog's
    process all the same, and the program's next request is asked anew, not left behind the first."""
    sandbox = Sandbox()
    own_provider(home, sandbox)
    window = signed_in(home)
    window.quit()
    try:
        listed = gdbus("--method", "io.github.latchkey.Agent1.ListProviders")  # D-Bus starts the agent
        expect(listed.returncode == 0, f"ListProviders: {listed}")
        first = oidc_token(home, "mine")
        wait_until("the question's dialog", lambda: dialog_processes(home), 30)
        dialog = dialog_processes(home)[0]
        Latchkey.attached(AGENT, home.shots).find("frame", "Allow a program to use your sign-in?", newest=True, timeout=30)
        os.kill(dialog, signal.SIGSTOP)
        first.kill()
        first.wait(10)
        wait_until("the stuck dialog's process to be ended", lambda: not os.path.exists(f"/proc/{dialog}")
                   or open(f"/proc/{dialog}/stat").read().split(")")[-1].split()[0] == "Z", 15)
        again = oidc_token(home, "mine")
        answer(home, "Deny", "01-asked-anew")
        status, out, err = finished(again)
        expect(status == 1 and out == "" and "gets no token" in err, f"oidc-token asked anew, denied: {status} {err!r}")
    finally:
        for pid in dialog_processes(home):
            os.kill(pid, signal.SIGKILL)
        sandbox.stop()
    assert_no_secrets(home, [os.path.join(home.root, "agent.log")], extra=[stored(home)["access_token"]])


def agent_display_that_refuses(home):
    """A display that takes connections and then refuses (a stale X cookie, a display gone wrong): the
    probe says someone can be asked, the dialog finds nobody. From then on a name the agent knows and
    one it does not are refused in the same words, so that asking teaches a program nothing."""
    import socket as sockets
    import threading
    sandbox = Sandbox()
    own_provider(home, sandbox)
    number = 700 + os.getpid() % 200
    path = f"/tmp/.X11-unix/X{number}"
    os.makedirs("/tmp/.X11-unix", exist_ok=True)
    listener = sockets.socket(sockets.AF_UNIX)
    if os.path.exists(path):
        os.unlink(path)
    listener.bind(path)
    listener.listen(16)

    def refuse():
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            connection.close()
    threading.Thread(target=refuse, daemon=True).start()
    window = signed_in(home)
    window.quit()
    environment = dict(os.environ, DISPLAY=f":{number}")
    environment.pop("WAYLAND_DISPLAY", None)
    with open(os.path.join(home.root, "agent.log"), "ab") as log:
        agent = subprocess.Popen([os.path.join(BIN, "latchkey"), "agent", "--log-level", "debug"], env=environment, stdout=log,
                                 stderr=log)
    try:
        wait_until("the agent's socket", lambda: os.path.exists(os.path.join(home.runtime, "latchkey", "agent.sock")), 20)
        known = finished(oidc_token(home, "mine"))
        unknown = finished(oidc_token(home, "nope"))
        expect(known[0] == 1 and unknown[0] == 1, f"both refused: {known} {unknown}")
        said = [err.replace("“mine”", "“…”").replace("“nope”", "“…”") for _, _, err in (known, unknown)]
        expect(said[0] == said[1] and "no display to ask you on" in said[0], f"the same words for both: {said}")
    finally:
        agent.terminate()
        agent.wait(10)
        listener.close()
        os.unlink(path)
        sandbox.stop()


def agent_killed_mid_refresh(home):
    """The agent killed (SIGKILL) while it waits on the provider to renew: the stored sign-in is
    there byte for byte, the caller gets a sentence, and the next agent the bus starts serves it."""
    sandbox_log = os.path.join(home.root, "sandbox.log")
    sandbox = Sandbox("--access-token-ttl", "120", log=sandbox_log)
    own_provider(home, sandbox)
    window = signed_in(home)
    window.quit()
    token_file = os.path.join(home.state, "latchkey", "mine.json")
    with open(token_file, "rb") as f:
        before = f.read()
    try:
        gdbus("--method", "io.github.latchkey.Agent1.ListProviders")
        # More than the token's life left is asked: the agent renews, and waits on the provider. (A caller
        # of Latchkey's own, `latchkey token`, would ask again and do the work itself when none answers.)
        waiting, agent = renewal_held(home, sandbox, sandbox_log, 20, 3000)
        os.kill(agent, 9)
        status, out, err = finished(waiting)
        expect(status != 0 and out == "" and "NoReply" in err, f"the caller: {status} {out!r} {err!r}")
        with open(token_file, "rb") as f:
            expect(f.read() == before, "the stored sign-in changed when the agent was killed")
        # The bus starts another; the sign-in serves (its access token still has most of its life).
        again = gdbus("--method", "io.github.latchkey.Agent1.GetToken", "mine", "{}")
        expect(again.returncode == 0 and again.stdout.split("'")[1] == json.loads(before)["access_token"], f"after: {again}")
    finally:
        sandbox.stop()
    assert_no_secrets(home, [os.path.join(home.root, "agent.log")], extra=[json.loads(before)["access_token"]])


def agent_pid(home):
    """The pid of the agent serving the socket, as the kernel says (SO_PEERCRED)."""
    import socket
    import struct
    with socket.socket(socket.AF_UNIX) as connection:
        connection.connect(os.path.join(home.runtime, "latchkey", "agent.sock"))
        return struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))[0]


def agent_env_starts_agent(home):
    """README's oidc-agent line on a fresh login: nothing serves the socket until
    `eval "$(latchkey agent env)"` starts the agent (as eval "$(ssh-agent)" does), returning at once
    with the agent running on its own; oidc-token then asks it, and the person is asked."""
    sandbox = Sandbox()
    own_provider(home, sandbox)
    window = signed_in(home)
    window.quit()
    socket_path = os.path.join(home.runtime, "latchkey", "agent.sock")
    started = None
    try:
        expect(not os.path.exists(socket_path), "an agent already serves the socket")
        line = subprocess.Popen(["sh", "-c", f'eval "$({os.path.join(BIN, "latchkey")} agent env)" && {OIDC_TOKEN} mine'],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        answer(home, "Allow once", "01-oidc-token-asked", offered=("Deny", "Allow once"))
        status, out, err = finished(line)
        expect(status == 0 and out.strip() == stored(home)["access_token"], f"eval \"$(latchkey agent env)\" && oidc-token: {status} {err!r}")
        started = agent_pid(home)
        expect(os.path.basename(os.readlink(f"/proc/{started}/exe")) == "latchkey-agent", "the socket's server is not the agent")
        # The agent of its own links no GTK or WebKit: the question it asked was another process's.
        with open(f"/proc/{started}/maps") as maps:
            drawing = sorted({line.split()[-1] for line in maps if re.search(r"lib(gtk|gdk|webkit|javascriptcore)", line)})
        expect(not drawing, f"the agent mapped {drawing}")
        # Once more: the agent runs, so env only prints the line.
        again = latchkey("agent", "env")
        expect(again.returncode == 0 and again.stdout == f"OIDC_SOCK={socket_path}; export OIDC_SOCK;\n", f"env again: {again}")
        expect(agent_pid(home) == started, "a second agent was started")
    finally:
        if started:
            os.kill(started, 15)
        sandbox.stop()
    assert_no_secrets(home, [window.log_path], extra=[stored(home)["access_token"]])


def agent_dialog_long_command_line(home):
    """A program whose command line is 64 KiB asks: the dialog keeps the provider line and its answers
    on the screen, shows the command line's beginning, and the whole of it in an expander that
    scrolls; Deny answers it."""
    sandbox = Sandbox()
    own_provider(home, sandbox)
    # Listened for before the agent starts: the answers' sensitivity, as the agent changes it.
    sensitivity = StateChanges("sensitive")
    window = signed_in(home)
    try:
        ask = ("import os, socket, sys\n"
               "s = socket.socket(socket.AF_UNIX); s.connect(os.path.join(os.environ['XDG_RUNTIME_DIR'], 'latchkey', 'agent.sock'))\n"
               "s.sendall(b'{\"request\":\"access_token\",\"account\":\"mine\"}')\n"
               "answer = b''\n"
               "while chunk := s.recv(65536): answer += chunk\n"
               "print(answer.decode())\n")
        gdbus("--method", "io.github.latchkey.Agent1.ListProviders")
        padding = "x" * 65536
        caller = subprocess.Popen(["/usr/bin/python3", "-c", ask, padding], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        agent = Latchkey.attached(AGENT, home.shots)
        dialog = agent.find("frame", "Allow a program to use your sign-in?", newest=True, timeout=30)
        deny = agent.button("Deny", root=dialog)
        agent.find("label", "My sandbox", root=dialog, timeout=5)
        agent.find("toggle button", "Whole command line", root=dialog, exact=False, timeout=5)
        agent.screenshot("01-long-command-line")
        # The answers take nothing for a moment after the dialog comes to the front (a keystroke meant for
        # another window must not answer it). Once they take presses, the main window takes the keyboard,
        # then the dialog again: greyed out again, then taking presses.
        agent.wait_sensitive("Allow once", timeout=30)
        window.button("Sign out").get_component_iface().grab_focus()
        wait_until("the dialog to lose the keyboard", lambda: not is_(dialog, Atspi.StateType.ACTIVE), 30)
        deny.get_component_iface().grab_focus()
        sensitivity.wait_for("the answers held, then given", [("Allow once", False), ("Allow once", True)])
        for label in ("Deny", "Allow once"):
            extents = agent.button(label, root=dialog).get_component_iface().get_extents(Atspi.CoordType.SCREEN)
            expect(extents.width > 0 and 0 <= extents.y and extents.y + extents.height <= 900,
                   f"{label} is off the screen: {extents.x},{extents.y} {extents.width}x{extents.height}")
        agent.press(deny)
        out, err = caller.communicate(timeout=60)
        expect('"status":"failure"' in out and stored(home)["access_token"] not in out, f"denied: {out!r} {err!r}")
    finally:
        sensitivity.close()
        window.quit()
        sandbox.stop()


# A program nobody allowed connects, forks, and becomes (exec) a program the person allowed; the child
# it forked asks on the inherited connection once its parent runs the allowed program.
HAND_OFF = r"""
import json, os, socket, sys, time
way, allowed = sys.argv[1], sys.argv[2]
if way.startswith("written"):
    # The request written before the exec, with the agent held still (any program of the person's may
    # stop it) until the parent runs the allowed program; the child reads the answer.
    agent_pid, keep = int(sys.argv[3]), way == "written-kept"
    connection = socket.socket(socket.AF_UNIX)
    connection.connect(os.path.join(os.environ["XDG_RUNTIME_DIR"], "latchkey", "agent.sock"))
    connection.set_inheritable(keep)
    connection.sendall(b'{"request":"access_token","account":"mine"}')
    parent = os.getpid()
    if os.fork():
        os.execv(allowed, [allowed, "60"])
    while os.readlink(f"/proc/{parent}/exe") != allowed:
        time.sleep(0.01)
    os.kill(agent_pid, 18)  # SIGCONT
    answer = b""
    while chunk := connection.recv(65536):
        answer += chunk
    print(answer.decode())
    os.kill(parent, 9)
    sys.exit(0)
if way == "socket":
    connection = socket.socket(socket.AF_UNIX)
    connection.connect(os.path.join(os.environ["XDG_RUNTIME_DIR"], "latchkey", "agent.sock"))
else:
    from jeepney import DBusAddress, new_method_call
    from jeepney.io.blocking import open_dbus_connection
    connection = open_dbus_connection(bus="SESSION")
parent = os.getpid()
if os.fork():
    os.execv(allowed, [allowed, "60"])
deadline = time.monotonic() + 30
while os.readlink(f"/proc/{parent}/exe") != allowed:
    if time.monotonic() > deadline:
        sys.exit("the parent never became the allowed program")
    time.sleep(0.01)
if way == "socket":
    connection.sendall(b'{"request":"access_token","account":"mine"}')
    answer = b""
    while chunk := connection.recv(65536):
        answer += chunk
    print(answer.decode())
else:
    agent = DBusAddress("/io/github/latchkey/Agent1", bus_name="io.github.latchkey.Agent", interface="io.github.latchkey.Agent1")
    reply = connection.send_and_get_reply(new_method_call(agent, "GetToken", "sa{sv}", ("mine", {})), timeout=60)
    print(json.dumps({"type": reply.header.message_type.name, "body": [str(part) for part in reply.body]}))
os.kill(parent, 9)
"""


def agent_handed_connection(home):
    """A program nobody allowed connects, forks, and execs a program the person always allows; its
    child asks on the inherited connection. Over the socket the request was written by another
    process than the one that connected, over D-Bus the process the bus names no longer holds its
    connection: each refused with its sentence, and no token anywhere in what the attacker saw."""
    sandbox = Sandbox()
    own_provider(home, sandbox)
    window = signed_in(home)
    window.quit()
    agent = None
    try:
        token = stored(home)["access_token"]
        allowed = os.path.realpath("/usr/bin/sleep")
        granted = latchkey("agent", "allow", allowed, "mine")
        expect(granted.returncode == 0, f"latchkey agent allow {allowed}: {granted}")
        # No display: had anything gone as far as a question, the refusal would be that one instead.
        log_path = os.path.join(home.root, "agent.log")
        agent = agent_without_display(home)
        wait_until("the agent on the bus", lambda: gdbus("--method", "io.github.latchkey.Agent1.ListProviders").returncode == 0, 20)

        through_socket = subprocess.run(["/usr/bin/python3", "-c", HAND_OFF, "socket", allowed], capture_output=True, text=True, timeout=90)
        # The child ends its parent (sleep) when done: the parent's status is SIGKILL's.
        expect(through_socket.returncode == -9 and token not in through_socket.stdout, f"the socket hand-off: {through_socket}")
        expect('"status":"failure"' in through_socket.stdout
               and "written by another process than the one that connected" in through_socket.stdout,
               f"the socket's refusal: {through_socket.stdout!r}")

        through_bus = subprocess.run(["/usr/bin/python3", "-c", HAND_OFF, "bus", allowed], capture_output=True, text=True, timeout=90)
        expect(through_bus.returncode == -9 and token not in through_bus.stdout, f"the D-Bus hand-off: {through_bus}")
        answer = json.loads(through_bus.stdout)
        expect(answer["type"] == "error" and "no longer holds its connection" in " ".join(answer["body"]), f"the bus's refusal: {answer}")
        # The request written before the exec, the agent stopped until the parent runs the allowed program
        # (so that it looks only then): with its end close-on-exec, the exec closed it and the connection is
        # held by nobody the agent can name; kept open across the exec, the caller may not be the program
        # named, and is asked about each time — here, with no display, refused.
        for way, said in (("written", "no longer holds its connection"), ("written-kept", "is asked about each time")):
            stopped = agent_pid(home)
            os.kill(stopped, signal.SIGSTOP)
            try:
                written = subprocess.run(["/usr/bin/python3", "-c", HAND_OFF, way, allowed, str(stopped)],
                                         capture_output=True, text=True, timeout=90)
            finally:
                os.kill(stopped, signal.SIGCONT)
            expect(token not in written.stdout and '"status":"failure"' in written.stdout and said in written.stdout,
                   f"{way}: {written.stdout!r} {written.stderr!r}")
        expect("Token given" not in open(log_path).read(), "the agent's log says a token was given")
    finally:
        if agent:
            agent.terminate()
            agent.wait(10)
        sandbox.stop()
    assert_no_secrets(home, [os.path.join(home.root, "agent.log")], extra=[stored(home)["access_token"]])


SCENARIOS = {"agent_programs": agent_programs, "agent_handed_connection": agent_handed_connection,
             "agent_env_starts_agent": agent_env_starts_agent, "agent_dialog_long_command_line": agent_dialog_long_command_line, "agent_git": agent_git, "agent_scripts": agent_scripts,
             "agent_sign_in": agent_sign_in, "agent_sign_in_browser_stays_open": agent_sign_in_browser_stays_open,
             "agent_stuck_dialog_is_taken_back": agent_stuck_dialog_is_taken_back, "agent_display_that_refuses": agent_display_that_refuses,
             "agent_killed_mid_refresh": agent_killed_mid_refresh}
