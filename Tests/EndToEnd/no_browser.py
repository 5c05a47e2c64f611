"""End-to-end: signing in where there is no browser (issue 28) — `latchkey token` in a session
with no display signs in on another device (RFC 8628), the code typed on the sandbox's page by
the test as a person types it on their phone."""

import os
import re
import subprocess
import urllib.parse
import urllib.request

import presets
from agent import Sandbox, own_provider, stored
from harness import BIN, expect
from zero_config import resource_answer

WITHOUT_DISPLAY = {name: value for name, value in os.environ.items() if name not in ("DISPLAY", "WAYLAND_DISPLAY")}


def started(*arguments):
    """`latchkey token …` with no display, running; its stderr read up to the code it shows."""
    process = subprocess.Popen([os.path.join(BIN, "latchkey"), "token", *arguments], env=WITHOUT_DISPLAY,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said = ""
    while "Waiting for you there" not in said:
        line = process.stderr.readline()
        expect(line, f"latchkey token ended before showing a code: {said!r}")
        said += line
    found = re.search(r"open (\S+) on any device and enter the code (\S+)", said)
    expect(found, f"where to go and the code: {said!r}")
    return process, found.group(1), found.group(2), said


def type_code(verification, code, action="allow", user="ada", password="engine"):
    """The person, on another device: the verification page's form, sent as a browser sends it."""
    body = urllib.parse.urlencode({"user_code": code, "username": user, "password": password, "action": action}).encode()
    with urllib.request.urlopen(urllib.request.Request(verification, data=body), timeout=10) as response:
        return response.status


def device_sign_in(home):
    """No display: `--provider` without a sign-in says so at once; with `--device` the code is shown
    on stderr, typed on the sandbox's page, and the token printed on stdout; a refusal there ends with
    its sentence and status 4; `--resource` signs in on another device by itself."""
    sandbox = Sandbox("--device-interval", "1")
    try:
        own_provider(home, sandbox)
        plain = subprocess.run([os.path.join(BIN, "latchkey"), "token", "--provider", "mine"], env=WITHOUT_DISPLAY,
                               capture_output=True, text=True, timeout=60)
        expect(plain.returncode == 3 and "not signed in" in plain.stderr.lower(), f"no sign-in, no wait: {plain.stderr!r}")

        process, verification, code, said = started("--provider", "mine", "--device")
        expect(verification == f"{sandbox.base}/device", f"the sandbox's page: {verification}")
        expect(f"user_code={code}" in said and "Ctrl+C" in said, f"the address with the code, and how to stop: {said!r}")
        expect(type_code(verification, code) == 200, "the page took the code")
        out, err = process.communicate(timeout=60)
        expect(process.returncode == 0 and out == stored(home)["access_token"] + "\n", f"the token: {process.returncode} {err!r}")
        expect(stored(home)["access_token"] not in err, "a token on stderr")
        # Signed in now: the stored token, no code; an account Latchkey does not know: a sentence, no wait.
        again = subprocess.run([os.path.join(BIN, "latchkey"), "token", "--provider", "mine", "--device"], env=WITHOUT_DISPLAY,
                               capture_output=True, text=True, timeout=60)
        expect(again.returncode == 0 and again.stdout == out and "enter the code" not in again.stderr, f"again: {again.stderr!r}")
        nobody = subprocess.run([os.path.join(BIN, "latchkey"), "token", "--provider", "mine", "--device", "--account", "linus"],
                                env=WITHOUT_DISPLAY, capture_output=True, text=True, timeout=60)
        expect(nobody.returncode == 3 and "No My sandbox account called “linus”" in nobody.stderr, f"linus: {nobody.stderr!r}")

        # Refused on the other device: a sentence, status 4, nothing kept.
        own_provider(home, sandbox, provider_id="other")
        process, verification, code, _ = started("--provider", "other", "--device")
        expect(type_code(verification, code, action="deny") == 200, "the page took the refusal")
        out, err = process.communicate(timeout=60)
        expect(process.returncode == 4 and out == "" and "The sign-in was refused on the other device." in err,
               f"refused: {process.returncode} {err!r}")
        expect(not os.path.exists(os.path.join(home.state, "latchkey", "other.json")), "a refused sign-in kept tokens")
    finally:
        sandbox.stop()

    # A resource, with no display: its server found, Latchkey registered, and the sign-in on another device.
    with presets.sandbox_running(home, "standard", "--device-interval", "1") as base:
        process, verification, code, _ = started("--resource", base + "/api/me")
        expect(type_code(verification, code, user="grace", password="compiler") == 200, "the page took Grace's code")
        out, err = process.communicate(timeout=60)
        expect(process.returncode == 0, f"the resource's token: {process.returncode} {err!r}")
        status, answer = resource_answer(base + "/api/me", out.strip())
        expect(status == 200 and answer["username"] == "grace", f"the resource takes it: {status} {answer}")
        expect(out.strip() not in err, "the token on stderr")


SCENARIOS = {"device_sign_in": device_sign_in}
