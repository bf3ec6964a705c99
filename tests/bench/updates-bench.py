#!/usr/bin/env python3
# updates-bench.py: the update check beside apt on a Debian-main-sized
# repository.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Generates one signed suite whose main/binary-amd64 index holds STANZAS
# (default 63,000) realistic stanzas (~50 MB uncompressed, served as .gz
# and .xz by-hash, as Debian does; GLIMPSE_BENCH_XZ_ONLY=1 serves .xz only) and a sandbox tree with INSTALLED (default
# 3,000) packages of which every tenth is older than the repository's.
# Measures with /usr/bin/time -v (wall time, CPU time, peak RSS):
#   ours, cold:  updates-check with an empty cache (InRelease + gpgv +
#                download + xz + parse + compare)
#   apt, cold:   apt-get update, then apt list --upgradable
#   ours, warm:  updates-check again (one conditional request, 304)
#   apt, warm:   apt list --upgradable on the fetched lists
# checks the two answers are the same, and prints the ratios.
#
#   tests/bench/updates-bench.py BUILDDIR [STANZAS] [INSTALLED]

import gzip
import hashlib
import lzma
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(top, "tests", "updates"))
import aptrepo  # noqa: E402

build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(top, "build")
stanzas = int(sys.argv[2]) if len(sys.argv) > 2 else 63000
installed_n = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
check = os.path.join(build, "tests", "updates", "updates-check")
if not os.path.exists(check):
    sys.exit("updates-bench: build first: %s is missing" % check)

tmp = tempfile.mkdtemp(prefix="glimpse-updates-bench-")
rng = random.Random(63000)
words = ("library tool data common utils plugin daemon client server doc dev bin perl python3 "
         "gnome kde qt gtk fonts theme lang firmware driver").split()


def name_of(i):
    return "%s-%s%d" % (rng.choice(words), rng.choice(words), i)


names = [name_of(i) for i in range(stanzas)]
versions = ["%d.%d.%d-%d" % (rng.randint(0, 9), rng.randint(0, 40), rng.randint(0, 20), rng.randint(1, 5))
            for _ in range(stanzas)]

deps = ["libc6 (>= 2.36), libglib2.0-0 (>= 2.74), %s" % rng.choice(names[:i + 1]) for i in range(stanzas)]
parts = []
for i, (n, v) in enumerate(zip(names, versions)):
    desc = " ".join(rng.choice(words) for _ in range(rng.randint(8, 30)))
    sha = hashlib.sha256(n.encode()).hexdigest()
    parts.append(
        "Package: %s\nSource: %s\nVersion: %s\nInstalled-Size: %d\nMaintainer: Bench <b@glimpse.invalid>\n"
        "Architecture: %s\nDepends: %s\n"
        "Description: %s\n %s\n %s\n .\n %s\nMulti-Arch: foreign\nHomepage: https://example.invalid/%s\n"
        "Description-md5: %s\nTag: role::program, implemented-in::c\nSection: misc\nPriority: optional\n"
        "Filename: pool/main/%s/%s/%s_%s_amd64.deb\nSize: %d\nMD5sum: %s\nSHA256: %s\n\n"
        % (n, n, v, rng.randint(10, 90000), "all" if i % 7 == 0 else "amd64", deps[i],
           desc[:60], desc, desc, desc, n, sha[:32], n[0], n, n, v, rng.randint(1000, 9000000), sha[:32], sha))
text = "".join(parts).encode()

keys = aptrepo.Keys(os.path.join(tmp, "gnupg"))
fpr = keys.generate("Bench Archive <bench@glimpse.invalid>")
repo = os.path.join(tmp, "repo")
dist = os.path.join(repo, "dists", "sid")
os.makedirs(os.path.join(dist, "main", "binary-amd64", "by-hash", "SHA256"))
xz = lzma.compress(text, preset=6)
gz = gzip.compress(text, compresslevel=9, mtime=0)
xz_only = os.environ.get("GLIMPSE_BENCH_XZ_ONLY") == "1"
for data, name in ((xz, "Packages.xz"),) + (() if xz_only else ((gz, "Packages.gz"),)):
    sha = hashlib.sha256(data).hexdigest()
    with open(os.path.join(dist, "main", "binary-amd64", "by-hash", "SHA256", sha), "wb") as f:
        f.write(data)
    with open(os.path.join(dist, "main", "binary-amd64", name), "wb") as f:
        f.write(data)
release = ("Origin: Bench\nLabel: Bench\nSuite: unstable\nCodename: sid\nDate: %s\nAcquire-By-Hash: yes\n"
           "Architectures: amd64\nComponents: main\nSHA256:\n %s %d main/binary-amd64/Packages\n"
           " %s %d main/binary-amd64/Packages.xz\n"
           % (aptrepo.http_date(time.time() - 60), hashlib.sha256(text).hexdigest(), len(text),
              hashlib.sha256(xz).hexdigest(), len(xz)))
if not xz_only:
    release += " %s %d main/binary-amd64/Packages.gz\n" % (hashlib.sha256(gz).hexdigest(), len(gz))
with open(os.path.join(dist, "Release"), "w") as f:
    f.write(release)
keys.clearsign(fpr, os.path.join(dist, "Release"), os.path.join(dist, "InRelease"))

server = subprocess.Popen([sys.executable, os.path.join(top, "tests", "http-server.py"), repo],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
port = int(server.stdout.readline())

root = os.path.join(tmp, "sandbox")
for d in ("etc/apt/sources.list.d", "var/lib/dpkg", "usr/share/keyrings"):
    os.makedirs(os.path.join(root, d))
keys.export(fpr, os.path.join(root, "usr/share/keyrings/bench.gpg"))
with open(os.path.join(root, "etc/apt/sources.list"), "w") as f:
    f.write("deb [signed-by=%s/usr/share/keyrings/bench.gpg] http://127.0.0.1:%d/ sid main\n" % (root, port))
status = [aptrepo.status_stanza("dpkg", "1.21.22", "amd64")]
drop = ("Filename:", "Size:", "MD5sum:", "SHA256:", "Description-md5:", "Tag:")
for i in rng.sample(range(stanzas), installed_n):
    # as dpkg records it: the archive's stanza without the archive's fields,
    # with a Status (apt treats a same-version stanza with other
    # Installed-Size or relationships as another version)
    lines = [l for l in parts[i].splitlines() if l and not l.startswith(drop)]
    lines.insert(1, "Status: install ok installed")
    if i % 10 == 0:
        v = versions[i]
        old = v.replace("-", "~old-", 1)
        lines = [("Version: " + old) if l.startswith("Version:") else l for l in lines]
    status.append("\n".join(lines) + "\n\n")
with open(os.path.join(root, "var/lib/dpkg/status"), "w") as f:
    f.write("".join(status))
# Our check reads the Signed-By path inside the view: give it the same
# absolute path there as apt (which reads it on the host) gets.
inner = os.path.join(root, root.lstrip("/"), "usr/share/keyrings")
os.makedirs(inner)
shutil.copy(os.path.join(root, "usr/share/keyrings/bench.gpg"), inner)


def measure(args, env=None):
    p = subprocess.run(["/usr/bin/time", "-v"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=env)
    if p.returncode != 0:
        sys.exit("updates-bench: %s failed:\n%s" % (args[0], p.stderr[-2000:]))
    m = {}
    for key, pat in (("user", r"User time \(seconds\): ([\d.]+)"), ("sys", r"System time \(seconds\): ([\d.]+)"),
                     ("rss", r"Maximum resident set size \(kbytes\): (\d+)"),
                     ("wall", r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)")):
        v = re.search(pat, p.stderr).group(1)
        if key == "wall":
            secs = 0.0
            for part in v.split(":"):
                secs = secs * 60 + float(part)
            v = secs
        m[key] = float(v)
    m["cpu"] = m["user"] + m["sys"]
    m["out"] = p.stdout
    return m


def ours_list(out):
    return {(l.split()[0], l.split()[1]): l.split()[3] for l in out.splitlines()}


cache = os.path.join(tmp, "cache")
ours_cold = measure([check, os.path.join(cache, "s"), os.path.join(cache, "i"), root])
ours_warm = measure([check, os.path.join(cache, "s"), os.path.join(cache, "i"), root])

aptopts = ["-o", "Dir=" + root, "-o", "Dir::State::status=" + root + "/var/lib/dpkg/status",
           "-o", "Debug::NoLocking=1", "-o", "APT::Sandbox::User=root", "-o", "APT::Architecture=amd64",
           "-o", "APT::Architectures::=amd64", "-o", "Acquire::Languages=none"]
for d in ("var/lib/apt/lists/partial", "var/cache/apt/archives/partial"):
    os.makedirs(os.path.join(root, d), exist_ok=True)
# (none of the host's apt configuration: its hooks would run, and be timed)
aptenv = aptrepo.apt_env(root)
apt_update = measure(["apt-get", "update", "-qq"] + aptopts, aptenv)
apt_list_cold = measure(["apt", "list", "--upgradable"] + aptopts, aptenv)   # builds the cache
apt_list_warm = measure(["apt", "list", "--upgradable"] + aptopts, aptenv)   # uses it

theirs = {}
for line in apt_list_warm["out"].splitlines():
    if "[upgradable from:" in line:
        head = line.split(" [upgradable from:")[0].split()
        theirs[(head[0].split("/")[0], head[2])] = head[1]
ours = ours_list(ours_warm["out"])
same = ours == theirs
if not same:
    print("ours %d, apt %d; differing: %s" % (len(ours), len(theirs), sorted(set(ours.items()) ^ set(theirs.items()))[:6]))

server.stdin.close()
server.wait(timeout=10)
if not os.environ.get("GLIMPSE_BENCH_KEEP"):
    shutil.rmtree(tmp, ignore_errors=True)

print("updates-bench: %d stanzas (%.1f MB uncompressed, %.1f MB .xz%s), %d installed, %d upgradable; "
      "answers equal: %s" % (stanzas, len(text) / 1e6, len(xz) / 1e6,
                             "" if xz_only else ", %.1f MB .gz" % (len(gz) / 1e6), installed_n, len(theirs), same))
print("%-44s %8s %8s %9s" % ("", "wall s", "CPU s", "peak MB"))
rows = [("ours, cold (fetch+verify+xz+parse+compare)", ours_cold),
        ("apt-get update + apt list --upgradable", {k: apt_update[k] + apt_list_cold[k] for k in ("wall", "cpu")}
         | {"rss": max(apt_update["rss"], apt_list_cold["rss"])}),
        ("ours, warm (unchanged: one 304)", ours_warm),
        ("apt list --upgradable (lists present)", apt_list_warm)]
for label, m in rows:
    print("%-44s %8.3f %8.3f %9.1f" % (label, m["wall"], m["cpu"], m["rss"] / 1024))
cold_apt = rows[1][1]
print("ratio cold  ours/apt: wall %.2f  CPU %.2f  peak memory %.2f"
      % (ours_cold["wall"] / cold_apt["wall"], ours_cold["cpu"] / cold_apt["cpu"], ours_cold["rss"] / cold_apt["rss"]))
print("ratio warm  ours/apt: wall %.2f  CPU %.2f  peak memory %.2f"
      % (ours_warm["wall"] / apt_list_warm["wall"], ours_warm["cpu"] / max(apt_list_warm["cpu"], 0.001),
         ours_warm["rss"] / apt_list_warm["rss"]))
sys.exit(0 if same else 1)
