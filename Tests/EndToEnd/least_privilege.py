"""End-to-end: each program gets what the person allowed it and no more (issue 38). Real clients —
Debian's oidc-token with --scope and --aud, gdbus with GetToken's options, latchkey token --scope —
ask the agent; the person answers its dialog through AT-SPI; what each token handed out can do is
what the sandbox's introspection (RFC 7662) says of it."""

import json
import os
import subprocess
import sys
import urllib.parse
import urllib.request

from agent import DEST, Sandbox, answer, finished, gdbus, git_server, latchkey, oidc_token, own_provider, signed_in, stored
from harness import BIN, assert_no_secrets, expect, sign_in


def introspect(sandbox, token):
    body = urllib.parse.urlencode({"token": token, "client_id": "latchkey-desktop"}).encode()
    with urllib.request.urlopen(urllib.request.Request(f"{sandbox.base}/introspect", data=body), timeout=30) as reply:
        return json.load(reply)


def get_token(provider, options="{}"):
    return subprocess.Popen(["gdbus", "call", "--session", *DEST, "--method", "io.github.latchkey.Agent1.GetToken", provider, options],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def token_of(out):
    """The access token in gdbus's print of GetToken's answer: its first string."""
    return out.split("'")[1]


def least_privilege(home):
    """oidc-token asks for one scope and gets a token for it alone, the question naming it in the provider
    file's words; gdbus is always allowed two scopes, asks for none next time and gets those two without a
    question, asks for more and is asked again, with what it was allowed before; oidc-token's --aud gives a
    token for that resource alone, which the resource takes; a provider that cannot narrow says so in the
    question and hands over the whole token; no refresh token reaches any program."""
    sandbox = Sandbox()
    whole = Sandbox("--narrowing", "none")
    own_provider(home, sandbox)
    own_provider(home, whole, provider_id="whole", display_name="Whole tokens", narrowing="none")
    window = signed_in(home)
    window.quit()
    window = home.launch("--provider", "whole")
    window.wait_status("Whole tokens")
    sign_in(window, home)
    window.wait_status("Signed in")
    outputs = []
    try:
        expect(gdbus("--method", "io.github.latchkey.Agent1.ListProviders").returncode == 0, "the bus starts the agent")
        sign_in_token = stored(home)["access_token"]

        asked = oidc_token(home, "--scope", "email", "mine")
        answer(home, "Allow once", "01-oidc-token-one-scope", shows=("read your e-mail address (email) (its token carries no more)",))
        status, out, err = finished(asked)
        outputs.append(out)
        expect(status == 0 and out.strip() != sign_in_token, f"oidc-token --scope email: {status} {err!r}")
        seen = introspect(sandbox, out.strip())
        expect(seen["active"] and seen["scope"] == "email", f"oidc-token's token can do: {seen}")

        call = get_token("mine", "{'scope': <'openid email'>}")
        answer(home, "Always allow", "02-gdbus-two-scopes")
        status, out, err = finished(call)
        outputs.append(out)
        expect(status == 0 and introspect(sandbox, token_of(out))["scope"] == "email openid", f"gdbus with scope: {status} {out!r} {err!r}")
        allowed = token_of(out)
        # Asking for nothing is asking for what it was allowed: no question, the same narrowed token.
        status, out, err = finished(get_token("mine"), timeout=20)
        outputs.append(out)
        expect(status == 0 and token_of(out) == allowed, f"gdbus without options: {status} {out!r} {err!r}")
        listed = latchkey("agent", "list").stdout
        expect("email openid" in listed, f"agent list shows what it was allowed: {listed!r}")
        # More than allowed: asked again, with what it was allowed before; denied, it gets nothing.
        call = get_token("mine", "{'scope': <'profile'>}")
        answer(home, "Deny", "03-gdbus-asks-for-more", shows=("read your e-mail address (email), know who you are (openid)",))
        status, out, err = finished(call)
        expect(status != 0 and "sbx_at_" not in out, f"gdbus denied more: {status} {out!r}")

        resource = f"{sandbox.base}/api/open"
        asked = oidc_token(home, "--scope", "profile", "--aud", resource, "mine")
        answer(home, "Allow once", "04-oidc-token-audience", shows=(f"{resource} alone",))
        status, out, err = finished(asked)
        outputs.append(out)
        seen = introspect(sandbox, out.strip())
        expect(status == 0 and seen.get("aud") == resource and seen["scope"] == "profile", f"--aud: {status} {seen} {err!r}")
        api = urllib.request.Request(resource, headers={"Authorization": f"Bearer {out.strip()}"})
        with urllib.request.urlopen(api, timeout=30) as reply:
            expect(json.load(reply)["scopes"] == ["profile"], "the resource takes it, for what it carries")

        # A provider that gives its tokens whole: the question says so, and the whole token is handed over.
        asked = oidc_token(home, "--scope", "email", "whole")
        answer(home, "Allow once", "05-cannot-narrow",
               shows=("read your e-mail address (email). Whole tokens cannot give a narrower token: the program gets your whole "
                      "token, and can do all your sign-in allows",))
        status, out, err = finished(asked)
        outputs.append(out)
        expect(status == 0 and out.strip() == stored(home, "whole")["access_token"], f"the whole token: {status} {err!r}")

        # The window lists what gdbus was allowed: the account, its scopes, its last use.
        window.press(window.button("Allowed programs"))
        programs = window.find("dialog", "Allowed programs")
        window.find("label", "My sandbox (ada@sandbox.example) · email openid · last got a token just now", root=programs, timeout=5)
        window.screenshot("06-allowed-programs-scopes")
        window.press(window.button("Close", root=programs))

        # latchkey token --scope through the agent, for a program allowed one scope from the command line.
        python = os.path.realpath(sys.executable)
        allowed = latchkey("agent", "allow", "--including-what-it-runs", python, "mine", "--scope", "profile")
        expect(allowed.returncode == 0 and "for profile alone" in allowed.stdout, f"agent allow --scope: {allowed}")
        through = latchkey("token", "--provider", "mine", "--format", "json")
        outputs.append(through.stdout)
        answer_json = json.loads(through.stdout)
        expect(answer_json["scopes"] == ["profile"] and introspect(sandbox, answer_json["token"])["scope"] == "profile",
               f"latchkey token through the agent: {through}")
        more = subprocess.Popen([os.path.join(BIN, "latchkey"), "token", "--provider", "mine", "--scope", "email"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        answer(home, "Deny", "07-latchkey-token-asks-for-more", shows=("read your name and picture (profile)",))
        status, out, err = finished(more)
        expect(status == 5 and out == "", f"more than allowed, denied: {status} {err!r}")

        # latchkey token --scope, with no agent asked (the person's own command): narrowed all the same.
        environment = {k: v for k, v in os.environ.items() if k != "OIDC_SOCK"}
        environment["XDG_RUNTIME_DIR"] = os.path.join(home.root, "no-agent-here")
        os.makedirs(environment["XDG_RUNTIME_DIR"], mode=0o700)
        mine = latchkey("token", "--provider", "mine", "--scope", "profile", environment=environment)
        outputs.append(mine.stdout)
        expect(mine.returncode == 0 and introspect(sandbox, mine.stdout.strip())["scope"] == "profile", f"latchkey token --scope: {mine}")
        expect(stored(home)["access_token"] == sign_in_token, "the sign-in keeps its own token")
        for provider in ("mine", "whole"):
            refresh_token = stored(home, provider)["refresh_token"]
            expect(all(refresh_token not in out for out in outputs), "a refresh token reached a program")
    finally:
        window.quit()
        sandbox.stop()
        whole.stop()
    assert_no_secrets(home, [window.log_path, os.path.join(home.root, "agent.log")], extra=[stored(home)["access_token"]])


APP = "org.example.Notes"


def flatpak_instance(home, instance_id, app=APP):
    """What Flatpak keeps of a running app in the session's runtime folder: the instance's `info`.
    Returns the folder (bwrap's `bwrapinfo.json` goes there) and the info, the sandbox's `/.flatpak-info`."""
    folder = os.path.join(home.runtime, ".flatpak", instance_id)
    os.makedirs(folder, exist_ok=True)
    info = f"[Application]\nname={app}\nruntime=runtime/org.gnome.Platform/x86_64/46\n\n[Instance]\ninstance-id={instance_id}\n"
    with open(os.path.join(folder, "info"), "w") as f:
        f.write(info)
    return folder, info


def confined(home, info, script, bwrapinfo=None):
    """`script` confined as Flatpak confines an app: bubblewrap with a mount and a pid namespace of its own,
    /usr and /etc read-only, the session bus's folder, and `info` as `/.flatpak-info`; with `bwrapinfo`,
    bwrap writes what Flatpak keeps of its sandbox (`--info-fd`: the child's pid) there, as Flatpak has it."""
    path = os.path.join(home.root, f"flatpak-info-{len(os.listdir(home.root))}")
    with open(path, "w") as f:
        f.write(info)
    command = ["bwrap", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib",
               "--symlink", "usr/lib64", "/lib64", "--ro-bind", "/etc", "/etc", "--proc", "/proc", "--dev", "/dev",
               "--unshare-pid", "--die-with-parent", "--bind", home.runtime, home.runtime, "--ro-bind", path, "/.flatpak-info"]
    info_file = open(bwrapinfo, "w") if bwrapinfo else None
    if info_file:
        command += ["--info-fd", str(info_file.fileno())]
    process = subprocess.Popen([*command, "--", "/bin/sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, pass_fds=(info_file.fileno(),) if info_file else ())
    if info_file:
        info_file.close()
    return process


GDBUS = "gdbus call --session --dest io.github.latchkey.Agent --object-path /io/github/latchkey/Agent1 --method io.github.latchkey.Agent1"


def flatpak_app(home):
    """An app confined as Flatpak confines one (real bubblewrap, Flatpak's layout, its instance kept in the
    runtime folder) is asked about by its desktop entry's name and app id, always allowed one scope, and then
    gets that and no more without a question; it lists the accounts it was allowed and no other; a program
    that forges the same app id in a sandbox of its own gets nothing."""
    sandbox = Sandbox()
    own_provider(home, sandbox)
    own_provider(home, sandbox, provider_id="other", display_name="Another sandbox")
    window = signed_in(home)
    window.quit()
    applications = os.path.join(home.data, "flatpak", "exports", "share", "applications")
    os.makedirs(applications)
    with open(os.path.join(applications, f"{APP}.desktop"), "w") as f:
        f.write("[Desktop Entry]\nType=Application\nName=Notes\nExec=notes\n")
    folder, info = flatpak_instance(home, "2001")
    app = forger = None
    try:
        expect(gdbus("--method", "io.github.latchkey.Agent1.ListProviders").returncode == 0, "the bus starts the agent")
        app = confined(home, info, f"{GDBUS}.GetToken mine \"{{'scope': <'email'>}}\"; echo ---; "
                                   f"{GDBUS}.GetToken mine '{{}}'; echo ---; {GDBUS}.ListAccounts; echo ---; "
                                   f"{GDBUS}.ListProviders; echo ---; exec sleep 600",
                       bwrapinfo=os.path.join(folder, "bwrapinfo.json"))
        answer(home, "Always allow", "06-flatpak-app-asked", shows=(APP, "read your e-mail address (email) (its token carries no more)"))
        answers = []
        for _ in range(4):
            lines = []
            while (line := app.stdout.readline()) and line.strip() != "---":
                lines.append(line)
            answers.append("".join(lines))
        first, second, accounts, providers = answers
        expect(first.startswith("('sbx_at_"), f"the app's token: {first!r}")
        seen = introspect(sandbox, first.split("'")[1])
        expect(seen["active"] and seen["scope"] == "email", f"the app's token can do: {seen}")
        expect(second.split("'")[1] == first.split("'")[1], f"asked again, no question, the same narrowed token: {second!r}")
        expect("'mine'" in accounts and "other" not in accounts, f"the app lists the accounts it was allowed, alone: {accounts!r}")
        expect("sbx_at_" not in accounts and "Denied" in providers and "Another sandbox" not in providers,
               f"and nothing else: {providers!r}")
        listed = latchkey("agent", "list").stdout
        expect(APP in listed and "email" in listed, f"the grant is the app id's, for its scope: {listed!r}")

        # Another program claims to be the app, in a sandbox of its own, naming the running instance.
        forger = confined(home, info, f"{GDBUS}.GetToken mine '{{}}'")
        out, _ = forger.communicate(timeout=60)
        expect(forger.returncode != 0 and "sbx_at_" not in out and "no Flatpak sandbox of that app runs it" in out,
               f"the forger: {forger.returncode} {out!r}")
    finally:
        for process in (app, forger):
            if process and process.poll() is None:
                process.kill()
                process.wait(10)
        sandbox.stop()
    assert_no_secrets(home, [window.log_path, os.path.join(home.root, "agent.log")], extra=[stored(home)["access_token"]])


def git_least_privilege(home):
    """git, through git-credential-latchkey and the agent, for a provider whose file says which scopes git
    needs (`git_scopes`): the question names them, and the token git hands the server carries those alone."""
    sandbox = Sandbox()
    server, port = git_server(home, sandbox, git_scopes=["openid", "email"])
    with open(os.path.join(home.home, ".gitconfig"), "w") as f:
        f.write("[credential]\n\thelper = latchkey\n")
    window = signed_in(home)
    window.quit()
    try:
        gdbus("--method", "io.github.latchkey.Agent1.ListProviders")  # the bus starts the agent
        clone = subprocess.Popen(["git", "clone", "-q", f"http://127.0.0.1:{port}/notes.git", os.path.join(home.root, "work")],
                                 env=dict(os.environ, PATH=os.path.join(home.home, "bin") + os.pathsep + os.environ["PATH"],
                                          GIT_TERMINAL_PROMPT="0"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        answer(home, "Always allow", "07-git-asked-for-its-scopes",
               shows=("read your e-mail address (email), know who you are (openid) (its token carries no more)",))
        status, _, err = finished(clone)
        expect(status == 0, f"git clone: {err!r}")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_scopes", timeout=30) as reply:
            scopes = reply.read().decode()
        expect(scopes == "email openid", f"git's token can do: {scopes!r}")
    finally:
        server.kill()
        sandbox.stop()
    assert_no_secrets(home, [os.path.join(home.root, "agent.log")], extra=[stored(home)["access_token"]])


SCENARIOS = {"least_privilege": least_privilege, "flatpak_app": flatpak_app, "git_least_privilege": git_least_privilege}
