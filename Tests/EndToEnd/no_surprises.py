"""End-to-end: no surprises (issue 40). Where nobody can be asked, every way in ends at once with a
sentence and its own exit status, instead of a dialog or a sign-in nobody will see."""

import datetime
import json
import os
import signal
import subprocess
import sys
import time

import jsonschema

from agent import Sandbox, allow_gdbus, dialog_processes, gdbus, git, git_server, latchkey, own_provider, renewal_held, signed_in, stored
from driver import Failure, Latchkey, wait_until
from harness import BIN, ROOT, assert_no_secrets, command_lines, expect

NEEDS_PERSON = 6
WITHOUT_DISPLAY = {name: value for name, value in os.environ.items() if name not in ("DISPLAY", "WAYLAND_DISPLAY")}


def timed(*arguments, environment=None):
    """`latchkey ARGUMENTS`, with no terminal on any of its descriptors; its result and its seconds."""
    start = time.monotonic()
    result = subprocess.run([os.path.join(BIN, "latchkey"), *arguments], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                            timeout=60, env=environment or os.environ)
    return result, time.monotonic() - start


def no_interaction(home):
    """With the agent running and a program not allowed: `latchkey token --no-interaction` (the front),
    with CI=true, with an option only the app reads, `latchkey curl --no-interaction`, gdbus's GetToken
    with interactive false, and git with credential.interactive=false each end with the sentence and
    status 6 (D-Bus: NeedsPerson), and no question is shown; allowed beforehand, the same command gets
    its token. A resource not signed in for, with neither a display nor a terminal, is not signed in
    to by itself (it used to start a sign-in on another device): status 6, and --device said."""
    sandbox = Sandbox()
    others = [Sandbox(), Sandbox()]
    server, port = git_server(home, sandbox)
    with open(os.path.join(home.home, ".gitconfig"), "w") as f:
        f.write("[credential]\n\thelper = latchkey\n")
    window = signed_in(home)
    window.quit()
    agent_log = os.path.join(home.root, "agent.log")
    try:
        expect(gdbus("--method", "io.github.latchkey.Agent1.ListProviders").returncode == 0, "the bus starts the agent")
        said = "it may ask nobody (--no-interaction, CI, or git's credential.interactive=false), so you were not asked"
        ways = {
            "the front": (["token", "--provider", "mine", "--no-interaction"], None),
            "CI=true": (["token", "--provider", "mine"], dict(os.environ, CI="true")),
            "the app": (["token", "--provider", "mine", "--scope", "email", "--no-interaction"], None),
            "latchkey curl": (["curl", "--provider", "mine", "--no-interaction", "--", "-sS", sandbox.base + "/userinfo"], None),
        }
        for way, (arguments, environment) in ways.items():
            result, seconds = timed(*arguments, environment=environment)
            print(f"{way}: status {result.returncode} in {seconds:.2f} s")
            expect(result.returncode == NEEDS_PERSON and said in result.stderr and result.stdout == "", f"{way}: {result}")
            expect(not dialog_processes(home), f"{way}: a question is on the screen")

        call = gdbus("--method", "io.github.latchkey.Agent1.GetToken", "mine", "{'interactive': <false>}")
        expect(call.returncode != 0 and "io.github.latchkey.Agent1.Error.NeedsPerson" in call.stderr and said in call.stderr,
               f"gdbus GetToken with interactive false: {call}")
        wrong = gdbus("--method", "io.github.latchkey.Agent1.GetToken", "mine", "{'interactive': <'no'>}")
        expect(wrong.returncode != 0 and "Error.Invalid" in wrong.stderr, f"interactive as a string: {wrong}")

        url = f"http://127.0.0.1:{port}/notes.git"
        start = time.monotonic()
        listed = git(home, "-c", "credential.interactive=false", "ls-remote", url, check=False)
        print(f"git ls-remote with credential.interactive=false: status {listed.returncode} in {time.monotonic() - start:.2f} s")
        expect(listed.returncode != 0 and said in listed.stderr, f"git with credential.interactive=false: {listed}")
        expect(not dialog_processes(home), "git: a question is on the screen")

        # Allowed beforehand, nobody needs asking: the token, as without --no-interaction.
        allowed = latchkey("agent", "allow", "--including-what-it-runs", os.path.realpath(sys.executable), "mine")
        expect(allowed.returncode == 0, f"latchkey agent allow: {allowed}")
        given, _ = timed("token", "--provider", "mine", "--no-interaction")
        expect(given.returncode == 0 and given.stdout.strip() == stored(home)["access_token"], f"allowed: {given.returncode} {given.stderr!r}")

        # A resource's first sign-in (each on a server of its own: the first try registers Latchkey there,
        # and the agent is asked from then on), from nowhere a person could see it.
        nowhere, seconds = timed("token", "--resource", others[0].base + "/api/me", environment=WITHOUT_DISPLAY)
        print(f"a resource's sign-in without display or terminal: status {nowhere.returncode} in {seconds:.2f} s")
        expect(nowhere.returncode == NEEDS_PERSON and "neither a display nor a terminal" in nowhere.stderr
               and "--device" in nowhere.stderr, f"no display, no terminal: {nowhere}")
        # With a display, but nobody may be asked: no window either.
        told, seconds = timed("token", "--resource", others[1].base + "/api/me", "--no-interaction")
        expect(told.returncode == NEEDS_PERSON and "--no-interaction says nobody may be asked to sign in" in told.stderr,
               f"--resource --no-interaction: {told}")
    finally:
        server.kill()
        for each in [sandbox, *others]:
            each.stop()
    assert_no_secrets(home, [agent_log], extra=[stored(home)["access_token"]])


def moment(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp()


def status_in_sight(home):
    """A sandbox whose refresh tokens last seven days and say so (refresh_token_expires_in): the window says
    when the sign-in ends; `latchkey status` says when it was signed in, when it ends and why, and which
    program got its token last; `--format json` holds to data/status.schema.json and says the same; a
    provider file's session_lifetime, sooner, is what is said then. Never a token."""
    week = 7 * 86400
    sandbox = Sandbox("--refresh-token-ttl", str(week))
    own_provider(home, sandbox)
    window = signed_in(home)
    try:
        window.find("label", "This sign-in ends in 7 days, as the provider said.", exact=False)
        window.screenshot("01-sign-in-ends")
        window.quit()
        gdbus_path = allow_gdbus()
        call = gdbus("--method", "io.github.latchkey.Agent1.GetToken", "mine", "{}")
        expect(call.returncode == 0, f"gdbus GetToken: {call}")

        text = latchkey("status")
        print(text.stdout)
        expect(text.returncode == 0, f"latchkey status: {text}")
        lines = text.stdout.splitlines()
        row = next((i for i, line in enumerate(lines) if line.startswith("mine ")), None)
        expect(row is not None, f"the account's row: {text.stdout!r}")
        under = lines[row + 1:row + 4]
        expect(any(line.strip().startswith("signed in 20") for line in under), f"when it was signed in: {under}")
        expect(any(", as the provider said" in line and "the sign-in ends 20" in line for line in under), f"when it ends: {under}")
        expect(any(f"programs: {gdbus_path} (last got a token 20" in line for line in under), f"who used it: {under}")

        with open(os.path.join(ROOT, "data", "status.schema.json")) as f:
            schema = json.load(f)
        printed = latchkey("status", "--format", "json")
        document = json.loads(printed.stdout)
        jsonschema.Draft202012Validator(schema).validate(document)
        account = next(a for a in document["accounts"] if a["provider"] == "mine")
        ends = account["sign_in_ends"]
        expect(account["state"] == "signed-in" and account["renewable"] and ends["because"] == "provider", f"the account: {account}")
        signed = moment(account["signed_in_at"])
        expect(abs(moment(ends["at"]) - (signed + week)) <= 120, f"ends a week after the sign-in: {account}")
        expect(account["programs"][0]["program"] == gdbus_path and account["programs"][0]["last_used_at"], f"programs: {account}")

        # A session lifetime the provider file declares, sooner than the provider's word: that is the end said.
        own_provider(home, sandbox, session_lifetime=3600)
        account = next(a for a in json.loads(latchkey("status", "--format", "json").stdout)["accounts"] if a["provider"] == "mine")
        expect(account["sign_in_ends"]["because"] == "session_lifetime"
               and abs(moment(account["sign_in_ends"]["at"]) - (signed + 3600)) <= 1, f"session_lifetime: {account}")
        token = stored(home)
        for output in (text.stdout, printed.stdout):
            expect(token["access_token"] not in output and token["refresh_token"] not in output, "status shows a token")
    finally:
        sandbox.stop()


class Notifications:
    """Tests/EndToEnd/notification_server.py: the session's notification service, recording what it is sent."""

    def __init__(self, home):
        self.record = os.path.join(home.root, "notifications.jsonl")
        self.process = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests", "EndToEnd", "notification_server.py"), self.record],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        expect(self.process.stdout.readline().strip() == b"ready", "the notification service did not start")

    def sent(self):
        if not os.path.exists(self.record):
            return []
        with open(self.record) as f:
            return [json.loads(line) for line in f if line.strip()]

    def press(self, notification, label):
        """The button `label` of a notification, pressed as a person does (the service says which action)."""
        actions = notification["actions"]
        key = actions[actions.index(label) - 1]
        call = subprocess.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.Notifications", "--object-path",
                               "/org/freedesktop/Notifications", "--method", "io.github.latchkey.test.Notifications.Press",
                               str(notification["id"]), key], capture_output=True, text=True, timeout=30)
        expect(call.returncode == 0, f"pressing {label}: {call}")

    def stop(self):
        self.process.stdin.close()
        self.process.wait(10)


def windows_for(provider, home):
    """latchkey-app processes of this scenario showing `provider` (started with --provider), by pid. Only
    this scenario's (its home in their environment): a scenario beside it, on a provider of the same id,
    has windows of its own, which are not this one's to wait for, nor to end (a soak saw one scenario's
    clean-up end the other's new window)."""
    def ours(pid):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                values = [entry.split(b"=", 1)[-1] for entry in f.read().split(b"\0")]
            # A whole path, not a part of one: notify_ended's home is the start of notify_ended_real_daemon's,
            # and its clean-up ended the other's new window (SIGTERM 23 ms after it started; soak).
            root = home.root.encode()
            return any(value == root or value.startswith(root + b"/") for value in values)
        except OSError:
            return False
    return [pid for pid, words in command_lines()
            if words[0].endswith(b"latchkey-app") and b"--provider" in words and provider.encode() in words and ours(pid)]


def say_windows(home):
    """What a wait for a window found instead: every latchkey-app on the machine, whether it is this
    scenario's, where it waits in the kernel, and the end of the agent's log."""
    for pid, words in command_lines():
        if words and words[0].endswith(b"latchkey-app"):
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    ours = home.root.encode() in f.read()
                with open(f"/proc/{pid}/wchan") as f:
                    waits = f.read()
            except OSError as error:
                ours, waits = None, str(error)
            print(f"latchkey-app {pid}: ours {ours}, waits in {waits}: {b' '.join(words).decode(errors='replace')}")
    with open(os.path.join(home.root, "agent.log"), errors="replace") as f:
        print("agent log:\n" + "".join(f.readlines()[-15:]))


def window_opened(provider, home):
    """The window the agent opened on `provider`, as AT-SPI sees it; a window process that never showed
    is said with whether it still runs (one run in a soak waited 20 s for it, on a loaded machine)."""
    try:
        return Latchkey.attached(("latchkey", "Latchkey"), home.shots, timeout=60)
    except Failure as failure:
        # The agent's log holds the window process's own (it is the agent's child): why it ended, if it did.
        with open(os.path.join(home.root, "agent.log"), errors="replace") as log:
            said = "".join(log.readlines()[-15:])
        raise Failure(f"{failure}; window processes for {provider}: {windows_for(provider, home)}; the agent's log ends:\n{said}") from None


def renew_after_its_life(times):
    """gdbus (allowed) gets the sign-in's token, then, past its refresh token's three seconds (a slower
    run only makes it older), asks `times` for a renewal: the agent finds the sign-in ended each time."""
    allow_gdbus()
    expect(gdbus("--method", "io.github.latchkey.Agent1.GetToken", "mine", "{}").returncode == 0, "a token while it lasts")
    time.sleep(3.5)
    for _ in range(times):
        ended = gdbus("--method", "io.github.latchkey.Agent1.GetToken", "mine", "{'min-valid': <-1>}")
        expect(ended.returncode != 0 and "Error.SignedOut" in ended.stderr, f"a renewal of an ended sign-in: {ended}")


def notify_ended(home):
    """A sign-in whose refresh token outlived its life (the sandbox's --refresh-token-ttl): the agent's next
    renewal finds it ended and the desktop's notification service is sent exactly one notice, naming the
    provider and the account and never a token, with Sign in again; pressing that opens the window on the
    provider. `latchkey notifications --ended off` keeps the setting."""
    notifications = Notifications(home)
    sandbox = Sandbox("--refresh-token-ttl", "3")
    own_provider(home, sandbox)
    window = signed_in(home)
    window.quit()
    kept = stored(home)
    agent_log = os.path.join(home.root, "agent.log")
    try:
        renew_after_its_life(times=2)
        wait_until("the notice", lambda: notifications.sent(), 20)
        said = notifications.sent()
        print(json.dumps(said, indent=1))
        expect(len(said) == 1, f"one notice: {said}")
        notice = said[0]
        expect(notice["summary"] == "Your sign-in to My sandbox (ada@sandbox.example) has ended"
               and "no longer accepts your sign-in" in notice["body"] and "Sign in again" in notice["actions"]
               and notice["app_name"] == "Latchkey agent" and notice["urgency"] == 2, f"the notice: {notice}")
        for secret in (kept["access_token"], kept["refresh_token"]):
            expect(secret not in json.dumps(said), "a token in a notice")
        expect(open(agent_log).read().count("Notified") == 1, "the agent said it notified once")

        notifications.press(notice, "Sign in again")
        wait_until("the window on the provider", lambda: windows_for("mine", home), 20)
        opened = window_opened("mine", home)
        opened.find("label", "Sign in with My sandbox.", exact=False, timeout=30)
        opened.screenshot("01-sign-in-again")
        for pid in windows_for("mine", home):
            os.kill(pid, 15)
        wait_until("the window to close", lambda: not windows_for("mine", home), 20)

        # Turned off (SignInNoticesTests holds the agent to it); on again.
        off = latchkey("notifications", "--ended", "off")
        expect(off.returncode == 0 and "ended: off" in off.stdout and "ending: on" in off.stdout, f"--ended off: {off}")
        expect(latchkey("notifications").stdout == off.stdout, "the setting is kept")
        on = latchkey("notifications", "--ended", "on")
        expect(on.returncode == 0 and "ended: on" in on.stdout, f"--ended on: {on}")
    finally:
        notifications.stop()
        sandbox.stop()
    assert_no_secrets(home, [agent_log], extra=[kept["access_token"]])


def notify_ended_real_daemon(home):
    """The same ending, shown by a real notification service, Debian's notification-daemon (GNOME's
    reference one): its bubble names the provider and the account; its Sign in again button, pressed
    through AT-SPI as a person would, opens the window on the provider."""
    daemon = subprocess.Popen(["/usr/lib/notification-daemon/notification-daemon", "--replace"], stdout=subprocess.DEVNULL,
                              stderr=open(os.path.join(home.root, "notification-daemon.log"), "ab"))
    sandbox = Sandbox("--refresh-token-ttl", "3")
    own_provider(home, sandbox)
    window = signed_in(home)
    window.quit()
    try:
        renew_after_its_life(times=1)
        bubble = Latchkey.attached(("notification-daemon",), home.shots)
        bubble.find("label", "Your sign-in to My sandbox (ada@sandbox.example) has ended", exact=False, timeout=30)
        button = bubble.button("Sign in again")
        # A real pointer click, at once (this service takes a bubble down after five seconds, an urgent one
        # too), as a person clicks a bubble: its button takes no AT-SPI action.
        bubble.click(button)
        try:
            wait_until("the window on the provider", lambda: windows_for("mine", home), 20)
        except Failure:
            say_windows(home)
            raise
        opened = window_opened("mine", home)
        opened.find("label", "Sign in with My sandbox.", exact=False, timeout=30)
        opened.screenshot("01-sign-in-again")
    finally:
        for pid in windows_for("mine", home):
            os.kill(pid, 15)
        daemon.terminate()
        daemon.wait(10)
        sandbox.stop()


def notify_ended_on_its_account(home):
    """Two accounts, Grace's in use in an open window; Ada's sign-in ends at a renewal. Its notice names
    Ada, and Sign in again makes the open window show Ada's account (now the one in use), ready to sign in
    again, instead of only coming forward on Grace's."""
    from accounts import ADA, GRACE, account_list, add_account, key_of
    notifications = Notifications(home)
    sandbox = Sandbox("--refresh-token-ttl", "3")
    own_provider(home, sandbox)
    window = signed_in(home)
    add_account(window, home, "grace", "compiler")
    window.wait_status(f"Added {GRACE}.")
    ada = f"mine/{ADA}"
    try:
        expect(account_list(home)["in_use"] == key_of(home, GRACE), f"Grace in use: {account_list(home)}")
        allow_gdbus(ada)
        expect(gdbus("--method", "io.github.latchkey.Agent1.GetToken", ada, "{}").returncode == 0, "Ada's token while it lasts")
        time.sleep(3.5)
        ended = gdbus("--method", "io.github.latchkey.Agent1.GetToken", ada, "{'min-valid': <-1>}")
        expect(ended.returncode != 0 and "Error.SignedOut" in ended.stderr, f"Ada's renewal: {ended}")
        wait_until("the notice", lambda: notifications.sent(), 20)
        notice = notifications.sent()[0]
        expect(notice["summary"] == f"Your sign-in to My sandbox ({ADA}) has ended", f"the notice: {notice}")
        notifications.press(notice, "Sign in again")
        wait_until("Ada's account in use", lambda: account_list(home)["in_use"] == key_of(home, ADA), 30)
        window.find("label", "Sign in with My sandbox.", exact=False, timeout=30)
        window.screenshot("01-ada-to-sign-in-again")
        # The agent's latchkey-app handed the account to the open window and ended: no second window.
        wait_until("the launched window process to hand over and end", lambda: not windows_for("mine", home), 30)
    finally:
        notifications.stop()
        sandbox.stop()


def notify_ending(home):
    """A sign-in the provider said ends in three days (refresh_token_expires_in, as GitHub Apps say it): once
    a program used it, the agent's sweep (a minute after it starts, then hourly) sends one notice, not
    urgent, naming the provider, the account and when, with Sign in again; never a token. Waits for that
    minute: there is no way to hurry the agent's sweep from outside, on purpose."""
    notifications = Notifications(home)
    sandbox = Sandbox("--refresh-token-ttl", str(3 * 24 * 3600))
    own_provider(home, sandbox)
    window = signed_in(home)
    window.quit()
    kept = stored(home)
    agent_log = os.path.join(home.root, "agent.log")
    try:
        expect(kept.get("refresh_expires_at"), f"the provider's word on the refresh token's life, kept: {sorted(kept)}")
        allow_gdbus()
        expect(gdbus("--method", "io.github.latchkey.Agent1.GetToken", "mine", "{}").returncode == 0, "a program uses the sign-in")
        wait_until("the agent's first sweep", lambda: notifications.sent(), 150)
        said = notifications.sent()
        print(json.dumps(said, indent=1))
        expect(len(said) == 1, f"one notice: {said}")
        notice = said[0]
        expect(notice["summary"] == "Your sign-in to My sandbox (ada@sandbox.example) ends in 3 days"
               and "Sign in again" in notice["actions"] and notice["urgency"] != 2, f"the notice: {notice}")
        for secret in (kept["access_token"], kept["refresh_token"]):
            expect(secret not in json.dumps(said), "a token in a notice")
        expect(open(agent_log).read().count("kind=ending") == 1, "the agent said it notified once, of this kind")
        with open(os.path.join(home.state, "latchkey", "notices-said.json")) as f:
            expect("mine" in f.read(), "kept, so a restarted agent does not say it again today")
    finally:
        notifications.stop()
        sandbox.stop()
    assert_no_secrets(home, [agent_log], extra=[kept["access_token"]])


def agent_drains_on_sigterm(home):
    """SIGTERM while the agent waits on the provider for a renewal (a three-second delay at the token
    endpoint): the caller (gdbus's GetToken) still gets its token; the agent takes nothing new
    meanwhile (its name given up, its socket gone), then ends."""
    sandbox_log = os.path.join(home.root, "sandbox.log")
    sandbox = Sandbox("--access-token-ttl", "120", log=sandbox_log)
    own_provider(home, sandbox)
    window = signed_in(home)
    window.quit()
    try:
        expect(gdbus("--method", "io.github.latchkey.Agent1.ListProviders").returncode == 0, "the bus starts the agent")
        waiting, agent = renewal_held(home, sandbox, sandbox_log, 3, -1)
        os.kill(agent, signal.SIGTERM)
        out, err = waiting.communicate(timeout=60)
        expect(waiting.returncode == 0 and out.split("'")[1] == stored(home)["access_token"], f"answered: {waiting.returncode} {err!r}")
        wait_until("the agent to end", lambda: not os.path.exists(f"/proc/{agent}"), 20)
        expect("Agent ended drained=true" in open(os.path.join(home.root, "agent.log")).read(), "the agent said it drained")
    finally:
        sandbox.stop()
    assert_no_secrets(home, [os.path.join(home.root, "agent.log")], extra=[stored(home)["access_token"]])


SCENARIOS = {"agent_drains_on_sigterm": agent_drains_on_sigterm, "no_interaction": no_interaction, "status_in_sight": status_in_sight, "notify_ended": notify_ended,
             "notify_ended_real_daemon": notify_ended_real_daemon, "notify_ended_on_its_account": notify_ended_on_its_account,
             "notify_ending": notify_ending}
