"""End-to-end: each shipped preset through the window, against the sandbox
behaving like that preset's provider (latchkey-sandbox --behave-like).

The preset is used as it ships. Only its hosts move, through the same user file
a person writes (~/.config/latchkey/<id>.json): every endpoint keeps its path on
the sandbox's origin, and the client id and secret are the sandbox's.
"""

import contextlib
import json
import os
import subprocess

from harness import BIN, ROOT, admin, assert_no_secrets, expect, open_sign_in, sign_in
from driver import wait_until

CONFIDENTIAL = {"client_id": "latchkey-confidential", "client_secret": "sandbox-secret"}
PUBLIC = {"client_id": "latchkey-desktop"}

# preset id → (client, name shown after Get my profile, profile URL path or None, what the window says instead)
PRESETS = {
    "linkedin": (CONFIDENTIAL, "Ada Lovelace", None, "r_basicprofile"),
    "github": (CONFIDENTIAL, "Ada Lovelace", "/ada", None),
    "gitlab": (PUBLIC, "Ada Lovelace", "/ada", None),
    "microsoft": (PUBLIC, "Ada Lovelace", None, "no public profile page"),
}


def rehosted(preset, base):
    """The user file that moves a preset's endpoints to `base`, paths kept."""
    def move(url):
        if not isinstance(url, str) or "://" not in url:
            return None
        rest = url.split("://", 1)[1]
        return base + (rest[rest.index("/"):] if "/" in rest else "")

    user = {}
    for key in ("issuer", "id_token_issuer", "authorization_endpoint", "token_endpoint", "revocation_endpoint",
                "userinfo_endpoint", "jwks_uri"):
        moved = move(preset.get(key))
        if moved:
            user[key] = moved
    moved = move(preset.get("profile", {}).get("url_template_endpoint"))
    if moved:
        user["profile"] = {"url_template_endpoint": moved}
    return user


def start_sandbox(home, provider, *extra):
    log = open(os.path.join(home.root, "sandbox.log"), "wb")
    sandbox = subprocess.Popen(
        [os.path.join(BIN, "latchkey-sandbox"), "--port", "0", "--behave-like", provider, "--exit-with-stdin", *extra],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)
    line = sandbox.stdout.readline().decode()
    expect(line.startswith("listening http://127.0.0.1:"), f"the sandbox did not start: {line!r}")
    return sandbox, line.split()[1], log


@contextlib.contextmanager
def sandbox_running(home, provider, *extra):
    """A sandbox behaving like `provider` for the block; yields its base URL, and stops it after."""
    sandbox, base, log = start_sandbox(home, provider, *extra)
    try:
        yield base
    finally:
        sandbox.stdin.close()
        sandbox.wait(timeout=10)
        log.close()


def preset_scenario(preset_id):
    client, name, profile_path, instead = PRESETS[preset_id]

    def scenario(home):
        with open(os.path.join(ROOT, "data", "providers", f"{preset_id}.json")) as f:
            preset = json.load(f)
        display = preset["display_name"]
        sandbox, base, log = start_sandbox(home, preset_id)
        os.makedirs(os.path.join(home.config, "latchkey"), exist_ok=True)
        user_file = dict(rehosted(preset, base), **client)
        with open(os.path.join(home.config, "latchkey", f"{preset_id}.json"), "w") as f:
            json.dump(user_file, f, indent=2)
        token_file = os.path.join(home.state, "latchkey", f"{preset_id}.json")
        app = home.launch("--provider", preset_id)
        try:
            app.wait_status(f"Not signed in. Sign in with {display}")
            app.screenshot("01-signed-out")

            # Cancel at the provider: its own cancel error ends as a cancel.
            sign_in(app, home, shot_prefix="02", action="Deny")
            app.wait_status("Sign-in cancelled.")
            app.wait_sensitive("Sign in", True)
            expect(not os.path.exists(token_file), "nothing stored after Deny")
            app.screenshot("03-cancelled")

            # Cancel in the window, before the provider answers.
            open_sign_in(app)
            window = app.find({"frame", "dialog", "window"}, f"Sign in to {display}", newest=True)
            app.press(app.button("Cancel", root=window))
            app.wait_status("Sign-in cancelled.")
            app.absent("entry", "Username")

            sign_in(app, home)
            app.wait_status(f"Signed in with {display}")
            app.wait_sensitive("Get my profile", True)
            app.screenshot("04-signed-in")
            with open(token_file) as f:
                token = json.load(f)

            app.press(app.button("Get my profile"))
            app.wait_status(f"as {name}")
            app.find("label", name)
            if profile_path:
                open_profile = app.button("Open profile")
                url = open_profile.get_description()
                expect(url == base + profile_path, f"Open profile shows {base + profile_path}, got {url!r}")
                app.screenshot("05-profile")
                app.press(open_profile)
                wait_until("the browser to be asked", lambda: home.opened_urls(), 10)
                expect(home.opened_urls() == [url], f"the browser got exactly the URL: {home.opened_urls()!r}")
            else:
                app.absent("push button", "Open profile")
                app.find("label", instead, exact=False)
                app.screenshot("05-profile-without-link")
            stats = admin(base, "/_admin/stats")
            expect(stats["authorization_code_grants"] == 1, f"one code exchange: {stats}")
        finally:
            app.quit()
            sandbox.stdin.close()
            sandbox.wait(timeout=10)
            log.close()
        secrets = [token["access_token"]] + ([token["refresh_token"]] if token.get("refresh_token") else [])
        assert_no_secrets(home, [app.log_path, os.path.join(home.root, "sandbox.log")],
                          secrets + [client.get("client_secret", "sandbox-secret")])

    scenario.__name__ = f"preset_{preset_id}"
    return scenario


SCENARIOS = {f"preset_{preset_id}": preset_scenario(preset_id) for preset_id in PRESETS}
