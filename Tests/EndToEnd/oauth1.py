"""OAuth 1.0a through the same window: the sandbox's OAuth 1.0a provider chosen
in the provider list, its page in the embedded view, the verifier caught in
decide-policy, and the three buttons; Deny and a closed sign-in window."""

import json
import os
import stat

from driver import wait_until
from harness import assert_no_secrets, expect, open_sign_in, sandbox_url, sign_in
import desktop

NAME = "Sandbox provider, OAuth 1.0a (offline demo)"


def token_file(home):
    return os.path.join(home.state, "latchkey", "sandbox-oauth1.json")


def choose(app):
    app.wait_status("Not signed in")
    desktop.choose_provider(app, NAME)
    app.wait_status(f"Not signed in. Sign in with {NAME}")


def oauth1_three_buttons(home):
    app = home.launch()
    try:
        choose(app)
        app.screenshot("01-oauth1-chosen")
        sign_in(app, home, shot_prefix="02")
        app.wait_status(f"Signed in with {NAME}")
        app.wait_sensitive("Get my profile", True)
        app.screenshot("03-signed-in")
        with open(token_file(home)) as f:
            token = json.load(f)
        expect(token.get("token_type") == "OAuth1" and token.get("token_secret"), "token credentials are kept with their secret")
        expect("expires_at" not in token and "refresh_token" not in token, "OAuth 1.0a tokens neither expire nor refresh")
        expect(stat.S_IMODE(os.stat(token_file(home)).st_mode) == 0o600, "the token file is 0600")

        base = sandbox_url(app)
        app.press(app.button("Get my profile"))
        app.wait_status("as Ada Lovelace")
        app.find("label", "ada@sandbox.example")
        open_profile = app.button("Open profile")
        url = open_profile.get_description()
        expect(url == f"{base}/in/ada", f"Open profile shows the profile URL, got {url!r}")
        app.screenshot("04-profile")
        app.press(open_profile)
        wait_until("the browser to be asked", lambda: home.opened_urls(), 10)
        expect(home.opened_urls() == [url], f"the recording browser got exactly the URL: {home.opened_urls()!r}")
    finally:
        app.quit()

    # The next launch: the same provider, still signed in (the sandbox kept the grant), the profile signed anew.
    again = home.launch(log_name="latchkey-2.log")
    try:
        again.wait_status(f"Signed in with {NAME}")
        again.press(again.button("Get my profile"))
        again.wait_status("as Ada Lovelace")
        again.screenshot("05-relaunched-profile")
        again.press(again.wait_sensitive("Sign out"))
        again.wait_status("Signed out")
        again.wait_sensitive("Sign in", True)
        wait_until("the token file to go", lambda: not os.path.exists(token_file(home)), 10)
        again.screenshot("06-signed-out")
    finally:
        again.quit()
    assert_no_secrets(home, [app.log_path, again.log_path],
                      [token["access_token"], token["token_secret"], "sandbox-oauth1-secret"])


def oauth1_deny(home):
    app = home.launch()
    try:
        choose(app)
        sign_in(app, home, shot_prefix="01", action="Deny")
        app.wait_status("Sign-in cancelled.")
        app.wait_sensitive("Sign in", True)
        expect(not app.sensitive(app.button("Get my profile")), "Get my profile stays disabled")
        app.screenshot("02-cancelled")
        expect(not os.path.exists(token_file(home)), "nothing stored")
    finally:
        app.quit()
    assert_no_secrets(home, [app.log_path], ["sandbox-oauth1-secret"])


def oauth1_close_window(home):
    app = home.launch()
    try:
        choose(app)
        open_sign_in(app)
        sign_in_window = app.find({"frame", "dialog", "window"}, f"Sign in to {NAME}")
        app.screenshot("01-sign-in-window")
        app.press(app.button("Close", root=sign_in_window))
        app.wait_status("Sign-in cancelled.")
        app.wait_sensitive("Sign in", True)
        app.absent("entry", "Username")
        expect(not os.path.exists(token_file(home)), "nothing stored")
        # And a sign-in after that one works: the request token of the closed one is simply never used.
        sign_in(app, home)
        app.wait_status(f"Signed in with {NAME}")
        app.screenshot("02-signed-in-after-closing")
    finally:
        app.quit()


def oauth1_browser(home):
    """The same provider through GNOME Web: the callback reaches the loopback listener,
    which takes it only because it names this sign-in's request token."""
    browser = desktop.Epiphany(home)
    app = home.launch()
    try:
        choose(app)
        desktop.choose_user_agent(app, "In your browser")
        app.press(app.wait_sensitive("Sign in"))
        app.wait_status("Continue in your browser")
        desktop.allow_in_browser(app, browser)
        app.wait_status(f"Signed in with {NAME}")
        app.press(app.button("Get my profile"))
        app.wait_status("as Ada Lovelace")
        app.screenshot("01-signed-in-through-the-browser")
    finally:
        browser.quit()
        app.quit()
    assert_no_secrets(home, [app.log_path], ["sandbox-oauth1-secret"])


SCENARIOS = {
    "oauth1_browser": oauth1_browser,
    "oauth1_three_buttons": oauth1_three_buttons,
    "oauth1_deny": oauth1_deny,
    "oauth1_close_window": oauth1_close_window,
}
