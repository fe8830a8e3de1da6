#!/bin/bash
# pgo.sh regenerates cmd/ttd/default.pgo: CPU profiles of `ttd run` on the
# bench workloads (gzip -9, fp, inthash, gowork) and two corpus programs
# (sha256 -O0, tiny_vm) and of `ttd record` on gzip and inthash, merged. Run it when the interpreter's hot paths change (see
# cmd/ttd/PGO.md).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CGO_ENABLED=0 go build -pgo=off -o "$tmp/ttd" ./cmd/ttd
gcc -O2 -o "$tmp/fp" bench/workloads/fp.c -lm
gcc -O2 -o "$tmp/inthash" bench/workloads/inthash.c
(cd bench/workloads/gowork && CGO_ENABLED=0 go build -o "$tmp/gowork" .)
# Two corpus programs stand for code the bench workloads lack: an -O0
# build (what people debug; every variable lives on the stack) and a
# bytecode interpreter's switch dispatch (indirect jumps, movsxd).
gcc -O0 -o "$tmp/sha256" testdata/corpus/sha256.c
gcc -O2 -o "$tmp/tiny_vm" testdata/corpus/tiny_vm.c
go run ./bench/cmd/compare -write-data "$tmp/data"
# Each workload is profiled for about four seconds in all (several runs),
# so that none crowds the others' call edges out of the hot-call-site
# threshold, and so that the edges of small hot handlers (push, adc) get
# enough samples at the profiler's 100 Hz to count as hot.
head -c 1500000 "$tmp/data" >"$tmp/data3"
prof() {
	local name=$1 runs=$2
	shift 2
	for ((i = 1; i <= runs; i++)); do
		rm -f "$tmp"/*.ttd # record does not overwrite
		TTD_CPUPROFILE="$tmp/$name$i.prof" "$tmp/ttd" "$@" >/dev/null 2>&1 </dev/null
	done
}
prof gzip 3 run gzip -9 -c "$tmp/data3"
prof fp 3 run "$tmp/fp" 4000
prof inthash 4 run "$tmp/inthash" 60
prof gowork 3 run "$tmp/gowork" 8
prof sha256 4 run "$tmp/sha256"
prof tinyvm 10 run "$tmp/tiny_vm"
prof record 3 record -o "$tmp/t.ttd" gzip -9 -c "$tmp/data3"
prof recordih 6 record -o "$tmp/t2.ttd" "$tmp/inthash" 30
go tool pprof -proto "$tmp"/*.prof >cmd/ttd/default.pgo
echo "wrote cmd/ttd/default.pgo"
