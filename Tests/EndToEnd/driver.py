"""Drives the real latchkey binary from outside, as a person would: through
the accessibility bus (AT-SPI) and X input events. Nothing in the product
knows it is being tested."""

import json
import os
import signal
import subprocess
import time

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi, GLib  # noqa: E402


class Failure(Exception):
    pass


def wait_until(what, probe, timeout=15.0, interval=0.1):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = probe()
        except Exception as error:  # the tree changes under our feet; try again
            last = error
        if last and not isinstance(last, Exception):
            return last
        time.sleep(interval)
    raise Failure(f"timed out waiting for {what} (last: {last!r})")


class StateChanges:
    """Every `object:state-changed:<state>` event from the moment it is made, as (name, value): what
    an app did, in order, however slowly it ran. Made before the app starts, so that the app knows
    from its first moment that someone listens (AT-SPI apps send only the events listened for)."""

    def __init__(self, state):
        self.event = f"object:state-changed:{state}"
        self.seen = []
        self.listener = Atspi.EventListener.new(self._record)
        self.listener.register(self.event)

    def _record(self, event):
        try:
            self.seen.append((event.source.get_name(), event.detail1))
        except Exception:  # the source went away: not one to compare
            pass

    def wait_for(self, what, changes, timeout=30.0):
        """Waits until `changes` (a list of (name, value)) were seen in that order, others between."""
        context = GLib.MainContext.default()

        def probe():
            while context.iteration(False):
                pass
            wanted = iter(changes)
            following = next(wanted)
            for seen in self.seen:
                if seen == following:
                    following = next(wanted, None)
                    if following is None:
                        return True
            return False
        return wait_until(f"{what} (seen: {self.seen[-20:]})", probe, timeout, interval=0.05)

    def close(self):
        self.listener.deregister(self.event)


def walk(node, depth=0, limit=40):
    """Every accessible under node, depth first."""
    if node is None or depth > limit:
        return
    yield node
    try:
        count = node.get_child_count()
    except Exception:
        return
    for index in range(count):
        try:
            child = node.get_child_at_index(index)
        except Exception:
            continue
        yield from walk(child, depth + 1, limit)


def role(node):
    try:
        return node.get_role_name()
    except Exception:
        return ""


def name(node):
    try:
        return node.get_name() or ""
    except Exception:
        return ""


def states(node):
    return node.get_state_set()


def is_(node, state):
    return states(node).contains(state)


class Desktop:
    """The accessibility view of the whole X display."""

    def application(self, names, timeout=20.0):
        def probe():
            desktop = Atspi.get_desktop(0)
            for index in range(desktop.get_child_count()):
                app = desktop.get_child_at_index(index)
                if app is not None and name(app) in names:
                    return app
            return None

        return wait_until(f"application {names}", probe, timeout)


def descendants(root):
    """pid → command of every process below root (not root itself)."""
    parents, commands = {}, {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as comm:
                commands[int(pid)] = comm.read().strip()
            with open(f"/proc/{pid}/stat") as stat:
                parents[int(pid)] = int(stat.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return {pid: commands.get(pid, "") for pid in found}


class Latchkey:
    """One run of the real app, with its own home, driven through AT-SPI."""

    @classmethod
    def attached(cls, names, shots, timeout=20.0):
        """The windows of a process someone else started (the agent, started by D-Bus), driven the same way."""
        attached = cls.__new__(cls)
        attached.shots = shots
        attached.app = Desktop().application(names, timeout)
        return attached

    def __init__(self, binary, home, shots, args=(), env=None, log_name="latchkey.log", cwd=None, command=(),
                 stdout_path=None):
        self.shots = shots
        self.log_path = os.path.join(home, log_name)
        self.log = open(self.log_path, "ab")
        environment = dict(os.environ)
        # Any GLib warning or critical (a handler disconnected twice, a widget
        # used after destroy) aborts the app, and so fails the scenario.
        environment["G_DEBUG"] = "fatal-warnings"
        # Started with nothing else on its command line, the window is what the desktop's launcher starts:
        # `latchkey` alone, which opens without the command-line parser. Its log level then comes from the
        # environment, as a person's would (whatever the runner's own environment says; a scenario's may
        # say otherwise).
        if command or args:
            words = [binary, *command, "--log-level", "debug", *args]
        else:
            words = [binary]
            environment["LATCHKEY_LOG_LEVEL"] = "debug"
        environment.update(env or {})
        # A subcommand (`token`) comes before the options; its stdout, when kept apart, is what a script reads.
        self.stdout = open(stdout_path, "wb") if stdout_path else None
        self.process = subprocess.Popen(
            words,
            env=environment,
            stdout=self.stdout or self.log,
            stderr=self.log,
            start_new_session=True,
            cwd=cwd,
        )
        self.app = Desktop().application({"latchkey", "Latchkey"})

    # Finding things -----------------------------------------------------

    def find(self, role_names, label, root=None, timeout=15.0, exact=True, showing=True, newest=False):
        """The first matching accessible, or with newest=True the last one: a
        window opened a second time may leave its predecessor in the cache."""
        if isinstance(role_names, str):
            role_names = {role_names}

        def probe():
            nodes = list(walk(root or self.app))
            for node in reversed(nodes) if newest else nodes:
                if role(node) in role_names:
                    text = name(node)
                    if (text == label) if exact else (label in text):
                        if is_(node, Atspi.StateType.DEFUNCT):
                            continue  # a widget already destroyed, still in the cache
                        if not showing or is_(node, Atspi.StateType.SHOWING):
                            return node
            return None

        return wait_until(f"{'/'.join(role_names)} named {label!r}", probe, timeout)

    def find_all(self, role_name, root=None):
        """Every showing accessible of that role under root (names may be empty)."""
        return [node for node in walk(root or self.app)
                if role(node) == role_name and is_(node, Atspi.StateType.SHOWING)]

    def absent(self, role_names, label, timeout=10.0):
        """Waits until no showing accessible of that role and name remains."""
        if isinstance(role_names, str):
            role_names = {role_names}

        def probe():
            for node in walk(self.app):
                if role(node) in role_names and name(node) == label and is_(node, Atspi.StateType.SHOWING):
                    return None
            return True

        return wait_until(f"no {label!r}", probe, timeout)

    def button(self, label, **kwargs):
        return self.find("push button", label, **kwargs)

    def status(self):
        """The status line: the label whose accessible description is 'Status'."""
        for node in walk(self.app):
            if role(node) == "label":
                try:
                    if node.get_description() == "Status":
                        return name(node)
                except Exception:
                    continue
        return ""

    def wait_status(self, text, timeout=20.0):
        return wait_until(f"status containing {text!r}", lambda: text in self.status() and self.status(), timeout)

    def sensitive(self, node):
        return is_(node, Atspi.StateType.SENSITIVE)

    def wait_sensitive(self, label, sensitive=True, timeout=15.0):
        return wait_until(
            f"{label!r} {'enabled' if sensitive else 'disabled'}",
            lambda: (lambda b: b if self.sensitive(b) == sensitive else None)(self.button(label)),
            timeout,
        )

    # Acting ------------------------------------------------------------

    def press(self, node):
        """Presses node once it takes presses, as a person waits for a button that is greyed out (the
        agent's question holds its answers for a second after it appears)."""
        try:
            wait_until(f"{name(node)!r} to take presses", lambda: self.sensitive(node) or is_(node, Atspi.StateType.DEFUNCT), 10)
        except Failure:
            pass  # pressed all the same: what an insensitive control does with it is the test's to check
        action = node.get_action_iface()
        if action is None:
            raise Failure(f"{name(node)!r} has no action")
        action.do_action(0)

    def click(self, node):
        """A real pointer click at the middle of node, through the X server."""
        extents = node.get_component_iface().get_extents(Atspi.CoordType.SCREEN)
        x, y = extents.x + extents.width // 2, extents.y + extents.height // 2
        Atspi.generate_mouse_event(x, y, "abs")
        time.sleep(0.05)
        Atspi.generate_mouse_event(x, y, "b1c")

    def type_into(self, entry, text):
        """Focuses a page field with a click and types, key by key."""
        self.click(entry)
        wait_until("the field to take focus", lambda: is_(entry, Atspi.StateType.FOCUSED), 5)
        Atspi.generate_keyboard_event(0, text, Atspi.KeySynthType.STRING)
        wait_until(f"the field to hold {len(text)} characters", lambda: entry.get_text_iface().get_character_count() == len(text), 5)

    def screenshot(self, label):
        os.makedirs(self.shots, exist_ok=True)
        path = os.path.join(self.shots, f"{label}.png")
        time.sleep(0.3)  # let the last frame land
        subprocess.run(["import", "-window", "root", path], check=True)
        return path

    # Ending ------------------------------------------------------------

    def kill_web_processes(self, command):
        """SIGKILLs this app's descendant processes named command; returns how many."""
        victims = [pid for pid, name in descendants(self.process.pid).items() if name == command]
        for pid in victims:
            os.kill(pid, signal.SIGKILL)
        return len(victims)

    def loaded_libraries(self, *names):
        """Those of `names` (e.g. "libcurl") mapped into the app's process right now."""
        with open(f"/proc/{self.process.pid}/maps") as f:
            maps = f.read()
        return [name for name in names if f"/{name}" in maps]

    def web_processes(self):
        """WebKit processes among this app's descendants."""
        return [name for name in descendants(self.process.pid).values() if name.startswith("WebKit")]

    def close_by_window_button(self, title="Latchkey", timeout=20.0):
        """Quits as a person does: the main window's own close button. Returns
        the exit status; the caller checks it and the log."""
        window = self.find("frame", title)
        self.press(self.button("Close", root=window))
        try:
            status = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise Failure(f"the app did not end within {timeout} s of its window closing")
        self.log.close()
        return status

    def quit(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()
