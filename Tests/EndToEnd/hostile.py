"""End-to-end: a provider whose pages try tricks on the sign-in window."""

import json
import os
import subprocess
import sys

from harness import assert_no_secrets, expect
from driver import wait_until

# /attachment answers with a file to save; /page embeds one in an iframe and has a
# script click an <a download>; everything else is a plain page.
SERVER = r"""
import http.server, sys
class Tricks(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        open(sys.argv[1], "a").write(self.path + "\n")
        if self.path.startswith("/attachment"):
            body = b"#!/bin/sh\necho owned\n"
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Disposition", 'attachment; filename="evil.sh"')
        else:
            body = (b"<!DOCTYPE html><title>Tricks</title><h1>Sign in</h1>"
                    b"<iframe src='/attachment?frame'></iframe>"
                    b"<a id=d href='/attachment?click' download='evil2.sh'>x</a>"
                    b"<script>document.getElementById('d').click()</script>")
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args): pass
# Threaded: WebKit holds several connections (a cancelled download, preconnects), and
# one idle connection would keep a single-threaded server from answering the next.
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Tricks)
print(server.server_address[1], flush=True)
server.serve_forever()
"""


def provider(home, base, path):
    file = os.path.join(home.root, "tricks.json")
    with open(file, "w") as f:
        json.dump({"id": "tricks", "display_name": "Tricky provider", "authorization_endpoint": base + path,
                   "token_endpoint": base + "/token", "client_id": "latchkey-desktop",
                   "redirect_uri": "https://latchkey.invalid/oauth2/callback", "scopes": ["profile"]}, f)
    return file


def files_under(root):
    found = set()
    for directory, _, names in os.walk(root):
        found.update(os.path.join(directory, name) for name in names)
    return found


def downloads_refused(home):
    """A page that is an attachment, an iframe attachment and a script-clicked <a download>:
    nothing is written, and the page that was itself a download ends the sign-in with a sentence."""
    heard = os.path.join(home.root, "heard.txt")
    server = subprocess.Popen([sys.executable, "-c", SERVER, heard], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{int(server.stdout.readline())}"
    before = files_under(home.home)
    try:
        # 1. The sign-in page itself is a download.
        app = home.launch("--provider-file", provider(home, base, "/attachment?main"))
        try:
            app.wait_status("Not signed in")
            app.press(app.wait_sensitive("Sign in"))
            app.wait_status("tried to download a file", timeout=30)
            app.wait_sensitive("Sign in", True)
            app.screenshot("01-attachment-refused")
        finally:
            app.quit()
        # 2. A page with an attachment in an iframe and a script that clicks <a download>.
        app = home.launch("--provider-file", provider(home, base, "/page"), log_name="second.log")
        try:
            app.wait_status("Not signed in")
            app.press(app.wait_sensitive("Sign in"))
            # Both tricks tried: the iframe's download reached the server, and the window
            # decided both navigations to /attachment. (WebKit may stop the clicked
            # download before its request leaves — fine, nothing is written either way.)
            def tried():
                heard_paths = set(open(heard).read().split()) if os.path.exists(heard) else set()
                with open(app.log_path, errors="replace") as log:
                    decided = log.read().count("navigation to=http://127.0.0.1/attachment")
                return "/attachment?frame" in heard_paths and decided >= 2
            wait_until("the iframe's download and the clicked one to be tried", tried, 30)
            app.find("heading", "Sign in", timeout=20, exact=False)
            app.screenshot("02-page-with-download-tricks")
            app.press(app.button("Cancel"))
            app.wait_status("Sign-in cancelled.")
        finally:
            app.quit()
    finally:
        server.kill()
        server.wait()
    new = {path for path in files_under(home.home) - before
           if "/.local/state/" not in path and "/.cache/" not in path and "/.local/share/webkitgtk" not in path}
    expect(not any(path.endswith((".sh", ".sh.download")) or "Downloads" in path for path in new),
           f"nothing was downloaded, found: {sorted(new)}")
    expect(not os.path.exists(os.path.join(home.home, "Downloads")), "no Downloads folder was even made")


# A provider that signs the person in only after trying one trick per sign-in:
# the n-th visit to /authorize gets TRICKS[n]. It knows the state (it is the
# provider), so its tricks are the ones a compromised or malicious provider page
# could play. Its token endpoint echoes the request body when the code is
# "echo-code", and otherwise issues tokens that claim to live 10^300 seconds.
HOSTILE_SERVER = r"""
import http.server, json, sys, urllib.parse
heard = sys.argv[1]
TRICKS = ["attachment", "plain-http", "form-post", "echo", "blank", "popup"]
visits = []
class Hostile(http.server.BaseHTTPRequestHandler):
    def record(self, line):
        open(heard, "a").write(line + "\n")
    def reply(self, status, body, content_type="text/html", headers=()):
        body = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        self.record("GET " + url.path)
        if url.path == "/attachment":
            self.reply(200, "#!/bin/sh\necho owned\n", "application/octet-stream",
                       [("Content-Disposition", 'attachment; filename="evil.sh"')])
            return
        if url.path != "/authorize":
            self.reply(404, "<h1>Not here</h1>")
            return
        trick = TRICKS[min(len(visits), len(TRICKS) - 1)]
        visits.append(trick)
        self.record("trick " + trick)
        back = query["redirect_uri"]
        state = urllib.parse.quote(query["state"])
        head = "<!DOCTYPE html><title>Hostile</title><h1>Sign in</h1>"
        if trick == "attachment":
            self.reply(302, "", headers=[("Location", "/attachment")])
        elif trick == "plain-http":
            self.reply(200, head + "<script>location = 'http://example.invalid/collect?from=hostile'</script>")
        elif trick == "form-post":
            self.reply(200, head + f"<form method=post action='{back}'><input type=hidden name=code value=posted-code>"
                       f"<input type=hidden name=state value='{query['state']}'></form>"
                       "<script>document.forms[0].submit()</script>")
        elif trick == "echo":
            self.reply(302, "", headers=[("Location", f"{back}?code=echo-code&state={state}")])
        elif trick == "blank":
            # A page with no host: the window must not keep showing this one's.
            self.reply(200, head + "<script>setTimeout(() => location = 'about:blank', 300)</script>")
        else:
            # No user gesture: window.open from a script, answered in the new window.
            self.reply(200, head + f"<script>window.open('{back}?code=good-code&state={state}')</script>")
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        self.record("POST " + self.path)
        fields = dict(urllib.parse.parse_qsl(body))
        if self.path != "/token":
            self.reply(404, "")
        elif fields.get("code") == "echo-code":
            self.reply(400, json.dumps({"error": "invalid_client", "error_description": "we got: " + body}), "application/json")
        else:
            self.reply(200, json.dumps({"access_token": "hostile-at-7f3e", "refresh_token": "hostile-rt-91c2",
                                        "token_type": "Bearer", "expires_in": 1e300}), "application/json")
    def log_message(self, *args): pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
print(server.server_address[1], flush=True)
server.serve_forever()
"""

HOSTILE_SECRET = "hostile-client-secret-5d1b"


def hostile_provider(home):
    """Every trick of the issue's hostile provider, one per sign-in, in one run of the app:
    each ends in a sentence, the app keeps working, the last sign-in succeeds and
    survives a relaunch, nothing lands in $HOME and nothing secret is logged."""
    heard = os.path.join(home.root, "heard.txt")
    server = subprocess.Popen([sys.executable, "-c", HOSTILE_SERVER, heard], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{int(server.stdout.readline())}"
    file = os.path.join(home.root, "hostile.json")
    with open(file, "w") as f:
        json.dump({"id": "hostile", "display_name": "Hostile provider", "issuer": base,
                   "authorization_endpoint": "/authorize", "token_endpoint": "/token",
                   "client_id": "latchkey-desktop", "client_secret": HOSTILE_SECRET,
                   "client_authentication": "client_secret_post",
                   "redirect_uri": "https://latchkey.invalid/oauth2/callback", "scopes": ["profile"]}, f)
    token_file = os.path.join(home.state, "latchkey", "hostile.json")
    before = files_under(home.home)
    logs = []
    try:
        app = home.launch("--provider-file", file)
        logs.append(app.log_path)
        try:
            app.wait_status("Not signed in")
            attempts = [
                ("attachment", "tried to download a file"),
                ("plain-http", "without encryption (plain http)"),
                ("form-post", "posted form (response_mode=form_post)"),
                ("echo", "did not accept this app's client credentials"),
            ]
            for number, (trick, sentence) in enumerate(attempts, start=1):
                app.press(app.wait_sensitive("Sign in"))
                status = app.wait_status(sentence, timeout=30)
                expect(HOSTILE_SECRET not in status and "echo-code" not in status,
                       f"{trick}: the sentence shows nothing secret: {status!r}")
                app.wait_sensitive("Sign in", True)
                expect(not os.path.exists(token_file), f"{trick}: nothing stored")
                app.screenshot(f"{number:02d}-{trick}")
            heard_lines = open(heard).read().split("\n")
            expect("GET /collect" not in heard_lines, "the plain-http address was never asked for")
            expect(heard_lines.count("POST /token") == 1, "only the echo trick reached the token endpoint")
            # A host-less page: the address line says so instead of keeping the last host.
            app.press(app.wait_sensitive("Sign in"))
            app.find("label", "about:blank — Not a web address", timeout=30)
            app.screenshot("05-blank-page")
            sign_in_window = app.find({"frame", "dialog", "window"}, "Sign in to Hostile provider", newest=True)
            app.press(app.button("Cancel", root=sign_in_window))
            app.wait_status("Sign-in cancelled.")
            # The popup answers with the code: taken from window.open, not lost.
            app.press(app.wait_sensitive("Sign in"))
            app.wait_status("Signed in with Hostile provider", timeout=30)
            app.screenshot("06-popup-signed-in")
        finally:
            app.quit()
        with open(token_file) as f:
            stored = json.load(f)
        expect(stored["access_token"] == "hostile-at-7f3e", "the popup's sign-in was stored")
        expect(stored["expires_at"] - stored["received_at"] <= 10 * 366 * 86400, "a lifetime of 1e300 s was clamped")
        # A relaunch reads the stored sign-in (its odd expiry included) without a crash.
        app = home.launch("--provider-file", file, log_name="relaunch.log")
        logs.append(app.log_path)
        try:
            app.wait_status("Signed in with Hostile provider", timeout=30)
        finally:
            app.quit()
    finally:
        server.kill()
        server.wait()
    new = {path for path in files_under(home.home) - before
           if "/.local/state/latchkey/" not in path and "/.cache/" not in path and "/.local/share/webkitgtk" not in path}
    expect(not new, f"no file appeared in $HOME but the sign-in: {sorted(new)}")
    assert_no_secrets(home, logs, extra=(HOSTILE_SECRET, "hostile-at-7f3e", "hostile-rt-91c2", "echo-code",
                                         "good-code", "posted-code"))


SCENARIOS = {"downloads_refused": downloads_refused, "hostile_provider": hostile_provider}
