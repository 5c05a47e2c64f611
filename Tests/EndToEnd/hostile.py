"""End-to-end: a provider whose pages try tricks on the sign-in window."""

import json
import os
import subprocess
import sys

from e2e import expect
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
server = http.server.HTTPServer(("127.0.0.1", 0), Tricks)
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
            wait_until("the iframe and the click to be asked for",
                       lambda: os.path.exists(heard) and {"/attachment?frame", "/attachment?click"} <= set(open(heard).read().split()),
                       30)
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


SCENARIOS = {"downloads_refused": downloads_refused}
