"""End-to-end: the agent started by a service manager on a socket it holds (systemd's socket
activation, as `latchkey-agent.socket` sets it up under `systemd --user`). The test is the service
manager here: it makes and keeps the listening socket and starts the real agent on it, passed as
systemd passes it (descriptor 3, LISTEN_FDS, LISTEN_PID)."""

import json
import os
import signal
import socket
import subprocess

from agent import Sandbox, gdbus, latchkey, own_provider, signed_in, stored
from driver import wait_until
from harness import BIN, assert_no_secrets, expect

PYTHON = os.path.realpath("/usr/bin/python3")


def listening_socket(home):
    """What systemd makes for ListenStream=%t/latchkey/agent.sock (DirectoryMode=0700, SocketMode=0600)."""
    directory = os.path.join(home.runtime, "latchkey")
    os.makedirs(directory, mode=0o700, exist_ok=True)
    path = os.path.join(directory, "agent.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(128)
    return listener, path


def start_on(listener, log_path, level="debug", environment=None):
    """The agent, with the socket as descriptor 3 and the variables naming it for its own pid alone."""
    log = open(log_path, "ab")
    return subprocess.Popen(
        ["/bin/sh", "-c", f'LISTEN_PID=$$ exec "$0" agent --log-level {level}', os.path.join(BIN, "latchkey")],
        env=dict(environment or os.environ, LISTEN_FDS="1", LISTEN_FDNAMES="latchkey-agent.socket"), stdout=log, stderr=log,
        preexec_fn=lambda: os.dup2(listener.fileno(), 3), pass_fds=(3,))


def ask(connection):
    """oidc-agent's request for the provider's token, on a connection; the answer, as JSON."""
    connection.sendall(json.dumps({"request": "access_token", "account": "mine", "application_hint": "activation test"}).encode())
    connection.settimeout(60)
    data = b""
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            break
        data += chunk
        try:
            return json.loads(data)
        except ValueError:
            continue
    return json.loads(data) if data else None


def agent_socket_activated(home):
    """Killed outright (kill -9), the agent's socket stays, held by the service manager: a program
    that connects while none runs (oidc-agent's clients ask once) waits in its backlog and is answered
    by the next agent, not refused. Ended with SIGTERM, the agent leaves the socket file alone. Where the bus
    starts an agent by itself beside the service manager's socket (a session bus not run by systemd --user),
    each serves what it has: that one D-Bus, the service manager's the socket; neither leaves the other's
    callers without an answer."""
    sandbox = Sandbox()
    own_provider(home, sandbox)
    window = signed_in(home)
    window.quit()
    token = stored(home)["access_token"]
    allowed = latchkey("agent", "allow", "--including-what-it-runs", PYTHON, "mine")
    expect(allowed.returncode == 0, f"latchkey agent allow python: {allowed}")
    listener, path = listening_socket(home)
    log_path = os.path.join(home.root, "agent.log")
    agents = []
    bus_agent = None
    try:
        # The bus's own agent comes first: the socket is served (by the service manager's backlog), so it keeps to D-Bus.
        listed = gdbus("--method", "io.github.latchkey.Agent1.ListProviders")
        expect(listed.returncode == 0 and "mine" in listed.stdout, f"the bus's agent answers D-Bus: {listed}")
        owner = subprocess.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                                "--method", "org.freedesktop.DBus.GetConnectionUnixProcessID", "io.github.latchkey.Agent"],
                               capture_output=True, text=True, timeout=30)
        bus_agent = int(owner.stdout.strip().strip("(),").split()[-1])
        agents.append(start_on(listener, log_path))
        wait_until("the agent on the passed socket", lambda: "by=service manager" in open(log_path).read(), 30)
        with socket.socket(socket.AF_UNIX) as first:
            first.connect(path)
            said = ask(first)
        expect(said and said.get("access_token") == token, f"the first agent's answer: {said}")
        agent = agents[-1]
        os.kill(agent.pid, signal.SIGKILL)
        agent.wait(30)
        expect(os.path.exists(path), "the socket file is still there")
        # Nobody runs: the connection waits in the service manager's socket, and so does the request.
        waiting = socket.socket(socket.AF_UNIX)
        waiting.connect(path)
        agents.append(start_on(listener, log_path))
        said = ask(waiting)
        waiting.close()
        expect(said and said.get("access_token") == token, f"the connection made while none ran, answered by the next: {said}")

        agents[-1].send_signal(signal.SIGTERM)
        expect(agents[-1].wait(60) == 0, "ended with SIGTERM")
        expect(os.path.exists(path), "SIGTERM leaves the service manager's socket file alone")
        with socket.socket(socket.AF_UNIX) as after:
            after.connect(path)  # still listened on, by the service manager's descriptor
        log = open(log_path).read()
        expect(log.count("by=service manager") == 2 and "by=agent" not in log, f"both on the passed socket: {log[-2000:]}")
        expect("serving D-Bus only" in log and log.count("serving the socket the service manager passed, only") == 2,
               f"one agent each: {log[-2000:]}")
        expect(gdbus("--method", "io.github.latchkey.Agent1.ListProviders").returncode == 0, "the bus's agent still answers")
    finally:
        if bus_agent:
            os.kill(bus_agent, signal.SIGKILL)
        for agent in agents:
            if agent.poll() is None:
                agent.kill()
                agent.wait(30)
        listener.close()
        sandbox.stop()
    assert_no_secrets(home, [log_path], extra=[token])


SCENARIOS = {"agent_socket_activated": agent_socket_activated}
