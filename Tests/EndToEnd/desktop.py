"""The desktop user's scenarios: providers chosen in the window, and sign-in
through the system browser — GNOME Web as the session's default browser,
driven through AT-SPI like the embedded view — with its loopback listener."""

import contextlib
import http.client
import http.server
import json
import os
import re
import shutil
import subprocess
import threading
import time
import urllib.parse
import urllib.request

from gi.repository import Atspi

from driver import Desktop, Latchkey, descendants, is_, name, role, wait_until, walk
from harness import BIN, RESOURCE_CHOICE, ROOT, admin, assert_no_secrets, expect, sign_in, stored_token
import presets


def choose_provider(app, display_name):
    """Picks a provider from the window's list, as a screen reader would."""
    combo = app.find("combo box", "Provider")
    item = app.find("menu item", display_name, root=combo, showing=False)
    # The combo box's own selection (GTK sets the active entry), as Orca does it.
    expect(Atspi.Selection.select_child(combo, item.get_index_in_parent()), f"{display_name!r} could not be chosen")


def choose_user_agent(app, label):
    radio = app.find("radio button", label)
    app.press(radio)
    wait_until(f"{label!r} chosen", lambda: is_(radio, Atspi.StateType.CHECKED), 5)


def allow_in_browser(app, browser, user="ada", password="engine"):
    """The sandbox's page in GNOME Web: signed in to and allowed, until the listener's answer page shows."""
    page = browser.page("Sign in – Latchkey Sandbox")
    app.type_into(app.find("entry", "Username", root=page), user)
    app.type_into(app.find("password text", "Password", root=page), password)
    app.press(app.find("push button", "Allow", root=page))
    browser.page("Answer received · Latchkey")


def own_provider_file(home, provider_id, display_name, base):
    """A whole provider of the person's own, in their config directory, on a sandbox at base."""
    directory = os.path.join(home.config, "latchkey")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, f"{provider_id}.json"), "w") as f:
        f.write(f"""{{"id": "{provider_id}", "display_name": "{display_name}", "issuer": "{base}",
  "authorization_endpoint": "/authorize", "token_endpoint": "/token", "userinfo_endpoint": "/userinfo",
  "client_id": "latchkey-desktop", "redirect_uri": "http://127.0.0.1/callback", "scopes": ["openid", "profile"],
  "profile": {{"name": "name", "email": "email", "url": "profile"}}}}""")


def switch_providers(home):
    """Two providers with their own sign-ins, a preset not set up, and the choice remembered."""
    with presets.sandbox_running(home, "standard") as base:
        own_provider_file(home, "second", "Second sandbox", base)
        app = home.launch()
        try:
            app.wait_status("Not signed in")
            sign_in(app, home, shot_prefix="01")
            app.wait_status("Signed in with Sandbox provider")

            choose_provider(app, "Second sandbox")
            app.wait_status("Not signed in. Sign in with Second sandbox")
            app.find("label", "Not signed in")
            app.screenshot("02-second-provider-signed-out")

            choose_provider(app, "GitHub")
            app.wait_status("there is no client id for GitHub")
            expect("~/.config/latchkey/github.json" in app.status(), f"the status says where: {app.status()!r}")
            app.absent("push button", "Sign in")
            app.wait_sensitive("Set up…", True)
            app.find("label", "GitHub is not ready")
            app.screenshot("03-github-not-set-up")

            choose_provider(app, "Sandbox provider (offline demo)")
            app.wait_status("Signed in with Sandbox provider")
            app.wait_sensitive("Get my profile", True)
            app.screenshot("04-back-to-the-sandbox-still-signed-in")

            choose_provider(app, "Second sandbox")
            app.wait_status("Not signed in. Sign in with Second sandbox")
        finally:
            app.quit()

        # The next launch shows the provider last chosen.
        app = home.launch(log_name="latchkey-2.log")
        try:
            app.wait_status("Not signed in. Sign in with Second sandbox")
            app.screenshot("05-relaunch-remembers")
            sign_in(app, home)
            app.wait_status("Signed in with Second sandbox")
        finally:
            app.quit()
        token = stored_token(home)
    assert_no_secrets(home, [os.path.join(home.root, "latchkey.log"), os.path.join(home.root, "latchkey-2.log")],
                      [token["access_token"]])


def sign_out_names_its_provider(home):
    """`latchkey --sign-out` looked while the window showed one provider, and the person
    switched before the command arrived: the activation carries the provider it meant,
    which is signed out, and the provider now shown keeps its sign-in."""
    with presets.sandbox_running(home, "standard") as base:
        own_provider_file(home, "second", "Second sandbox", base)
        second_token = os.path.join(home.state, "latchkey", "second.json")
        app = home.launch()
        try:
            app.wait_status("Not signed in")
            choose_provider(app, "Second sandbox")
            app.wait_status("Not signed in. Sign in with Second sandbox")
            sign_in(app, home)
            app.wait_status("Signed in with Second sandbox")
            choose_provider(app, "Sandbox provider (offline demo)")
            app.wait_status("Not signed in. Sign in with Sandbox provider")
            sign_in(app, home)
            app.wait_status("Signed in with Sandbox provider")
            expect(os.path.exists(second_token) and os.path.exists(home.token_file), "both sign-ins are stored")
            # What the command sends, as it arrives after the switch.
            activate = subprocess.run(
                ["gdbus", "call", "--session", "--dest", "io.github.latchkey.Latchkey", "--object-path",
                 "/io/github/latchkey/Latchkey", "--method", "org.gtk.Actions.Activate", "sign-out", "[<'second'>]", "{}"],
                capture_output=True, text=True, timeout=20)
            expect(activate.returncode == 0, f"the action was activated: {activate.stderr!r}")
            wait_until("the second provider's sign-in to go", lambda: not os.path.exists(second_token), 20)
            expect(os.path.exists(home.token_file), "the sandbox's sign-in is kept")
            app.wait_status("Signed in with Sandbox provider")
            app.wait_sensitive("Get my profile", True)
            choose_provider(app, "Second sandbox")
            app.wait_status("Not signed in. Sign in with Second sandbox")
        finally:
            app.quit()
    assert_no_secrets(home, [app.log_path])


# Where a provider's metadata is looked for (RFC 8414, OpenID Connect Discovery).
DISCOVERY = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")


class HoldingProxy:
    """A provider's server in front of a sandbox, whose answers to one path the test can hold: each
    request for it waits until released, one by one. The sandbox's own address is written as the
    proxy's in what it answers (its discovery document names its endpoints), and discovery is
    answered as never fresh, so that every launch asks for it again."""

    def __init__(self, upstream):
        self.upstream = urllib.parse.urlsplit(upstream)
        self.held_paths, self.waiting, self.lock = (), [], threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def forward(self):
                path = self.path.split("?")[0]
                if path in proxy.held_paths:
                    gate = threading.Event()
                    with proxy.lock:
                        proxy.waiting.append(gate)
                    gate.wait(60)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                upstream = http.client.HTTPConnection(proxy.upstream.hostname, proxy.upstream.port, timeout=30)
                upstream.request(self.command, self.path, body=body or None, headers=headers)
                answer = upstream.getresponse()
                # Bytes kept as they are where they are not text (surrogateescape).
                data = proxy.rewrite(answer.read().decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in ("content-length", "transfer-encoding", "connection", "cache-control", "etag",
                                           "last-modified"):
                        self.send_header(key, proxy.rewrite(value))
                if path in DISCOVERY:
                    self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                upstream.close()

            do_GET = do_POST = forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.upstream_base = f"{self.upstream.scheme}://{self.upstream.netloc}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def rewrite(self, text):
        """The sandbox's address as the proxy's, written out or URL-encoded (a redirect's `iss`)."""
        for theirs, ours in ((self.upstream_base, self.base), (urllib.parse.quote(self.upstream_base, safe=""),
                                                             urllib.parse.quote(self.base, safe=""))):
            text = text.replace(theirs, ours)
        return text

    def hold(self, *paths):
        self.held_paths = paths

    def held(self):
        with self.lock:
            return len(self.waiting)

    def release_first(self):
        with self.lock:
            self.waiting.pop(0).set()

    def release_all(self):
        self.held_paths = ()
        with self.lock:
            for gate in self.waiting:
                gate.set()
            self.waiting.clear()

    def close(self):
        self.release_all()
        self.server.shutdown()
        self.server.server_close()


def held_provider(home, proxy):
    """Provider `held` ("Held sandbox") behind the proxy, named by its issuer alone: its endpoints come
    from its discovery document, asked for at every launch (and so held when the test holds it).
    Returns where its sign-in is stored."""
    directory = os.path.join(home.config, "latchkey")
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "held.json"), "w") as f:
        json.dump({"id": "held", "display_name": "Held sandbox", "issuer": proxy.base, "client_id": "latchkey-desktop",
                   "redirect_uri": "http://127.0.0.1/callback", "scopes": ["profile"],
                   "profile": {"name": "name", "email": "email", "url": "profile"}}, f)
    return os.path.join(home.state, "latchkey", "held.json")


def reading_held(home, proxy, log_name):
    """The window launched on the held provider, waiting on its discovery document (held). Returns the window."""
    proxy.hold(*DISCOVERY)
    app = home.launch("--provider", "held", log_name=log_name)
    try:
        wait_until("the window to ask for the discovery document", lambda: proxy.held() >= 1, 30)
    except BaseException:
        app.quit()
        raise
    return app


def sign_out_during_read(home, proxy):
    """The window launched again on the held provider, waiting on its discovery document, and
    `latchkey --sign-out --provider held` sent to it meanwhile. Returns the window."""
    app = reading_held(home, proxy, "latchkey-2.log")
    try:
        command = subprocess.run([os.path.join(BIN, "latchkey"), "--sign-out", "--provider", "held"],
                                 capture_output=True, text=True, timeout=30)
        expect(command.returncode == 0, f"--sign-out succeeded: {command.stderr!r}")
        expect("signs out there" in command.stdout, f"--sign-out was sent to the window: {command.stdout!r}")
    except BaseException:
        app.quit()
        raise
    return app


def names_the_provider_while_reading(home):
    """The window names the provider it shows before the provider is ready, as the list of providers
    does: a provider known by its issuer alone, its discovery document never fetched yet (and held
    here). Its name came from a draft of the provider, which cannot be made before the document is
    fetched, and the window said "Sign in with held." until then; so did every launch on the
    offline sandbox ("sandbox"), for a frame."""
    with presets.sandbox_running(home, "standard") as base, contextlib.closing(HoldingProxy(base)) as proxy:
        held_provider(home, proxy)
        app = reading_held(home, proxy, "latchkey.log")
        try:
            app.wait_status("Starting")
            app.find("label", "Sign in with Held sandbox.")
            app.absent("label", "Sign in with held.")
            # Nor does it say there is no sign-in before it knows.
            app.find("label", "Checking your sign-in")
            app.absent("label", "Not signed in")
            app.screenshot("01-reading-held-named")
            proxy.release_all()
            app.wait_status("Not signed in. Sign in with Held sandbox")
            app.find("label", "Not signed in")
        finally:
            app.quit()


class FirstFrame:
    """The first frame a new top-level window draws, as the X server receives it, kept as pixels.

    DAMAGE on the root window, made before the window's program starts, reports the drawing of every
    window in it: the first report after the window is mapped is its first frame. The pixels are read
    at once, from a thread of its own; what the window drew again before they were read (a loaded
    machine) is kept too (`changed`), so that a point it covers is known not to be the first frame's."""

    def __init__(self):
        from Xlib import X, display as xdisplay
        from Xlib.ext import damage
        self.display = xdisplay.Display()
        self.display.damage_query_version()
        root = self.display.screen().root
        root.change_attributes(event_mask=X.SubstructureNotifyMask)
        root.damage_create(damage.DamageReportRawRectangles)
        self.display.sync()
        self.image = self.origin = self.failure = None
        self.changed = []
        self.drawn = threading.Event()

        def watch():
            mapped = None
            try:
                while not self.drawn.is_set():
                    event = self.display.next_event()
                    if event.type == X.MapNotify and mapped is None:
                        mapped = event.window
                    elif event.type == self.display.extension_event.DamageNotify and mapped:
                        geometry = mapped.get_geometry()
                        self.size = (geometry.width, geometry.height)
                        reply = mapped.get_image(0, 0, geometry.width, geometry.height, X.ZPixmap, 0xffffffff)
                        if reply.depth != 24 or len(reply.data) != geometry.width * geometry.height * 4:
                            raise RuntimeError(f"a {reply.depth}-bit image of {len(reply.data)} bytes: not 32-bit pixels")
                        self.image = reply.data
                        origin = mapped.translate_coords(root, 0, 0)
                        self.origin = (-origin.x, -origin.y)
                        self.window = mapped.id
                        # Drawn again before the image was read: every report that came before its reply.
                        while self.display.pending_events():
                            later = self.display.next_event()
                            if later.type == self.display.extension_event.DamageNotify:
                                self.changed.append((later.area.x, later.area.y, later.area.width, later.area.height))
                        self.drawn.set()
            except Exception as error:  # told to the scenario, which would otherwise wait for nothing
                self.failure = error
                self.drawn.set()
            finally:
                self.display.close()

        threading.Thread(target=watch, daemon=True).start()

    def redrawn_at(self, x, y):
        """Whether the window drew point x, y (screen) again before the first frame's pixels were read."""
        return any(left <= x < left + width and top <= y < top + height for left, top, width, height in self.changed)

    def pixel(self, x, y):
        """(red, green, blue) at screen point x, y of the first frame (32-bit pixels, blue first)."""
        offset = ((y - self.origin[1]) * self.size[0] + (x - self.origin[0])) * 4
        blue, green, red = self.image[offset:offset + 3]
        return red, green, blue

    def pixel_now(self, x, y):
        """The same point as the window shows it now."""
        from Xlib import X, display as xdisplay
        display = xdisplay.Display()
        try:
            window = display.create_resource_object("window", self.window)
            data = window.get_image(x - self.origin[0], y - self.origin[1], 1, 1, X.ZPixmap, 0xffffffff).data
            return data[2], data[1], data[0]
        finally:
            display.close()


def is_blue(rgb):
    """The theme's blue of an enabled suggested action (Adwaita: #3584e4 and darker), not its pale disabled face."""
    red, green, blue = rgb
    return blue - red >= 60


def first_frame_is_rendered(home):
    """The window's first frame shows what the first render says: while the provider is read, Sign in
    is disabled from the first frame on. Shown before its first render, the window drew its defaults
    first (Sign in enabled, in the theme's blue) and GTK animated the first render's changes as changes
    of style: Sign in faded out, then in again, at every launch."""
    with presets.sandbox_running(home, "standard") as base, contextlib.closing(HoldingProxy(base)) as proxy:
        held_provider(home, proxy)
        for attempt in range(3):
            frame = FirstFrame()
            app = reading_held(home, proxy, f"latchkey-{attempt}.log")
            try:
                wait_until("the window's first frame", frame.drawn.is_set, 30)
                if frame.failure:
                    raise frame.failure
                app.wait_status("Starting")
                button = app.button("Sign in")
                expect(not app.sensitive(button), "Sign in is disabled while the provider is read")
                box = button.get_extents(Atspi.CoordType.SCREEN)
                point = (box.x + box.width // 2, box.y + 3)
                if frame.redrawn_at(*point):  # read too late to be the first frame there: launched again
                    continue
                first, held = frame.pixel(*point), frame.pixel_now(*point)
                expect(not is_blue(first), f"the first frame drew Sign in disabled, not blue: rgb{first}")
                expect(all(abs(a - b) <= 6 for a, b in zip(first, held)),
                       f"the first frame drew Sign in as it stays while the provider is read: rgb{first}, then rgb{held}")
                app.screenshot("01-reading")
                proxy.release_all()
                app.wait_status("Not signed in. Sign in with Held sandbox")
                # The points are read where they should be: Sign in, enabled (and lower, under the row of
                # where to sign in, shown once the provider is ready), turns the theme's blue there. Where it
                # is is asked again at each look: asked once, as the status changed, it could be where Sign
                # in was before that row was laid out (GTK lays out at the next frame), 24 px higher.
                def sign_in_is_blue():
                    box = app.button("Sign in").get_extents(Atspi.CoordType.SCREEN)
                    return is_blue(frame.pixel_now(box.x + box.width // 2, box.y + 3))

                wait_until("Sign in to turn blue", sign_in_is_blue, 10)
                return
            finally:
                app.quit()
                proxy.release_all()
        raise AssertionError("the first frame was drawn over before it could be read, three launches in a row")


def sign_out_while_reading(home):
    """`latchkey --sign-out` for the provider the window is still reading: the window reads the stored
    sign-in, then signs out there, and ends signed out. Done beside the read instead, the sign-in was
    read before its deletion and the window went on showing it signed in."""
    with presets.sandbox_running(home, "standard") as base, contextlib.closing(HoldingProxy(base)) as proxy:
        token_file = held_provider(home, proxy)
        app = home.launch("--provider", "held")
        try:
            app.wait_status("Not signed in")
            sign_in(app, home)
            app.wait_status("Signed in with Held sandbox")
        finally:
            app.quit()
        expect(os.path.exists(token_file), "the sign-in is stored")

        app = sign_out_during_read(home, proxy)
        try:
            # The window's read answered first; anything else asking for the document, after.
            proxy.release_first()
            app.wait_status("Signed out of Held sandbox", timeout=30)
            proxy.release_all()
            wait_until("the stored sign-in to go", lambda: not os.path.exists(token_file), 20)
            # Still signed out once everything under way has answered.
            app.wait_status("Signed out of Held sandbox")
            app.wait_sensitive("Sign in", True)
        finally:
            app.quit()
    assert_no_secrets(home, [app.log_path])


def sign_out_while_reading_then_switch(home):
    """`latchkey --sign-out` for the provider the window is still reading, then another provider chosen
    before the read answers: the sign-out goes with the provider it named (cleared in the background),
    and the provider chosen keeps its sign-in. Handed on after the window had moved, it signed out the
    provider chosen."""
    with presets.sandbox_running(home, "standard") as base, contextlib.closing(HoldingProxy(base)) as proxy:
        held_file = held_provider(home, proxy)
        sandbox_file = os.path.join(home.state, "latchkey", "sandbox.json")
        app = home.launch()
        try:
            app.wait_status("Not signed in")
            sign_in(app, home, shot_prefix="01")
            app.wait_status("Signed in with Sandbox provider")
            choose_provider(app, "Held sandbox")
            app.wait_status("Not signed in. Sign in with Held sandbox")
            sign_in(app, home, shot_prefix="02")
            app.wait_status("Signed in with Held sandbox")
        finally:
            app.quit()
        expect(os.path.exists(held_file) and os.path.exists(sandbox_file), "both sign-ins are stored")

        app = sign_out_during_read(home, proxy)
        try:
            # The person picks the offline sandbox before the held provider's document arrives.
            choose_provider(app, "Sandbox provider (offline demo)")
            app.wait_status("Signed in with Sandbox provider", timeout=30)
            proxy.release_all()
            wait_until("the held provider's sign-in to go", lambda: not os.path.exists(held_file), 30)
            app.wait_status("Signed in with Sandbox provider")
            app.wait_sensitive("Get my profile", True)
            expect(os.path.exists(sandbox_file), "the provider chosen keeps its sign-in")
            app.screenshot("03-held-signed-out-sandbox-kept")
        finally:
            app.quit()
    assert_no_secrets(home, [app.log_path])


# Setting up and adding providers ------------------------------------------

def clipboard_text():
    """The desktop clipboard's text, read as another program pasting it would."""
    read = subprocess.run(
        ["/usr/bin/python3", "-c", "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gtk, Gdk; "
         "print(Gtk.Clipboard.get(Gdk.SELECTION_CLIPBOARD).wait_for_text() or '', end='')"],
        capture_output=True, timeout=20)
    return read.stdout.decode()


def problem(app, dialog):
    """The dialog's problem line (the label described as 'Problem'), or ''."""
    for node in walk(dialog):
        if role(node) == "label" and node.get_description() == "Problem" and is_(node, Atspi.StateType.SHOWING):
            return name(node)
    return ""


def wait_problem(app, dialog, text):
    return wait_until(f"the dialog to say {text!r}", lambda: text in problem(app, dialog) and problem(app, dialog), 15)


def client_secret_in_keyring(provider):
    lookup = subprocess.run(["secret-tool", "lookup", "application", "latchkey", "client", provider],
                            capture_output=True, timeout=20)
    return lookup.stdout.decode() if lookup.returncode == 0 else None


def set_up_preset(home):
    """GitHub set up with nothing but the dialog: the registration hint, the redirect
    URI copied, mistakes named inline, the client id to the person's file and the
    secret to the keyring (read back from both), then a sign-in with them."""
    from keyrings import start_keyring
    start_keyring()
    with presets.sandbox_running(home, "github") as base:
        # GitHub's preset as it ships, its hosts moved to the sandbox; the person's config directory starts empty.
        with open(os.path.join(ROOT, "data", "providers", "github.json")) as f:
            preset = json.load(f)
        preset.update(presets.rehosted(preset, base))
        moved = os.path.join(home.root, "presets")
        os.makedirs(moved)
        with open(os.path.join(moved, "github.json"), "w") as f:
            json.dump(preset, f)
        os.environ["LATCHKEY_PROVIDERS_DIR"] = moved
        client = presets.CONFIDENTIAL
        user_file = os.path.join(home.config, "latchkey", "github.json")
        app = home.launch()
        try:
            app.wait_status("Not signed in")
            choose_provider(app, "GitHub")
            app.wait_status("there is no client id for GitHub")
            app.absent("push button", "Sign in")
            app.press(app.button("Set up…"))
            dialog = app.find("dialog", "Set up GitHub")
            app.find("label", "Register an OAuth app at https://github.com/settings/developers", root=dialog, exact=False)
            uri = app.find("text", "Redirect URI", root=dialog)
            expect(uri.get_text_iface().get_text(0, -1) == "http://127.0.0.1/callback", "the exact redirect URI is shown")
            app.press(app.find("push button", "Copy", root=dialog))
            wait_until("the redirect URI on the clipboard", lambda: clipboard_text() == "http://127.0.0.1/callback", 15)
            app.screenshot("01-set-up-dialog")

            save = app.find("push button", "Save", root=dialog)
            app.press(save)
            wait_problem(app, dialog, "Enter the client id GitHub gave you")
            app.type_into(app.find("text", "Client ID", root=dialog), client["client_id"])
            app.press(save)
            wait_problem(app, dialog, "GitHub needs the client secret too")
            app.screenshot("02-secret-missing")
            app.type_into(app.find("password text", "Client secret", root=dialog), client["client_secret"])
            app.press(save)
            app.wait_status("GitHub is set up: its client id is in ~/.config/latchkey/github.json, its secret in the keyring.")
            app.absent("dialog", "Set up GitHub")
            app.screenshot("03-set-up")

            expect(client_secret_in_keyring("github") == client["client_secret"], "the keyring holds the client secret")
            with open(user_file) as f:
                written = json.load(f)
            expect(written.get("client_id") == client["client_id"], f"the client id is in the file: {written}")
            expect("client_secret" not in written, f"no secret in the config file: {written}")
            expect(os.stat(user_file).st_mode & 0o077 == 0, "the config file is the person's alone")
            for directory, _, files in [entry for top in (home.config, home.state) for entry in os.walk(top)]:
                for file_name in files:
                    path = os.path.join(directory, file_name)
                    with open(path, "rb") as f:
                        expect(client["client_secret"].encode() not in f.read(), f"the secret is in {path}")

            sign_in(app, home)
            app.wait_status("Signed in with GitHub")
            app.press(app.button("Get my profile"))
            app.wait_status("as Ada Lovelace")
        finally:
            app.quit()
        # The next launch reads the secret back from the keyring.
        app = home.launch(log_name="latchkey-2.log")
        try:
            app.wait_status("Signed in with GitHub")
            app.press(app.button("Get my profile"))
            app.wait_status("as Ada Lovelace")
        finally:
            app.quit()
    assert_no_secrets(home, [app.log_path, os.path.join(home.root, "latchkey.log")], [client["client_secret"]])


def add_provider(home):
    """Providers added in the window: a provider file that gives a secret to a public
    client is refused inline; an issuer URL is discovered and Latchkey registers itself
    there (its file names only the issuer); a resource URL finds its server the same way,
    and signs in for that resource."""
    with presets.sandbox_running(home, "standard") as base:
        contradiction = os.path.join(home.root, "contradiction.json")
        with open(contradiction, "w") as f:
            json.dump({"id": "odd", "issuer": base, "authorization_endpoint": "/authorize", "token_endpoint": "/token",
                       "client_id": "x", "client_secret": "y", "client_authentication": "none"}, f)
        # A sign-in left under the same id by a provider whose file was deleted by hand: it must not reach the new one.
        host = base.split("://", 1)[1]
        provider_id = host.replace(".", "-").replace(":", "-")
        left_behind = os.path.join(home.state, "latchkey", f"{provider_id}.json")
        os.makedirs(os.path.dirname(left_behind), mode=0o700, exist_ok=True)
        with open(left_behind, "w") as f:
            json.dump({"access_token": "orphan-access", "refresh_token": "orphan-refresh", "token_type": "Bearer",
                       "expires_at": time.time() - 10, "received_at": time.time() - 4000,
                       "issued_by": f"latchkey-desktop at {base}/token"}, f)
        os.chmod(left_behind, 0o600)
        app = home.launch()
        try:
            app.wait_status("Not signed in")
            app.press(app.button("Add a provider"))
            dialog = app.find("dialog", "Add a provider")
            add = app.find("push button", "Add", root=dialog)
            app.press(add)
            wait_problem(app, dialog, "Give the provider's issuer URL, such as https://accounts.example.com.")
            app.screenshot("00-add-asks-what")
            # One thing at a time: what is added, then that one thing.
            app.press(app.find("radio button", "A provider file", root=dialog))
            file_field = app.find("text", "Provider file", root=dialog)
            app.type_into(file_field, contradiction)
            app.press(add)
            wait_problem(app, dialog, "a public client has no secret")
            app.screenshot("01-add-refused")
            file_field.get_editable_text_iface().delete_text(0, -1)
            wait_until("the file field emptied", lambda: file_field.get_text_iface().get_character_count() == 0, 5)
            expect(not os.path.exists(os.path.join(home.config, "latchkey", "odd.json")), "nothing was written")

            app.press(app.find("radio button", "A provider, by its issuer URL", root=dialog))
            app.type_into(app.find("text", "Issuer URL", root=dialog), base)
            app.screenshot("02-add-issuer")
            app.press(add)
            # Registered, not asked for a client id: the provider is ready to sign in.
            app.wait_status(f"Not signed in. Sign in with {host}", timeout=30)
            expect(not os.path.exists(left_behind), "what an earlier provider of that id left behind is cleared")
            expect(admin(base, "/_admin/stats")["registrations"] == 1, "Latchkey registered itself")
            app.screenshot("03-issuer-added-and-registered")

            app.press(app.button("Add a provider"))
            dialog = app.find("dialog", "Add a provider")
            app.press(app.find("radio button", RESOURCE_CHOICE, root=dialog))
            app.type_into(app.find("text", "Resource URL", root=dialog), base + "/api/notes")
            app.screenshot("04-add-resource")
            app.press(app.find("push button", "Add", root=dialog))
            app.wait_status(f"Not signed in. Sign in with Notes ({host})", timeout=30)
            sign_in(app, home)
            app.wait_status(f"Signed in with Notes ({host})")
            app.screenshot("05-signed-in-for-the-resource")
        finally:
            app.quit()
    with open(os.path.join(home.config, "latchkey", f"{provider_id}.json")) as f:
        added = json.load(f)
    expect(added["issuer"] == base and "token_endpoint" not in added and added["client_id"].startswith("sbx_client_"),
           f"the issuer's provider file names the issuer and the registered client, not the endpoints: {added}")
    with open(os.path.join(home.config, "latchkey", f"{provider_id}-api-notes.json")) as f:
        notes = json.load(f)
    expect(notes["resource"] == base + "/api/notes", f"the resource's provider file: {notes}")
    assert_no_secrets(home, [app.log_path], ["orphan-access", "orphan-refresh"])


# The system browser ---------------------------------------------------------

EPIPHANY_SETTINGS = """[org/gnome/epiphany]
warn-on-close-unsubmitted-data=false
restore-session-policy='never'
content-filters=@as []
[org/gnome/epiphany/web]
remember-passwords=false
enable-adblock=false
"""


class Epiphany:
    """GNOME Web as the session's default browser, registered as any browser is
    (a .desktop file and mimeapps.list). Its first-run questions are answered in
    its settings; its temporary files stay in the scenario's home."""

    def __init__(self, home):
        self.home = home
        applications = os.path.join(home.data, "applications")
        with open(os.path.join(applications, "test-epiphany.desktop"), "w") as entry:
            # The app runs with G_DEBUG=fatal-warnings, which the browser it starts would inherit.
            entry.write("[Desktop Entry]\nType=Application\nName=Web\n"
                        "Exec=env -u G_DEBUG epiphany %U\n"
                        "MimeType=x-scheme-handler/http;x-scheme-handler/https;\nNoDisplay=true\n")
        with open(os.path.join(home.config, "mimeapps.list"), "w") as mime:
            mime.write("[Default Applications]\n"
                       "x-scheme-handler/http=test-epiphany.desktop\nx-scheme-handler/https=test-epiphany.desktop\n")
        settings = os.path.join(home.config, "glib-2.0", "settings")
        os.makedirs(settings, exist_ok=True)
        with open(os.path.join(settings, "keyfile"), "w") as f:
            f.write(EPIPHANY_SETTINGS)
        tmp = os.path.join(home.root, "tmp")
        os.makedirs(tmp, exist_ok=True)
        os.environ.update({"GSETTINGS_BACKEND": "keyfile", "TMPDIR": tmp})
        self.pid = None

    def app(self):
        app = Desktop().application({"epiphany"}, timeout=40)
        self.pid = app.get_process_id()
        return app

    def page(self, title, timeout=40):
        """The document web of the tab showing `title`, loaded."""
        app = self.app()

        def probe():
            for node in walk(app):
                if role(node) == "document web" and name(node) == title:
                    if is_(node, Atspi.StateType.SHOWING) and not is_(node, Atspi.StateType.BUSY):
                        return node
            return None

        return wait_until(f"the browser showing {title!r}", probe, timeout)

    def quit(self):
        if self.pid is None:
            return
        subprocess.run(["gdbus", "call", "--session", "--dest", "org.gnome.Epiphany", "--object-path", "/org/gnome/Epiphany",
                        "--method", "org.gtk.Actions.Activate", "quit", "[]", "{}"], capture_output=True, timeout=20)
        pid = self.pid
        wait_until("the browser to quit", lambda: not os.path.exists(f"/proc/{pid}") or _zombie(pid), 30)


def _zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def listener_port(home):
    """The loopback port of the listener, from the redirect URI of the address the browser was given."""
    url = wait_until("the browser to be asked", lambda: home.opened_urls() and home.opened_urls()[-1], 15)
    redirect = urllib.parse.parse_qs(urllib.parse.urlparse(url).query)["redirect_uri"][0]
    parts = urllib.parse.urlparse(redirect)
    expect(parts.hostname == "127.0.0.1" and parts.path == "/callback" and parts.port, f"a loopback redirect: {redirect}")
    return url, parts.port


def get(port, path, host=None):
    """One request to the listener; (status, body), or None when nothing listens."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path, headers={"Host": host} if host else {})
        response = connection.getresponse()
        return response.status, response.read().decode(errors="replace")
    except ConnectionRefusedError:
        return None
    finally:
        connection.close()


def answer_page(url, action="allow"):
    """What a browser does with the sandbox's page: fill it in and press a button. The redirect's address."""
    with urllib.request.urlopen(url, timeout=10) as response:
        html = response.read().decode()
        page = response.geturl()
    form = re.search(r'<form method="post" action="([^"]+)"', html).group(1)
    request_id = re.search(r'name="request_id" value="([^"]+)"', html).group(1)
    target = urllib.parse.urljoin(page, form.replace("&amp;", "&"))
    body = urllib.parse.urlencode({"request_id": request_id, "username": "ada", "password": "engine", "action": action})
    parts = urllib.parse.urlparse(target)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    connection.request("POST", parts.path + ("?" + parts.query if parts.query else ""), body=body,
                       headers={"Content-Type": "application/x-www-form-urlencoded"})
    response = connection.getresponse()
    expect(response.status in (302, 303), f"the page answered {response.status}")
    location = response.getheader("Location")
    connection.close()
    return location


def browser_sign_in(home, action="Allow"):
    """Sign in in GNOME Web: the sandbox's page in the browser, typed into and allowed
    (or denied); the listener's page in the tab; the app signed in (or cancelled)."""
    browser = Epiphany(home)
    app = home.launch()
    try:
        app.wait_status("Not signed in")
        choose_user_agent(app, "In your browser")
        app.screenshot("01-browser-chosen")
        app.press(app.wait_sensitive("Sign in"))
        app.wait_status("Continue in your browser")
        app.button("Cancel")
        page = browser.page("Sign in – Latchkey Sandbox")
        app.screenshot("02-page-in-the-browser")
        app.type_into(app.find("entry", "Username", root=page), "ada")
        app.type_into(app.find("password text", "Password", root=page), "engine")
        app.press(app.find("push button", action, root=page))
        if action == "Allow":
            browser.page("Answer received · Latchkey")
            app.wait_status("Signed in with Sandbox provider")
            app.screenshot("03-signed-in-through-the-browser")
            app.press(app.button("Get my profile"))
            app.wait_status("as Ada Lovelace")
        else:
            browser.page("Sign-in did not complete · Latchkey")
            app.wait_status("Sign-in cancelled.")
            app.wait_sensitive("Sign in", True)
            app.screenshot("03-denied-in-the-browser")
            expect(not os.path.exists(home.token_file), "nothing was stored")
        app.absent("push button", "Cancel")
    finally:
        browser.quit()
        app.quit()
    assert_no_secrets(home, [app.log_path])


def browser_deny(home):
    browser_sign_in(home, action="Deny")


def browser_cancel(home):
    """The browser chosen in an earlier run: signed out, neither WebKit nor libsoup is
    loaded until Sign in, and then only libsoup. Cancel while the browser has the
    page: cancelled, and the listener's port closed."""
    os.makedirs(os.path.join(home.config, "latchkey"), exist_ok=True)
    with open(os.path.join(home.config, "latchkey", "sandbox.json"), "w") as f:
        f.write('{"user_agent": "browser"}')
    app = home.launch()
    try:
        app.wait_status("Not signed in")
        expect(is_(app.find("radio button", "In your browser"), Atspi.StateType.CHECKED), "the earlier choice is shown")
        time.sleep(1)  # when an embedded sign-in would have been prepared
        expect(app.loaded_libraries("libwebkit2gtk", "libsoup") == [], "nothing is prepared for a browser sign-in")
        app.press(app.wait_sensitive("Sign in"))
        app.wait_status("Continue in your browser")
        _, port = listener_port(home)
        expect(get(port, "/") is not None, "the listener answers while the sign-in waits")
        expect(app.loaded_libraries("libwebkit2gtk", "libsoup") == ["libsoup"], "the listener loaded libsoup, and only it")
        app.screenshot("01-waiting-for-the-browser")
        app.press(app.button("Cancel"))
        app.wait_status("Sign-in cancelled.")
        app.absent("push button", "Cancel")
        wait_until("the listener's port to close", lambda: get(port, "/") is None, 10)
        app.wait_sensitive("Sign in", True)
        app.screenshot("02-cancelled")
    finally:
        app.quit()


def browser_listener_strangers(home):
    """What reaches the listener from anything but the provider's redirect: refused, and the sign-in goes on."""
    app = home.launch()
    try:
        app.wait_status("Not signed in")
        choose_user_agent(app, "In your browser")
        app.press(app.wait_sensitive("Sign in"))
        url, port = listener_port(home)
        state = urllib.parse.parse_qs(urllib.parse.urlparse(url).query)["state"][0]
        # A page that knows only the port, a guessed state, another path, another host name.
        for path, host in (("/", None), ("/callback?code=forged", None), ("/callback?code=forged&state=guess", None),
                           ("/callback/x?code=forged&state=" + state, None), ("/callback?code=forged&state=" + state, "evil.example")):
            answer = get(port, path, host)
            expect(answer is not None and answer[0] == 404, f"{path} (host {host}) answered {answer and answer[0]}")
        app.wait_status("Continue in your browser")

        location = answer_page(url)
        status, body = get(port, location[len(f"http://127.0.0.1:{port}"):])
        expect(status == 200 and "finishes the sign-in" in body, f"the tab's page: {status}")
        app.wait_status("Signed in with Sandbox provider")
        app.screenshot("01-signed-in-despite-strangers")
        # A second redirect finds the listener gone (or, while its page is written, refusing).
        wait_until("the listener's port to close", lambda: get(port, "/") is None, 10)
        token = stored_token(home)
    finally:
        app.quit()
    assert_no_secrets(home, [app.log_path], [token["access_token"]])


# Installed ---------------------------------------------------------------------


def mapped(app):
    with open(f"/proc/{app.process.pid}/maps") as f:
        return f.read()


def installed_files(prefix):
    return sorted(os.path.relpath(os.path.join(directory, f), prefix)
                  for directory, _, files in os.walk(prefix) for f in files)


def installed_app(home):
    """make install's script into a temporary prefix: the installed binary, started from an
    unrelated directory, finds its presets, sandbox, sign-in library and signature-check
    library under that prefix and signs in; without the signature-check library a sign-in
    ends in a sentence and keeps nothing; uninstall leaves nothing behind."""
    prefix = os.path.join(home.root, "prefix")
    environment = dict(os.environ, PREFIX=prefix, BUILD_DIR=BIN)
    subprocess.run([os.path.join(ROOT, "scripts", "install.sh"), "install"], env=environment, check=True,
                   stdout=subprocess.DEVNULL)
    files = installed_files(prefix)
    signature_check = os.path.join(prefix, "lib/latchkey/libOAuthCoreSignatureCheck.so")
    for expected in ("bin/latchkey", "lib/latchkey/latchkey-app", "lib/latchkey/latchkey-agent", "bin/git-credential-latchkey",
                     "share/dbus-1/services/io.github.latchkey.Agent.service", "lib/latchkey/latchkey-sandbox", "lib/latchkey/libLatchkeyWebSignIn.so",
                     "lib/latchkey/libOAuthCoreSignatureCheck.so",
                     "share/latchkey/providers/google.json", "share/applications/io.github.latchkey.Latchkey.desktop",
                     "share/icons/hicolor/scalable/apps/io.github.latchkey.Latchkey.svg",
                     "share/metainfo/io.github.latchkey.Latchkey.metainfo.xml"):
        expect(expected in files, f"{expected} installed: {files}")
    # No installed program or library names the toolchain: each finds the runtime copied beside the app.
    toolchain = os.path.dirname(os.path.dirname(os.path.realpath(shutil.which("swift"))))
    for path in files:
        with open(os.path.join(prefix, path), "rb") as f:
            if f.read(4) != b"\x7fELF":
                continue
        linked = subprocess.run(["ldd", os.path.join(prefix, path)], capture_output=True, text=True).stdout
        expect(toolchain not in linked and "not found" not in linked, f"ldd {path}:\n{linked}")
    expect("lib/latchkey/libswiftCore.so" in files, f"the Swift runtime copied: {files}")
    # The app and the agent load at start neither the C++ library (linked in: scripts/static-libstdc++) nor
    # libsecret (opened at the first keyring call): a linker that took libstdc++.so after all fails here.
    for program in ("lib/latchkey/latchkey-app", "lib/latchkey/latchkey-agent"):
        dynamic = subprocess.run(["readelf", "-d", os.path.join(prefix, program)], capture_output=True, text=True, check=True).stdout
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic)
        expect(needed and not {"libstdc++.so.6", "libgcc_s.so.1", "libsecret-1.so.0"} & set(needed), f"{program} needs {needed}")
        # Their argv comes from glibc's call of their constructors (Sources/CArguments), not from the runtime's scan
        # of /proc/self/maps at every start: the build's own copy, with its symbols, holds our function and not the scan.
        symbols = subprocess.run(["nm", os.path.join(BIN, os.path.basename(program))], capture_output=True, text=True, check=True).stdout
        expect("keep_arguments" in symbols and "_swift_stdlib_getUnsafeArgvArgc" in symbols, f"{program}: no argv kept from glibc")
        expect("argvGrabber" not in symbols, f"{program} still links the runtime's argv scan (CommandLine.cpp)")
    desktop_file = os.path.join(prefix, "share/applications/io.github.latchkey.Latchkey.desktop")
    with open(desktop_file) as f:
        expect(f"Exec={prefix}/lib/latchkey/latchkey-app\n" in f.read(), "the menu entry starts the installed app by its path")
    subprocess.run(["desktop-file-validate", desktop_file], check=True)
    # systemd --user's units for the agent: enabled, and sound as systemd itself reads them (the program it starts
    # must be there to run), without a user manager running.
    units = os.path.join(prefix, "share/systemd/user")
    expect(os.readlink(os.path.join(units, "sockets.target.wants", "latchkey-agent.socket")) == "../latchkey-agent.socket",
           "the socket enabled")
    with open(os.path.join(units, "latchkey-agent.service")) as f:
        expect(f"ExecStart={prefix}/bin/latchkey agent\n" in f.read(), "the unit starts the installed binary by its path")
    verified = subprocess.run(["systemd-analyze", "verify", "--user", os.path.join(units, "latchkey-agent.socket"),
                               os.path.join(units, "latchkey-agent.service")], capture_output=True, text=True,
                              env=dict(os.environ, XDG_RUNTIME_DIR=home.runtime))
    expect(verified.returncode == 0 and not verified.stderr.strip(), f"systemd-analyze verify: {verified}")

    # From / with a PATH that holds nothing of Latchkey's: only the prefix can serve.
    unrelated = dict(PATH="/usr/bin:/bin")
    app = Latchkey(os.path.join(prefix, "bin", "latchkey"), home.root, home.shots, cwd="/", env=unrelated)
    try:
        app.wait_status("Not signed in")
        sandboxes = [pid for pid, command in descendants(app.process.pid).items() if command == "latchkey-sandbo"]  # comm is cut at 15 characters
        expect(sandboxes, "the sandbox child runs")
        expect(os.readlink(f"/proc/{sandboxes[0]}/exe") == os.path.join(prefix, "lib/latchkey/latchkey-sandbox"),
               "the sandbox is the installed one")
        expect("libOAuthCoreSignatureCheck" not in mapped(app), "no signature library before a sign-in")
        sign_in(app, home, shot_prefix="01")
        app.wait_status("Signed in with Sandbox provider")
        maps = mapped(app)
        expect(os.path.join(prefix, "lib/latchkey/libLatchkeyWebSignIn.so") in maps,
               "the sign-in library is the installed one")
        expect(signature_check in maps, "the ID token's signature was checked by the installed library")
        expect(toolchain not in maps, "the installed app mapped something of the toolchain's")
        app.screenshot("02-installed-app-signed-in")
    finally:
        app.quit()

    # A broken install: the signature library is gone. The stored sign-in still shows (no
    # signature is checked to read it); a new sign-in is refused in a sentence, keeping nothing.
    os.remove(signature_check)
    app = Latchkey(os.path.join(prefix, "bin", "latchkey"), home.root, home.shots, cwd="/", env=unrelated)
    try:
        app.wait_status("Signed in with Sandbox provider")
        app.press(app.button("Sign out"))
        app.wait_status("Signed out")
        sign_in(app, home)
        status = app.wait_status("could not be checked")
        expect("libOAuthCoreSignatureCheck.so: cannot open" in status and "reinstall the program" in status, status)
        expect(not os.path.exists(home.token_file) or "access_token" not in open(home.token_file).read(),
               "a sign-in whose ID token could not be checked keeps no token")
        app.screenshot("03-installed-app-without-signature-library")
        app.wait_sensitive("Sign in")  # the app keeps working: another sign-in may be tried
    finally:
        app.quit()

    subprocess.run([os.path.join(ROOT, "scripts", "install.sh"), "uninstall"], env=environment, check=True,
                   stdout=subprocess.DEVNULL)
    expect(installed_files(prefix) == [], f"uninstall left {installed_files(prefix)}")
    expect(not os.path.exists(os.path.join(prefix, "lib/latchkey")), "lib/latchkey removed")


SCENARIOS = {
    "sign_out_names_its_provider": sign_out_names_its_provider,
    "names_the_provider_while_reading": names_the_provider_while_reading,
    "first_frame_is_rendered": first_frame_is_rendered,
    "sign_out_while_reading": sign_out_while_reading,
    "sign_out_while_reading_then_switch": sign_out_while_reading_then_switch,
    "set_up_preset": set_up_preset,
    "add_provider": add_provider,
    "installed_app": installed_app,
    "switch_providers": switch_providers,
    "browser_sign_in": browser_sign_in,
    "browser_deny": browser_deny,
    "browser_cancel": browser_cancel,
    "browser_listener_strangers": browser_listener_strangers,
}
