"""End-to-end: the agent reached over ssh (issue 28). A real sshd, started by the test on
127.0.0.1 with throwaway keys; the desktop's agent socket forwarded to it with `ssh -R` as
the README's ~/.ssh/config has it; on the far side `latchkey token` and the unmodified
oidc-token get tokens, and the person answers on the desktop a question that names the host."""

import os
import re
import shutil
import signal
import subprocess

from agent import AGENT, OIDC_TOKEN, Sandbox, finished, own_provider, signed_in, stored
from driver import Latchkey, wait_until
from harness import BIN, expect

SSHD = "/usr/sbin/sshd"


class SSHServer:
    """sshd on a free port of 127.0.0.1, for this test's user only, with keys made here; and an ssh
    configuration naming it `devbox`, with the agent's socket forwarded as README says."""

    def __init__(self, home, local_socket):
        self.directory = os.path.join(home.root, "ssh")
        os.makedirs(self.directory, exist_ok=True)
        os.chmod(self.directory, 0o700)
        keys = {}
        for name in ("host", "client"):
            path = os.path.join(self.directory, f"{name}_ed25519")
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", f"latchkey-test-{name}", "-f", path], check=True)
            keys[name] = path
        shutil.copy(keys["client"] + ".pub", os.path.join(self.directory, "authorized_keys"))
        # Where the forwarded socket appears on the far side.
        self.remote_socket = os.path.join(self.directory, "remote-agent.sock")
        self.port = self.free_port()
        # sshd wants its privilege-separation directory; root (CI) may make it.
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        config = os.path.join(self.directory, "sshd_config")
        with open(config, "w") as f:
            f.write(f"""ListenAddress 127.0.0.1
Port {self.port}
HostKey {keys["host"]}
PidFile {os.path.join(self.directory, "sshd.pid")}
AuthorizedKeysFile {os.path.join(self.directory, "authorized_keys")}
AllowUsers {os.environ.get("USER") or "root"}
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AllowStreamLocalForwarding yes
StreamLocalBindUnlink yes
PermitUserEnvironment no
""")
        self.log = os.path.join(home.root, "sshd.log")
        self.process = subprocess.Popen([SSHD, "-D", "-e", "-f", config], stderr=open(self.log, "ab"))
        wait_until("sshd listening", lambda: "Server listening on 127.0.0.1" in open(self.log).read(), 20)
        # The desktop's ssh configuration: README's lines, with this test's port and keys.
        known = os.path.join(self.directory, "known_hosts")
        with open(known, "w") as f:
            f.write(f"[127.0.0.1]:{self.port} " + open(keys["host"] + ".pub").read().split(" (")[0])
        self.client_config = os.path.join(self.directory, "ssh_config")
        with open(self.client_config, "w") as f:
            f.write(f"""Host devbox
    HostName 127.0.0.1
    Port {self.port}
    User {os.environ.get("USER") or "root"}
    IdentityFile {keys["client"]}
    IdentitiesOnly yes
    UserKnownHostsFile {known}
    StrictHostKeyChecking yes
    BatchMode yes
    RemoteForward {self.remote_socket} {local_socket}
    StreamLocalBindUnlink yes
    ExitOnForwardFailure yes
""")

    @staticmethod
    def free_port():
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]

    def run(self, command):
        """`ssh devbox COMMAND`, running; its output read by the caller. The far side's environment
        is sshd's, not this test's: it names the forwarded socket itself, as README says to."""
        remote = f"export LATCHKEY_AGENT_SOCK={self.remote_socket} OIDC_SOCK={self.remote_socket}; {command}"
        return subprocess.Popen(["ssh", "-F", self.client_config, "devbox", remote], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)

    def stop(self):
        self.process.terminate()
        self.process.wait(10)


def question(home, host):
    """The agent's question, found; it names the host the socket was forwarded to."""
    agent = Latchkey.attached(AGENT, home.shots)
    dialog = agent.find("frame", "Allow a program to use your sign-in?", newest=True, timeout=60)
    agent.find("label", f"A program on {host} (through ssh) asks for a token of your My sandbox sign-in.", root=dialog)
    agent.find("label", host, root=dialog)
    return agent, dialog


def agent_over_ssh(home):
    """The agent's socket forwarded to `devbox` with ssh -R: there, `latchkey token` gets the token
    once the person, on the desktop, allows "a program on devbox (through ssh)"; oidc-token twice in
    one session, "Allow while connected" answering both; the next connection asked anew and denied,
    and nothing kept; the program on the far side killed while the question shows (ssh still
    connected), or the ssh connection dropped, takes the question back; the agent gone while the far
    side waits is said there; the sign-in is untouched throughout; with no forward at all, the far
    side says where it looked."""
    sandbox = Sandbox()
    own_provider(home, sandbox)
    window = signed_in(home)
    local_socket = os.path.join(home.runtime, "latchkey", "agent.sock")
    server = None
    try:
        before = stored(home)
        # The agent runs: started by the bus for its first caller, as for any program.
        subprocess.run(["gdbus", "call", "--session", "--dest", "io.github.latchkey.Agent", "--object-path",
                        "/io/github/latchkey/Agent1", "--method", "io.github.latchkey.Agent1.ListProviders"],
                       capture_output=True, check=True, timeout=60)
        wait_until("the agent's socket", lambda: os.path.exists(local_socket), 20)
        server = SSHServer(home, local_socket)
        latchkey = os.path.join(BIN, "latchkey")

        far = server.run(f"{latchkey} token --provider mine")
        agent, dialog = question(home, "devbox")
        agent.screenshot("01-asked-for-devbox")
        agent.press(agent.button("Allow once", root=dialog))
        status, out, err = finished(far)
        expect(status == 0 and out.strip() == before["access_token"], f"latchkey token on devbox: {status} {err!r}")

        # Allowed while connected: both requests of one ssh session, one question.
        far = server.run(f"{OIDC_TOKEN} mine && {OIDC_TOKEN} --time=60 mine")
        agent, dialog = question(home, "devbox")
        agent.screenshot("02-allow-while-connected")
        agent.press(agent.button("Allow while connected", root=dialog))
        status, out, err = finished(far)
        expect(status == 0 and out.split() == [before["access_token"]] * 2, f"oidc-token twice on devbox: {status} {err!r}")
        # Another connection is asked anew, and kept nowhere: a no is said on the far side.
        far = server.run(f"{OIDC_TOKEN} mine")
        agent, dialog = question(home, "devbox")
        agent.press(agent.button("Deny", root=dialog))
        status, out, err = finished(far)
        expect(status != 0 and out == "" and "A program on devbox (through ssh) gets no token for “mine”: you have not allowed it that" in err,
               f"denied on devbox: {status} {err!r}")
        listed = subprocess.run([latchkey, "agent", "list"], capture_output=True, text=True, timeout=60)
        expect("devbox" not in listed.stdout and "/usr/bin/ssh" not in listed.stdout, f"kept: {listed.stdout!r}")

        # The program on the far side ends while the question is up, the connection staying: ssh passes
        # that on as a half-close, and the question is taken back while ssh still runs.
        pidfile = os.path.join(server.directory, "remote.pid")
        far = server.run(f"{latchkey} token --provider mine & echo $! > {pidfile}; wait $!; sleep 60")
        agent, dialog = question(home, "devbox")
        os.kill(int(open(pidfile).read()), signal.SIGKILL)
        agent.absent("frame", "Allow a program to use your sign-in?", timeout=20)
        expect(far.poll() is None, "ssh ended before the question was taken back: the half-close was not what did it")
        os.killpg(far.pid, signal.SIGKILL)
        far.wait(10)

        # The connection drops while the question is on the screen: the question goes, the far side says so.
        far = server.run(f"{latchkey} token --provider mine")
        agent, dialog = question(home, "devbox")
        os.killpg(far.pid, signal.SIGKILL)
        far.wait(10)
        agent.absent("frame", "Allow a program to use your sign-in?", timeout=20)
        wait_until("the agent's note of it", lambda: "the question was taken back" in open(os.path.join(home.root, "agent.log")).read(), 10)
        expect(stored(home) == before, "the sign-in changed when the forwarded connection dropped")

        # A program on the far side that half-closes at once (ssh passes that on as the hang-up) learns
        # nothing of a name it may not have: no refusal is written to a caller that hung up, whether
        # there was someone to ask about or not (else the sentences differed, and told the names).
        probe = os.path.join(server.directory, "probe.py")
        with open(probe, "w") as f:
            f.write("import os, socket, sys\n"
                    "s = socket.socket(socket.AF_UNIX); s.connect(os.environ['LATCHKEY_AGENT_SOCK'])\n"
                    "s.sendall(('{\"request\":\"access_token\",\"account\":\"%s\"}' % sys.argv[1]).encode())\n"
                    "s.shutdown(socket.SHUT_WR)\n"
                    "data = b''\n"
                    "while chunk := s.recv(65536): data += chunk\n"
                    "print(repr(data))\n")
        answers = {}
        for name in ("mine", "nobody-here"):
            status, out, err = finished(server.run(f"/usr/bin/python3 {probe} {name}"))
            answers[name] = (status, out.strip())
        expect(answers["mine"] == answers["nobody-here"] == (0, "b''"), f"half-closed probes told names apart: {answers}")
        agent.absent("frame", "Allow a program to use your sign-in?", timeout=20)

        # The agent goes away while the far side waits on it: the far side says so, and nothing is lost.
        far = server.run(f"{latchkey} token --provider mine")
        question(home, "devbox")
        owner = subprocess.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                                "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", "io.github.latchkey.Agent"],
                               capture_output=True, text=True, timeout=30).stdout
        os.kill(int(re.search(r"uint32 (\d+)", owner).group(1)), signal.SIGKILL)
        status, out, err = finished(far)
        expect(status == 1 and out == "" and "Latchkey's agent did not answer: the connection to it closed before its answer." in err,
               f"the far side when the agent went away: {status} {out!r} {err!r}")
        expect(stored(home) == before, "the sign-in changed when the agent went away")

        # The far side asks a forward that is not there: it says where it looked, and signs in nowhere.
        stale = subprocess.run(["ssh", "-F", server.client_config, "-o", "ClearAllForwardings=yes", "devbox",
                                f"LATCHKEY_AGENT_SOCK={server.remote_socket}.gone {latchkey} token --provider mine"],
                               capture_output=True, text=True, timeout=60)
        expect(stale.returncode != 0 and stale.stdout == "", f"with no forward: {stale}")
        expect("No agent answers at LATCHKEY_AGENT_SOCK" in stale.stderr and "ssh connection" in stale.stderr,
               f"the sentence with no forward: {stale.stderr!r}")
    finally:
        if server:
            server.stop()
        window.quit()
        sandbox.stop()


SCENARIOS = {"agent_over_ssh": agent_over_ssh}
