#!/bin/bash
# Benchmark: package operations against what a user would otherwise do.
#  1. `glimpse install ID PKG` of a small package into a host sandbox (user
#     namespace, idmapped base, overlay, sealing a generation), against
#     `apt-get install PKG` run as root in a plain chroot of the same tree
#     (an overlay of the host's /, /proc and /dev bound in);
#  2. `glimpse update ID` with nothing to do, against `apt-get update &&
#     apt-get -y dist-upgrade` in that chroot.
# Both sides use the same loopback repository (a signed flat repository
# built here) and nothing else, the same apt options (dpkg with
# --force-unsafe-io on both sides: glimpse's commit then pays for making
# the generation durable, the chroot syncs nothing), and the same file
# system: the chroot's overlay upper and the glimpse store are both in the
# work directory (under /var/tmp).  apt's binary caches are kept warm on
# both sides: glimpse keeps them with each generation whatever the tree's
# configuration says, the chroot's apt keeps them as apt does by default,
# also where the tree's configuration turns them off (a container's
# docker-clean).  One difference stays, glimpse's own: its apt is told the
# tree's architectures, where the chroot's asks dpkg (a short dpkg run
# per apt program started).
# Each run is a pair, one of each side, taken one after the other (which
# goes first alternates from run to run), so both sides see the same load.
# Prints, for each operation, the median of each side and their ratio, and
# the median of the runs' own ratios (glimpse's time over the chroot's in
# the same run) with their quartiles and range: the verdict, as each
# glimpse run is set against the chroot run beside it, under the same
# load; its quartiles say how far to trust it on a busy machine, and a 95%
# confidence interval of that median (distribution-free: order statistics
# of the runs' ratios) how far to trust the median itself.  Each timed run
# starts with nothing left to write (sync) and none of glimpse's
# background work running (settle, below), so that neither side pays for
# what the other left behind.  RUNS (default 41: about 3 minutes on an
# idle machine, with a confidence interval 0.07-0.11 wide here; 81 runs,
# about 6 minutes: 0.05-0.06) sets the number of runs.
# Run as root:  sudo tests/bench/pkg-bench.sh [BUILDDIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
glimpse=$build/session/glimpse
runs=${RUNS:-41}
[ "$(id -u)" -eq 0 ] || { echo "pkg-bench: run as root (sudo $0)" >&2; exit 4; }
[ -x "$glimpse" ] || { echo "pkg-bench: build first: $glimpse is missing" >&2; exit 1; }
for tool in dpkg-deb apt-ftparchive gpg; do
  command -v "$tool" >/dev/null || { echo "pkg-bench: $tool is missing (.ci/install-deps)" >&2; exit 1; }
done

work=$(mktemp -d /var/tmp/glimpse-pkg-bench.XXXXXX)
chmod 755 "$work"
root=$work/chroot
cleanup () {
  for m in "$root/proc" "$root/dev" "$root"; do umount -l "$m" 2>/dev/null || true; done
  kill "$srv" 2>/dev/null || true
  rm -rf --one-file-system "$work"
}
trap cleanup EXIT
export GNUPGHOME=$work/gnupg GLIMPSE_SANDBOX_DIR=$work/store GLIMPSE_PKGNS=$build/session/glimpse-pkgns GLIMPSE_REMOVE_TRASH=$build/session/glimpse-remove-trash
export GLIMPSE_PROFILES_PATH=$top/profiles
mkdir -p "$GNUPGHOME" "$work/served/repo" "$work/pkg/DEBIAN" "$work/pkg/usr/bin" "$work/store"
chmod 700 "$GNUPGHOME"
gpg --batch --quiet --pinentry-mode loopback --passphrase '' \
  --quick-gen-key "Glimpse bench <bench@glimpse.invalid>" ed25519 sign never 2>/dev/null
gpg --batch --armor --export bench@glimpse.invalid > "$work/key.asc"
printf 'Package: glimpse-bench\nVersion: 1.0\nArchitecture: all\nMaintainer: b <b@glimpse.invalid>\nDescription: bench\n' \
  > "$work/pkg/DEBIAN/control"
printf '#!/bin/sh\necho bench\n' > "$work/pkg/usr/bin/glimpse-bench"; chmod 755 "$work/pkg/usr/bin/glimpse-bench"
dpkg-deb --root-owner-group -Zgzip --build "$work/pkg" "$work/served/repo/glimpse-bench_1.0_all.deb" >/dev/null
(cd "$work/served/repo" && apt-ftparchive packages . > Packages 2>/dev/null \
   && apt-ftparchive release . > Release && gpg --batch --yes --clearsign -o InRelease Release)

coproc SRV { exec python3 "$top/tests/http-server.py" "$work/served"; }
srv=$SRV_PID
read -r port <&"${SRV[0]}"
line="deb http://127.0.0.1:$port/repo ./"

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_it() { local t0 t1; t0=$(now); "$@" >/dev/null 2>&1 || { echo "pkg-bench: failed: $*" >&2; exit 1; }; t1=$(now); echo "$t1 - $t0" | bc -l; }

# The glimpse side: a host sandbox with only the bench repository.
"$glimpse" create host --name bench >/dev/null 2>&1
for r in $("$glimpse" repos bench | awk '!/\(added\)$/ { print $1 }'); do
  "$glimpse" remove-repo bench "$r" >/dev/null 2>&1
done
"$glimpse" add-repo bench "$line" --key "$work/key.asc" --name bench >/dev/null 2>&1

# The chroot side: the same tree (host / under a tmpfs upper), the same
# source and key, the same apt options.
mkdir -p "$work/t/up" "$work/t/wk" "$root"
mount -t overlay -o "lowerdir=/,upperdir=$work/t/up,workdir=$work/t/wk" overlay "$root"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
rm -f "$root"/etc/apt/sources.list "$root"/etc/apt/sources.list.d/*
mkdir -p "$root/etc/apt/keyrings"
cp "$work/key.asc" "$root/etc/apt/keyrings/bench.asc"
printf 'Types: deb\nURIs: http://127.0.0.1:%s/repo\nSuites: ./\nSigned-By: /etc/apt/keyrings/bench.asc\n' "$port" \
  > "$root/etc/apt/sources.list.d/bench.sources"
cat > "$root/etc/apt/apt.conf.d/99bench" <<'EOF'
APT::Keep-Downloaded-Packages "false";
Binary::apt-get::APT::Keep-Downloaded-Packages "false";
Dpkg::Use-Pty "0";
quiet "1";
APT::Update::Error-Mode "any";
Dpkg::Options { "--force-confdef"; "--force-confold"; "--force-unsafe-io"; };
EOF
# apt's binary caches (pkgcache.bin, srcpkgcache.bin) where apt keeps them
# by default (see the top; read after docker-clean: hence the name)
printf 'Dir::Cache::pkgcache "pkgcache.bin";\nDir::Cache::srcpkgcache "srcpkgcache.bin";\n' \
  > "$root/etc/apt/apt.conf.d/zz-bench-caches"
in_chroot() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }
in_chroot apt-get update >/dev/null 2>&1

ins_g=(); ins_c=(); upd_g=(); upd_c=()
# After an operation glimpse removes the generation it replaced
# (glimpse-remove-trash, system/.trash-*) and, after a short one, walks
# the host's tree for the next one's mask (glimpse-pkgns --walk-refresh,
# at SCHED_IDLE, holding the walk cache's lock), both in the background:
# not in the operation's time, which ends when glimpse returns, but waited
# for before the next run of either side, so that neither runs beside them
settle() {
  flock "$GLIMPSE_SANDBOX_DIR/bench/system/walk-cache.lock" true
  while compgen -G "$GLIMPSE_SANDBOX_DIR/bench/system/.trash-*" >/dev/null; do sleep 0.01; done
}
# Each timed operation starts with nothing left to write: dpkg on the
# chroot side leaves its files to the kernel's writeback (unsafe-io, no
# sync), and on ext4 (data=ordered) the next journal commit writes them
# first; glimpse's commit, which makes its generation durable, makes one,
# so without this it paid for the chroot's files whenever it came next
# (per-run ratios about 1.10x after the chroot, 0.98x before it)
flushed() { sync; "$@"; }
g_install() {
  ins_g+=("$(flushed time_it "$glimpse" install bench glimpse-bench)"); settle
  "$glimpse" uninstall bench glimpse-bench >/dev/null 2>&1; settle
}
c_install() { ins_c+=("$(flushed time_it in_chroot apt-get install -y glimpse-bench)"); in_chroot apt-get remove -y glimpse-bench >/dev/null 2>&1; }
g_update() { upd_g+=("$(flushed time_it "$glimpse" update bench)"); settle; }
c_update() { upd_c+=("$(flushed time_it in_chroot sh -c 'apt-get update && apt-get -y dist-upgrade')"); }
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for i in $(seq "$runs"); do
  if (( i % 2 )); then
    g_install; c_install; g_update; c_update
  else
    c_install; g_install; c_update; g_update
  fi
done

# stdin: numbers; prints the median, the quartiles, the minimum and maximum
stats() { sort -g | awk '{a[NR]=$1}
  function q(p,  h, l) { h = 1 + (NR - 1) * p; l = int(h); return a[l] + (h - l) * (a[l + 1] - a[l]) }
  END { a[NR + 1] = a[NR]; print q(0.5), q(0.25), q(0.75), a[1], a[NR] }'; }
# stdin: numbers; prints a 95% confidence interval for their median, with
# no assumption on their distribution: the k-th smallest and the k-th
# largest, k the largest with P(Binomial(n, 1/2) < k) <= 2.5%
median_ci() { sort -g | awk '{a[NR]=$1}
  END { n = NR; p = 0.5 ^ n; cum = 0; k = 0
        for (i = 0; i < n; i++) { cum += p; if (cum > 0.025) break; k = i + 1; p = p * (n - i) / (i + 1) }
        if (k < 1) { print "nan", "nan"; exit }
        print a[k], a[n - k + 1] }'; }
report () { # label, glimpse times, chroot times
  local -a g c r ci
  local i ratios
  g=($2); c=($3)
  ratios=$(for i in "${!g[@]}"; do echo "${g[i]} / ${c[i]}" | bc -l; done)
  ci=($(median_ci <<<"$ratios"))
  r=($(stats <<<"$ratios"))
  g=($(printf '%s\n' "${g[@]}" | stats)); c=($(printf '%s\n' "${c[@]}" | stats))
  printf '%-26s glimpse %6.3f s   chroot %6.3f s   ratio of medians %5.2fx\n' "$1" "${g[0]}" "${c[0]}" \
    "$(echo "${g[0]} / ${c[0]}" | bc -l)"
  printf '%-26s ratio per run: median %5.2fx   quartiles %4.2f-%4.2fx   range %4.2f-%4.2fx\n' \
    "" "${r[@]}"
  if [ "${ci[0]}" = nan ]; then
    printf '%-26s too few runs (%d) for a 95%% confidence interval of that median (6 at least)\n' "" "${#g[@]}"
  else
    printf '%-26s 95%% confidence interval of that median: %4.2f-%4.2fx\n' "" "${ci[@]}"
  fi
}
echo "pkg-bench: $runs runs, medians ($(nproc) cores, load average $load0 at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end)"
report "install a small package" "${ins_g[*]}" "${ins_c[*]}"
report "update with nothing to do" "${upd_g[*]}" "${upd_c[*]}"
