"""End-to-end: the real Secret Service (gnome-keyring-daemon in the scenario's
D-Bus session) — present, appearing between launches, and locked behind a
password prompt nobody answers."""

import json
import os
import stat
import subprocess
import time

from harness import BIN, admin, assert_no_secrets, expect, sandbox_url, sign_in, stored_token
from driver import Desktop, wait_until

KEYRING_PASSWORD = b"test-password"


def start_keyring(unlocked=True, replace=False):
    """Starts gnome-keyring-daemon's Secret Service in this D-Bus session.
    unlocked: the login keyring is created (or opened) with its password.
    replace: a new daemon takes over from the running one, reading the login
    keyring from disk — locked, as after a reboot."""
    if unlocked:
        unlock = subprocess.run(
            ["gnome-keyring-daemon", "--unlock", "--components=secrets"], input=KEYRING_PASSWORD,
            capture_output=True, timeout=20)
        expect(unlock.returncode == 0, f"keyring did not unlock: {unlock.stderr!r}")
    start = subprocess.run(
        ["gnome-keyring-daemon", "--replace" if replace else "--start", "--components=secrets"],
        capture_output=True, timeout=20)
    expect(start.returncode == 0, f"keyring did not start: {start.stderr!r}")
    for line in start.stdout.decode().splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            os.environ[key] = value


def keyring_item(provider="sandbox"):
    """The item Latchkey keeps in the keyring, as secret-tool reads it; None when there is none."""
    lookup = subprocess.run(
        ["secret-tool", "lookup", "application", "latchkey", "provider", provider], capture_output=True, timeout=20)
    return json.loads(lookup.stdout) if lookup.returncode == 0 and lookup.stdout else None


def keyring(home):
    """A real Secret Service in this D-Bus session: the token goes there, not to disk."""
    start_keyring()
    app = home.launch()
    try:
        app.wait_status("Not signed in")
        sign_in(app, home)
        app.wait_status("Signed in with Sandbox provider")
        expect("the keyring" in app.status(), f"the status names the keyring: {app.status()!r}")
        app.screenshot("01-signed-in-keyring")
        token = keyring_item()
        expect(token and token["access_token"].startswith("sbx_at_"), "the keyring holds the access token")
        expect(not os.path.exists(home.token_file), "and no token file exists")
        app.press(app.button("Sign out"))
        app.wait_status("Signed out")
        expect(keyring_item() is None, "sign-out removed the item")
        app.screenshot("02-signed-out")
    finally:
        app.quit()
    assert_no_secrets(home, [app.log_path], [token["access_token"], token["refresh_token"]])


def libsecret_loaded(app):
    with open(f"/proc/{app.process.pid}/maps") as maps:
        return "libsecret-1.so" in maps.read()


def keyring_appears(home):
    """Signed in while no keyring ran (libsecret never loaded); the next launch, with a keyring,
    finds that sign-in and moves it into the keyring; `latchkey --sign-out` typed while the
    window is open signs out in that window and revokes at the provider."""
    first = home.launch(log_name="first-run.log")
    try:
        first.wait_status("Not signed in")
        sign_in(first, home)
        first.wait_status("Signed in with Sandbox provider")
        expect("a private file" in first.status(), f"no keyring yet: the file: {first.status()!r}")
    finally:
        first.quit()
    in_file = stored_token(home)
    # Signed in, with no keyring running: the window reads its file and never loads libsecret (WebKitGTK
    # links it, so a launch that prepares a sign-in in the window has it all the same).
    again = home.launch(log_name="file-run.log")
    try:
        again.wait_status("Signed in with Sandbox provider")
        expect(not libsecret_loaded(again), "no keyring ran, so libsecret was never loaded")
    finally:
        again.quit()

    start_keyring()
    app = home.launch(log_name="second-run.log")
    try:
        app.wait_status("Signed in with Sandbox provider")
        expect("the keyring" in app.status(), f"the sign-in now lives in the keyring: {app.status()!r}")
        moved = keyring_item()
        expect(moved and moved["refresh_token"] == in_file["refresh_token"], "the file's sign-in is in the keyring")
        expect(not os.path.exists(home.token_file), "and the file is gone")
        expect(libsecret_loaded(app), "libsecret, loaded for the keyring")
        app.screenshot("01-moved-into-keyring")

        base = sandbox_url(app)
        command = subprocess.run(
            [os.path.join(BIN, "latchkey"), "--sign-out"], capture_output=True, text=True, timeout=60)
        expect(command.returncode == 0, f"--sign-out: exit {command.returncode}, {command.stderr!r}")
        expect("Latchkey is running" in command.stdout, f"--sign-out says the window does it: {command.stdout!r}")
        app.wait_status("Signed out of Sandbox provider")
        app.wait_sensitive("Sign in", True)
        expect(keyring_item() is None, "the keyring's item is gone")
        expect(not os.path.exists(home.token_file), "no file either")
        wait_until("the revocation to reach the provider",
                   lambda: admin(base, "/_admin/stats")["revocation_requests"] >= 1, 15)
        app.screenshot("02-signed-out-from-the-command-line")
    finally:
        app.quit()
    assert_no_secrets(home, [first.log_path, again.log_path, app.log_path], [in_file["access_token"], in_file["refresh_token"]])


def keyring_locked(home):
    """The login keyring is locked and its password prompt (gcr-prompter, on this
    display) goes unanswered: the sign-in does not hang. Past --keyring-timeout
    the tokens go to the 0600 file, the window says so, and the profile works.
    Answered late, the prompt lets the keyring take the sign-in after all, and
    the next launch keeps that one copy, in the keyring."""
    start_keyring()
    seed = subprocess.run(["secret-tool", "store", "--label=seed", "seed", "1"], input=b"x", capture_output=True, timeout=20)
    expect(seed.returncode == 0, f"the login keyring exists: {seed.stderr!r}")
    start_keyring(unlocked=False, replace=True)

    app = home.launch("--keyring-timeout", "8")
    try:
        app.wait_status("Not signed in", timeout=30)
        sign_in(app, home)
        # The window says what it waits for while it waits; the prompt stays open after.
        app.wait_status("Saving your sign-in")
        prompter = Desktop().application({"gcr-prompter"}, timeout=30)
        unlock = app.find("push button", "Unlock", root=prompter, timeout=30)
        app.screenshot("01-keyring-prompt-unanswered")
        app.wait_status("did not answer within 8 s", timeout=40)
        expect("kept in a private file" in app.status(), f"says where the tokens went: {app.status()!r}")
        app.screenshot("02-kept-in-file")
        mode = stat.S_IMODE(os.stat(home.token_file).st_mode)
        expect(mode == 0o600, f"token file mode {oct(mode)}")
        app.press(app.wait_sensitive("Get my profile", True))
        app.wait_status("as Ada Lovelace")
        token = stored_token(home)
        expect(keyring_item() is None, "the keyring has nothing yet")

        # The person comes back and answers the prompt.
        for entry in app.find_all("password text", root=prompter):
            entry.get_editable_text_iface().set_text_contents(KEYRING_PASSWORD.decode())
        app.press(unlock)
        late = wait_until("the keyring to take the sign-in", keyring_item, 30)
        expect(late["refresh_token"] == token["refresh_token"], "the same sign-in, late")
    finally:
        app.quit()

    again = home.launch("--keyring-timeout", "8", log_name="second-run.log")
    try:
        again.wait_status("Signed in with Sandbox provider", timeout=30)
        expect("the keyring" in again.status(), f"one copy, in the keyring: {again.status()!r}")
        expect(not os.path.exists(home.token_file), "the file copy is gone")
        again.screenshot("03-relaunched-keyring-copy")
    finally:
        again.quit()
    assert_no_secrets(home, [app.log_path, again.log_path], [token["access_token"], token["refresh_token"]])


def keyring_replaced(home):
    """The keyring daemon replaced under a running agent (a crash, a new login): the agent reaches the new
    daemon at its next read of the sign-in, and a program still gets its token. libsecret kept calling
    the old daemon's bus name, for good, and the agent took the sign-in for unreadable (found by make soak)."""
    from agent import Sandbox, allow_gdbus, gdbus, own_provider, signed_in
    start_keyring()
    sandbox = Sandbox()
    own_provider(home, sandbox)
    try:
        window = signed_in(home)
        window.quit()
        token = keyring_item("mine")
        expect(token is not None and not os.path.exists(os.path.join(home.state, "latchkey", "mine.json")), "the sign-in is in the keyring")
        allow_gdbus()
        first = gdbus("--method", "io.github.latchkey.Agent1.GetToken", "mine", "{}")
        expect(first.returncode == 0 and token["access_token"] in first.stdout, f"before: {first}")
        replaced = subprocess.run(["gnome-keyring-daemon", "--replace", "--unlock", "--components=secrets"], input=KEYRING_PASSWORD,
                                  capture_output=True, timeout=20)
        expect(replaced.returncode == 0, f"the keyring replaced: {replaced.stderr!r}")
        wait_until("the new keyring to hold the sign-in", lambda: keyring_item("mine") is not None, 20)
        time.sleep(1.5)  # past the agent's one second between reads of the store (a slower run only reads sooner)
        after = gdbus("--method", "io.github.latchkey.Agent1.GetToken", "mine", "{}")
        expect(after.returncode == 0 and token["access_token"] in after.stdout, f"after the keyring was replaced: {after}")
        # A renewal: its tokens go to the new keyring (not to a file, as when the old daemon was still called).
        renewed = gdbus("--method", "io.github.latchkey.Agent1.GetToken", "mine", "{'min-valid': <-1>}")
        expect(renewed.returncode == 0 and token["access_token"] not in renewed.stdout, f"renewed: {renewed}")
        kept = keyring_item("mine")
        expect(kept is not None and kept["access_token"] in renewed.stdout, "the new keyring holds the renewed sign-in")
        expect(not os.path.exists(os.path.join(home.state, "latchkey", "mine.json")), "the renewed sign-in went to a file")
        log = open(os.path.join(home.root, "agent.log")).read()
        expect("unreadable" not in log and "did not answer" not in log, "the agent could not read the keyring")
    finally:
        sandbox.stop()
    assert_no_secrets(home, [os.path.join(home.root, "agent.log")], [token["access_token"], token["refresh_token"]])


SCENARIOS = {"keyring_replaced": keyring_replaced, "keyring": keyring, "keyring_appears": keyring_appears, "keyring_locked": keyring_locked}
