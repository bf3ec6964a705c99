#!/usr/bin/env python3
"""build-options.py BUILDDIR CC < OPTIONS: compares an existing meson build
directory with the options tests/run wants (one a line: -Dkey=value,
--prefix=..., ...).  Prints "same", "options" (the same compiler, other
options: meson configure is enough) or "compiler" (set up anew)."""
import json, os, re, subprocess, sys

builddir, cc = sys.argv[1], sys.argv[2]
want = {}
for arg in sys.stdin.read().split():
    arg = arg[2:] if arg.startswith("-D") else arg.lstrip("-")
    k, _, v = arg.partition("=")
    want[k] = v


def introspect(what):
    out = subprocess.run(["meson", "introspect", builddir, what],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def compiler_id():
    # "C compiler for the host machine: cc (gcc 12.2.0 ...)" in the set-up log
    with open(os.path.join(builddir, "meson-logs", "meson-log.txt")) as f:
        for line in f:
            m = re.match(r"C compiler for the host machine: \S+ \((\w+)", line)
            if m:
                return m.group(1)
    return None


try:
    cid = compiler_id()
    have = {o["name"]: o["value"] for o in introspect("--buildoptions")}
except (OSError, subprocess.CalledProcessError, ValueError):
    print("compiler")
    sys.exit(0)
if cid != cc:
    print("compiler")
    sys.exit(0)
for k, v in want.items():
    h = have.get(k)
    if isinstance(h, bool):
        h = "true" if h else "false"
    elif isinstance(h, list):
        h = ",".join(h)
    if str(h) != v:
        print("options")
        sys.exit(0)
print("same")
