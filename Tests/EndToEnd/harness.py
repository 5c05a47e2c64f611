"""What every end-to-end scenario stands on: a private home with a recording
default browser, the sandbox's address, the sign-in steps, the checks for
leaked secrets, and the runner that gives each scenario its own D-Bus session."""

import concurrent.futures
import glob
import hashlib
import json
import os
import queue
import re
import shutil
import stat
import subprocess
import sys
import threading
import time
import traceback
import urllib.request

from driver import Failure, Latchkey, wait_until  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("LATCHKEY_BIN_DIR", os.path.join(ROOT, ".build", "debug"))
OUTPUT = os.path.join(ROOT, "test-output", "e2e")

# Each scenario stands for a person at their desktop. The CI service running the suite sets CI
# (`CI=true` on most), and Latchkey honours that by asking nobody (issue 40 §3), so the runner's own
# CI is not passed on; a scenario that tests a CI job sets it itself.
os.environ.pop("CI", None)


def command_lines():
    """(pid, the words of its command line) of every process running now."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                yield int(pid), f.read().split(b"\0")
        except OSError:
            continue


def expect(condition, message):
    if not condition:
        raise Failure(message)


class Home:
    """A private home: XDG directories, and a recording default browser."""

    def __init__(self, scenario, fresh=True, under=OUTPUT):
        self.root = os.path.join(under, scenario)
        # XDG_RUNTIME_DIR holds sockets (the session and accessibility buses, the agent's), and a
        # socket's path may be 107 bytes at most: under a clone at /home/dev/latchkey the longest
        # scenario's were too long for GTK's accessibility bridge. A short folder of its own in /tmp,
        # named after the scenario's, so that the runner and the scenario inside agree on it.
        self.runtime = os.path.join("/tmp", "latchkey-e2e-" + hashlib.sha256(self.root.encode()).hexdigest()[:12])
        if fresh:
            shutil.rmtree(self.root, ignore_errors=True)
            shutil.rmtree(self.runtime, ignore_errors=True)
        self.shots = self.root
        self.home = os.path.join(self.root, "home")
        self.config = os.path.join(self.home, ".config")
        self.data = os.path.join(self.home, ".local", "share")
        self.state = os.path.join(self.home, ".local", "state")
        for directory in (self.config, self.data, self.state, self.runtime, os.path.join(self.home, "bin")):
            os.makedirs(directory, exist_ok=True)
        runtime = os.lstat(self.runtime)
        mine = runtime.st_uid == os.geteuid()
        # Root may use the person's (debian_package runs through sudo in the person's folders).
        expect(stat.S_ISDIR(runtime.st_mode) and (mine or os.geteuid() == 0), f"{self.runtime} is not a folder of this user's own")
        if mine:
            os.chmod(self.runtime, 0o700)
        self.opened = os.path.join(self.root, "opened-urls.txt")
        recorder = os.path.join(self.home, "bin", "record-url")
        with open(recorder, "w") as script:
            script.write(f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{self.opened}"\n')
        os.chmod(recorder, 0o755)
        applications = os.path.join(self.data, "applications")
        os.makedirs(applications, exist_ok=True)
        with open(os.path.join(applications, "recording-browser.desktop"), "w") as entry:
            entry.write(
                "[Desktop Entry]\nType=Application\nName=Recording browser\n"
                f"Exec={recorder} %u\nMimeType=x-scheme-handler/http;x-scheme-handler/https;\nNoDisplay=true\n")
        with open(os.path.join(self.config, "mimeapps.list"), "w") as mime:
            mime.write(
                "[Default Applications]\n"
                "x-scheme-handler/http=recording-browser.desktop\nx-scheme-handler/https=recording-browser.desktop\n")
        self.env = {
            "HOME": self.home,
            "XDG_CONFIG_HOME": self.config,
            "XDG_DATA_HOME": self.data,
            "XDG_STATE_HOME": self.state,
            "XDG_CACHE_HOME": os.path.join(self.home, ".cache"),
            "XDG_RUNTIME_DIR": self.runtime,
            "GTK_A11Y": "atspi",
            "NO_AT_BRIDGE": "0",
            "WEBKIT_DISABLE_COMPOSITING_MODE": "1",
        }
        os.environ.update(self.env)

    @property
    def token_file(self):
        return os.path.join(self.state, "latchkey", "sandbox.json")

    def opened_urls(self):
        try:
            with open(self.opened) as f:
                return [line.strip() for line in f if line.strip()]
        except FileNotFoundError:
            return []

    def launch(self, *args, log_name="latchkey.log", command=(), stdout_path=None):
        return Latchkey(os.path.join(BIN, "latchkey"), self.root, self.shots, args=args, log_name=log_name,
                        command=command, stdout_path=stdout_path)


def sandbox_url(app):
    def probe():
        with open(app.log_path, errors="replace") as log:
            match = re.search(r"Sandbox provider \(offline demo\) at (http://127\.0\.0\.1:\d+)", log.read())
        return match and match.group(1)

    return wait_until("the sandbox's address in the log", probe, 10)


def admin(base, path, body=None, method=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(base + path, data=data, method=method or ("POST" if data else "GET"))
    if data:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=10) as response:
        text = response.read().decode()
        return json.loads(text) if text else None


# The add dialog's choices, as its radio buttons are named.
ISSUER_CHOICE = "A provider, by its issuer URL"
RESOURCE_CHOICE = "A service you want to reach (an API, an MCP server), by its URL"


def add_by_issuer(app, issuer, before_add=None):
    """The window's + : a provider added by its issuer URL (`before_add(dialog)` runs just before Add, for a
    box to tick or a screenshot); waits until the window shows it, ready to sign in; returns its host."""
    app.press(app.button("Add a provider"))
    dialog = app.find("dialog", "Add a provider")
    app.press(app.find("radio button", ISSUER_CHOICE, root=dialog))
    app.type_into(app.find("text", "Issuer URL", root=dialog), issuer)
    if before_add:
        before_add(dialog)
    app.press(app.find("push button", "Add", root=dialog))
    host = issuer.split("://", 1)[1]
    app.wait_status(f"Not signed in. Sign in with {host}", timeout=30)
    return host


def open_sign_in(app):
    """Presses Sign in and waits for the page's Username field; returns it."""
    app.press(app.wait_sensitive("Sign in"))
    return app.find("entry", "Username", timeout=30)


def sign_in(app, home, shot_prefix=None, action="Allow", password="engine", user="ada"):
    """Sign in → the sandbox's page in the embedded view → credentials → Allow or Deny."""
    username = open_sign_in(app)
    if shot_prefix:
        app.screenshot(f"{shot_prefix}-sign-in-page")
    app.type_into(username, user)
    app.type_into(app.find("password text", "Password"), password)
    if shot_prefix:
        app.screenshot(f"{shot_prefix}-credentials-typed")
    app.press(app.button(action))


def assert_no_secrets(home, app_logs, extra=()):
    """Nothing logged contains a token, code or client secret."""
    text = ""
    for path in app_logs:
        with open(path, errors="replace") as log:
            text += log.read()
    for prefix in ("sbx_at_", "sbx_rt_", "sbx_code_", "sandbox-secret"):
        expect(prefix not in text, f"the log holds something starting {prefix!r}")
    for secret in extra:
        expect(secret not in text, "the log holds a secret of this run")


def stored_token(home):
    with open(home.token_file) as f:
        return json.load(f)


# Scenarios ----------------------------------------------------------------


def session_config(home, agent_exec=None):
    """A D-Bus session that can start the accessibility bus and nothing else:
    no portal, no keyring by activation. A scenario that wants a keyring starts
    one itself. `agent_exec`: what the bus runs to start Latchkey's agent, when not the agent itself."""
    services = os.path.join(home.root, "dbus-services")
    os.makedirs(services, exist_ok=True)
    # The keyring's password prompt (gcr-prompter) too: it shows only when a
    # scenario's keyring is locked, and it is what a desktop would show.
    for service in glob.glob("/usr/share/dbus-1/services/org.a11y.*.service") + [
            "/usr/share/dbus-1/services/org.gnome.keyring.SystemPrompter.service"]:
        shutil.copy(service, services)
    # Latchkey's agent, started by the bus when a program first asks for it, as an installed one is.
    with open(os.path.join(services, "io.github.latchkey.Agent.service"), "w") as f:
        agent_log = os.path.join(home.root, "agent.log")
        latchkey = os.path.join(BIN, "latchkey")
        agent_exec = agent_exec or f"/bin/sh -c 'exec {latchkey} agent --log-level debug >>{agent_log} 2>&1'"
        f.write(f"[D-BUS Service]\nName=io.github.latchkey.Agent\nExec={agent_exec}\n")
    config = os.path.join(home.root, "session.conf")
    with open(config, "w") as f:
        f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <keep_umask/>
  <listen>unix:dir={home.runtime}</listen>
  <auth>EXTERNAL</auth>
  <servicedir>{services}</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
""")
    return config


def run_one(scenarios, name):
    """Inside the scenario's D-Bus session: run it; the exit status says how it went."""
    home = Home(name, fresh=False)
    try:
        scenarios[name](home)
    except Exception:
        traceback.print_exc()
        return 1
    return 0


# Scenarios that change the machine for everyone (debian_package installs /usr/bin/latchkey, which
# other scenarios' git and PATH would find): run after all the others, with nothing beside them.
ALONE = {"debian_package"}


class Display:
    """A private Xvfb display of its own (a free number, chosen by Xvfb). -noreset: by default Xvfb
    resets when its last client leaves, and a client connecting during the reset finds no display."""

    def __init__(self):
        read, write = os.pipe()
        self.server = subprocess.Popen(
            ["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x900x24", "-nolisten", "tcp", "-noreset"],
            pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write)
        with os.fdopen(read) as chosen:
            number = chosen.readline().strip()
        if not number:
            self.server.kill()
            raise Failure("Xvfb did not start")
        self.name = f":{number}"

    def close(self):
        # Waited for: a server not yet gone could delete the socket of the next one on its number.
        self.server.terminate()
        self.server.wait()


# Scenarios that need root (they install a package, mount in a namespace of their own). Run by a
# person who is not root, they run as root through sudo, in a session of root's own, as on CI; what
# can be done as the person (building the package) is done first, as the person.
AS_ROOT = {"debian_package"}


def run_scenario(runner, name, display):
    """One scenario in a D-Bus session of its own on `display`; its output kept beside its
    screenshots. Returns (passed, seconds, output)."""
    started = time.monotonic()
    home = Home(name)
    output = os.path.join(home.root, "output.txt")
    command = ["dbus-run-session", f"--config-file={session_config(home)}", "--", sys.executable, runner, "--inside", name]
    env = dict(os.environ, **home.env, DISPLAY=display)
    through_sudo = name in AS_ROOT and os.geteuid() != 0
    if os.geteuid() == 0 and name not in AS_ROOT:
        # A person's agent cannot look into a process that hides itself (a non-dumpable one, as
        # oidc-token is); root's could, with CAP_SYS_PTRACE. Run as root, a scenario runs without it,
        # so that it sees /proc as it does for a person.
        command = ["setpriv", "--bounding-set=-sys_ptrace", "--inh-caps=-sys_ptrace", *command]
    with open(output, "w") as out:
        try:
            if through_sudo:
                out.write(f"{name} needs root: asking sudo for it\n")
                out.flush()
                env.update(before_root(name, home, out))
                # PATH too, which sudo resets: the toolchain the scenario hides is found through it; and
                # root's sbin folders, which a person's PATH may lack and dpkg needs (ldconfig).
                path = os.environ.get("PATH", "").split(":")
                path += [folder for folder in ("/usr/local/sbin", "/usr/sbin", "/sbin") if folder not in path]
                command = ["sudo", "--preserve-env", "env", f"PATH={':'.join(path)}", *command]
            returncode = subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT).returncode
        except Failure as failure:
            out.write(f"{failure}\n")
            returncode = 1
    if through_sudo:
        # What root wrote under the person's test-output is given back to them.
        subprocess.run(["sudo", "chown", "-R", f"{os.getuid()}:{os.getgid()}", home.root, home.runtime], check=False)
    with open(output, errors="replace") as f:
        text = f.read()
    return returncode == 0, time.monotonic() - started, text


def before_root(name, home, out):
    """What a scenario that runs as root needs done first as the person; returns its environment."""
    if name == "debian_package":
        # make deb as the person: the release build stays theirs, never root's.
        built = subprocess.run([os.path.join(ROOT, "scripts", "deb.sh")], cwd=home.root, stdout=subprocess.PIPE,
                               stderr=out, text=True, check=False)
        lines = built.stdout.strip().splitlines()
        if built.returncode != 0 or not lines:
            raise Failure(f"make deb failed ({built.returncode})")
        return {"LATCHKEY_TEST_DEB": os.path.join(home.root, lines[-1])}
    return {}


def run_all(runner, names, jobs=None):
    """Runs the scenarios `jobs` at a time (E2E_JOBS, else one per core), each worker on a display
    of its own; those in ALONE afterwards, one at a time. Prints each result as it comes."""
    jobs = jobs or int(os.environ.get("E2E_JOBS", "0")) or os.cpu_count() or 1
    side_by_side = [name for name in names if name not in ALONE]
    alone = [name for name in names if name in ALONE]
    passed, failed = [], []
    lock = threading.Lock()

    def report(name, ok, seconds, text):
        with lock:
            (passed if ok else failed).append(name)
            if not ok:
                # What the scenario said, for the failure only: side by side, their outputs would interleave.
                print(f"----- {name} said:\n{text[-12000:]}", flush=True)
            print(f"{'PASS' if ok else 'FAIL'} {name} ({seconds:.1f} s)", flush=True)

    displays = queue.Queue()
    opened = [Display() for _ in range(min(jobs, max(len(side_by_side), 1)))]
    for display in opened:
        displays.put(display)

    def worker(name):
        display = displays.get()
        try:
            report(name, *run_scenario(runner, name, display.name))
        finally:
            displays.put(display)

    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(opened)) as pool:
            for future in [pool.submit(worker, name) for name in side_by_side]:
                future.result()
        for name in alone:
            report(name, *run_scenario(runner, name, opened[0].name))
    finally:
        for display in opened:
            display.close()
    print(f"end-to-end: {len(passed)} passed, {len(failed)} failed")
    return 0 if not failed else 1
