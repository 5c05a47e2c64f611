"""Trust, round 3 (issue 24): what an attacker-minded review found, each driven
through the real binary — a refused provider loses nothing, server text reaches
no terminal with control characters, an account switched under you is said."""

import json
import os
import signal
import subprocess
import urllib.error
import urllib.parse
import urllib.request
import sys
import time
import unicodedata

import presets
from zero_config import resource_answer
from harness import BIN, ISSUER_CHOICE, RESOURCE_CHOICE, ROOT, admin, assert_no_secrets, expect, sign_in
from desktop import Epiphany, choose_user_agent, wait_problem
from driver import role, walk, wait_until


def plant_github_sign_in(home):
    """A GitHub sign-in as one set up through LATCHKEY_GITHUB_CLIENT_ID/SECRET leaves it:
    no ~/.config/latchkey/github.json, the token in the private file, bound to github.com."""
    os.environ["LATCHKEY_GITHUB_CLIENT_ID"] = "env-client"
    os.environ["LATCHKEY_GITHUB_CLIENT_SECRET"] = "env-secret-value"
    path = os.path.join(home.state, "latchkey", "github.json")
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path, "w") as f:
        json.dump({"access_token": "gho_planted_access_token", "token_type": "bearer", "scope": "read:user",
                   "received_at": time.time(), "issued_by": "env-client at https://github.com/login/oauth/access_token"}, f)
    os.chmod(path, 0o600)
    with open(path, "rb") as f:
        return path, f.read()


def refused_add_keeps_sign_in(home):
    """Issue 24 §1.1: an issuer or resource URL whose id is a preset's (https://github) is refused
    in the add dialog before anything stored under that id is touched: the GitHub sign-in made
    through environment variables is still there, and still used, afterwards."""
    path, before = plant_github_sign_in(home)
    expect(not os.path.exists(os.path.join(home.config, "latchkey", "github.json")), "GitHub has no file of the person's")
    app = home.launch("--provider", "github")
    try:
        app.wait_status("Signed in with GitHub")
        for choice, field, url in ((ISSUER_CHOICE, "Issuer URL", "https://github"), (RESOURCE_CHOICE, "Resource URL", "https://github/")):
            app.press(app.button("Add a provider"))
            dialog = app.find("dialog", "Add a provider")
            app.press(app.find("radio button", choice, root=dialog))
            app.type_into(app.find("text", field, root=dialog), url)
            app.press(app.find("push button", "Add", root=dialog))
            wait_problem(app, dialog, "the name of a provider Latchkey comes with")
            app.screenshot(f"refused-{field.split()[0].lower()}")
            app.press(app.find("push button", "Cancel", root=dialog))
            app.absent("dialog", "Add a provider")
            expect(os.path.exists(path), f"the GitHub sign-in survives the refused {field}")
            with open(path, "rb") as f:
                expect(f.read() == before, f"the GitHub sign-in is unchanged after the refused {field}")
        app.wait_status("Signed in with GitHub")
    finally:
        app.quit()
    # Still used at the next launch: signed in, nothing to do again.
    app = home.launch("--provider", "github", log_name="latchkey-2.log")
    try:
        app.wait_status("Signed in with GitHub")
        app.wait_sensitive("Get my profile", True)
    finally:
        app.quit()
    status = subprocess.run([os.path.join(BIN, "latchkey"), "status"], capture_output=True, text=True, timeout=60)
    line = next((l for l in status.stdout.splitlines() if l.startswith("github ")), "")
    expect("signed in" in line, f"latchkey status still lists the GitHub sign-in: {line!r}")


# A protected resource whose server puts terminal controls and bidi overrides in every text it
# gives: the resource's name (kept as the provider's) and a registration refusal's description.
# argv[1]: "noreg" (no registration endpoint) or "refuse" (registration answers 400).
HOSTILE_TEXT_SERVER = r"""
import http.server, json, sys
MODE = sys.argv[1]
EVIL = "\u009b2J\u001b[31m\u202e\u2066\u200b\u0007\u007f"
class Hostile(http.server.BaseHTTPRequestHandler):
    def answer(self, status, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_GET(self):
        base = "http://127.0.0.1:%d" % self.server.server_address[1]
        if self.path == "/mcp":
            self.answer(401, {}, [("WWW-Authenticate", 'Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"' % base)])
        elif self.path == "/.well-known/oauth-protected-resource/mcp":
            self.answer(200, {"resource": base + "/mcp", "authorization_servers": [base], "resource_name": "Notes" + EVIL + "lacigam"})
        elif self.path in ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"):
            document = {"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
                        "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"]}
            if MODE == "refuse":
                document["registration_endpoint"] = base + "/register"
            self.answer(200, document)
        else:
            self.answer(404, {})
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.answer(400, {"error": "invalid_client_metadata", "error_description": "Bad" + EVIL + " metadata"})
    def log_message(self, *args): pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
print(server.server_address[1], flush=True)
server.serve_forever()
"""

# Bytes that must never reach a terminal from a server: CSI (U+009B) and ESC, BEL, DEL, and the
# UTF-8 of U+202E (right-to-left override), U+2066 (left-to-right isolate), U+200B (zero width space).
FORBIDDEN = [b"\xc2\x9b", b"\x1b", b"\x07", b"\x7f", b"\xe2\x80\xae", b"\xe2\x81\xa6", b"\xe2\x80\x8b"]


def start_hostile_text_server(mode):
    server = subprocess.Popen([sys.executable, "-c", HOSTILE_TEXT_SERVER, mode], stdout=subprocess.PIPE)
    return server, f"http://127.0.0.1:{int(server.stdout.readline())}"


def no_controls(what, data):
    for sequence in FORBIDDEN:
        expect(sequence not in data, f"{what} holds {sequence!r}: {data!r}")


def printable_text(what, text):
    odd = [c for c in text if unicodedata.category(c) in ("Cc", "Cf")]
    expect(not odd, f"{what} holds control or format characters {odd!r}: {text!r}")


def server_text_stays_text(home):
    """Issue 24 §1.2: a server's error_description and a resource's resource_name reach
    `latchkey token`'s stderr, `latchkey status`'s stdout and the window without a single
    control (Cc) or format (Cf) character: no CSI, no escape, no bidi override."""
    latchkey = os.path.join(BIN, "latchkey")
    refusing, base = start_hostile_text_server("refuse")
    try:
        run = subprocess.run([latchkey, "token", "--resource", base + "/mcp"], capture_output=True, timeout=120)
    finally:
        refusing.kill()
        refusing.wait()
    expect(run.returncode == 1 and b"refused to register Latchkey" in run.stderr, f"the refusal is said: {run.stderr!r}")
    expect(b"Bad2J[31m metadata" in run.stderr, f"the description's text stays, its controls go: {run.stderr!r}")
    no_controls("latchkey token's stderr", run.stderr)

    silent, base = start_hostile_text_server("noreg")
    try:
        run = subprocess.run([latchkey, "token", "--resource", base + "/mcp"], capture_output=True, timeout=120)
        expect(run.returncode == 1 and b"does not let apps register" in run.stderr, f"no registration: {run.stderr!r}")
        no_controls("latchkey token's stderr", run.stderr)
        status = subprocess.run([latchkey, "status"], capture_output=True, timeout=60)
        expect(status.returncode == 0, f"status: {status.stderr!r}")
        place = base.split("//")[1]
        expect(f"Notes2J[31mlacigam ({place})".encode() in status.stdout,
               f"the resource's name is listed in the order it was written, with its host: {status.stdout!r}")
        no_controls("latchkey status's stdout", status.stdout)

        app = home.launch("--resource", base + "/mcp")
        try:
            app.wait_status("does not let apps register", timeout=30)
            printable_text("the window's status", app.status())
            combo = app.find("combo box", "Provider")
            listed = app.find("menu item", f"Notes2J[31mlacigam ({place})", root=combo, showing=False)
            expect(listed is not None, "the window lists the resource by its cleaned name")
            for item in [node for node in walk(combo) if role(node) == "menu item"]:
                printable_text("a provider's name in the list", item.get_name())
            app.screenshot("hostile-text-window")
        finally:
            app.quit()
        with open(app.log_path, "rb") as f:
            no_controls("the app's log", f.read())
    finally:
        silent.kill()
        silent.wait()


def sign_out_honours_network_timeout(home):
    """Issue 24 §1.5: `latchkey --sign-out` waits on the revocation endpoint as long as
    --network-timeout says, like every other path (it used the default 30 s): a revocation
    endpoint that takes two minutes ends in a few seconds, signed out here, with a sentence."""
    with presets.sandbox_running(home, "standard", "--fault", "revoke:delay", "--fault-delay", "120") as base:
        directory = os.path.join(home.config, "latchkey")
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "slow.json"), "w") as f:
            json.dump({"id": "slow", "display_name": "Slow revocation", "issuer": base, "authorization_endpoint": "/authorize",
                       "token_endpoint": "/token", "revocation_endpoint": "/revoke", "client_id": "latchkey-desktop",
                       "redirect_uri": "http://127.0.0.1/callback", "scopes": ["openid"]}, f)
        token_file = os.path.join(home.state, "latchkey", "slow.json")
        os.makedirs(os.path.dirname(token_file), mode=0o700, exist_ok=True)
        with open(token_file, "w") as f:
            json.dump({"access_token": "slow-access-token", "token_type": "Bearer", "received_at": time.time(),
                       "expires_at": time.time() + 3600, "issued_by": "latchkey-desktop at http://127.0.0.1/token"}, f)
        os.chmod(token_file, 0o600)
        started = time.monotonic()
        run = subprocess.run([os.path.join(BIN, "latchkey"), "--sign-out", "--provider", "slow", "--network-timeout", "2"],
                             capture_output=True, text=True, timeout=110)
        elapsed = time.monotonic() - started
    expect(run.returncode == 0, f"--sign-out: {run.returncode} {run.stderr!r}")
    expect("Signed out here, but Slow revocation could not be told" in run.stdout and "took too long" in run.stdout,
           f"the sentence says revocation did not answer: {run.stdout!r}")
    expect(not os.path.exists(token_file), "signed out here all the same")
    # The default (30 s) would be past this; two seconds and a launch are far within it.
    expect(elapsed < 25, f"--sign-out gave up after --network-timeout, not the default: {elapsed:.1f} s")


PEERS_PYTHON = os.path.join(ROOT, ".build", "python-peers", "bin", "python")


def start_mcp_sdk_server(home, *flags):
    """The official MCP Python SDK's authorization server and protected resource, as it ships
    (redirect URIs compared exactly), on 127.0.0.1; its base URL."""
    log = open(os.path.join(home.root, "mcp-sdk.log"), "wb")
    server = subprocess.Popen([PEERS_PYTHON, os.path.join(ROOT, "Tests", "EndToEnd", "mcp_sdk_server.py"), *flags],
                              stdout=subprocess.PIPE, stderr=log)
    line = server.stdout.readline().decode().strip()
    expect(line.isdigit(), f"the MCP SDK's server did not start: {line!r}")
    return server, f"http://127.0.0.1:{line}"


class NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def first_answer(url):
    """The status and Location a server answers `url` with, its redirect not followed."""
    try:
        with urllib.request.build_opener(NoRedirects).open(url, timeout=10) as response:
            return response.status, response.headers.get("Location", "")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Location", "") or error.read().decode(errors="replace")[:300]


def mcp_sdk_browser_sign_in(home):
    """Issue 24 §1.6: a browser sign-in to a server that compares redirect URIs exactly (the
    official MCP Python SDK's): Latchkey registers the window's redirect URI and one with a port
    of its own for the browser, listens there, and the sign-in completes. While it waits,
    `latchkey token` says so on stderr with what to do, and Ctrl+C ends it with a sentence."""
    server, base = start_mcp_sdk_server(home)
    resource = base + "/mcp"
    provider_id = "127-0-0-1-" + base.rsplit(":", 1)[1] + "-mcp"
    latchkey = os.path.join(BIN, "latchkey")
    try:
        app = home.launch("--resource", resource)
        try:
            app.wait_status("Not signed in", timeout=30)
            choose_user_agent(app, "In your browser")
            app.press(app.wait_sensitive("Sign in"))
            app.wait_status("If it shows an error instead of a sign-in, press Cancel")
            app.screenshot("mcp-sdk-waiting-on-the-browser")
            url = wait_until("the browser to be asked", lambda: home.opened_urls() and home.opened_urls()[-1], 15)
            # What the browser would get: the SDK's answer to the authorization request, not followed.
            status, location = first_answer(url)
            expect(status == 302 and location.startswith("http://127.0.0.1:"),
                   f"the SDK's server accepts the browser's redirect URI and sends it back: {status} {location!r}")
            with open(os.path.join(home.config, "latchkey", f"{provider_id}.json")) as f:
                browser_uri = json.load(f).get("browser_redirect_uri", "")
            expect(location.startswith(browser_uri + "?"), f"to the port registered for the browser: {browser_uri!r}")
            app.press(app.button("Cancel"))
            app.wait_status("Sign-in cancelled.")
        finally:
            app.quit()

        # latchkey token, signed out, in the browser: the waiting is said, and Ctrl+C ends it with a sentence.
        asked = len(home.opened_urls())
        waiting = subprocess.Popen([latchkey, "token", "--resource", resource], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            said = waiting.stderr.readline()
            expect("Continue in your browser" in said and "Ctrl+C" in said and resource in said,
                   f"latchkey token says it waits on the browser, and what to do: {said!r}")
            wait_until("the browser to be asked again", lambda: len(home.opened_urls()) > asked, 30)
            waiting.send_signal(signal.SIGINT)
            out, err = waiting.communicate(timeout=30)
        finally:
            if waiting.poll() is None:
                waiting.kill()
        expect(waiting.returncode == 4 and out == "" and "Sign-in cancelled." in err,
               f"Ctrl+C ends the sign-in with a sentence and status 4: {waiting.returncode} {err!r}")

        # A real browser now (GNOME Web): the SDK's server sends it straight back to the registered port.
        browser = Epiphany(home)
        try:
            # Files, not pipes: the browser it starts inherits stderr, and outlives it.
            out_path, err_path = os.path.join(home.root, "token.out"), os.path.join(home.root, "token.err")
            with open(out_path, "w") as out, open(err_path, "w") as err:
                status = subprocess.Popen([latchkey, "token", "--resource", resource], stdout=out, stderr=err).wait(120)
            with open(err_path) as f:
                expect(status == 0, f"latchkey token through the browser: {status} {f.read()!r}")
            browser.page("Answer received · Latchkey")
        finally:
            browser.quit()
        with open(out_path) as f:
            token = f.read().strip()
        code, answer = resource_answer(resource, token)
        expect(code == 200 and answer and answer.get("ok") and answer.get("resource") == resource,
               f"the SDK's resource takes the token, issued for it: {code} {answer}")
        again = subprocess.run([latchkey, "token", "--resource", resource], capture_output=True, text=True, timeout=60)
        expect(again.returncode == 0 and again.stdout.strip() == token, f"the next run needs no browser: {again.stderr!r}")
    finally:
        server.kill()
        server.wait()
    assert_no_secrets(home, [app.log_path], [token])


def account_switch_is_said(home):
    """Issue 24 §1.3: a sign-in that comes back as another person than the one signed in
    before (someone who read the authorization request off the browser's command line can
    complete it with a code of their own) is said plainly, in the window and by latchkey token."""
    app = home.launch()
    try:
        app.wait_status("Not signed in")
        sign_in(app, home)
        app.wait_status("Signed in with Sandbox provider")
        # What the sign-in allows is shown beside it (MCP 2026-07-28: the window shows the scopes a sign-in holds).
        allows = app.find("label", "Allows: openid, profile, email, offline_access")
        expect(allows is not None, "the window shows the scopes the sign-in holds")
        app.screenshot("signed-in-with-its-scopes")
        app.press(app.wait_sensitive("Get my profile"))
        app.wait_status("as Ada Lovelace")
        app.press(app.button("Sign out"))
        app.wait_status("Signed out")
        sign_in(app, home, user="grace", password="compiler")
        app.wait_status("Signed in as grace@sandbox.example, no longer as ada@sandbox.example.")
        app.screenshot("account-switch-said")
        app.press(app.wait_sensitive("Get my profile"))
        app.wait_status("as Grace Hopper")
        # Grace again: nothing more to say.
        app.press(app.button("Sign out"))
        app.wait_status("Signed out")
        sign_in(app, home, user="grace", password="compiler")
        app.wait_status("Signed in with Sandbox provider")
    finally:
        app.quit()
    with open(app.log_path) as f:
        expect("no longer as ada@sandbox.example" in f.read(), "the log says it too")

    # And on latchkey token's stderr: a resource signed in to as Ada, signed out, then as Grace.
    with presets.sandbox_running(home, "standard") as base:
        status, _, _ = token_through_window(home, base, name="token-ada")
        expect(status == 0, f"Ada's token: {status}")
        provider = "127-0-0-1-" + base.rsplit(":", 1)[1] + "-api-me"
        out = subprocess.run([os.path.join(BIN, "latchkey"), "--sign-out", "--provider", provider],
                             capture_output=True, text=True, timeout=60)
        expect(out.returncode == 0, f"signed out: {out.stderr!r}")
        status, token, said = token_through_window(home, base, user="grace", password="compiler", name="token-grace")
        line = next((l for l in said.splitlines() if l.startswith("latchkey: Signed in as")), "")
        expect(status == 0 and token and "no longer as" in line, f"latchkey token says so on stderr: {status} {line!r}")


def token_through_window(home, base, *extra, user="ada", password="engine", name="run", path="/api/me"):
    """`latchkey token --resource <base><path> …` as a script runs it, signing in through its window;
    the token printed, and what it said on stderr (in its log, with the debug lines)."""
    out = os.path.join(home.root, f"{name}.out")
    app = home.launch("--resource", base + path, *extra, command=("token",), stdout_path=out, log_name=f"{name}.log")
    try:
        app.type_into(app.find("entry", "Username", timeout=60), user)
        app.type_into(app.find("password text", "Password"), password)
        app.press(app.button("Allow"))
        status = app.process.wait(60)
    finally:
        app.quit()
    with open(out) as f, open(app.log_path) as log:
        return status, f.read().strip(), log.read()


def step_up_through_latchkey_token(home):
    """MCP 2026-07-28 step-up, as a script does it: the resource answers 403 insufficient_scope,
    the script hands the challenge to `latchkey token --challenge`, which signs in once more for
    the union of the scopes (one consent) and prints a token the resource takes; a 401 is answered
    with a renewed token, never the refused one, and no window; a server that keeps asking is
    followed three times, then refused with a sentence."""
    latchkey = os.path.join(BIN, "latchkey")
    with presets.sandbox_running(home, "standard") as base:
        status, first, _ = token_through_window(home, base, name="first")
        expect(status == 0 and first, f"the first token: {status}")
        code, header = challenge_of(base + "/api/me?detail=email", first)
        expect(code == 403 and 'error="insufficient_scope"' in header, f"the resource wants more: {code} {header!r}")

        status, widened, said = token_through_window(home, base, "--challenge", header, name="step-up")
        expect(status == 0 and widened and widened != first, f"a new token after one more sign-in: {status}")
        expect("asks for more: openid profile email" in said, "latchkey token says why it signs in again")
        code, _ = challenge_of(base + "/api/me?detail=email", widened)
        expect(code == 200, f"the resource takes it: {code}")
        with open(os.path.join(home.config, "latchkey", f"127-0-0-1-{base.rsplit(':', 1)[1]}-api-me.json")) as f:
            provider = json.load(f)
        expect("email" in provider["scopes"], "the wider scopes are kept for the next sign-in")

        # The token refused (revoked at the provider): renewed without a window, never the refused one printed.
        revoke(base, widened, provider["client_id"])
        code, header = challenge_of(base + "/api/me", widened)
        expect(code == 401, f"the revoked token is refused: {code}")
        renewed = subprocess.run([latchkey, "token", "--resource", base + "/api/me", "--challenge", header],
                                 capture_output=True, text=True, timeout=60,
                                 env={k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")})
        expect(renewed.returncode == 0 and renewed.stdout.strip() not in ("", widened),
               f"a renewed token, without any window: {renewed.returncode} {renewed.stderr!r}")
        expect(challenge_of(base + "/api/me", renewed.stdout.strip())[0] == 200, "and the resource takes it")

        # A server that keeps asking: every answer for one resource and scope set counts (the step-up
        # and the renewal above did): one more sign-in, then a sentence instead of a fourth.
        token = renewed.stdout.strip()
        for round in (1,):
            code, header = challenge_of(base + "/api/me?detail=never", token)
            expect(code == 403, f"round {round}: {code}")
            status, token, _ = token_through_window(home, base, "--challenge", header, name=f"never-{round}")
            expect(status == 0 and token, f"round {round}: followed ({status})")
        code, header = challenge_of(base + "/api/me?detail=never", token)
        refused = subprocess.run([latchkey, "token", "--resource", base + "/api/me", "--challenge", header],
                                 capture_output=True, text=True, timeout=60)
        expect(refused.returncode == 1 and refused.stdout == "" and "answered 3 times" in refused.stderr,
               f"the fourth time is refused with a sentence: {refused.returncode} {refused.stderr!r}")
    assert_no_secrets(home, [os.path.join(home.root, n + ".log") for n in ("first", "step-up", "never-1")],
                      extra=[first, widened, token])


def challenge_of(url, token):
    """The status and WWW-Authenticate a resource answers `token` with."""
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers.get("WWW-Authenticate", "")
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("WWW-Authenticate", "")


def revoke(base, token, client_id):
    """Revokes an access token at the sandbox (RFC 7009), as the person would in its settings."""
    urllib.request.urlopen(urllib.request.Request(base + "/revoke", data=urllib.parse.urlencode(
        {"token": token, "client_id": client_id}).encode(), method="POST"), timeout=10).read()


# Each situation of the MCP authorization specification (2026-07-28) the sandbox plays, driven
# through `latchkey token --resource`: (sandbox options, what ends it: None for a token, else a
# sentence on stderr and the exit status).
MCP_SITUATIONS = [
    ((), None),
    (("--iss", "unadvertised"), None),
    (("--iss", "absent"), ("did not say which server sent it", 1)),
    (("--iss", "wrong"), ("came from a different provider", 1)),
    (("--iss", "slash"), ("came from a different provider", 1)),
    (("--iss", "unadvertised-wrong"), ("came from a different provider", 1)),
    (("--issuer-path", "/tenant1", "--metadata-at", "oauth"), None),
    (("--issuer-path", "/tenant1", "--metadata-at", "oidc-inserted"), None),
    (("--issuer-path", "/tenant1", "--metadata-at", "oidc-appended"), None),
    (("--metadata-at", "oidc-inserted"), None),
    (("--resource-metadata-at", "path"), None),
    (("--resource-metadata-at", "root"), None),
    (("--resource-metadata-at", "custom"), None),
    (("--behave-like", "linkedin"), ("does not say it supports PKCE with S256", 1)),
    # A resource that names no scope, in its challenge or its metadata: no scope parameter at all.
    (("/api/open",), None),
]


def mcp_situations_through_latchkey_token(home):
    """Every situation above, from a clean home each time: a token the resource takes, or the
    sentence that says why not (and no token, and for iss, no code sent to the token endpoint)."""
    for number, (options, refusal) in enumerate(MCP_SITUATIONS):
        for directory in (os.path.join(home.config, "latchkey"), os.path.join(home.state, "latchkey")):
            subprocess.run(["rm", "-rf", directory], check=True)
        path = options[0] if options[:1] and options[0].startswith("/") else "/api/me"
        sandbox_options = () if path != "/api/me" else options
        with presets.sandbox_running(home, *((options[1],) if options[:1] == ("--behave-like",) else ("standard",)),
                                     *(sandbox_options if options[:1] != ("--behave-like",) else ())) as base:
            name = f"situation-{number}"
            if refusal and "PKCE" in refusal[0]:
                run = subprocess.run([os.path.join(BIN, "latchkey"), "token", "--resource", base + "/api/me"],
                                     capture_output=True, text=True, timeout=60)
                status, token, said = run.returncode, run.stdout.strip(), run.stderr
            else:
                status, token, said = token_through_window(home, base, name=name, path=path)
            label = " ".join(options) or "usual"
            if refusal is None:
                expect(status == 0 and challenge_of(base + path, token)[0] == 200,
                       f"{label}: a token the resource takes ({status})")
                if path == "/api/open":
                    expect(admin(base, "/_admin/stats")["authorization_scopes"] == [""], f"{label}: no scope asked for")
            else:
                sentence, code = refusal
                expect(status == code and token == "" and sentence in said, f"{label}: refused with a sentence ({status}): {said[-400:]!r}")
                if "--iss" in options:
                    expect(admin(base, "/_admin/stats")["token_requests"] == 0, f"{label}: the code went nowhere")


def resource_moves_through_latchkey_token(home):
    """MCP 2026-07-28, keyed by issuer: the resource moves to another authorization server; the
    script's next request gets a 401, which it hands to `latchkey token --challenge`: Latchkey
    registers at the new server, signs in there, and the new server never hears of the old client."""
    with presets.sandbox_running(home, "standard") as base:
        status, first, _ = token_through_window(home, base, name="before")
        expect(status == 0 and first, f"the first token: {status}")
        provider_file = os.path.join(home.config, "latchkey", f"127-0-0-1-{base.rsplit(':', 1)[1]}-api-me.json")
        with open(provider_file) as f:
            old_client = json.load(f)["client_id"]
        admin(base, "/_admin/move-resources", method="POST")
        code, header = challenge_of(base + "/api/me", first)
        expect(code == 401 and "authorization server has changed" in header, f"refused: {code} {header!r}")
        status, token, said = token_through_window(home, base, "--challenge", header, name="after")
        expect(status == 0 and token and token != first, f"a token from the new server: {status}")
        expect(f"now takes tokens from {base}/as2" in said, "latchkey token says where it signs in now")
        expect(challenge_of(base + "/api/me", token)[0] == 200, "the resource takes it")
        with open(provider_file) as f:
            moved = json.load(f)
        expect(moved["issuer"] == base + "/as2" and moved["client_id"] != old_client, f"the provider file follows: {moved}")
        stats = admin(base, "/_admin/stats")
        expect(old_client not in stats["second_server_client_ids"], "the new server never heard of the old client")
        expect(stats["revocation_requests"] >= 1, "the old grant was revoked at the old server")
    assert_no_secrets(home, [os.path.join(home.root, n + ".log") for n in ("before", "after")], extra=[first, token])


SCENARIOS = {
    "resource_moves_through_latchkey_token": resource_moves_through_latchkey_token,
    "mcp_situations_through_latchkey_token": mcp_situations_through_latchkey_token,
    "step_up_through_latchkey_token": step_up_through_latchkey_token,
    "account_switch_is_said": account_switch_is_said,
    "mcp_sdk_browser_sign_in": mcp_sdk_browser_sign_in,
    "sign_out_honours_network_timeout": sign_out_honours_network_timeout,
    "server_text_stays_text": server_text_stays_text,
    "refused_add_keeps_sign_in": refused_add_keeps_sign_in,
}
