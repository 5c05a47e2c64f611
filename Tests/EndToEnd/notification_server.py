"""A desktop notification service for the tests: owns org.freedesktop.Notifications on the session
bus (version 1.2 of the Desktop Notifications specification, with actions), writes every Notify
call to a file as a JSON line, and presses a notification's button when the test asks (its own
method Press(id, action key), which emits ActionInvoked as a real service does when a person
clicks). Prints "ready" once it owns the name.

    notification_server.py RECORD_FILE
"""

import json
import sys

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

INTERFACE = """
<node>
  <interface name="org.freedesktop.Notifications">
    <method name="GetCapabilities"><arg type="as" direction="out"/></method>
    <method name="Notify">
      <arg type="s" direction="in"/><arg type="u" direction="in"/><arg type="s" direction="in"/>
      <arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="as" direction="in"/>
      <arg type="a{sv}" direction="in"/><arg type="i" direction="in"/><arg type="u" direction="out"/>
    </method>
    <method name="CloseNotification"><arg type="u" direction="in"/></method>
    <method name="GetServerInformation">
      <arg type="s" direction="out"/><arg type="s" direction="out"/><arg type="s" direction="out"/><arg type="s" direction="out"/>
    </method>
    <signal name="NotificationClosed"><arg type="u"/><arg type="u"/></signal>
    <signal name="ActionInvoked"><arg type="u"/><arg type="s"/></signal>
  </interface>
  <interface name="io.github.latchkey.test.Notifications">
    <method name="Press"><arg type="u" direction="in"/><arg type="s" direction="in"/></method>
  </interface>
</node>
"""

PATH = "/org/freedesktop/Notifications"


def main():
    record = sys.argv[1]
    bus = Gio.bus_get_sync(Gio.BusType.SESSION)
    node = Gio.DBusNodeInfo.new_for_xml(INTERFACE)
    counter = [0]

    def called(connection, sender, path, interface, method, parameters, invocation):
        if method == "GetCapabilities":
            invocation.return_value(GLib.Variant("(as)", (["actions", "body"],)))
        elif method == "GetServerInformation":
            invocation.return_value(GLib.Variant("(ssss)", ("latchkey-test-notifications", "latchkey", "1", "1.2")))
        elif method == "Notify":
            app_name, replaces, icon, summary, body, actions, hints, timeout = parameters.unpack()
            counter[0] += 1
            number = replaces or counter[0]
            with open(record, "a") as f:
                f.write(json.dumps({"id": number, "app_name": app_name, "replaces_id": replaces, "summary": summary,
                                    "body": body, "actions": actions, "hints": sorted(hints), "urgency": hints.get("urgency"),
                                    "sender": sender}) + "\n")
            invocation.return_value(GLib.Variant("(u)", (number,)))
        elif method == "CloseNotification":
            (number,) = parameters.unpack()
            connection.emit_signal(None, PATH, "org.freedesktop.Notifications", "NotificationClosed", GLib.Variant("(uu)", (number, 3)))
            invocation.return_value(None)
        elif method == "Press":
            number, key = parameters.unpack()
            connection.emit_signal(None, PATH, "org.freedesktop.Notifications", "ActionInvoked", GLib.Variant("(us)", (number, key)))
            invocation.return_value(None)

    for interface in node.interfaces:
        bus.register_object(PATH, interface, called, None, None)
    loop = GLib.MainLoop()

    def acquired(*_):
        print("ready", flush=True)

    Gio.bus_own_name_on_connection(bus, "org.freedesktop.Notifications", Gio.BusNameOwnerFlags.NONE, acquired,
                                   lambda *_: loop.quit())
    GLib.io_add_watch(GLib.IOChannel.unix_new(0), GLib.PRIORITY_DEFAULT, GLib.IOCondition.HUP | GLib.IOCondition.IN,
                      lambda *_: (loop.quit(), False)[1])
    loop.run()


if __name__ == "__main__":
    main()
