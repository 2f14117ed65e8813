#!/usr/bin/python3
"""A notification server for the desktop smoke test: it owns org.freedesktop.Notifications
on the test's private session bus, writes each notification it is asked to show to a
file (one JSON object a line: id, summary, body, actions), and then acts as a person
would: for each action named in FAKE_INVOKE (comma-separated; `default` is a click on the
notification itself) that the notification offers, it emits ActionInvoked, in order.

    notifications.py LOG_FILE

Debian's python3-dbus and python3-gi (deps.sh installs them).
"""

import json
import os
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

NAME = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"


class Server(dbus.service.Object):
    def __init__(self, bus, log, invoke):
        super().__init__(bus, PATH)
        self.log = log
        self.invoke = invoke
        self.next_id = 0

    @dbus.service.method(NAME, in_signature="", out_signature="as")
    def GetCapabilities(self):
        return ["actions", "body"]

    @dbus.service.method(NAME, in_signature="", out_signature="ssss")
    def GetServerInformation(self):
        return ("skald-test", "skald", "1", "1.2")

    @dbus.service.method(NAME, in_signature="susssasa{sv}i", out_signature="u")
    def Notify(self, app, replaces, icon, summary, body, actions, hints, timeout):
        self.next_id += 1
        nid = self.next_id
        # Actions come as pairs: identifier, label.
        offered = [str(a) for a in actions[0::2]]
        with open(self.log, "a", encoding="utf-8") as out:
            out.write(json.dumps({"id": nid, "summary": str(summary), "body": str(body), "actions": offered}) + "\n")
        due = [a for a in self.invoke if a == "default" or a in offered]
        if offered and due:
            for n, action in enumerate(due):
                GLib.timeout_add(500 * (n + 1), self.act, nid, action)
        return nid

    def act(self, nid, action):
        self.ActionInvoked(dbus.UInt32(nid), action)
        return False

    @dbus.service.method(NAME, in_signature="u", out_signature="")
    def CloseNotification(self, nid):
        self.NotificationClosed(dbus.UInt32(nid), dbus.UInt32(3))

    @dbus.service.signal(NAME, signature="us")
    def ActionInvoked(self, nid, action):
        pass

    @dbus.service.signal(NAME, signature="uu")
    def NotificationClosed(self, nid, reason):
        pass


def main():
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    name = dbus.service.BusName(NAME, bus, do_not_queue=True)
    invoke = [a for a in os.environ.get("FAKE_INVOKE", "").split(",") if a]
    Server(bus, sys.argv[1], invoke)
    print("notification server ready", flush=True)
    GLib.MainLoop().run()
    del name


if __name__ == "__main__":
    main()
