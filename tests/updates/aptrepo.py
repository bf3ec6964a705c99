# aptrepo.py: builds real signed apt repositories and sandbox trees for the
# update-check tests and benchmark.
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Packages are real .deb files (dpkg-deb), indexes come from
# apt-ftparchive, the InRelease is clear-signed with gpg; the Release text
# is written here so that Date, Valid-Until, NotAutomatic and
# Acquire-By-Hash are the test's to choose.

import email.utils
import gzip
import hashlib
import lzma
import os
import shutil
import subprocess
import time


def run(*args, **kw):
    return subprocess.run(args, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


class Keys:
    """A private GnuPG home with signing keys."""

    def __init__(self, home):
        self.home = home
        os.makedirs(home, mode=0o700, exist_ok=True)
        self.env = dict(os.environ, GNUPGHOME=home)

    def generate(self, uid):
        subprocess.run(["gpg", "--batch", "--quiet", "--pinentry-mode", "loopback", "--passphrase", "",
                        "--quick-gen-key", uid, "ed25519", "sign", "never"],
                       check=True, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out = subprocess.run(["gpg", "--batch", "--with-colons", "--list-keys", uid], check=True,
                             env=self.env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True).stdout
        return [l.split(":")[9] for l in out.splitlines() if l.startswith("fpr:")][0]

    def export(self, fpr, path, armor=False):
        args = ["gpg", "--batch", "--export"] + (["--armor"] if armor else []) + [fpr]
        data = subprocess.run(args, check=True, env=self.env, stdout=subprocess.PIPE).stdout
        with open(path, "wb") as f:
            f.write(data)
        return data

    def clearsign(self, fpr, src, dst):
        subprocess.run(["gpg", "--batch", "--yes", "--local-user", fpr, "--digest-algo", "SHA256",
                        "--clearsign", "-o", dst, src], check=True, env=self.env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def build_deb(workdir, name, version, arch, multiarch=None, extra=""):
    """A real, minimal .deb; returns its path."""
    safe = "%s_%s_%s" % (name, version.replace(":", "%3a"), arch)
    root = os.path.join(workdir, "src", safe)
    os.makedirs(os.path.join(root, "DEBIAN"), exist_ok=True)
    os.makedirs(os.path.join(root, "usr/share/doc", name), exist_ok=True)
    with open(os.path.join(root, "usr/share/doc", name, "README"), "w") as f:
        f.write("%s %s\n" % (name, version))
    control = ("Package: %s\nVersion: %s\nArchitecture: %s\nMaintainer: Glimpse tests <t@glimpse.invalid>\n"
               "Description: test package %s\n" % (name, version, arch, name))
    if multiarch:
        control += "Multi-Arch: %s\n" % multiarch
    control += extra
    with open(os.path.join(root, "DEBIAN/control"), "w") as f:
        f.write(control)
    os.makedirs(os.path.join(workdir, "debs"), exist_ok=True)
    deb = os.path.join(workdir, "debs", safe + ".deb")
    run("dpkg-deb", "--root-owner-group", "-Znone", "--build", root, deb)
    return deb


def http_date(t):
    return email.utils.formatdate(t, usegmt=True).replace("GMT", "UTC")


def publish(repo, suite, components, archs, debs, keys, fpr, *, date=None, valid_until=None,
            not_automatic=False, but_automatic=False, by_hash=False, compress=("xz",),
            keep_plain_names=True, extra_stanza=None, codename=None, origin="Glimpse"):
    """Writes dists/<suite>/ for debs = {(component, arch): [deb paths]}:
    Packages per component/arch (compressed as asked), Release, InRelease.
    extra_stanza(component, arch) may return text appended to that index."""
    dist = os.path.join(repo, "dists", suite)
    shutil.rmtree(dist, ignore_errors=True)
    pool = os.path.join(repo, "pool")
    os.makedirs(pool, exist_ok=True)
    files = []
    for comp in components:
        for arch in archs:
            d = os.path.join(dist, comp, "binary-" + arch)
            os.makedirs(d, exist_ok=True)
            tmp = os.path.join(repo, ".tmp-pool")
            shutil.rmtree(tmp, ignore_errors=True)
            os.makedirs(tmp)
            for deb in debs.get((comp, arch), []):
                target = os.path.join(pool, os.path.basename(deb))
                if not os.path.exists(target):
                    shutil.copy(deb, target)
                os.link(target, os.path.join(tmp, os.path.basename(deb)))
            text = run("apt-ftparchive", "packages", os.path.relpath(tmp, repo), cwd=repo).stdout
            text = text.replace(b".tmp-pool/", b"pool/")
            shutil.rmtree(tmp)
            if extra_stanza:
                text += extra_stanza(comp, arch).encode()
            rel = "%s/binary-%s/Packages" % (comp, arch)
            outputs = {}
            if "none" in compress:
                outputs[rel] = text
            if "xz" in compress:
                outputs[rel + ".xz"] = lzma.compress(text, preset=1)
            if "gz" in compress:
                outputs[rel + ".gz"] = gzip.compress(text, mtime=0)
            # the uncompressed index is always listed, as archives do (apt
            # 2.6 fetches nothing for a target whose plain name is missing)
            if rel not in outputs:
                files.append((hashlib.sha256(text).hexdigest(), len(text), rel))
            for name, data in outputs.items():
                sha = hashlib.sha256(data).hexdigest()
                files.append((sha, len(data), name))
                if by_hash:
                    bh = os.path.join(dist, os.path.dirname(name), "by-hash", "SHA256")
                    os.makedirs(bh, exist_ok=True)
                    with open(os.path.join(bh, sha), "wb") as f:
                        f.write(data)
                if keep_plain_names:
                    with open(os.path.join(dist, name), "wb") as f:
                        f.write(data)
    now = time.time() if date is None else date
    release = ["Origin: %s" % origin, "Label: %s" % origin, "Suite: %s" % suite,
               "Codename: %s" % (codename or suite), "Date: %s" % http_date(now)]
    if valid_until is not None:
        release.append("Valid-Until: %s" % http_date(valid_until))
    if not_automatic:
        release.append("NotAutomatic: yes")
    if but_automatic:
        release.append("ButAutomaticUpgrades: yes")
    if by_hash:
        release.append("Acquire-By-Hash: yes")
    release.append("Architectures: %s" % " ".join(archs))
    release.append("Components: %s" % " ".join(components))
    release.append("SHA256:")
    for sha, size, name in files:
        release.append(" %s %d %s" % (sha, size, name))
    with open(os.path.join(dist, "Release"), "w") as f:
        f.write("\n".join(release) + "\n")
    keys.clearsign(fpr, os.path.join(dist, "Release"), os.path.join(dist, "InRelease"))
    return dist


def status_stanza(name, version, arch, state="install ok installed", multiarch=None):
    s = ("Package: %s\nStatus: %s\nPriority: optional\nSection: misc\nMaintainer: t <t@glimpse.invalid>\n"
         "Architecture: %s\n" % (name, state, arch))
    if multiarch:
        s += "Multi-Arch: %s\n" % multiarch
    s += "Version: %s\nDescription: test package %s\n\n" % (version, name)
    return s


def apt_env(root, env=None):
    """The environment for the host's apt run on the tree at root: an
    APT_CONFIG that sets Dir before apt reads its configuration, so it
    reads root's etc/apt/apt.conf.d and apt.conf, never the host's (whose
    hooks, such as APT::Update::Post-Invoke-Success running appstreamcli
    or PackageKit, would run on the host; a -o Dir= comes too late)."""
    conf = root.rstrip("/") + ".apt.conf"
    with open(conf, "w") as f:
        f.write('Dir "%s/";\n' % root.rstrip("/"))
    env = dict(os.environ if env is None else env)
    env["APT_CONFIG"] = conf
    return env


def apt_upgradable(root, archs, env=None):
    """`apt-get update` then `apt list --upgradable` against the tree at
    root (Dir=root: its etc/apt, its var/lib/apt lists and cache, its dpkg
    status; apt's own methods; none of the host's configuration: apt_env);
    returns {(name, arch): (candidate, installed)}."""
    for d in ("var/lib/apt/lists/partial", "var/cache/apt/archives/partial", "var/log/apt",
              "etc/apt/apt.conf.d"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    env = apt_env(root, env)
    opts = ["-o", "Dir=" + root, "-o", "Dir::State::status=" + root + "/var/lib/dpkg/status", "-o", "Debug::NoLocking=1", "-o", "APT::Sandbox::User=root",
            "-o", "APT::Architecture=" + archs[0],
            "-o", "APT::Get::List-Cleanup=0", "-o", "Acquire::Languages=none"]
    for a in archs:
        opts += ["-o", "APT::Architectures::=" + a]
    upd = subprocess.run(["apt-get", "update", "-qq"] + opts, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, env=env)
    lst = subprocess.run(["apt", "list", "--upgradable"] + opts, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env)
    if lst.returncode != 0:
        raise RuntimeError("apt list --upgradable failed: %s\n(apt-get update said: %s)" % (lst.stderr, upd.stdout))
    out = lst.stdout
    result = {}
    for line in out.splitlines():
        # name/suite1,suite2 version arch [upgradable from: old]
        if "[upgradable from:" not in line:
            continue
        head, _, old = line.partition(" [upgradable from: ")
        nameslash, version, arch = head.split()
        result[(nameslash.split("/")[0], arch)] = (version, old.rstrip("]"))
    return result, upd.returncode, upd.stdout
