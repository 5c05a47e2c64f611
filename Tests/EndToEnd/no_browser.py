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
from driver import name
from harness import BIN, expect, sandbox_url
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
        # Asked for: with neither a display nor a terminal, no sign-in starts by itself (issue 40 §3).
        process, verification, code, _ = started("--resource", base + "/api/me", "--device")
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
    process.said = said
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


def read_qr_codes(picture):
    """What a real reader (zbarimg) reads in a picture: one text per code found."""
    read = subprocess.run(["zbarimg", "--raw", "-q", picture], capture_output=True, text=True, timeout=60)
    return [line for line in read.stdout.split("\n") if line]


def device_in_window(home):
    """The window's "Sign in on another device": a dialog with the address, the code and a QR code
    (read back from a screenshot by zbarimg, it is the address that holds the code); the code typed
    on the sandbox's page as on a phone; the window signed in as that person. Cancel, the second
    time, ends the wait with its sentence and leaves Sign in ready."""
    app = home.launch()
    try:
        app.wait_status("Not signed in")
        app.press(app.wait_sensitive("Sign in on another device"))
        dialog = app.find("dialog", "Sign in on another device", timeout=30)
        verification = f"{sandbox_url(app)}/device"
        app.find("label", verification, root=dialog)
        codes = [name(node) for node in app.find_all("label", root=dialog) if re.fullmatch(r"[A-Z]{4}-[A-Z]{4}", name(node))]
        expect(len(codes) == 1, f"one code shown: {codes}")
        qr = [name(node) for node in app.find_all("icon", root=dialog) if name(node).startswith("QR code of ")]
        expect(qr == [f"QR code of {verification}?user_code={codes[0]}"], f"the QR code's name: {qr}")
        app.wait_status("Waiting for you to sign in with Sandbox provider (offline demo) on your other device…")
        shot = app.screenshot("01-code-and-qr-code")
        expect(read_qr_codes(shot) == [f"{verification}?user_code={codes[0]}"], f"zbarimg read: {read_qr_codes(shot)}")

        expect(type_code(verification, codes[0], user="grace", password="compiler") == 200, "the page took the code")
        app.wait_status("Signed in with Sandbox provider", timeout=60)
        app.absent("dialog", "Sign in on another device", timeout=20)
        app.press(app.button("Get my profile"))
        app.wait_status("as Grace Hopper")
        app.screenshot("02-signed-in-on-another-device")

        app.press(app.button("Sign out"))
        app.press(app.wait_sensitive("Sign in on another device"))
        dialog = app.find("dialog", "Sign in on another device", timeout=30)
        app.press(app.button("Cancel", root=dialog))
        app.wait_status("Sign-in cancelled.")
        app.absent("dialog", "Sign in on another device", timeout=20)
        app.wait_sensitive("Sign in")
    finally:
        app.quit()


def terminal_qr_code(home):
    """`latchkey token --device` at a terminal (a pseudo-terminal here, in a UTF-8 locale) draws the
    address that holds the code as a QR code on stderr; the half blocks, turned back into a picture,
    are read by zbarimg as that address. Sent to a pipe instead, the same command draws none."""
    import pty
    sandbox = Sandbox("--device-interval", "1")
    try:
        own_provider(home, sandbox)
        leader, follower = pty.openpty()
        environment = dict(WITHOUT_DISPLAY, TERM="xterm-256color", LANG="C.UTF-8", LC_ALL="")
        process = subprocess.Popen([os.path.join(BIN, "latchkey"), "token", "--provider", "mine", "--device"], env=environment,
                                   stdout=subprocess.PIPE, stderr=follower, text=True)
        os.close(follower)
        said = b""
        while b"Waiting for you there" not in said:
            chunk = os.read(leader, 4096)
            expect(chunk, f"the terminal closed before the wait: {said!r}")
            said += chunk
        text = said.decode()
        code = re.search(r"enter the code (\S+)", text).group(1)
        rows = []
        for line in text.splitlines():
            if "\x1b[30;107m" not in line:
                continue
            cells = line.split("\x1b[30;107m", 1)[1].split("\x1b[0m", 1)[0]
            rows.append([c in "█▀" for c in cells])
            rows.append([c in "█▄" for c in cells])
        expect(rows, f"no QR code drawn: {text!r}")
        scale = 4
        width, height = len(rows[0]) * scale, len(rows) * scale
        picture = os.path.join(home.root, "terminal-qr.pgm")
        with open(picture, "wb") as f:
            f.write(f"P5\n{width} {height}\n255\n".encode())
            for row in rows:
                line = bytes(0 if dark else 255 for dark in row for _ in range(scale))
                f.write(line * scale)
        expect(read_qr_codes(picture) == [f"{sandbox.base}/device?user_code={code}"], f"zbarimg read: {read_qr_codes(picture)}")
        expect(type_code(f"{sandbox.base}/device", code) == 200, "the page took the code")
        out = process.stdout.read()
        expect(process.wait(60) == 0 and out.strip() == stored(home)["access_token"], "the token on stdout")
        os.close(leader)

        # To a pipe: the same words, no drawing.
        own_provider(home, sandbox, provider_id="other")
        process, _, code, said = started("--provider", "other", "--device")
        expect("\x1b[" not in said and "█" not in said, f"a QR code drawn into a pipe: {said!r}")
        process.kill()
        process.wait(10)
    finally:
        sandbox.stop()


def pushed_requests(home):
    """A provider that takes pushed authorization requests only (RFC 9126): added in the window by
    its issuer URL (discovery says so), it signs in through the window, then through the browser,
    then by paste-back with no display; each page is opened with only client_id and a request_uri;
    the classic request, sent to it by hand, is refused on its page."""
    import desktop
    from harness import add_by_issuer, admin, sign_in
    with presets.sandbox_running(home, "standard", "--pushed-requests", "required") as base:
        host = base.split("://", 1)[1]
        try:
            urllib.request.urlopen(f"{base}/authorize?response_type=code&client_id=latchkey-desktop"
                                   "&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcallback&scope=openid&state=s", timeout=10)
            expect(False, "the classic request was taken")
        except urllib.error.HTTPError as refusal:
            expect(refusal.code == 400 and "pushed to it first" in refusal.read().decode(), f"the classic request: {refusal.code}")
        browser = desktop.Epiphany(home)
        app = home.launch()
        try:
            app.wait_status("Not signed in")
            add_by_issuer(app, base)

            sign_in(app, home)
            app.wait_status(f"Signed in with {host}")
            app.screenshot("01-signed-in-through-a-pushed-request")
            expect(admin(base, "/_admin/stats")["pushed_requests"] == 1, "the window's sign-in was pushed")

            app.press(app.button("Sign out"))
            app.wait_sensitive("Sign in")
            desktop.choose_user_agent(app, "In your browser")
            app.press(app.wait_sensitive("Sign in"))
            desktop.allow_in_browser(app, browser)
            app.wait_status(f"Signed in with {host}")
            app.screenshot("02-signed-in-through-the-browser")
            stats = admin(base, "/_admin/stats")
            expect(stats["pushed_requests"] == 2, "the browser's sign-in was pushed")
            # What each page's address held: the classic request sent by hand, then the two pushed ones.
            expect(stats["authorization_address_parameters"][1:] == ["client_id request_uri"] * 2,
                   f"the pages' addresses: {stats['authorization_address_parameters']}")
            app.press(app.button("Sign out"))
            app.wait_sensitive("Sign in")
        finally:
            browser.quit()
            app.quit()
        # Pasted back from a browser elsewhere: pushed too, and the page's address says to be quick.
        provider_id = host.replace(".", "-").replace(":", "-")
        process, page = pasting("--provider", provider_id)
        expect(set(urllib.parse.parse_qs(urllib.parse.urlsplit(page).query)) == {"client_id", "request_uri"}, f"the page: {page}")
        out, err = process.communicate(browser_elsewhere(page) + "\n", timeout=60)
        expect(process.returncode == 0 and out.strip(), f"the token through a pasted pushed sign-in: {process.returncode} {err!r}")
        expect("soon (the provider keeps this request for a short while)" in process.said, f"the hint: {process.said!r}")
        expect(admin(base, "/_admin/stats")["pushed_requests"] == 3, "the pasted sign-in was pushed")


SCENARIOS = {"device_sign_in": device_sign_in, "paste_back": paste_back, "device_in_window": device_in_window,
             "terminal_qr_code": terminal_qr_code, "pushed_requests": pushed_requests}
