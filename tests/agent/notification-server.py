#!/usr/bin/python3
# A notification server for the tests, complete per the Desktop
# Notifications Specification 1.2 (Notify with actions and hints,
# CloseNotification, GetCapabilities, GetServerInformation; ActionInvoked
# and NotificationClosed signals).  It records every notification as one
# JSON line in the file given, and lets the test click an action:
#   org.glimpse.Test.Notifications.Invoke (u id, s action_key)
# The button clicked closes the notification (reason 2), as real servers do.
# SPDX-License-Identifier: LGPL-2.1-or-later
import json
import sys

from gi.repository import Gio, GLib

XML = """
<node>
  <interface name="org.freedesktop.Notifications">
    <method name="GetCapabilities"><arg type="as" direction="out"/></method>
    <method name="Notify">
      <arg type="s" direction="in"/><arg type="u" direction="in"/>
      <arg type="s" direction="in"/><arg type="s" direction="in"/>
      <arg type="s" direction="in"/><arg type="as" direction="in"/>
      <arg type="a{sv}" direction="in"/><arg type="i" direction="in"/>
      <arg type="u" direction="out"/>
    </method>
    <method name="CloseNotification"><arg type="u" direction="in"/></method>
    <method name="GetServerInformation">
      <arg type="s" direction="out"/><arg type="s" direction="out"/>
      <arg type="s" direction="out"/><arg type="s" direction="out"/>
    </method>
    <signal name="NotificationClosed"><arg type="u"/><arg type="u"/></signal>
    <signal name="ActionInvoked"><arg type="u"/><arg type="s"/></signal>
  </interface>
  <interface name="org.glimpse.Test.Notifications">
    <method name="Invoke"><arg type="u" direction="in"/><arg type="s" direction="in"/></method>
  </interface>
</node>
"""
PATH = "/org/freedesktop/Notifications"
log = open(sys.argv[1], "a", buffering=1)
shown = {}
next_id = [1]
conn = [None]


def emit(name, params):
    conn[0].emit_signal(None, PATH, "org.freedesktop.Notifications", name, params)


def close(nid, reason):
    if shown.pop(nid, None) is not None:
        emit("NotificationClosed", GLib.Variant("(uu)", (nid, reason)))


def on_call(connection, sender, path, iface, method, params, invocation):
    if method == "GetCapabilities":
        invocation.return_value(GLib.Variant("(as)", (["actions", "body", "body-markup", "persistence"],)))
    elif method == "GetServerInformation":
        invocation.return_value(GLib.Variant("(ssss)", ("glimpse-test", "Glimpse", "1.0", "1.2")))
    elif method == "Notify":
        app, replaces, icon, summary, body, actions, hints, timeout = params.unpack()
        nid = replaces or next_id[0]
        if not replaces:
            next_id[0] += 1
        shown[nid] = actions
        keys = actions[0::2]
        log.write(json.dumps({"id": nid, "app": app, "summary": summary, "body": body,
                              "icon": icon, "actions": keys}) + "\n")
        invocation.return_value(GLib.Variant("(u)", (nid,)))
    elif method == "CloseNotification":
        close(params[0], 3)
        invocation.return_value(None)
    elif method == "Invoke":
        nid, key = params.unpack()
        if nid not in shown or key not in shown[nid][0::2]:
            invocation.return_dbus_error("org.glimpse.Test.Error", "no such notification or action")
            return
        emit("ActionInvoked", GLib.Variant("(us)", (nid, key)))
        close(nid, 2)
        invocation.return_value(None)


def on_bus(connection, name):
    conn[0] = connection
    info = Gio.DBusNodeInfo.new_for_xml(XML)
    for iface in info.interfaces:
        connection.register_object(PATH, iface, on_call, None, None)


def on_name(connection, name):
    log.write(json.dumps({"ready": True}) + "\n")


Gio.bus_own_name(Gio.BusType.SESSION, "org.freedesktop.Notifications", Gio.BusNameOwnerFlags.NONE,
                 on_bus, on_name, lambda *a: sys.exit(1))
GLib.MainLoop().run()
