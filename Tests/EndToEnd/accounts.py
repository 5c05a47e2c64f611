"""End-to-end: several accounts of one provider (issue 27) — added in the window, switched,
kept across a relaunch, one signed out while the other goes on working; `latchkey token
--account`; git picking the account by the remote's path; and a store an earlier release
left, taken over with its sign-in intact."""

import hashlib
import json
import os
import shutil
import subprocess
import sys

from agent import AGENT, Sandbox, answer, gdbus, git, latchkey, own_provider, signed_in
from driver import Latchkey, wait_until
from harness import BIN, ROOT, assert_no_secrets, expect, sign_in

ADA, GRACE = "ada@sandbox.example", "grace@sandbox.example"


def tokens(home, key):
    with open(os.path.join(home.state, "latchkey", f"{key}.json")) as f:
        return json.load(f)


def account_list(home, provider_id="mine"):
    with open(os.path.join(home.state, "latchkey", "accounts", f"{provider_id}.accounts.json")) as f:
        return json.load(f)


def key_of(home, email, provider_id="mine"):
    return next(account["key"] for account in account_list(home, provider_id)["accounts"] if account.get("email") == email)


def add_account(app, home, user, password, shot=None):
    """Add another account → the provider's page (asked to let the person choose) → credentials → Allow."""
    app.press(app.wait_sensitive("Add another account"))
    username = app.find("entry", "Username", timeout=30)
    if shot:
        app.screenshot(shot)
    app.type_into(username, user)
    app.type_into(app.find("password text", "Password"), password)
    app.press(app.button("Allow"))


def profile_shows(app, name):
    """Get my profile, and wait for the person's name in the window."""
    app.press(app.wait_sensitive("Get my profile"))
    app.wait_status(f"as {name}")
    app.find("label", name)


def choose(app, label):
    app.click(app.find("list item", label))
    app.wait_status("Signed in")


def accounts_window(home):
    """Two accounts added in the window, each Get my profile its own person, switched in the list,
    both kept across a relaunch, and one signed out while the other goes on working."""
    sandbox = Sandbox()
    try:
        own_provider(home, sandbox)
        app = signed_in(home)
        profile_shows(app, "Ada Lovelace")
        add_account(app, home, "grace", "compiler", shot="01-add-account-page")
        app.wait_status(f"Added {GRACE}.")
        app.find("list item", ADA)
        app.find("list item", GRACE)
        app.screenshot("02-two-accounts")
        profile_shows(app, "Grace Hopper")
        choose(app, ADA)
        profile_shows(app, "Ada Lovelace")
        app.screenshot("03-ada-in-use")
        ada_key, grace_key = key_of(home, ADA), key_of(home, GRACE)
        expect(ada_key == "mine" and grace_key.startswith("mine@"), f"keys: {ada_key} {grace_key}")
        expect(tokens(home, ada_key)["access_token"] != tokens(home, grace_key)["access_token"], "one token for both")

        # Scripts name either account; without --account, the one in use.
        for email, key in ((ADA, ada_key), (GRACE, grace_key)):
            printed = latchkey("token", "--provider", "mine", "--account", email)
            expect(printed.returncode == 0 and printed.stdout.strip() == tokens(home, key)["access_token"],
                   f"token --account {email}: {printed.returncode} {printed.stderr!r}")
        in_use = latchkey("token", "--provider", "mine")
        expect(in_use.stdout.strip() == tokens(home, ada_key)["access_token"], "the account in use")
        nobody = latchkey("token", "--provider", "mine", "--account", "linus@sandbox.example")
        expect(nobody.returncode == 3 and "No My sandbox account called “linus@sandbox.example”" in nobody.stderr,
               f"an unknown account: {nobody.returncode} {nobody.stderr!r}")
        status = latchkey("status").stdout
        expect(f"{ADA} (in use)" in status and GRACE in status, f"status: {status!r}")

        app.quit()
        app = home.launch("--provider", "mine")
        app.wait_status("Signed in")
        app.find("list item", ADA)
        app.find("list item", GRACE)
        app.find("label", "Ada Lovelace")
        app.screenshot("04-relaunched")

        # Signing out of Ada leaves Grace, in use and working.
        grace_before = tokens(home, grace_key)
        app.press(app.wait_sensitive("Sign out"))
        app.wait_status(f"Signed out of My sandbox as {ADA}.")
        app.absent("list item", ADA)
        expect(not os.path.exists(os.path.join(home.state, "latchkey", f"{ada_key}.json")), "Ada's tokens left behind")
        expect(tokens(home, grace_key) == grace_before, "Grace's sign-in changed with Ada's sign-out")
        profile_shows(app, "Grace Hopper")
        app.screenshot("05-ada-signed-out")
        printed = latchkey("token", "--provider", "mine", "--account", GRACE)
        expect(printed.returncode == 0, f"Grace's token after Ada's sign-out: {printed.stderr!r}")
        app.quit()
    finally:
        sandbox.stop()
    assert_no_secrets(home, [os.path.join(home.root, "latchkey.log")], extra=[grace_before["access_token"]])


def accounts_git(home):
    """Two remotes on one host, one per person (the server takes each person's token for their
    own repository only): 20 pushes alternating between them, each with the right account, by
    the provider's git_accounts rules, git allowed once for each account; LATCHKEY_ACCOUNT overrides the rules."""
    sandbox = Sandbox()
    server_root = os.path.join(home.root, "git-server")
    for person in ("ada", "grace"):
        os.makedirs(os.path.join(server_root, person))
        bare = os.path.join(server_root, person, "notes.git")
        git(home, "init", "-q", "--bare", "-b", "main", bare)
        git(home, "config", "http.receivepack", "true", cwd=bare)
    server = subprocess.Popen([sys.executable, os.path.join(ROOT, "Tests", "EndToEnd", "git_server.py"), server_root, sandbox.base,
                               "--owners"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    port = int(server.stdout.readline())
    host = f"127.0.0.1:{port}"
    own_provider(home, sandbox, git_hosts=[host], git_username="oauth2",
                 git_accounts={f"{host}/ada/": ADA, f"{host}/grace/": GRACE})
    shutil.copy(os.path.join(ROOT, "data", "git-credential-latchkey"), os.path.join(home.home, "bin"))
    os.symlink(os.path.join(BIN, "latchkey"), os.path.join(home.home, "bin", "latchkey"))
    # git says a remote's path to its helper only with useHttpPath: the rules by path need it.
    with open(os.path.join(home.home, ".gitconfig"), "w") as f:
        f.write("[credential]\n\thelper = latchkey\n\tuseHttpPath = true\n"
                "[user]\n\tname = Ada\n\temail = ada@example.com\n[init]\n\tdefaultBranch = main\n")
    window = signed_in(home)
    add_account(window, home, "grace", "compiler")
    window.wait_status(f"Added {GRACE}.")
    window.quit()
    try:
        gdbus("--method", "io.github.latchkey.Agent1.ListProviders")  # the bus starts the agent
        work = {}
        for person in ("ada", "grace"):
            work[person] = os.path.join(home.root, f"work-{person}")
            cloning = subprocess.Popen(["git", "clone", "-q", f"http://{host}/{person}/notes.git", work[person]], env=dict(
                os.environ, PATH=os.path.join(home.home, "bin") + os.pathsep + os.environ["PATH"], GIT_TERMINAL_PROMPT="0"),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            # Allowed per account: git is asked about each person's (the question names the account).
            answer(home, "Always allow", f"01-git-asked-for-{person}")
            _, err = cloning.communicate(timeout=120)
            expect(cloning.returncode == 0, f"git clone of {person}'s: {err!r}")
        for number in range(20):
            person = ("ada", "grace")[number % 2]
            with open(os.path.join(work[person], "log"), "a") as f:
                f.write(f"push {number}\n")
            git(home, "add", "log", cwd=work[person])
            git(home, "commit", "-q", "-m", f"Push {number}", cwd=work[person])
            git(home, "push", "-q", "origin", "main", cwd=work[person])
        pushers = [line.split() for line in open(os.path.join(server_root, "pushes.log")).read().splitlines()]
        expect(len(pushers) == 20 and all(path.split("/")[1] == user.split("@")[0] for path, user in pushers),
               f"who pushed where: {pushers}")
        # LATCHKEY_ACCOUNT overrides the rules: Grace's token for Ada's repository is refused there.
        with open(os.path.join(work["ada"], "log"), "a") as f:
            f.write("forced\n")
        git(home, "commit", "-q", "-am", "Forced", cwd=work["ada"])
        forced = subprocess.run(["git", "push", "-q", "origin", "main"], cwd=work["ada"], capture_output=True, text=True, timeout=120,
                                env=dict(os.environ, LATCHKEY_ACCOUNT=GRACE, GIT_TERMINAL_PROMPT="0",
                                         PATH=os.path.join(home.home, "bin") + os.pathsep + os.environ["PATH"]))
        expect(forced.returncode != 0, "Grace's token pushed to Ada's repository")
        expect(len(open(os.path.join(server_root, "pushes.log")).read().splitlines()) == 20, "a push went through as Grace")
        git(home, "push", "-q", "origin", "main", cwd=work["ada"])  # the rules again, without the override

        # latchkey token --account through the agent: each account its own. The small front answers it
        # alone (a copy of it without the app beside it, which it would otherwise hand the command to).
        front = os.path.join(home.root, "front-only")
        os.makedirs(front)
        shutil.copy(os.path.join(BIN, "latchkey"), front)
        for email in (GRACE, ADA):
            asking = subprocess.Popen([os.path.join(front, "latchkey"), "token", "--provider", "mine", "--account", email],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            answer(home, "Allow once", f"02-token-asked-for-{email.split('@')[0]}")
            out, err = asking.communicate(timeout=60)
            expect(asking.returncode == 0 and out.strip() == tokens(home, key_of(home, email))["access_token"],
                   f"token --account {email} through the agent: {asking.returncode} {err!r}")
    finally:
        server.kill()
        sandbox.stop()
    assert_no_secrets(home, [os.path.join(home.root, "agent.log")])


def accounts_migration(home):
    """A store as an earlier release (one sign-in per provider) left it — the token file under the
    provider's id, and its note of who that was — is the provider's first account, intact: the
    window shows it signed in as that person, its token is the same, and adding a second account
    leaves it as it was."""
    sandbox = Sandbox()
    try:
        own_provider(home, sandbox)
        app = signed_in(home)
        app.quit()
        # What the earlier release kept beside the token: the subject's digest and a name, no list.
        token_path = os.path.join(home.state, "latchkey", "mine.json")
        before = open(token_path, "rb").read()
        subject = json.loads(base64url(json.loads(before)["id_token"].split(".")[1]))["sub"]
        os.remove(os.path.join(home.state, "latchkey", "accounts", "mine.accounts.json"))
        with open(os.path.join(home.state, "latchkey", "accounts", "mine.json"), "w") as f:
            json.dump({"subject": hashlib.sha256(subject.encode()).hexdigest(), "name": ADA}, f)
        note = open(os.path.join(home.state, "latchkey", "accounts", "mine.json"), "rb").read()
        app = home.launch("--provider", "mine")
        app.wait_status("Signed in")
        app.find("label", ADA)  # named from the earlier note, before any profile is fetched
        app.screenshot("01-earlier-sign-in-taken-over")
        expect(open(token_path, "rb").read() == before, "the earlier sign-in was moved or rewritten")
        expect([a["key"] for a in account_list(home)["accounts"]] == ["mine"], f"the list: {account_list(home)}")
        printed = latchkey("token", "--provider", "mine")
        expect(printed.returncode == 0 and printed.stdout.strip() == json.loads(before)["access_token"], "its token")
        add_account(app, home, "grace", "compiler")
        app.wait_status(f"Added {GRACE}.")
        expect(open(token_path, "rb").read() == before, "adding Grace touched the earlier sign-in")
        expect(open(os.path.join(home.state, "latchkey", "accounts", "mine.json"), "rb").read() == note,
               "the earlier release's note is read, never written: a copy of that release still running keeps its own")
        app.quit()
    finally:
        sandbox.stop()


def base64url(text):
    import base64
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


SCENARIOS = {"accounts_window": accounts_window, "accounts_git": accounts_git, "accounts_migration": accounts_migration}
