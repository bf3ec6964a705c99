#!/bin/bash
# Benchmark: `glimpse create` against what a user would otherwise do by hand.
#  1. download: glimpse's libcurl download of a 64 MiB image from a loopback
#     HTTP server, against `curl -o` of the same file;
#  2. create from that image: `glimpse create --image` (verify + unpack +
#     layout + atomic rename), against `sha256sum` + `tar -xzf` by hand.
# Prints medians and ratios.  Run as root:  sudo tests/bench/create-bench.sh [BUILDDIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build}
glimpse=$build/session/glimpse
runs=${RUNS:-5}
[ "$(id -u)" -eq 0 ] || { echo "create-bench: run as root (sudo $0)" >&2; exit 4; }
[ -x "$glimpse" ] || { echo "create-bench: build first: $glimpse is missing" >&2; exit 1; }

work=$(mktemp -d /var/tmp/glimpse-bench.XXXXXX)
trap 'kill $srv 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/served" "$work/tree/bin" "$work/profiles"
cp "$(command -v busybox)" "$work/tree/bin/"
head -c 64M /dev/urandom > "$work/tree/payload"
for i in $(seq 2000); do echo "$i" > "$work/tree/f$i"; done
tar -C "$work/tree" -czf "$work/served/image.tar.gz" .
sum=$(sha256sum "$work/served/image.tar.gz" | cut -d' ' -f1)

coproc SRV { exec python3 "$top/tests/http-server.py" "$work/served"; }
srv=$SRV_PID
read -r port <&"${SRV[0]}"
url=http://127.0.0.1:$port/image.tar.gz
printf '[Profile]\nName=Bench\nFamily=apk\n[Base]\nType=tarball\nUrl=%s\nChecksum=sha256:%s\n[Packages]\nRefresh=true\nUpgrade=true\nInstall=true\nListUpgradable=true\n' \
  "$url" "$sum" > "$work/profiles/bench.profile"
export GLIMPSE_SANDBOX_DIR=$work/store GLIMPSE_CACHE_DIR=$work/cache GLIMPSE_PROFILES_PATH=$work/profiles

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_it() { local t0 t1; t0=$(now); "$@" >/dev/null 2>&1; t1=$(now); echo "$t1 - $t0" | bc -l; }

dl_glimpse=(); dl_curl=(); cr_glimpse=(); cr_tar=()
for i in $(seq "$runs"); do
  rm -rf "$work/cache" "$work/store"
  dl_glimpse+=("$(time_it "$glimpse" create bench --name "dl$i")")
  rm -rf "$work/curl.out"
  dl_curl+=("$(time_it curl -sf -o "$work/curl.out" "$url")")
  cr_glimpse+=("$(time_it "$glimpse" create bench --name "img$i" --image "$work/served/image.tar.gz")")
  rm -rf "$work/manual"; mkdir "$work/manual"
  cr_tar+=("$(time_it sh -c "sha256sum '$work/served/image.tar.gz' >/dev/null && tar -C '$work/manual' -xzf '$work/served/image.tar.gz'")")
  rm -rf "$work/store"
done

m() { printf '%s\n' "$@" | median; }
a=$(m "${dl_glimpse[@]}"); b=$(m "${dl_curl[@]}"); c=$(m "${cr_glimpse[@]}"); d=$(m "${cr_tar[@]}")
printf 'median of %d runs, 64 MiB image over loopback HTTP\n' "$runs"
printf '  %-48s %8.3f s\n' "glimpse create (download+verify+unpack)" "$a"
printf '  %-48s %8.3f s\n' "curl -o (download only)" "$b"
printf '  %-48s %8.3f s\n' "glimpse create --image (verify+unpack)" "$c"
printf '  %-48s %8.3f s\n' "sha256sum + tar -xzf by hand" "$d"
printf 'ratio create/(curl+by hand): %.2f   create --image/by hand: %.2f\n' \
  "$(echo "$a / ($b + $d)" | bc -l)" "$(echo "$c / $d" | bc -l)"
