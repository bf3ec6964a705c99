#!/usr/bin/python3
# Prints the Applications menu as a real menu implementation (pyxdg) builds
# it from $XDG_CONFIG_DIRS/menus/applications.menu and the merge dirs:
# one line "Menu/Submenu<TAB>desktop-file-id" per entry.
import sys
import xdg.Menu


def walk(menu, path):
    for entry in menu.getEntries():
        if isinstance(entry, xdg.Menu.Menu):
            walk(entry, path + [entry.getName()])
        elif isinstance(entry, xdg.Menu.MenuEntry):
            print("/".join(path) + "\t" + entry.DesktopFileID)


sys.stdout.reconfigure(encoding="utf-8", errors="surrogateescape")
walk(xdg.Menu.parse(sys.argv[1] if len(sys.argv) > 1 else None), [])
