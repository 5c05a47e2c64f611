"""End-to-end: Latchkey's agent for other programs — the unmodified oidc-token of
Debian's oidc-agent-cli, gdbus, latchkey token and git — with the person's say
given in the agent's dialog through AT-SPI, as a person gives it."""

import json
import os
import subprocess
import sys
import time

from driver import Failure, Latchkey, wait_until
from harness import BIN, ROOT, assert_no_secrets, expect, sign_in

AGENT = ("latchkey-agent",)
DEST = ["--dest", "io.github.latchkey.Agent", "--object-path", "/io/github/latchkey/Agent1"]
OIDC_TOKEN = "/usr/bin/oidc-token"


class Sandbox:
    """The real latchkey-sandbox, on a port of its own, ending when this test lets go of its input."""

    def __init__(self, *arguments):
        self.process = subprocess.Popen(
            [os.path.join(BIN, "latchkey-sandbox"), "--port", "0", "--exit-with-stdin", *arguments],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
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


def answer(home, label, shot):
    """The agent's question, answered with the button `label`; the dialog is looked at first."""
    agent = Latchkey.attached(AGENT, home.shots)
    dialog = agent.find("frame", "Allow a program to use your sign-in?", newest=True, timeout=30)
    agent.screenshot(shot)
    agent.press(agent.button(label, root=dialog))
    return agent


def agent_programs(home):
    """oidc-token gets a token once the person answers "Always allow", and again with no
    question; a second program (gdbus) is asked; revoked in the window, oidc-token is asked
    again, and Deny ends it with Latchkey's sentence; another user is refused at the socket."""
    sandbox = Sandbox()
    own_provider(home, sandbox)
    window = signed_in(home)
    try:
        # D-Bus starts the agent: the first call is what any program's would be.
        listed = gdbus("--method", "io.github.latchkey.Agent1.ListProviders")
        expect(listed.returncode == 0 and "('mine', 'My sandbox', 'signed in;" in listed.stdout, f"ListProviders: {listed}")
        expect(stored(home)["access_token"] not in listed.stdout, "a token in the list")

        first = oidc_token(home, "mine")
        answer(home, "Always allow", "01-oidc-token-asked")
        status, out, err = finished(first)
        expect(status == 0 and out.strip() == stored(home)["access_token"], f"oidc-token: {status} {err!r}")

        again = oidc_token(home, "--time=60", "mine")
        status, out, err = finished(again, timeout=20)
        expect(status == 0 and out.strip() == stored(home)["access_token"], f"oidc-token again, without a question: {status} {err!r}")

        # Another program: asked for itself.
        call = subprocess.Popen(["gdbus", "call", "--session", *DEST, "--method", "io.github.latchkey.Agent1.GetToken", "mine", "{}"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        agent = answer(home, "Allow once", "02-gdbus-asked")
        status, out, err = finished(call)
        expect(status == 0 and stored(home)["access_token"] in out, f"gdbus GetToken: {status} {err!r}")

        # The window lists what was always allowed, with its last use, and revokes it.
        window.press(window.button("Allowed programs"))
        programs = window.find("dialog", "Allowed programs")
        window.find("label", OIDC_TOKEN, root=programs)
        window.find("label", "My sandbox · last got a token just now", root=programs, timeout=5)
        window.screenshot("03-allowed-programs")
        window.press(window.button("Revoke", root=programs))
        window.find("label", "No program is allowed yet.", root=programs, exact=False, timeout=10)
        window.screenshot("04-revoked")
        window.press(window.button("Close", root=programs))

        denied = oidc_token(home, "mine")
        answer(home, "Deny", "05-asked-again-after-revoke")
        status, out, err = finished(denied)
        expect(status == 1 and out == "", f"oidc-token denied: {status} {out!r}")
        expect(f"Error: You did not allow {OIDC_TOKEN} to get your My sandbox token." in err, f"oidc-token's stderr: {err!r}")

        # Another uid, even one allowed past the directory's permissions, gets nothing.
        stranger = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=+dac_override",
             "--ambient-caps=+dac_override", OIDC_TOKEN, "mine"],
            env=dict(os.environ, OIDC_SOCK=os.path.join(home.runtime, "latchkey", "agent.sock")),
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


SCENARIOS = {"agent_programs": agent_programs}
