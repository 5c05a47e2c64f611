#!/usr/bin/python3
"""End-to-end scenarios for the real latchkey binary under Xvfb.

Run all:        Tests/EndToEnd/run.sh
One scenario:   Tests/EndToEnd/run.sh happy_path

Each scenario runs in its own D-Bus session (with the accessibility bus) and
its own home directory; the default browser is a recording handler registered
the way the desktop registers any browser. Screenshots of every state land in
test-output/e2e/<scenario>/.
"""

import glob
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
import traceback
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import Failure, Latchkey, wait_until  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("LATCHKEY_BIN_DIR", os.path.join(ROOT, ".build", "debug"))
OUTPUT = os.path.join(ROOT, "test-output", "e2e")


def expect(condition, message):
    if not condition:
        raise Failure(message)


class Home:
    """A private home: XDG directories, and a recording default browser."""

    def __init__(self, scenario, fresh=True):
        self.root = os.path.join(OUTPUT, scenario)
        if fresh:
            shutil.rmtree(self.root, ignore_errors=True)
        self.shots = self.root
        self.home = os.path.join(self.root, "home")
        self.config = os.path.join(self.home, ".config")
        self.data = os.path.join(self.home, ".local", "share")
        self.state = os.path.join(self.home, ".local", "state")
        self.runtime = os.path.join(self.root, "runtime")
        for directory in (self.config, self.data, self.state, self.runtime, os.path.join(self.home, "bin")):
            os.makedirs(directory, exist_ok=True)
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

    def launch(self, *args, log_name="latchkey.log"):
        return Latchkey(os.path.join(BIN, "latchkey"), self.root, self.shots, args=args, log_name=log_name)


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


def open_sign_in(app):
    """Presses Sign in and waits for the page's Username field; returns it."""
    app.press(app.wait_sensitive("Sign in"))
    return app.find("entry", "Username", timeout=30)


def sign_in(app, home, shot_prefix=None, action="Allow", password="engine"):
    """Sign in → the sandbox's page in the embedded view → credentials → Allow or Deny."""
    username = open_sign_in(app)
    if shot_prefix:
        app.screenshot(f"{shot_prefix}-sign-in-page")
    app.type_into(username, "ada")
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
        idle = app.loaded_libraries("libwebkit2gtk", "libcurl")
        expect(idle == [], f"signed in and idle, neither WebKit nor libcurl is loaded: {idle}")
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
        time.sleep(1)
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
    expect(status == 0, f"the app ends with status 0 when its window closes, not {status}")
    with open(app.log_path, errors="replace") as log:
        text = log.read()
    for word in ("WARNING", "CRITICAL", "Fatal error"):
        expect(word not in text, f"{word} in the log:\n{text[-2000:]}")


SCENARIOS = {
    "data_files": data_files,
    "happy_path": happy_path,
    "relaunch": relaunch,
    "deny": deny,
    "close_window": close_window,
    "sign_in_at_once": sign_in_at_once,
    "close_button_quits": close_button_quits,
    "token_faults": token_faults,
    "short_lived_tokens": short_lived_tokens,
    "damaged_token_file": damaged_token_file,
    "bad_certificate": bad_certificate,
    "web_process_crash": web_process_crash,
}


def session_config(home):
    """A D-Bus session that can start the accessibility bus and nothing else:
    no portal, no keyring by activation. A scenario that wants a keyring starts
    one itself."""
    services = os.path.join(home.root, "dbus-services")
    os.makedirs(services, exist_ok=True)
    # The keyring's password prompt (gcr-prompter) too: it shows only when a
    # scenario's keyring is locked, and it is what a desktop would show.
    for service in glob.glob("/usr/share/dbus-1/services/org.a11y.*.service") + [
            "/usr/share/dbus-1/services/org.gnome.keyring.SystemPrompter.service"]:
        shutil.copy(service, services)
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


def run_one(name):
    """Inside the scenario's D-Bus session: run it; the exit status says how it went."""
    home = Home(name, fresh=False)
    try:
        SCENARIOS[name](home)
    except Exception:
        traceback.print_exc()
        return 1
    return 0


def run_all(names):
    passed, failed = [], []
    for name in names:
        started = time.monotonic()
        home = Home(name)
        result = subprocess.run(
            ["dbus-run-session", f"--config-file={session_config(home)}", "--", sys.executable, __file__, "--inside", name],
            env=os.environ)
        elapsed = time.monotonic() - started
        (passed if result.returncode == 0 else failed).append(name)
        print(f"{'PASS' if result.returncode == 0 else 'FAIL'} {name} ({elapsed:.1f} s)", flush=True)
    print(f"end-to-end: {len(passed)} passed, {len(failed)} failed")
    return 0 if not failed else 1


if __name__ == "__main__":
    # Scenarios of other files import this one's helpers, so they join here, once it has run.
    import command_line  # noqa: E402
    import hostile  # noqa: E402
    import keyrings  # noqa: E402
    import presets  # noqa: E402

    SCENARIOS.update(presets.SCENARIOS)
    SCENARIOS.update(command_line.SCENARIOS)
    SCENARIOS.update(hostile.SCENARIOS)
    SCENARIOS.update(keyrings.SCENARIOS)
    if len(sys.argv) > 2 and sys.argv[1] == "--inside":
        sys.exit(run_one(sys.argv[2]))
    sys.exit(run_all(sys.argv[1:] or list(SCENARIOS)))
