"""End-to-end: signing in where there is no browser (issue 28) — `latchkey token` in a session
with no display signs in on another device (RFC 8628), the code typed on the sandbox's page by
the test as a person types it on their phone."""

import os
import re
import subprocess
import urllib.error
import urllib.parse
import urllib.request

import presets
from agent import Sandbox, own_provider, stored
from harness import BIN, expect
from zero_config import resource_answer

WITHOUT_DISPLAY = {name: value for name, value in os.environ.items() if name not in ("DISPLAY", "WAYLAND_DISPLAY")}


def said_until(process, marker):
    """What the running command said on stderr, up to the line holding `marker`."""
    said = ""
    while marker not in said:
        line = process.stderr.readline()
        expect(line, f"latchkey token ended before saying {marker!r}: {said!r}")
        said += line
    return said


def started(*arguments):
    """`latchkey token …` with no display, running; its stderr read up to the code it shows."""
    process = subprocess.Popen([os.path.join(BIN, "latchkey"), "token", *arguments], env=WITHOUT_DISPLAY,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said = said_until(process, "Waiting for you there")
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


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def browser_elsewhere(page, user="ada", password="engine"):
    """A browser on another machine: the sign-in page, the person's answer, and the address it then
    ends on (the redirect, which it cannot open: here, the 302's Location)."""
    opener = urllib.request.build_opener(NoRedirect)
    with opener.open(page, timeout=10) as response:
        html = response.read().decode()
    request_id = re.search(r'name="request_id" value="([^"]+)"', html).group(1)
    action = re.search(r'<form method="post" action="([^"]+)"', html).group(1)
    origin = page.split("/", 3)[:3]
    body = urllib.parse.urlencode({"request_id": request_id, "username": user, "password": password, "action": "allow"}).encode()
    try:
        opener.open(urllib.request.Request("/".join(origin) + action, data=body), timeout=10)
    except urllib.error.HTTPError as answer:
        expect(answer.code == 302, f"the page answered {answer.code}")
        return answer.headers["Location"]
    raise AssertionError("the sign-in page did not send the browser back")


def pasting(*arguments):
    """`latchkey token … --paste` with no display, running; the page's address it shows."""
    process = subprocess.Popen([os.path.join(BIN, "latchkey"), "token", *arguments, "--paste"], env=WITHOUT_DISPLAY,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said = said_until(process, "press Enter")
    page = re.search(r"(http://127\.0\.0\.1:\d+/authorize\S*)", said)
    expect(page, f"the page's address: {said!r}")
    return process, page.group(1)


def paste_back(home):
    """No display, no device sign-in: the page's address printed, the sign-in made in a browser
    elsewhere, the address it ended on pasted back. Pasted first: something that is not an address,
    and another host's address (each said, the wait goes on); a pasted address with another
    attempt's state ends the sign-in with a sentence and keeps nothing."""
    sandbox = Sandbox()
    try:
        own_provider(home, sandbox)
        process, page = pasting("--provider", "mine")
        redirect = browser_elsewhere(page)
        expect(redirect.startswith("http://127.0.0.1/callback?") and "code=" in redirect, f"where the browser ended: {redirect}")
        lookalike = redirect.replace("http://127.0.0.1/", "http://127.0.0.1.evil.example/")
        out, err = process.communicate(f"not an address\n{lookalike}\n{redirect}\n", timeout=60)
        expect(process.returncode == 0 and out == stored(home)["access_token"] + "\n", f"the token: {process.returncode} {err!r}")
        expect("That is not a web address" in err and "That address is not where" in err, f"each mistake said: {err!r}")
        code = urllib.parse.parse_qs(urllib.parse.urlsplit(redirect).query)["code"][0]
        expect(code not in err and stored(home)["access_token"] not in err, "a code or token on stderr")

        own_provider(home, sandbox, provider_id="other")
        process, page = pasting("--provider", "other")
        redirect = browser_elsewhere(page)
        forged = re.sub(r"state=[^&]+", "state=someone-elses", redirect)
        out, err = process.communicate(forged + "\n", timeout=60)
        expect(process.returncode == 1 and out == "" and "does not belong to this sign-in" in err, f"another state: {process.returncode} {err!r}")
        expect(not os.path.exists(os.path.join(home.state, "latchkey", "other.json")), "a forged answer kept tokens")
    finally:
        sandbox.stop()


SCENARIOS = {"device_sign_in": device_sign_in, "paste_back": paste_back}
