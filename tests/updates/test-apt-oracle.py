#!/usr/bin/env python3
# test-apt-oracle.py: the update check equals `apt list --upgradable`.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Builds a real signed apt repository from real .deb files (three suites:
# main+contrib with by-hash and .xz only, a NotAutomatic "experimental"
# with .gz only, a NotAutomatic+ButAutomaticUpgrades "backports"; one
# disabled deb822 entry), serves it on 127.0.0.1 with tests/http-server.py,
# and a sandbox view of two layers (a base and a system generation with a
# whiteout) whose installed versions are older.  The check's answer must
# equal apt's (apt-get update; apt list --upgradable, run with Dir= on
# the merged tree and the same architectures), package for package,
# version for version; a second check costs one conditional request per
# suite and nothing else; a newer publication is seen; every fault is an
# error, never a list.
#
# Env: UPDATES_CHECK (the built tests/updates/updates-check), G_TEST_SRCDIR.

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import aptrepo  # noqa: E402

CHECK = os.environ.get("UPDATES_CHECK")
SRCDIR = os.environ.get("G_TEST_SRCDIR", os.path.join(os.path.dirname(__file__), ".."))
NATIVE, FOREIGN = "amd64", "i386"

n = 0
failed = 0


def ok(cond, name, detail=""):
    global n, failed
    n += 1
    if cond:
        print("ok %d %s" % (n, name))
    else:
        failed += 1
        print("not ok %d %s" % (n, name))
        for line in str(detail).splitlines():
            print("# " + line)
    sys.stdout.flush()


def skip_all(why):
    # the one skip policy (tests/lib/skip.sh): a failure where all is required
    if os.environ.get("CI") == "true" or os.environ.get("GLIMPSE_TESTS_REQUIRE_ALL") == "1":
        print("Bail out! a required case cannot run (CI=true or GLIMPSE_TESTS_REQUIRE_ALL=1): " + why)
        sys.exit(1)
    print("1..0 # SKIP " + why)
    sys.exit(0)


for tool in ("dpkg-deb", "apt-ftparchive", "gpg", "gpgv", "apt-get"):
    if shutil.which(tool) is None:
        skip_all("%s is not installed (apt-get install apt-utils gpg gpgv dpkg)" % tool)
if not CHECK:
    skip_all("UPDATES_CHECK is not set (run through meson test)")

tmp = tempfile.mkdtemp(prefix="glimpse-updates-test-")
repo = os.path.join(tmp, "repo")
keys = aptrepo.Keys(os.path.join(tmp, "gnupg"))
fpr = keys.generate("Glimpse Test Archive <archive@glimpse.invalid>")
other = keys.generate("Someone Else <else@glimpse.invalid>")

# --- the packages ------------------------------------------------------------
# (name, version, arch) per suite/component/arch index
W = os.path.join(tmp, "work")
deb = lambda name, version, arch="amd64": aptrepo.build_deb(W, name, version, arch)

main_pkgs = {
    ("main", NATIVE): [deb("hello", "2.10-3"), deb("same", "1.0-1"), deb("older", "1.5-1"),
                       deb("tilde", "1.0-1"), deb("epoch", "2.0-1"), deb("docs", "1.1-1", "all"),
                       deb("held", "1.1-1"), deb("pinned", "1.0-2"), deb("pinned", "2.0-1"),
                       deb("bpo-main", "1.0-1"), deb("exp-pinned", "1.0-1"),
                       deb("multi", "1.1-1"), deb("uninstalled", "5.0-1"), deb("hidden", "3.0-1")],
    ("main", FOREIGN): [deb("multi", "1.1-1", "i386"), deb("docs", "1.1-1", "all"),
                        deb("only386", "0.9-1", "i386")],
    ("contrib", NATIVE): [deb("contribpkg", "0.2-1"), aptrepo.build_deb(W, "phased", "1.1-1", NATIVE, extra="Phased-Update-Percentage: 10\n")],
    ("contrib", FOREIGN): [],
}
exp_pkgs = {
    ("main", NATIVE): [deb("exp-only", "3.0-1"), deb("hello", "3.0~rc1-1"), deb("exp-pinned", "2.0-1")],
    ("main", FOREIGN): [],
}
bpo_pkgs = {
    ("main", NATIVE): [deb("bpo-only", "1.1-1~bpo1"), deb("bpo-main", "1.2-1~bpo1")],
    ("main", FOREIGN): [],
}
disabled_pkgs = {("main", NATIVE): [deb("hello", "9.0-1")], ("main", FOREIGN): []}


def publish_main(date=None, extra=None, **kw):
    pk = {k: list(v) for k, v in main_pkgs.items()}
    for key, debs in (extra or {}).items():
        pk.setdefault(key, []).extend(debs)
    return aptrepo.publish(repo, "unstable", ["main", "contrib"], [NATIVE, FOREIGN], pk, keys, fpr,
                           date=date, by_hash=True, compress=("xz",), keep_plain_names=False,
                           codename="sid", **kw)


now = time.time()
publish_main(date=now - 3600)
aptrepo.publish(repo, "experimental", ["main"], [NATIVE, FOREIGN], exp_pkgs, keys, fpr,
                not_automatic=True, compress=("gz",), codename="rc-buggy")
aptrepo.publish(repo, "backports", ["main"], [NATIVE, FOREIGN], bpo_pkgs, keys, fpr,
                not_automatic=True, but_automatic=True, compress=("xz", "gz"))
aptrepo.publish(repo, "disabled", ["main"], [NATIVE, FOREIGN], disabled_pkgs, keys, fpr)

# --- the server ---------------------------------------------------------------
server = subprocess.Popen([sys.executable, os.path.join(SRCDIR, "http-server.py"), repo],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
port = int(server.stdout.readline())
base_url = "http://127.0.0.1:%d/" % port


def http(path):
    return urllib.request.urlopen(base_url + path, timeout=10).read().decode()


# --- the sandbox: base layer + system generation -------------------------------
base = os.path.join(tmp, "base")
tree = os.path.join(tmp, "tree")
for d in ("etc/apt/sources.list.d", "etc/apt/preferences.d", "var/lib/dpkg", "usr/share/keyrings",
          "etc/apt/trusted.gpg.d"):
    os.makedirs(os.path.join(base, d), exist_ok=True)
for d in ("etc/apt/sources.list.d", "var/lib/dpkg", "usr/share/keyrings"):
    os.makedirs(os.path.join(tree, d), exist_ok=True)

keys.export(fpr, os.path.join(tree, "usr/share/keyrings/glimpse-test.gpg"))
armored = keys.export(fpr, os.path.join(tmp, "key.asc"), armor=True).decode()
# the keyring is reached through a link inside the view, absolute target
os.symlink("/usr/share/keyrings/glimpse-test.gpg", os.path.join(base, "usr/share/keyrings/link.gpg"))

with open(os.path.join(base, "etc/apt/sources.list"), "w") as f:
    f.write("# the main archive\ndeb [arch=%s,%s signed-by=/usr/share/keyrings/link.gpg] %s unstable main contrib\n"
            "deb-src [signed-by=/usr/share/keyrings/link.gpg] %s unstable main\n" % (NATIVE, FOREIGN, base_url, base_url))
inline = "\n".join(" " + (l if l.strip() else ".") for l in armored.strip().splitlines())
with open(os.path.join(tree, "etc/apt/sources.list.d/extra.sources"), "w") as f:
    f.write("# deb822, an inline key\nTypes: deb\nURIs: %s\nSuites: experimental backports\n"
            "Components: main\nSigned-By:\n%s\n\n"
            "Types: deb\nURIs: %s\nSuites: disabled\nComponents: main\nEnabled: no\n"
            "Signed-By: /usr/share/keyrings/glimpse-test.gpg\n" % (base_url, inline, base_url))
# a source in the base that the system generation deleted (a whiteout)
with open(os.path.join(base, "etc/apt/sources.list.d/gone.list"), "w") as f:
    f.write("deb [signed-by=/usr/share/keyrings/glimpse-test.gpg] %s disabled main\n" % base_url)
# a source in the base under a directory the system generation made
# opaque (overlayfs: user.overlay.opaque=y): hidden too
with open(os.path.join(base, "etc/apt/sources.list.d/opaque-hidden.list"), "w") as f:
    f.write("deb [signed-by=/usr/share/keyrings/glimpse-test.gpg] %s disabled main\n" % base_url)
try:
    os.setxattr(os.path.join(tree, "etc/apt/sources.list.d"), "user.overlay.opaque", b"y")
    opaque = True
except OSError:
    opaque = False
    os.unlink(os.path.join(base, "etc/apt/sources.list.d/opaque-hidden.list"))
whiteouts = os.geteuid() == 0
if whiteouts:
    os.mknod(os.path.join(tree, "etc/apt/sources.list.d/gone.list"), 0o600 | 0o020000, os.makedev(0, 0))
else:
    os.unlink(os.path.join(base, "etc/apt/sources.list.d/gone.list"))

with open(os.path.join(base, "etc/apt/preferences.d/pins"), "w") as f:
    f.write("Package: pinned\nPin: version 1.0*\nPin-Priority: 1001\n\n"
            "Package: exp-*\nPin: release a=experimental\nPin-Priority: 550\n")
with open(os.path.join(base, "etc/apt/preferences.d/ignored.disabled"), "w") as f:
    f.write("Package: *\nPin: release a=unstable\nPin-Priority: -1\n")

status = "".join([
    aptrepo.status_stanza("dpkg", "1.21.22", NATIVE),
    aptrepo.status_stanza("hello", "2.10-2", NATIVE),
    aptrepo.status_stanza("same", "1.0-1", NATIVE),
    aptrepo.status_stanza("older", "2.0-1", NATIVE),
    aptrepo.status_stanza("tilde", "1.0~rc1-1", NATIVE),
    aptrepo.status_stanza("epoch", "1:0.9-1", NATIVE),
    aptrepo.status_stanza("docs", "1.0-1", "all"),
    aptrepo.status_stanza("held", "1.0-1", NATIVE, state="hold ok installed"),
    aptrepo.status_stanza("pinned", "1.0-1", NATIVE),
    aptrepo.status_stanza("bpo-only", "1.0-1", NATIVE),
    aptrepo.status_stanza("bpo-main", "1.0-1", NATIVE),
    aptrepo.status_stanza("exp-only", "2.0-1", NATIVE),
    aptrepo.status_stanza("exp-pinned", "1.0-1", NATIVE),
    aptrepo.status_stanza("multi", "1.0-1", NATIVE, multiarch="same"),
    aptrepo.status_stanza("multi", "1.0-1", FOREIGN, multiarch="same"),
    aptrepo.status_stanza("only386", "0.8-1", FOREIGN),
    aptrepo.status_stanza("contribpkg", "0.1-1", NATIVE),
    aptrepo.status_stanza("local-only", "1.0-1", NATIVE),
    aptrepo.status_stanza("phased", "1.0-1", NATIVE),
    aptrepo.status_stanza("removed", "1.0-1", NATIVE, state="deinstall ok config-files"),
    aptrepo.status_stanza("hidden", "1.0-1", NATIVE),
])
# the base's status is stale; the system generation's is the one in effect
with open(os.path.join(base, "var/lib/dpkg/status"), "w") as f:
    f.write(aptrepo.status_stanza("dpkg", "1.21.22", NATIVE) + aptrepo.status_stanza("hello", "0.1-1", NATIVE))
with open(os.path.join(tree, "var/lib/dpkg/status"), "w") as f:
    f.write(status)
with open(os.path.join(base, "var/lib/dpkg/arch"), "w") as f:
    f.write("%s\n%s\n" % (NATIVE, FOREIGN))

layers = [tree, base]


def merged_root():
    """The view as one tree, for apt (Dir=)."""
    root = os.path.join(tmp, "merged")
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(base, root, symlinks=True)
    for dirpath, dirnames, filenames in os.walk(tree):
        rel = os.path.relpath(dirpath, tree)
        os.makedirs(os.path.join(root, rel), exist_ok=True)
        for name in filenames:
            src = os.path.join(dirpath, name)
            dst = os.path.join(root, rel, name)
            st = os.lstat(src)
            if os.path.lexists(dst):
                os.unlink(dst)
            if (st.st_mode & 0o170000) == 0o020000 and st.st_rdev == 0:
                continue  # whiteout
            shutil.copy2(src, dst, follow_symlinks=False)
    # opaque directories of the upper layer hide the base's entries
    for dirpath, dirnames, filenames in os.walk(tree):
        try:
            is_opaque = os.getxattr(dirpath, "user.overlay.opaque") == b"y"
        except OSError:
            is_opaque = False
        if is_opaque:
            rel = os.path.relpath(dirpath, tree)
            for name in os.listdir(os.path.join(root, rel)):
                if not os.path.lexists(os.path.join(dirpath, name)):
                    os.unlink(os.path.join(root, rel, name))
    # apt resolves Signed-By paths on the host, not under Dir: point it
    # at the merged tree's copies
    for fn in ("etc/apt/sources.list", "etc/apt/sources.list.d/extra.sources"):
        p = os.path.join(root, fn)
        text = open(p).read().replace("/usr/share/keyrings/link.gpg", "/usr/share/keyrings/glimpse-test.gpg")
        text = text.replace("/usr/share/keyrings/", root + "/usr/share/keyrings/")
        open(p, "w").write(text)
    return root


cache = os.path.join(tmp, "cache", "sandbox")
flags = {}
index_cache = os.path.join(tmp, "cache", "indexes")


def check(layer_list=None, timeout=None):
    args = [CHECK] + (["--timeout", str(timeout)] if timeout else []) + [cache, index_cache] + (layer_list or layers)
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    result = {}
    flags.clear()
    for line in p.stdout.splitlines():
        name, arch, installed, candidate, suites, held, phased = line.split()
        result[(name, arch)] = (candidate, installed)
        flags[name] = (held, phased, suites)
    stats = dict(kv.split("=") for kv in p.stderr.split("stats: ")[1].split("\n")[0].split()) \
        if "stats: " in p.stderr else {}
    return p.returncode, result, {k: int(v) for k, v in stats.items()}, p.stderr


def host_hooks(root):
    """The hooks apt, run as apt_upgradable runs it, would start: none may
    come from the host's /etc/apt (they would run on the host)."""
    dump = subprocess.run(["apt-config", "dump"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, env=aptrepo.apt_env(root))
    return [l for l in dump.stdout.splitlines() if "Invoke" in l or "Pre-Install-Pkgs" in l]


def compare(name):
    rc, ours, stats, err = check()
    theirs, urc, uout = aptrepo.apt_upgradable(merged_root(), [NATIVE, FOREIGN])
    ok(rc == 0, name + ": the check succeeds", err)
    ok(urc == 0, name + ": apt-get update succeeds", uout)
    ok(ours == theirs and len(ours) > 0, name + ": equals apt list --upgradable (%d packages)" % len(theirs),
       "ours:   %s\napt's:  %s" % (sorted(ours.items()), sorted(theirs.items())))
    return ours, stats


print("1..28")
ours, stats = compare("first check")
expected = {("hello", NATIVE): ("2.10-3", "2.10-2"), ("tilde", NATIVE): ("1.0-1", "1.0~rc1-1"),
            ("docs", "all"): ("1.1-1", "1.0-1"), ("held", NATIVE): ("1.1-1", "1.0-1"),
            ("pinned", NATIVE): ("1.0-2", "1.0-1"), ("bpo-only", NATIVE): ("1.1-1~bpo1", "1.0-1"),
            ("exp-only", NATIVE): ("3.0-1", "2.0-1"), ("exp-pinned", NATIVE): ("2.0-1", "1.0-1"),
            ("multi", NATIVE): ("1.1-1", "1.0-1"), ("multi", FOREIGN): ("1.1-1", "1.0-1"),
            ("only386", FOREIGN): ("0.9-1", "0.8-1"), ("contribpkg", NATIVE): ("0.2-1", "0.1-1"),
            ("hidden", NATIVE): ("3.0-1", "1.0-1"), ("phased", NATIVE): ("1.1-1", "1.0-1")}
ok(ours == expected, "the case list is the one designed (pins, NotAutomatic, multi-arch, whiteout%s)"
   % (", opaque directory" if opaque else ""),
   "got %s" % sorted(ours.items()))
ok(flags.get("held") == ("held", "-", "unstable") and flags.get("phased") == ("-", "phased", "unstable")
   and flags.get("hello") == ("-", "-", "unstable") and flags.get("exp-only") == ("-", "-", "experimental"),
   "held and phased are marked apart; the suites are named", flags)
ok(stats.get("releases") == 3 and stats.get("downloads", 0) >= 5,
   "first check: 3 releases, the indexes downloaded", stats)

hooks = host_hooks(merged_root())
ok(hooks == [], "the host's apt configuration (and its hooks) is not read", "\n".join(hooks))

# --- unchanged: one conditional request per suite, nothing else --------------
http("__reset")
rc, again, stats, err = check()
log = http("__stats")
ok(rc == 0 and again == ours, "second check: same answer", err)
ok(stats == {"requests": 3, "releases": 3, "unchanged": 3, "indexes": stats.get("indexes"), "downloads": 0},
   "second check: 3 requests, all 'not modified', no download", stats)
ok(log.count("InRelease") == 3 and "Packages" not in log and '"status": 304' in log,
   "the server saw 3 conditional InRelease requests and nothing else", log)

# --- a newer publication -------------------------------------------------------
publish_main(date=now, extra={("main", NATIVE): [deb("same", "1.0-2")]})
ours2, stats = compare("after a new publication")
ok(ours2.get(("same", NATIVE)) == ("1.0-2", "1.0-1") and stats.get("unchanged") == 2,
   "the new version is seen; the other suites were not modified", (ours2, stats))


# --- faults: an error and no list, every time ------------------------------------
def fault(name, expect, layer_list=None, timeout=None):
    rc, result, stats, err = check(layer_list, timeout)
    ok(rc == 1 and result == {} and expect in err, "fault: %s" % name, "rc=%d %s\n%s" % (rc, result, err))


dist = os.path.join(repo, "dists", "unstable")
good_inrelease = open(os.path.join(dist, "InRelease"), "rb").read()


def set_inrelease(data):
    with open(os.path.join(dist, "InRelease"), "wb") as f:
        f.write(data)
    # a new mtime and size give a new ETag
    os.utime(os.path.join(dist, "InRelease"), (time.time() + 5, time.time() + 5))


# a cache the check cannot create its directories in: it answers all the
# same (the releases are not kept; the inline key is checked from memory)
kept_cache = cache
cache = os.path.join(tmp, "cache", "a-file")
open(cache, "w").close()
rc, uncached, stats, err = check()
ok(rc == 0 and uncached == ours2, "a cache directory that cannot be created: the same answer",
   "rc=%d %s\n%s" % (rc, sorted(uncached.items()), err))
os.unlink(cache)
cache = kept_cache

set_inrelease(good_inrelease.replace(b"Suite: unstable", b"Suite: unstablf"))
fault("a tampered InRelease", "signature")
set_inrelease(good_inrelease.replace(b"-----BEGIN PGP SIGNATURE-----",
                                     b"-----BEGIN PGP SIGNATURE-----", 1).split(b"-----BEGIN PGP SIGNATURE-----")[0]
              .replace(b"-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n", b""))
fault("an unsigned InRelease", "not signed")
keys.clearsign(other, os.path.join(dist, "Release"), os.path.join(tmp, "other.InRelease"))
set_inrelease(open(os.path.join(tmp, "other.InRelease"), "rb").read())
fault("signed by a key the source does not trust", "signature")
set_inrelease(good_inrelease + b"\nPackage: evil\n")
fault("data after the signature", "after its signature")

# an older, properly signed release after a newer one: rollback
publish_main(date=now - 7200)
fault("rollback to an older release", "rollback")
publish_main(date=now + 60, valid_until=now - 60)
fault("past Valid-Until", "expired")

# a publication whose index is truncated / corrupt on the server
publish_main(date=now + 120, extra={("main", NATIVE): [deb("same", "1.0-3")]})
bh = os.path.join(dist, "main", "binary-" + NATIVE, "by-hash", "SHA256")
victim = os.path.join(bh, os.listdir(bh)[0])
data = open(victim, "rb").read()
open(victim, "wb").write(data[: len(data) // 2])
fault("a truncated index", "SHA256")
open(victim, "wb").write(data[:100] + bytes([data[100] ^ 0xFF]) + data[101:])
fault("a corrupt index", "")
os.unlink(victim)
fault("a 404 for the index", "404")
os.unlink(os.path.join(dist, "InRelease"))
fault("a 404 for the InRelease", "404")

# network faults on a second sandbox: refused, and a server that never answers
net = os.path.join(tmp, "net")
shutil.copytree(base, net, symlinks=True)
os.unlink(os.path.join(net, "etc/apt/sources.list.d/gone.list")) if os.path.exists(
    os.path.join(net, "etc/apt/sources.list.d/gone.list")) else None
# a port bound but not listening, kept so until the check ran: refused,
# and no other program can take it meanwhile
closed = socket.socket()
closed.bind(("127.0.0.1", 0))
closed_port = closed.getsockname()[1]
with open(os.path.join(net, "etc/apt/sources.list"), "w") as f:
    f.write("deb [signed-by=/usr/share/keyrings/link.gpg] http://127.0.0.1:%d/ unstable main\n" % closed_port)
shutil.copy(os.path.join(tree, "var/lib/dpkg/status"), os.path.join(net, "var/lib/dpkg/status"))
os.makedirs(os.path.join(net, "usr/share/keyrings"), exist_ok=True)
shutil.copy(os.path.join(tree, "usr/share/keyrings/glimpse-test.gpg"), os.path.join(net, "usr/share/keyrings/"))
fault("connection refused", "Cannot fetch", [net])
closed.close()

silent = socket.socket()
silent.bind(("127.0.0.1", 0))
silent.listen(5)
with open(os.path.join(net, "etc/apt/sources.list"), "w") as f:
    f.write("deb [signed-by=/usr/share/keyrings/link.gpg] http://127.0.0.1:%d/ unstable main\n"
            % silent.getsockname()[1])
t0 = time.monotonic()
fault("a server that never answers (timeout)", "Cannot fetch", [net], timeout=2)
# (2 s asked; the rest is slack for an ASan build on a loaded machine -
# without the timeout the check would hang until the suite's limit)
ok(time.monotonic() - t0 < 30, "the timeout is honoured")
silent.close()

server.stdin.close()
server.wait(timeout=10)
if not os.environ.get("GLIMPSE_TEST_KEEP"):
    shutil.rmtree(tmp, ignore_errors=True)
else:
    print("# kept " + tmp)
sys.exit(1 if failed else 0)
