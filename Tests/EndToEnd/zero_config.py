"""Zero configuration: from a protected URL to a token, with no client id
configured anywhere (RFC 9728 → RFC 8414 → RFC 7591 → RFC 8707), and
`latchkey token` in a script beside the running window."""

import glob
import json
import os
import subprocess
import time
import urllib.error
import urllib.request

import presets
from driver import wait_until
from harness import BIN, admin, assert_no_secrets, expect, sign_in


def token_command(*args, timeout=120):
    """`latchkey token …` as a script runs it: stdout and stderr apart."""
    return subprocess.run(
        [os.path.join(BIN, "latchkey"), "token", *args], capture_output=True, text=True, timeout=timeout)


def resource_answer(url, token):
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read().decode())
    except urllib.error.HTTPError as error:
        return error.code, None


def no_client_id_configured(home):
    directory = os.path.join(home.config, "latchkey")
    return not os.path.isdir(directory) or not os.listdir(directory)


def token_for_resource(home):
    """`latchkey token --resource <sandbox>/api/me` from a clean state: Latchkey finds the
    resource's server, registers itself, opens the sign-in window, and prints a token
    the resource accepts — and the next run prints one without any window."""
    with presets.sandbox_running(home, "standard") as base:
        resource = base + "/api/me"
        expect(no_client_id_configured(home), "the home starts with no provider configured")
        # Without a sign-in and with --provider, nothing opens: a sentence and exit status 3.
        refused = token_command("--provider", "github")
        expect(refused.returncode == 1 and refused.stdout == "" and "no client id" in refused.stderr,
               f"an unconfigured provider: {refused.returncode} {refused.stderr!r}")

        out = os.path.join(home.root, "token.out")
        app = home.launch("--resource", resource, command=("token",), stdout_path=out, log_name="token.log")
        try:
            username = app.find("entry", "Username", timeout=60)
            frame = app.find("frame", f"Sign in to Who am I ({base.split('//')[1]})")
            expect(frame is not None, "the sign-in window names the resource")
            app.screenshot("token-sign-in-window")
            app.type_into(username, "ada")
            app.type_into(app.find("password text", "Password"), "engine")
            app.press(app.button("Allow"))
            status = app.process.wait(60)
        finally:
            app.quit()
        with open(out) as f:
            printed = f.read()
        expect(status == 0, f"latchkey token ended with {status}")
        expect(printed.endswith("\n") and printed.count("\n") == 1, f"stdout is the token and one newline: {len(printed)} chars")
        token = printed.strip()
        code, answer = resource_answer(resource, token)
        expect(code == 200 and answer["username"] == "ada", f"the resource accepts the token: {code} {answer}")
        code, _ = resource_answer(base + "/api/notes", token)
        expect(code == 401, f"the resource beside it does not: {code}")

        registered = admin(base, "/_admin/stats")["registrations"]
        expect(registered == 1, f"Latchkey registered once: {registered}")

        # Again, as a script: no window (no display even), the same sign-in, no second registration.
        again = subprocess.run(
            [os.path.join(BIN, "latchkey"), "token", "--resource", resource], capture_output=True, text=True, timeout=60,
            env={k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")})
        expect(again.returncode == 0 and again.stderr == "", f"the second run: {again.returncode} {again.stderr!r}")
        expect(resource_answer(resource, again.stdout.strip())[0] == 200, "its token is accepted too")
        expect(admin(base, "/_admin/stats")["registrations"] == 1, "no second registration")

        status = subprocess.run([os.path.join(BIN, "latchkey"), "status"], capture_output=True, text=True, timeout=60)
        expect(status.returncode == 0, f"status: {status.stderr!r}")
        line = next((l for l in status.stdout.splitlines() if "Who am I" in l), "")
        expect("signed in; access token expires" in line, f"status lists the resource's sign-in: {line!r}")
        expect(token not in status.stdout and again.stdout.strip() not in status.stdout, "status shows no token")
        with open(os.path.join(home.root, "status.txt"), "w") as f:
            f.write(status.stdout)

        # A server that forgot Latchkey: a new registration, then (signed out) the window again, closed by the person.
        admin(base, "/_admin/clients", method="DELETE")
        for name in os.listdir(os.path.join(home.state, "latchkey")):
            if name.startswith("127-0-0-1") and name.endswith(".json"):
                os.remove(os.path.join(home.state, "latchkey", name))
        app = home.launch("--resource", resource, command=("token",), stdout_path=out, log_name="token-closed.log")
        try:
            app.find("entry", "Username", timeout=60)
            app.close_by_window_button(title=f"Sign in to Who am I ({base.split('//')[1]})")
            status = app.process.returncode
        finally:
            app.quit()
        expect(status == 4, f"a closed sign-in window ends with status 4: {status}")
        expect(open(out).read() == "", "and prints no token")
        expect(admin(base, "/_admin/stats")["registrations"] == 2, "the forgotten client was registered again")
    assert_no_secrets(home, [os.path.join(home.root, "token.log"), os.path.join(home.root, "token-closed.log")],
                      extra=[token])


def token_while_app_runs(home):
    """The window signed in to a resource, and a script asking `latchkey token` meanwhile:
    short-lived tokens, so the script renews the sign-in once the token is past half its life;
    the window then renews from what the script stored, never replaying the rotated refresh
    token (which would end the grant)."""
    with presets.sandbox_running(home, "standard", "--access-token-ttl", "6") as base:
        resource = base + "/api/me"
        app = home.launch("--resource", resource)
        try:
            app.wait_status("Not signed in. Sign in with Who am I")
            app.screenshot("resource-in-window")
            sign_in(app, home)
            app.wait_status("Signed in with Who am I")
            stored_file = glob.glob(os.path.join(home.state, "latchkey", "*.json"))[0]
            with open(stored_file) as f:
                signed_in = json.load(f)
            # A token is renewed once half its life is gone (not at every use): wait for that moment.
            half_life = (signed_in["received_at"] + signed_in["expires_at"]) / 2
            wait_until("the window's token past half its life", lambda: time.time() > half_life + 0.2, 10)
            tokens = []
            for _ in range(2):
                run = token_command("--resource", resource)
                expect(run.returncode == 0, f"latchkey token beside the window: {run.returncode} {run.stderr!r}")
                tokens.append(run.stdout.strip())
                expect(resource_answer(resource, run.stdout.strip())[0] == 200, "the script's token is accepted")
            expect(tokens[0] != signed_in["access_token"], "the script renewed the window's sign-in")
            expect(admin(base, "/_admin/stats")["refresh_grants"] >= 1, "renewed by the script")
            # The window renews from the store the script wrote: the grant stays alive.
            app.press(app.wait_sensitive("Get my profile"))
            app.wait_status("Ada Lovelace", timeout=30)
            app.screenshot("profile-after-script")
            run = token_command("--resource", resource)
            expect(run.returncode == 0, f"and the script still gets tokens: {run.stderr!r}")
        finally:
            app.quit()
    assert_no_secrets(home, [app.log_path], extra=tokens)


def issuer_alone(home):
    """`latchkey --issuer URL`: discovered, registered, signed in — the provider file names
    only the issuer and the client. Then offline (the server gone): the kept discovery
    document still makes the provider, the window shows the sign-in, and `latchkey token`
    prints the stored token. (A document the server says to keep for no time at all, so
    that every use asks again and the offline run must fall back on the stale copy.)"""
    with presets.sandbox_running(home, "standard", "--discovery-max-age", "0") as base:
        host = base.split("://", 1)[1]
        provider_id = host.replace(".", "-").replace(":", "-")
        app = home.launch("--issuer", base)
        try:
            app.wait_status(f"Not signed in. Sign in with {host}")
            sign_in(app, home)
            app.wait_status(f"Signed in with {host}")
            app.screenshot("issuer-signed-in")
            # The server forgets Latchkey while the window is open: the next Sign in registers again first.
            admin(base, "/_admin/clients", method="DELETE")
            app.press(app.wait_sensitive("Sign out"))
            # Signed out here; the server could not revoke what it no longer knows, and the status says so.
            app.wait_sensitive("Sign in")
            app.screenshot("issuer-signed-out-forgotten")
            sign_in(app, home)
            app.wait_status(f"Signed in with {host}")
            app.press(app.wait_sensitive("Get my profile"))
            app.wait_status("Ada Lovelace", timeout=30)
        finally:
            app.quit()
        stats = admin(base, "/_admin/stats")
        expect(stats["registrations"] == 2, f"registered again after the server forgot: {stats}")
        expect(stats["discovery_not_modified"] >= 1, f"the kept copy was confirmed with a conditional request: {stats}")
        with open(os.path.join(home.config, "latchkey", f"{provider_id}.json")) as f:
            saved = json.load(f)
        expect(saved["issuer"] == base and "authorization_endpoint" not in saved and saved["client_id"].startswith("sbx_client_"),
               f"the file names the issuer and the client: {sorted(saved)}")
        online = token_command("--provider", provider_id)
        expect(online.returncode == 0, f"a token while online: {online.returncode} {online.stderr!r}")
        # `latchkey status` reads what is kept and asks no provider anything, not even a stale document's server.
        asked = admin(base, "/_admin/stats")
        status = subprocess.run(
            [os.path.join(BIN, "latchkey"), "status"], capture_output=True, text=True, timeout=120)
        line = next((l for l in status.stdout.splitlines() if l.startswith(provider_id + " ")), "")
        expect(status.returncode == 0 and "signed in" in line, f"status lists the sign-in: {status.stdout!r} {status.stderr!r}")
        now = admin(base, "/_admin/stats")
        expect((now["discovery_requests"], now["discovery_not_modified"]) == (asked["discovery_requests"], asked["discovery_not_modified"]),
               f"latchkey status asked the provider for its discovery document: {asked} then {now}")
    # The sandbox is gone: nothing answers at its address.
    app = home.launch("--provider", provider_id, log_name="offline.log")
    try:
        app.wait_status(f"Signed in with {host}")
        app.screenshot("issuer-offline-signed-in")
    finally:
        app.quit()
    with open(app.log_path) as f:
        expect("Discovery document kept from before" in f.read(), "the window said it used the kept document")
    offline = token_command("--provider", provider_id)
    expect(offline.returncode == 0 and offline.stdout.strip() == online.stdout.strip(),
           f"offline, latchkey token prints the stored token: {offline.returncode} {offline.stderr!r}")
    assert_no_secrets(home, [app.log_path], extra=[online.stdout.strip()])


SCENARIOS = {
    "issuer_alone": issuer_alone,
    "token_for_resource": token_for_resource,
    "token_while_app_runs": token_while_app_runs,
}
