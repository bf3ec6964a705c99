#!/usr/bin/env python3
# test-agent-updates.py: the session agent's update checks, end to end.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A real glimpse-session on a private session bus (dbus-daemon), a
# notification server there (python-dbusmock's notification_daemon with
# the "actions" capability; it logs every call), an apt sandbox in a
# private store whose repository (real .debs, signed) is served on
# 127.0.0.1.  The agent checks shortly after it starts and notifies once;
# `glimpse updates` shows what it knows; `glimpse updates --check` asks
# it over D-Bus: an unchanged repository costs one conditional request and
# no new notification, a new publication exactly one (replacing the
# first), a bad signature an error and no notification with the last good
# list kept; "Later" snoozes; "Update now" runs pkexec (a recorder first in
# PATH) with the fixed helper and the sandbox id only, and the follow-up
# notification says the result; without polkit on the system bus, "Update
# now" opens the user's terminal (a recorder as GLIMPSE_TERMINAL that runs
# what it is given) running `sudo glimpse update ID` (sudo a recorder).
# A second sandbox's repository answers and then drips (faster than
# libcurl's floor of 100 B/s, so only the agent's bound stops it): its check
# is stopped after CheckTimeout, the process gone, an error saying so, and
# the next sandbox and the next rounds are checked all the same; SIGTERM in
# the middle of such a check quits the agent and ends the check.
#
# Env: GLIMPSE, GLIMPSE_SESSION (built programs), G_TEST_SRCDIR.

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aptrepo  # noqa: E402
from dripserver import DripServer  # noqa: E402

GLIMPSE = os.environ.get("GLIMPSE")
SESSION = os.environ.get("GLIMPSE_SESSION")
SRCDIR = os.environ.get("G_TEST_SRCDIR", os.path.join(os.path.dirname(__file__), ".."))
n = failed = 0


def ok(cond, name, detail=""):
    global n, failed
    n += 1
    print(("ok %d %s" if cond else "not ok %d %s") % (n, name))
    if not cond:
        failed += 1
        for line in str(detail).splitlines():
            print("# " + line)
    sys.stdout.flush()


def skip_all(why):
    print("1..0 # SKIP " + why)
    sys.exit(0)


for tool in ("dpkg-deb", "apt-ftparchive", "gpg", "gpgv", "dbus-daemon"):
    if shutil.which(tool) is None:
        skip_all("%s is not installed" % tool)
if subprocess.run(["/usr/bin/python3", "-c", "import dbusmock"], stderr=subprocess.DEVNULL).returncode != 0:
    skip_all("python3-dbusmock is not installed (apt-get install python3-dbusmock)")
if not GLIMPSE or not SESSION:
    skip_all("GLIMPSE / GLIMPSE_SESSION are not set (run through meson test)")

tmp = tempfile.mkdtemp(prefix="glimpse-agent-updates-")
procs = []
CHECK_TIMEOUT = 5   # s, the agent's bound on one check (updates.conf CheckTimeout)


def cleanup():
    for p in reversed(procs):
        if p.poll() is None:
            p.kill()
            p.wait()
    if not os.environ.get("GLIMPSE_TEST_KEEP"):
        shutil.rmtree(tmp, ignore_errors=True)


try:
    # --- the repository -------------------------------------------------------
    W = os.path.join(tmp, "work")
    repo = os.path.join(tmp, "repo")
    keys = aptrepo.Keys(os.path.join(tmp, "gnupg"))
    fpr = keys.generate("Glimpse Test Archive <archive@glimpse.invalid>")

    def publish(hello, date):
        debs = {("main", "amd64"): [aptrepo.build_deb(W, "hello", hello, "amd64"),
                                    aptrepo.build_deb(W, "tool", "2.0-1", "amd64"),
                                    aptrepo.build_deb(W, "same", "1.0-1", "amd64")]}
        aptrepo.publish(repo, "unstable", ["main"], ["amd64"], debs, keys, fpr, date=date, codename="sid")

    now = time.time()
    publish("1.0-2", now - 600)
    server = subprocess.Popen([sys.executable, os.path.join(SRCDIR, "http-server.py"), repo],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    procs.append(server)
    port = int(server.stdout.readline())
    base_url = "http://127.0.0.1:%d/" % port

    def http(path):
        return urllib.request.urlopen(base_url + path, timeout=10).read().decode()

    # --- the store: two apt sandboxes, sid and one whose repository drips ---------
    store = os.path.join(tmp, "store")

    def apt_sandbox(sid, name, url):
        root = os.path.join(store, sid, "rootfs")
        for d in ("etc/apt/sources.list.d", "var/lib/dpkg", "usr/share/keyrings", "usr/share/applications"):
            os.makedirs(os.path.join(root, d))
        with open(os.path.join(store, sid, "sandbox.conf"), "w") as f:
            subprocess.run(["bash", "-c", '. "$0"; gl_sandbox_conf test "$1" rootfs apt',
                            os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib", "sandbox-conf.sh"),
                            name], stdout=f, check=True)
        keys.export(fpr, os.path.join(root, "usr/share/keyrings/test.gpg"))
        with open(os.path.join(root, "etc/apt/sources.list"), "w") as f:
            f.write("deb [signed-by=/usr/share/keyrings/test.gpg] %s unstable main\n" % url)
        with open(os.path.join(root, "var/lib/dpkg/status"), "w") as f:
            f.write(aptrepo.status_stanza("dpkg", "1.21.22", "amd64")
                    + aptrepo.status_stanza("hello", "1.0-1", "amd64")
                    + aptrepo.status_stanza("tool", "1.0-1", "amd64")
                    + aptrepo.status_stanza("same", "1.0-1", "amd64"))

    apt_sandbox("sid", "Debian unstable", base_url)
    drip = DripServer()
    apt_sandbox("drip", "Dripping mirror", "http://127.0.0.1:%d/" % drip.port)

    # --- the session: bus, notification server, pkexec recorder, agent ----------
    home = os.path.join(tmp, "home")
    for d in ("config/glimpse", "cache", "data", "bin"):
        os.makedirs(os.path.join(home, d))
    with open(os.path.join(home, "config/glimpse/updates.conf"), "w") as f:
        f.write("[Updates]\nFirstDelay=0\nInterval=6\nCheckTimeout=%d\n" % CHECK_TIMEOUT)
    record = os.path.join(tmp, "pkexec.log")
    with open(os.path.join(home, "bin/pkexec"), "w") as f:
        f.write("#!/bin/sh\nprintf '%%s\\n' \"$*\" >> '%s'\nexit 0\n" % record)
    os.chmod(os.path.join(home, "bin/pkexec"), 0o755)
    sudo_record = os.path.join(tmp, "sudo.log")
    with open(os.path.join(home, "bin/sudo"), "w") as f:
        f.write("#!/bin/sh\nprintf 'sudo %%s\\n' \"$*\" >> '%s'\n" % sudo_record)
    os.chmod(os.path.join(home, "bin/sudo"), 0o755)
    term_record = os.path.join(tmp, "terminal.log")
    with open(os.path.join(home, "bin/test-terminal"), "w") as f:
        f.write("#!/bin/sh\n[ \"$1\" = -e ] && shift\nprintf '%%s\\n' \"$*\" >> '%s'\nexec \"$@\" </dev/null >/dev/null 2>&1\n"
                % term_record)
    os.chmod(os.path.join(home, "bin/test-terminal"), 0o755)

    # (buses that start nothing: no notification server or glimpse-session
    # the machine has is activated in place of the test's)
    bus_conf = "--config-file=" + os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib",
                                               "session-bus.conf")
    bus = subprocess.Popen(["dbus-daemon", bus_conf, "--nofork", "--print-address=1"],
                           stdout=subprocess.PIPE, text=True)
    procs.append(bus)
    address = bus.stdout.readline().strip()
    # the "system" bus, where polkit's authority lives (python-dbusmock's
    # polkitd template), and which is taken away later
    sysbus = subprocess.Popen(["dbus-daemon", bus_conf, "--nofork", "--print-address=1"],
                              stdout=subprocess.PIPE, text=True)
    procs.append(sysbus)
    sys_address = sysbus.stdout.readline().strip()
    env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address, GLIMPSE_SANDBOX_DIR=store,
               DBUS_SYSTEM_BUS_ADDRESS=sys_address, GLIMPSE_TERMINAL=os.path.join(home, "bin/test-terminal"),
               XDG_CONFIG_HOME=os.path.join(home, "config"), XDG_CACHE_HOME=os.path.join(home, "cache"),
               XDG_DATA_HOME=os.path.join(home, "data"), XDG_DATA_DIRS="/nonexistent",
               PATH=os.path.join(home, "bin") + ":" + os.environ["PATH"],
               GLIMPSE_UPDATE_HELPER="/usr/libexec/glimpse-update-helper", GSETTINGS_BACKEND="memory",
               G_MESSAGES_DEBUG="")
    notify_log = os.path.join(tmp, "notify.log")
    mock = subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--session", "--template", "notification_daemon",
                             "--parameters", json.dumps({"capabilities": "actions body"}), "--logfile", notify_log],
                            env=env, stdout=subprocess.DEVNULL)
    procs.append(mock)
    polkit = subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--system", "--template", "polkitd"],
                              env=env, stdout=subprocess.DEVNULL)
    procs.append(polkit)

    def gdbus(*args):
        return subprocess.run(["gdbus", "call", "--session"] + list(args), env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)

    def wait_for(cond, timeout=20):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if cond():
                return True
            time.sleep(0.05)
        return cond()

    wait_for(lambda: "true" in gdbus("--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus",
                                     "--method", "org.freedesktop.DBus.NameHasOwner",
                                     "org.freedesktop.Notifications").stdout)

    def polkit_owned():
        return "true" in subprocess.run(["gdbus", "call", "--system", "--dest", "org.freedesktop.DBus", "--object-path",
                                         "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.NameHasOwner",
                                         "org.freedesktop.PolicyKit1"], env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True).stdout
    wait_for(polkit_owned)

    def notifies():
        if not os.path.exists(notify_log):
            return []
        # one call per entry; a body's newlines continue its entry
        entries = re.split(r"\n(?=\d+\.\d+ )", open(notify_log).read())
        return [e for e in entries if " Notify " in e]

    agent = subprocess.Popen([SESSION, "--verbose"], env=env, stdout=subprocess.DEVNULL,
                             stderr=open(os.path.join(tmp, "agent.log"), "w"))
    procs.append(agent)

    def check_procs(sandbox):
        """The agent's glimpse-updates-check processes for @sandbox (zombies not counted)."""
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                argv = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0")[:-1]
                state = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if (len(argv) == 4 and os.path.basename(argv[0]) == b"glimpse-updates-check"
                    and argv[3] == sandbox.encode() and state != "Z"):
                found.append(int(pid))
        return found

    print("1..23")
    # shortly after start: one round, drip (stopped after CheckTimeout)
    # then sid; one notification
    ok(wait_for(lambda: len(notifies()) >= 1, timeout=CHECK_TIMEOUT + 20),
       "the agent checks after it starts and notifies, past a check that was stopped",
       open(os.path.join(tmp, "agent.log")).read()[-3000:])
    time.sleep(0.5)
    first = notifies()
    ok(len(first) == 1 and '"2 updates for Debian unstable"' in first[0] and "hello 1.0-1 → 1.0-2" in first[0]
       and '"update-now"' in first[0], "exactly one notification: 2 updates, Update now / Later", first)

    def glimpse(*args):
        return subprocess.run([GLIMPSE] + list(args), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, timeout=120)

    # the dripping repository's check: stopped, gone, an error that says so
    out = glimpse("updates", "drip")
    stopped = "The update check of drip took longer than %d s and was stopped" % CHECK_TIMEOUT
    ok("drip (Dripping mirror): never checked successfully (last tried " in out.stdout and "up to date" not in out.stdout
       and stopped in out.stdout and "glimpse repos drip lists them" in out.stdout
       and "tried again at the next check" in out.stdout and "update-state: error" in glimpse("status").stdout,
       "a check that takes too long: stopped, with an error saying so and what to do", out.stdout + out.stderr)
    # (glimpse updates may wrap the message: compared with the line breaks out)
    stuck = "while fetching http://127.0.0.1:%d/dists/unstable/InRelease, whose repository may be slow" % drip.port
    ok(stuck in " ".join(out.stdout.split()),
       "... naming the address the check was stuck on (glimpse-updates-check said it was fetching it)",
       out.stdout + out.stderr)
    ok(wait_for(lambda: drip.counts() == (0, 1), timeout=5) and check_procs("drip") == [],
       "the stopped check's process is gone (its connection closed)",
       "connections open, closed: %s; processes: %s" % (drip.counts(), check_procs("drip")))
    # the next round: drip stopped again, and sid after it checked
    http("__reset")
    out = glimpse("updates", "--check", "drip", "sid")
    log = http("__stats")
    ok(out.returncode == 1 and out.stdout.count(stopped) == 1 and "hello:amd64 1.0-1 → 1.0-2" in out.stdout
       and "InRelease" in log and wait_for(lambda: drip.counts() == (0, 2), timeout=5) and check_procs("drip") == [],
       "the next round checks again: drip stopped again, sid after it",
       "%s\n%s\n%s\n%s" % (out.stdout, out.stderr, drip.counts(), log))

    out = glimpse("updates", "sid")
    ok(out.returncode == 0 and "hello:amd64 1.0-1 → 1.0-2 (unstable)" in out.stdout
       and "tool:amd64 1.0-1 → 2.0-1" in out.stdout and "same" not in out.stdout,
       "glimpse updates shows what the agent found", out.stdout + out.stderr)

    out = glimpse("status")
    ok(out.returncode == 0 and "updates: 2 (glimpse updates sid lists them)" in out.stdout
       and "update-state: updates" in out.stdout, "glimpse status sums the updates up", out.stdout + out.stderr)

    http("__reset")
    out = glimpse("updates", "--check", "sid")
    log = http("__stats")
    ok(out.returncode == 0 and "2 updates" in out.stdout and len(notifies()) == 1,
       "glimpse updates --check, nothing new: the same list, no new notification", out.stdout + out.stderr)
    ok(log.count("InRelease") == 1 and "Packages" not in log and '"status": 304' in log,
       "an unchanged repository costs one conditional request", log)

    publish("1.0-3", now)
    out = glimpse("updates", "--check", "sid")
    calls = notifies()
    ok(out.returncode == 0 and "hello:amd64 1.0-1 → 1.0-3" in out.stdout and len(calls) == 2
       and re.search(r' Notify "Glimpse" 1 ', calls[1]),
       "a new publication: exactly one more notification, replacing the first", (out.stdout, calls))

    # a bad signature: an error, no notification, the last good list kept
    dist = os.path.join(repo, "dists", "unstable")
    good = open(os.path.join(dist, "InRelease"), "rb").read()
    open(os.path.join(dist, "InRelease"), "wb").write(good.replace(b"Suite: unstable", b"Suite: unstablx"))
    os.utime(os.path.join(dist, "InRelease"), (time.time() + 5, time.time() + 5))
    out = glimpse("updates", "--check", "sid")
    ok(out.returncode == 1 and "the last check failed" in out.stdout and "signature" in out.stdout
       and "hello:amd64 1.0-1 → 1.0-3" in out.stdout and len(notifies()) == 2,
       "a bad signature: an error shown, no notification, the last good list kept", out.stdout + out.stderr)
    open(os.path.join(dist, "InRelease"), "wb").write(good)
    os.utime(os.path.join(dist, "InRelease"), (time.time() + 10, time.time() + 10))

    # "Later": snoozed until something new; its state cannot be saved (a
    # directory where the file goes): a warning naming the file and why
    state = os.path.join(home, "cache/glimpse/updates/sandboxes/sid/announced")
    if os.path.exists(state):
        os.unlink(state)
    os.makedirs(os.path.join(state, "in-the-way"))
    gdbus("--dest", "org.freedesktop.Notifications", "--object-path", "/org/freedesktop/Notifications",
          "--method", "org.freedesktop.DBus.Mock.EmitSignal", "org.freedesktop.Notifications", "ActionInvoked",
          "us", "[<uint32 1>, <'later'>]")
    ok(wait_for(lambda: " CloseNotification 1" in open(notify_log).read()), "Later closes the notification")
    agent_log = open(os.path.join(tmp, "agent.log")).read()
    ok(re.search(r"WARNING.*Cannot save %s, .*“Later” for “sid”: .*(directory|Directory)" % re.escape(state),
                 agent_log),
       "a state that cannot be saved is a warning naming the file and the error", agent_log[-2000:])
    shutil.rmtree(state)
    out = glimpse("updates", "--check", "sid")
    ok(out.returncode == 0 and len(notifies()) == 2, "after Later, the same updates are not notified again",
       notifies())

    # something new after Later: notified again (a new notification: the
    # old one was closed); then "Update now" on it
    publish("1.0-4", now + 60)
    out = glimpse("updates", "--check", "sid")
    calls = notifies()
    ok(out.returncode == 0 and len(calls) == 3 and "hello 1.0-1 → 1.0-4" in calls[2]
       and re.search(r' Notify "Glimpse" 0 ', calls[2]),
       "after Later, something new is notified again", calls)
    gdbus("--dest", "org.freedesktop.Notifications", "--object-path", "/org/freedesktop/Notifications",
          "--method", "org.freedesktop.DBus.Mock.EmitSignal", "org.freedesktop.Notifications", "ActionInvoked",
          "us", "[<uint32 2>, <'update-now'>]")   # the mock's second id
    ok(wait_for(lambda: os.path.exists(record)) and open(record).read() == "/usr/libexec/glimpse-update-helper sid\n",
       "Update now runs pkexec with the fixed helper and the sandbox id, nothing else",
       open(record).read() if os.path.exists(record) else "no pkexec call")
    ok(wait_for(lambda: any('"Debian unstable is up to date"' in l for l in notifies())),
       "the follow-up notification says the result", notifies())

    # without polkit: "Update now" opens a terminal running sudo glimpse update
    polkit.kill()
    polkit.wait()
    wait_for(lambda: not polkit_owned())
    publish("1.0-5", now + 120)
    out = glimpse("updates", "--check", "sid")
    calls = notifies()
    ok(out.returncode == 0 and len(calls) == 5 and "hello 1.0-1 → 1.0-5" in calls[4], "1.0-5 is notified", calls)
    gdbus("--dest", "org.freedesktop.Notifications", "--object-path", "/org/freedesktop/Notifications",
          "--method", "org.freedesktop.DBus.Mock.EmitSignal", "org.freedesktop.Notifications", "ActionInvoked",
          "us", "[<uint32 2>, <'update-now'>]")
    ok(wait_for(lambda: os.path.exists(sudo_record))
       and re.fullmatch(r"sudo \S*glimpse update sid\n", open(sudo_record).read())
       and open(term_record).read().startswith("/bin/sh -c sudo ")
       and open(record).read() == "/usr/libexec/glimpse-update-helper sid\n",
       "without polkit, Update now opens a terminal running sudo glimpse update ID (pkexec not run)",
       "%s\n%s" % (open(sudo_record).read() if os.path.exists(sudo_record) else "no sudo call",
                   open(os.path.join(tmp, "agent.log")).read()[-1500:]))

    # in the middle of a check (the dripping one, surely under way),
    # SIGTERM: the agent quits cleanly, and the check with it
    subprocess.Popen([GLIMPSE, "updates", "--check", "drip"], env=env, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
    under_way = wait_for(lambda: drip.counts()[0] == 1 and check_procs("drip"), timeout=CHECK_TIMEOUT - 1)
    agent.terminate()
    try:
        rc = agent.wait(timeout=15)
    except subprocess.TimeoutExpired:
        rc = "still running"
    ok(under_way and rc == 0, "SIGTERM (during a check): the agent quits with 0",
       "%s %s\n%s" % (under_way, rc, open(os.path.join(tmp, "agent.log")).read()[-2000:]))
    ok(wait_for(lambda: drip.counts()[0] == 0 and check_procs("drip") == [], timeout=5),
       "... and the check it was running is gone", "%s %s" % (drip.counts(), check_procs("drip")))

    # an agent killed (kill -9) in the middle of a check: the check dies
    # with it (the one its first round starts, drip first)
    agent = subprocess.Popen([SESSION, "--verbose"], env=env, stdout=subprocess.DEVNULL,
                             stderr=open(os.path.join(tmp, "agent-2.log"), "w"))
    procs.append(agent)
    under_way = wait_for(lambda: drip.counts()[0] == 1 and len(check_procs("drip")) == 1,
                         timeout=CHECK_TIMEOUT + 20)
    left = check_procs("drip")
    agent.kill()
    agent.wait()
    ok(under_way and wait_for(lambda: drip.counts()[0] == 0 and check_procs("drip") == [], timeout=5),
       "kill -9 of the agent during a check: the check is gone with it",
       "%s %s %s\n%s" % (under_way, drip.counts(), check_procs("drip"),
                         open(os.path.join(tmp, "agent-2.log")).read()[-1500:]))
    for pid in left:    # (on failure: not left to the next test)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
finally:
    cleanup()
sys.exit(1 if failed else 0)
