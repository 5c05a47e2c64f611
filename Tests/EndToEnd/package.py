"""End-to-end: the Debian package (issue 29). `make deb`'s package installed with dpkg (its
dependencies through apt-get install -f), then used in a mount namespace where the Swift
toolchain's directory is hidden behind an empty one: the window signs in to the sandbox, `latchkey
token` and `latchkey status` answer, the man pages show, completions load in bash, no installed
program or library names the toolchain; `dpkg -r` leaves nothing of the package, and nothing of
the person's own files is touched."""

import glob
import json
import os
import shutil
import subprocess

from agent import Sandbox, own_provider, stored
from driver import Failure, Latchkey, wait_until
from harness import BIN, ROOT, expect, sign_in

TOOLCHAIN = os.path.dirname(os.path.dirname(os.path.realpath(shutil.which("swift") or "/opt/swift/usr/bin/swift")))


def hidden(*command):
    """`command` in a mount namespace of its own where the toolchain's directory is an empty tmpfs."""
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c",
            'mount -t tmpfs -o size=1m,mode=755 latchkey-test-no-toolchain "$0" && exec "$@"', TOOLCHAIN, *command]


def run(*command, check=True, **kwargs):
    done = subprocess.run(list(command), capture_output=True, text=True, timeout=kwargs.pop("timeout", 600), **kwargs)
    if check and done.returncode != 0:
        raise Failure(f"{' '.join(command[:6])}… ended with {done.returncode}: {done.stdout[-1500:]}{done.stderr[-1500:]}")
    return done


# Written while this test's package is installed: a latchkey package found without it is someone's own.
MARK = "/var/lib/latchkey-test-package-installed"


def installed():
    return run("dpkg-query", "-W", "-f=${Status}", "latchkey", check=False).stdout.startswith("install ok")


def remove():
    run("dpkg", "-r", "latchkey")
    if os.path.exists(MARK):
        os.remove(MARK)


def debian_package(home):
    expect(os.geteuid() == 0, "debian_package installs a package and mounts a tmpfs in a namespace: it needs root "
                              "(run by a person who is not root, the runner asks sudo for it)")
    if installed():
        expect(os.path.exists(MARK), "a latchkey package is installed here that this test did not install; remove it first")
        remove()
    try:
        check_package(home)
    finally:
        # Never left installed for the scenarios after this one: its D-Bus service would be the session's.
        if installed():
            remove()


def check_package(home):
    # Built already, as the person, when the scenario runs through sudo (harness.before_root).
    package = os.environ.get("LATCHKEY_TEST_DEB") or os.path.join(
        home.root, run(os.path.join(ROOT, "scripts", "deb.sh"), cwd=home.root, timeout=3600).stdout.strip().splitlines()[-1])
    expect(os.path.basename(package).startswith("latchkey_") and package.endswith("_amd64.deb"), f"the package: {package}")

    # What it says of itself: Debian packages only, and nothing of the toolchain.
    fields = run("dpkg-deb", "--field", package, "Depends").stdout
    expect("swift" not in fields.lower() and "libgtk-3-0" in fields and "libwebkit2gtk-4.1-0" in fields and "libcurl4" in fields,
           f"Depends: {fields}")
    lintian = run("lintian", "--tag-display-limit", "0", package, check=False)
    expect(lintian.returncode in (0, 1), f"lintian did not run through ({lintian.returncode}): {lintian.stderr[-1500:]}")
    with open(os.path.join(ROOT, "packaging", "lintian-explained")) as f:
        explained = {line.split()[0] for line in f if line.strip() and not line.startswith("#")}
    tags = [line for line in lintian.stdout.splitlines() if line[:2] in ("E:", "W:")]
    unexplained = [line for line in tags if line.split()[2] not in explained]
    expect(not unexplained, "lintian tags README does not explain:\n" + "\n".join(unexplained))

    # Installed as a person installs it; the dependencies apt-get finds.
    with open(MARK, "w"):
        pass
    if run("dpkg", "-i", package, check=False).returncode != 0:
        run("apt-get", "install", "-f", "-y", timeout=1800, env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))
    files = [path for path in run("dpkg", "-L", "latchkey").stdout.splitlines() if path.startswith("/")]
    installed = [path for path in files if os.path.isfile(path) and not os.path.islink(path)]
    for expected in ("/usr/bin/latchkey", "/usr/bin/git-credential-latchkey", "/usr/lib/latchkey/latchkey-app",
                     "/usr/share/applications/io.github.latchkey.Latchkey.desktop",
                     "/usr/share/applications/io.github.latchkey.Agent.desktop",
                     "/usr/share/metainfo/io.github.latchkey.Latchkey.metainfo.xml",
                     "/usr/share/dbus-1/services/io.github.latchkey.Agent.service",
                     "/usr/share/man/man1/latchkey.1.gz", "/usr/share/bash-completion/completions/latchkey",
                     "/usr/share/zsh/vendor-completions/_latchkey", "/usr/share/fish/vendor_completions.d/latchkey.fish",
                     "/usr/share/doc/latchkey/copyright"):
        expect(expected in installed, f"{expected} is not installed: {installed}")
    run("appstreamcli", "validate", "--no-net", "/usr/share/metainfo/io.github.latchkey.Latchkey.metainfo.xml")
    run("desktop-file-validate", "/usr/share/applications/io.github.latchkey.Latchkey.desktop")
    # The agent's entry (hidden from the menu): GNOME Shell shows its notifications only with it.
    run("desktop-file-validate", "/usr/share/applications/io.github.latchkey.Agent.desktop")
    with open("/usr/share/applications/io.github.latchkey.Agent.desktop") as f:
        entry = f.read()
    expect("Exec=/usr/bin/latchkey agent\n" in entry and "NoDisplay=true\n" in entry, f"the agent's entry: {entry!r}")
    # The menu and the session bus start the installed program by its path.
    with open("/usr/share/applications/io.github.latchkey.Latchkey.desktop") as f:
        expect("Exec=/usr/lib/latchkey/latchkey-app\n" in f.read(), "the menu entry starts the app itself")
    with open("/usr/share/dbus-1/services/io.github.latchkey.Agent.service") as f:
        expect("Exec=/usr/bin/latchkey agent\n" in f.read(), "the agent's D-Bus activation's Exec")

    # Nothing shipped names the folder it was built in: compilers' file names are mapped to "." and
    # the libraries are named by their SONAME (scripts/build-release.sh, Package.swift).
    for path in installed:
        with open(path, "rb") as f:
            expect(ROOT.encode() not in f.read(), f"{path} names the folder it was built in, {ROOT}")

    # No program or library it installed names the toolchain, or misses a library once it is hidden.
    elves = [path for path in installed if open(path, "rb").read(4) == b"\x7fELF"]
    expect(len(elves) >= 6, f"the programs and libraries: {elves}")
    for elf in elves:
        # With the toolchain there, nothing resolves into it (a RUNPATH naming it would); hidden, nothing is missing.
        linked = run("ldd", elf).stdout
        expect(TOOLCHAIN not in linked, f"ldd {elf} finds some of it in the toolchain:\n{linked}")
        linked = run(*hidden("ldd", elf)).stdout
        expect("not found" not in linked, f"ldd {elf} with the toolchain hidden:\n{linked}")

    # The window, the sandbox and the commands, with the toolchain hidden.
    sandbox = Sandbox(log=os.path.join(home.root, "sandbox.log"), command=hidden("/usr/lib/latchkey/latchkey-sandbox"))
    wrapper = os.path.join(home.root, "installed-latchkey")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nexec " + " ".join(f"'{part}'" for part in hidden("/usr/bin/latchkey")) + ' "$@"\n')
    os.chmod(wrapper, 0o755)
    try:
        own_provider(home, sandbox)
        app = Latchkey(wrapper, home.root, home.shots, args=("--provider", "mine"))
        try:
            app.wait_status("My sandbox")
            sign_in(app, home)
            app.wait_status("Signed in with My sandbox")
            app.press(app.button("Get my profile"))
            app.wait_status("as Ada Lovelace")
            app.screenshot("01-installed-app-signed-in")
            token = run(wrapper, "token", "--provider", "mine")
            expect(token.stdout.strip() == stored(home)["access_token"], f"latchkey token: {token.stderr!r}")
            # git's helper, as git runs it: a host no provider declares gets no answer, and no error.
            helper = run(*hidden("/usr/bin/git-credential-latchkey", "get"), input="protocol=https\nhost=git.example.org\n\n")
            expect(helper.stdout == "", f"git-credential-latchkey for a host nobody declares: {helper.stdout!r}")
            # One version: the program says the package's.
            said = run(wrapper, "--version").stdout.strip()
            packaged = run("dpkg-query", "-W", "-f=${Version}", "latchkey").stdout.strip()
            expect(said == packaged and os.path.basename(package) == f"latchkey_{said}_amd64.deb",
                   f"latchkey --version says {said!r}; the package is {packaged!r} ({os.path.basename(package)})")
            status = run(wrapper, "status")
            mine = [line for line in status.stdout.splitlines() if line.startswith("mine ")]
            expect(len(mine) == 1 and "signed in" in mine[0], f"latchkey status: {status.stdout!r}")
        finally:
            app.quit()
    finally:
        sandbox.stop()

    # The man pages, and completions that load (the toolchain still hidden).
    page = run(*hidden("man", "-l", "-P", "cat", "/usr/share/man/man1/latchkey.1.gz"), env=dict(os.environ, MANWIDTH="80")).stdout
    expect("latchkey" in page and "token" in page, f"man latchkey: {page[:500]!r}")
    token_pages = glob.glob("/usr/share/man/man1/latchkey*token*.1.gz")
    expect(token_pages, "no page for latchkey token")
    complete = ('source /usr/share/bash-completion/completions/latchkey && complete -p latchkey && '
                'COMP_WORDS=(latchkey to) COMP_CWORD=1 COMP_LINE="latchkey to" COMP_POINT=11 && _latchkey latchkey to latchkey && '
                'echo "offered: ${COMPREPLY[*]}"')
    completion = run(*hidden("bash", "-c", complete)).stdout
    expect("-F _latchkey latchkey" in completion and "offered: token" in completion, f"bash completion: {completion!r}")

    # Removed: nothing of the package is left, and the person's files are as they were.
    def listing(directory):
        return sorted((os.path.relpath(os.path.join(top, name), directory), os.path.getsize(os.path.join(top, name)))
                      for top, _, names in os.walk(directory) for name in names)

    before = json.dumps(stored(home), sort_keys=True)
    config, state = listing(os.path.join(home.config, "latchkey")), listing(os.path.join(home.state, "latchkey"))
    remove()
    left = [path for path in files if os.path.lexists(path) and not os.path.isdir(path)]
    expect(not left, f"dpkg -r left: {left}")
    expect(not os.path.exists("/usr/lib/latchkey") and not os.path.exists("/usr/share/latchkey"), "the package's directories are left")
    expect(json.dumps(stored(home), sort_keys=True) == before, "the sign-in changed on removal")
    expect(listing(os.path.join(home.config, "latchkey")) == config, "the person's configuration changed on removal")
    expect(listing(os.path.join(home.state, "latchkey")) == state, "the person's state changed on removal")
    wait_until("nothing of the package running", lambda: run("pgrep", "-f", "/usr/lib/latchkey/", check=False).returncode != 0, 20)


def library_consumer(home):
    """OAuthCore as another Swift program takes it (issue 37 §9): a package outside this repository
    that depends on it by path builds and runs; and nothing OAuthCore builds from in this package
    carries an unsafe flag, which SwiftPM refuses to a package that depends on Latchkey by version."""
    manifest = json.loads(run("swift", "package", "dump-package", cwd=ROOT).stdout)
    targets = {target["name"]: target for target in manifest["targets"]}
    wanted, seen = ["OAuthCore"], set()
    while wanted:
        name = wanted.pop()
        if name in seen or name not in targets:
            continue
        seen.add(name)
        for dependency in targets[name].get("dependencies", []):
            for kind in ("byName", "target"):
                if kind in dependency:
                    wanted.append(dependency[kind][0])
        expect("unsafeFlags" not in json.dumps(targets[name].get("settings", [])),
               f"{name} (which OAuthCore builds from) has unsafe flags: {targets[name]['settings']}")
    expect({"OAuthCore", "CCurl", "Loopback"} <= seen, f"OAuthCore's targets not all looked at: {sorted(seen)}")

    consumer = os.path.join(home.root, "uses-oauthcore")
    os.makedirs(os.path.join(consumer, "Sources", "UsesOAuthCore"))
    # A path dependency's identity is its directory's name: the clone's, whatever it is called.
    with open(os.path.join(consumer, "Package.swift"), "w") as f:
        f.write(f"""// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "UsesOAuthCore",
    dependencies: [.package(path: {json.dumps(ROOT)})],
    targets: [
        .executableTarget(
            name: "UsesOAuthCore", dependencies: [.product(name: "OAuthCore", package: {json.dumps(os.path.basename(ROOT))})])
    ])
""")
    with open(os.path.join(consumer, "Sources", "UsesOAuthCore", "main.swift"), "w") as f:
        f.write("""import OAuthCore

let header = #"Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource", scope="files:read""#
let challenge = try AuthenticateChallenge.parse(header)[0]
print(OAuthCoreInfo.version, challenge.scheme, challenge["resource_metadata"] ?? "-", challenge["scope"] ?? "-")
""")
    run("swift", "build", cwd=consumer, timeout=1500)
    said = run(os.path.join(consumer, ".build", "debug", "UsesOAuthCore")).stdout.split()
    version = run(os.path.join(BIN, "latchkey"), "--version").stdout.strip()
    expect(said == [version, "Bearer", "https://mcp.example/.well-known/oauth-protected-resource", "files:read"],
           f"the consumer said {said}")


SCENARIOS = {"debian_package": debian_package, "library_consumer": library_consumer}
