#!/usr/bin/python3
# Prints the Applications menu as GNOME's own menu implementation
# (gnome-menus, libgnome-menu-3, through GObject introspection) builds it
# from $XDG_CONFIG_DIRS/menus/applications.menu and the merge directories:
# one line "Menu/Submenu<TAB>desktop-file-id" per entry.
# SPDX-License-Identifier: LGPL-2.1-or-later
import sys

import gi

gi.require_version("GMenu", "3.0")
from gi.repository import GMenu  # noqa: E402


def walk(directory, path):
    it = directory.iter()
    while True:
        kind = it.next()
        if kind == GMenu.TreeItemType.INVALID:
            break
        if kind == GMenu.TreeItemType.DIRECTORY:
            sub = it.get_directory()
            walk(sub, path + [sub.get_name()])
        elif kind == GMenu.TreeItemType.ENTRY:
            print("/".join(path) + "\t" + it.get_entry().get_desktop_file_id())


sys.stdout.reconfigure(encoding="utf-8", errors="surrogateescape")
tree = GMenu.Tree.new(sys.argv[1] if len(sys.argv) > 1 else "applications.menu",
                      GMenu.TreeFlags.INCLUDE_NODISPLAY)
tree.load_sync()
walk(tree.get_root_directory(), [])
