"""The app's own path: sign in, profile, browser, relaunch, Deny, Cancel,
token-endpoint faults, renewals, a damaged token file, a bad certificate, a
crashed web process, the desktop files, and quitting."""

import json
import os
import stat
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import Latchkey, descendants, wait_until  # noqa: E402

from harness import BIN, ROOT, admin, assert_no_secrets, expect, open_sign_in, sandbox_url, sign_in, stored_token  # noqa: E402,F401


def happy_path(home):
    app = home.launch()
    try:
        app.wait_status("Not signed in")
        expect(app.sensitive(app.button("Sign in")), "Sign in is enabled while signed out")
        expect(not app.sensitive(app.button("Get my profile")), "Get my profile is disabled while signed out")
        app.absent("push button", "Open profile")
        app.screenshot("01-signed-out")

        sign_in(app, home, shot_prefix="02")
        app.wait_status("Signed in with Sandbox provider")
        expect("a private file" in app.status(), f"the status says where tokens are kept: {app.status()!r}")
        app.wait_sensitive("Sign in", False)
        app.wait_sensitive("Get my profile", True)
        app.screenshot("03-signed-in")

        mode = stat.S_IMODE(os.stat(home.token_file).st_mode)
        expect(mode == 0o600, f"token file mode {oct(mode)}")
        expect(stat.S_IMODE(os.stat(os.path.dirname(home.token_file)).st_mode) == 0o700, "token directory is 0700")

        base = sandbox_url(app)
        app.press(app.button("Get my profile"))
        app.wait_status("as Ada Lovelace")
        app.find("label", "Ada Lovelace")
        app.find("label", "ada@sandbox.example")
        open_profile = app.button("Open profile")
        url = open_profile.get_description()
        expect(url == f"{base}/in/ada", f"Open profile shows the profile URL, got {url!r}")
        app.screenshot("04-profile")

        app.press(open_profile)
        wait_until("the browser to be asked", lambda: home.opened_urls(), 10)
        expect(home.opened_urls() == [url], f"the recording browser got exactly the URL: {home.opened_urls()!r}")
        app.wait_status("web browser")
        app.screenshot("05-profile-opened")
        token = stored_token(home)
    finally:
        app.quit()
    assert_no_secrets(home, [app.log_path], [token["access_token"], token["refresh_token"]])


def relaunch(home):
    first = home.launch(log_name="first-run.log")
    try:
        first.wait_status("Not signed in")
        sign_in(first, home)
        first.wait_status("Signed in with Sandbox provider")
    finally:
        first.quit()

    app = home.launch(log_name="second-run.log")
    try:
        app.wait_status("Signed in with Sandbox provider")
        expect(not app.sensitive(app.button("Sign in")), "Sign in stays disabled after relaunch")
        app.screenshot("01-relaunched-signed-in")
        time.sleep(1)
        expect(app.web_processes() == [], f"no WebKit process runs: {app.web_processes()}")
        idle = app.loaded_libraries("libwebkit2gtk", "libcurl", "libsoup")
        expect(idle == [], f"signed in and idle, neither WebKit, libcurl nor libsoup is loaded: {idle}")
        app.press(app.button("Get my profile"))
        app.wait_status("as Ada Lovelace")
        expect(app.loaded_libraries("libcurl") == ["libcurl"], "libcurl was opened for the first request")
        app.screenshot("02-profile-after-relaunch")
        expect(app.web_processes() == [], "still no WebKit process")
    finally:
        app.quit()
    assert_no_secrets(home, [first.log_path, app.log_path])


def deny(home):
    app = home.launch()
    try:
        app.wait_status("Not signed in")
        sign_in(app, home, shot_prefix="01", action="Deny")
        app.wait_status("Sign-in cancelled.")
        app.wait_sensitive("Sign in", True)
        expect(not app.sensitive(app.button("Get my profile")), "Get my profile stays disabled")
        app.absent("entry", "Username")
        app.screenshot("02-cancelled")
        expect(not os.path.exists(home.token_file), "nothing stored")
    finally:
        app.quit()
    assert_no_secrets(home, [app.log_path])


def close_window(home):
    app = home.launch()
    try:
        app.wait_status("Not signed in")
        open_sign_in(app)
        app.screenshot("01-sign-in-window")
        # The sign-in window's own close button, not the main window's.
        sign_in_window = app.find({"frame", "dialog", "window"}, "Sign in to Sandbox provider (offline demo)")
        app.press(app.button("Close", root=sign_in_window))
        app.wait_status("Sign-in cancelled.")
        app.wait_sensitive("Sign in", True)
        app.absent("entry", "Username")
        app.screenshot("02-closed")
        expect(not os.path.exists(home.token_file), "nothing stored")
        # And Cancel does the same.
        open_sign_in(app)
        sign_in_window = app.find({"frame", "dialog", "window"}, "Sign in to Sandbox provider (offline demo)", newest=True)
        app.press(app.button("Cancel", root=sign_in_window))
        app.wait_status("Sign-in cancelled.")
        expect(not os.path.exists(home.token_file), "nothing stored")
    finally:
        app.quit()


def token_faults(home):
    app = home.launch("--network-timeout", "3")
    try:
        app.wait_status("Not signed in")
        base = sandbox_url(app)
        for number, (kind, words) in enumerate(
            [("500", "had a problem (HTTP 500)"), ("html", "web page instead of data"), ("delay", "took too long")], start=1
        ):
            admin(base, "/_admin/faults", {"endpoint": "token", "kind": kind, "count": 1, "delay_seconds": 8})
            sign_in(app, home)
            app.wait_status(words, timeout=30)
            app.wait_sensitive("Sign in", True)
            app.absent("entry", "Username")
            app.screenshot(f"0{number}-token-endpoint-{kind}")
            expect(not os.path.exists(home.token_file), f"nothing stored after {kind}")
        sign_in(app, home)
        app.wait_status("Signed in with Sandbox provider")
        app.screenshot("04-then-signed-in")
    finally:
        app.quit()
    assert_no_secrets(home, [app.log_path])


def short_lived_tokens(home):
    """A sandbox whose access tokens live 5 seconds, used through --provider-file."""
    log = open(os.path.join(home.root, "sandbox.log"), "wb")
    sandbox = subprocess.Popen(
        [os.path.join(BIN, "latchkey-sandbox"), "--port", "0", "--access-token-ttl", "5"],
        stdout=subprocess.PIPE, stderr=log)
    base = sandbox.stdout.readline().decode().split()[1]
    provider = os.path.join(home.root, "short-lived.json")
    with open(os.path.join(ROOT, "data", "providers", "sandbox.json")) as f:
        description = json.load(f)
    description.update({"id": "short-lived", "display_name": "Short-lived sandbox", "issuer": base})
    with open(provider, "w") as f:
        json.dump(description, f)
    app = home.launch("--provider-file", provider)
    try:
        app.wait_status("Not signed in")
        sign_in(app, home)
        app.wait_status("Signed in with Short-lived sandbox")
        time.sleep(6)  # the access token has expired
        before = admin(base, "/_admin/stats")["refresh_grants"]
        app.press(app.button("Get my profile"))
        app.wait_status("as Ada Lovelace")
        after = admin(base, "/_admin/stats")["refresh_grants"]
        expect(after > before, "the expired token was refreshed silently")
        app.screenshot("01-profile-after-silent-refresh")

        # Now the provider forgets the grant: the next refresh is refused.
        with open(os.path.join(home.state, "latchkey", "short-lived.json")) as f:
            refresh_token = json.load(f)["refresh_token"]
        urllib.request.urlopen(urllib.request.Request(
            base + "/revoke", data=f"token={refresh_token}&client_id=latchkey-desktop".encode()), timeout=10)
        app.press(app.button("Get my profile"))
        app.wait_status("no longer accepts your sign-in")
        app.wait_sensitive("Sign in", True)
        expect(not os.path.exists(os.path.join(home.state, "latchkey", "short-lived.json")), "the dead token is gone")
        app.screenshot("02-refresh-refused-signed-out")
    finally:
        app.quit()
        sandbox.terminate()
        sandbox.wait()
        log.close()
    assert_no_secrets(home, [app.log_path, os.path.join(home.root, "sandbox.log")], [refresh_token])


def damaged_token_file(home):
    """A token file cut off mid-write: a sentence, the bytes set aside, and the app still signs in."""
    os.makedirs(os.path.dirname(home.token_file), mode=0o700, exist_ok=True)
    damaged = b'{"access_token": "e2e-damaged-access", "refresh_tok'
    with open(home.token_file, "wb") as f:
        f.write(damaged)
    aside = home.token_file + ".corrupt"
    app = home.launch()
    try:
        app.wait_status("was damaged and has been set aside as sandbox.json.corrupt")
        expect("the file ~/.local/state/latchkey/sandbox.json was damaged" in app.status(),
               f"the sentence names the file as the person knows it, under ~: {app.status()!r}")
        app.wait_sensitive("Sign in", True)
        expect(not app.sensitive(app.button("Get my profile")), "no profile without a sign-in")
        app.screenshot("01-damaged-file-reported")
        with open(aside, "rb") as f:
            expect(f.read() == damaged, "the damaged bytes are kept, not deleted")
        sign_in(app, home)
        app.wait_status("Signed in with Sandbox provider")
        expect(os.path.exists(home.token_file), "a new sign-in is stored")
        app.screenshot("02-signed-in-again")
    finally:
        app.quit()

    # The same damage met by --sign-out: said on the command line too.
    with open(home.token_file, "wb") as f:
        f.write(damaged)
    os.remove(aside)
    result = subprocess.run([os.path.join(BIN, "latchkey"), "--sign-out"], capture_output=True, text=True, timeout=60)
    expect(result.returncode == 0, f"--sign-out succeeded: {result.stderr}")
    expect("Signed out. Trouble with the saved sign-in" in result.stdout and "sandbox.json.corrupt" in result.stdout,
           f"--sign-out names the damage: {result.stdout!r}")
    expect(os.path.exists(aside) and not os.path.exists(home.token_file), "set aside, and signed out")
    expect("e2e-damaged-access" not in result.stdout + result.stderr, "--sign-out printed no token")
    assert_no_secrets(home, [app.log_path], ["e2e-damaged-access"])


def data_files(home):
    """The desktop file and the AppStream metadata pass their validators."""
    desktop = subprocess.run(
        ["desktop-file-validate", os.path.join(ROOT, "data", "io.github.latchkey.Latchkey.desktop")], capture_output=True)
    expect(desktop.returncode == 0 and not desktop.stdout.strip(), f"desktop-file-validate: {desktop.stdout!r}")
    metainfo = subprocess.run(
        ["appstreamcli", "validate", "--no-net", os.path.join(ROOT, "data", "io.github.latchkey.Latchkey.metainfo.xml")],
        capture_output=True)
    expect(metainfo.returncode == 0, f"appstreamcli validate: {metainfo.stdout!r}")
    icon = os.path.join(ROOT, "data", "icons", "hicolor", "scalable", "apps", "io.github.latchkey.Latchkey.svg")
    expect(os.path.exists(icon), "the icon named by the desktop file exists")


def bad_certificate(home):
    """A provider whose https certificate nobody vouches for: the page is never shown."""
    key, cert = os.path.join(home.root, "key.pem"), os.path.join(home.root, "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
                    "-subj", "/CN=127.0.0.1"], check=True, capture_output=True)
    server = subprocess.Popen([sys.executable, "-c", f"""
import http.server, ssl, sys
class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<html><body><form><label for=u>Username</label><input id=u></form></body></html>"
        self.send_response(200); self.send_header("Content-Type", "text/html"); self.end_headers(); self.wfile.write(body)
    def log_message(self, *args): pass
server = http.server.HTTPServer(("127.0.0.1", 0), Page)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); context.load_cert_chain({cert!r}, {key!r})
server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
"""], stdout=subprocess.PIPE)
    port = int(server.stdout.readline())
    provider = os.path.join(home.root, "self-signed.json")
    with open(provider, "w") as f:
        json.dump({"id": "self-signed", "display_name": "Self-signed provider",
                   "authorization_endpoint": f"https://127.0.0.1:{port}/authorize",
                   "token_endpoint": f"https://127.0.0.1:{port}/token", "client_id": "latchkey-desktop",
                   "redirect_uri": "https://latchkey.invalid/oauth2/callback", "scopes": ["openid"]}, f)
    app = home.launch("--provider-file", provider)
    try:
        app.wait_status("Not signed in")
        app.press(app.wait_sensitive("Sign in"))
        app.wait_status("is not secure: its certificate is not signed by an authority this computer trusts")
        app.wait_sensitive("Sign in", True)
        app.absent("entry", "Username")
        app.screenshot("01-certificate-refused")
    finally:
        app.quit()
        server.terminate()
        server.wait()


def web_process_crash(home):
    """The page's renderer dies mid-sign-in: a clear message, and the next sign-in works."""
    app = home.launch()
    try:
        app.wait_status("Not signed in")
        open_sign_in(app)
        killed = app.kill_web_processes("WebKitWebProces")  # /proc/*/comm keeps 15 characters
        expect(killed, "a web process was running")
        app.wait_status("stopped unexpectedly")
        app.wait_sensitive("Sign in", True)
        app.screenshot("01-renderer-crashed")
        expect(not os.path.exists(home.token_file), "nothing stored")
        sign_in(app, home)
        app.wait_status("Signed in with Sandbox provider")
        app.screenshot("02-signed-in-after-crash")
    finally:
        app.quit()


def sign_in_at_once(home):
    """Sign in pressed the moment it is enabled, several launches over: the
    sign-in library then loads on a worker thread while GTK's thread is still
    loading its icons. Opened with plain dlopen, libsoup's constructor and GTK's
    icon loader each held a lock the other waited for, and the window never came
    (about two launches in three hung within eight)."""
    for launch in range(8):
        app = home.launch()
        try:
            app.press(app.wait_sensitive("Sign in"))
            app.find("entry", "Username", timeout=30)
        finally:
            app.quit()


def expect_clean_exit(app, status):
    """Exit status 0, and not one GLib warning or crash report in the log."""
    expect(status == 0, f"the app ends with status 0 when its window closes, not {status}")
    with open(app.log_path, errors="replace") as log:
        text = log.read()
    for word in ("WARNING", "CRITICAL", "Fatal error", "crashed"):
        expect(word not in text, f"{word} in the log:\n{text[-2000:]}")


def close_button_quits(home):
    """Closing the main window ends the app cleanly, after a whole sign-in (so
    a sign-in window was built, shown and torn down): exit status 0 and not one
    GLib warning. The app runs with G_DEBUG=fatal-warnings, so a warning at
    teardown (a handler disconnected after its widget was destroyed) would end
    it with SIGTRAP instead."""
    app = home.launch()
    try:
        app.wait_status("Not signed in")
        sign_in(app, home)
        app.wait_status("Signed in with Sandbox provider")
        app.press(app.button("Get my profile"))
        app.wait_status("as Ada Lovelace")
        status = app.close_by_window_button()
    finally:
        app.quit()
    expect_clean_exit(app, status)


def close_button_quits_signed_out(home):
    """Closing the main window while signed out, with the next sign-in window
    prepared (its web process running) but never shown: the prepared window is
    released after GTK's loop has ended, and that too ends cleanly."""
    app = home.launch()
    try:
        app.wait_status("Not signed in")
        wait_until("the prepared sign-in's web process", app.web_processes, 30)
        status = app.close_by_window_button()
    finally:
        app.quit()
    expect_clean_exit(app, status)


def closed_at_launch(home):
    """The window closed the moment it shows "Not signed in", thirty launches over. Then the
    sign-in it prepares is still opening libcurl on a worker thread, and exit's clean-up
    (OpenSSL's, as its library unloads) freed the locks that thread was using: a launch in
    fifty or so ended with SIGSEGV instead of 0, and this scenario failed four runs in ten.
    The app now waits for that work, and stops any request under way, before it exits."""
    for launch in range(30):
        app = home.launch()
        try:
            app.wait_status("Not signed in")
            status = app.close_by_window_button()
        finally:
            app.quit()
        expect_clean_exit(app, status)


def sandbox_children(app):
    """The sandbox children of the app (`comm` is cut at 15 characters)."""
    return [pid for pid, command in descendants(app.process.pid).items() if command == "latchkey-sandbo"]


def sandbox_ends_with_the_app(home):
    """The sandbox child lives as long as the app and no longer: it ends when the window
    closes, and when the app is killed outright (its standard input, a pipe only the app
    holds, closes with it), with exactly its own two pipes and the app's standard error."""
    for ending in ("close", "kill"):
        app = home.launch()
        try:
            app.wait_status("Not signed in")
            children = sandbox_children(app)
            expect(len(children) == 1, f"one sandbox child: {children}")
            child = children[0]
            descriptors = sorted(int(fd) for fd in os.listdir(f"/proc/{child}/fd"))
            expect(descriptors[:3] == [0, 1, 2], f"the child has its standard streams: {descriptors}")
            inherited = [os.readlink(f"/proc/{child}/fd/{fd}") for fd in descriptors if fd > 2]
            expect(not any("pipe:" in target for target in inherited), f"no other pipe of the app's reaches the child: {inherited}")
            if ending == "close":
                expect_clean_exit(app, app.close_by_window_button())
            else:
                app.process.kill()
                app.process.wait(timeout=10)
            wait_until(f"the sandbox child to end after the app's {ending}", lambda: not os.path.exists(f"/proc/{child}/exe"), 15)
        finally:
            app.quit()


SCENARIOS = {
    "data_files": data_files,
    "happy_path": happy_path,
    "relaunch": relaunch,
    "deny": deny,
    "close_window": close_window,
    "sign_in_at_once": sign_in_at_once,
    "close_button_quits": close_button_quits,
    "close_button_quits_signed_out": close_button_quits_signed_out,
    "closed_at_launch": closed_at_launch,
    "sandbox_ends_with_the_app": sandbox_ends_with_the_app,
    "token_faults": token_faults,
    "short_lived_tokens": short_lived_tokens,
    "damaged_token_file": damaged_token_file,
    "bad_certificate": bad_certificate,
    "web_process_crash": web_process_crash,
}
