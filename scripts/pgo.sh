#!/bin/bash
# pgo.sh regenerates cmd/ttd/default.pgo: CPU profiles of `ttd run` on the
# bench workloads (gzip -9, fp, inthash, gowork) and two corpus programs
# (sha256 -O0, tiny_vm) and of `ttd record` on gzip and inthash, merged. Run it when the interpreter's hot paths change (see
# cmd/ttd/PGO.md).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -pgo=off -o "$tmp/ttd" ./cmd/ttd
gcc -O2 -o "$tmp/fp" bench/workloads/fp.c -lm
gcc -O2 -o "$tmp/inthash" bench/workloads/inthash.c
(cd bench/workloads/gowork && CGO_ENABLED=0 go build -o "$tmp/gowork" .)
# Two corpus programs stand for code the bench workloads lack: an -O0
# build (what people debug; every variable lives on the stack) and a
# bytecode interpreter's switch dispatch (indirect jumps, movsxd).
gcc -O0 -o "$tmp/sha256" testdata/corpus/sha256.c
gcc -O2 -o "$tmp/tiny_vm" testdata/corpus/tiny_vm.c
go run ./bench/cmd/compare -write-data "$tmp/data"
# Each profile runs for about two seconds, so that no workload's call
# edges crowd out another's in the hot-call-site threshold.
head -c 1500000 "$tmp/data" >"$tmp/data3"
prof() { local name=$1; shift; TTD_CPUPROFILE="$tmp/$name.prof" "$tmp/ttd" "$@" >/dev/null 2>&1 </dev/null; }
prof gzip run gzip -9 -c "$tmp/data3"
prof fp run "$tmp/fp" 4000
prof inthash run "$tmp/inthash" 60
prof gowork run "$tmp/gowork" 8
prof sha256a run "$tmp/sha256"
prof sha256b run "$tmp/sha256"
for i in 1 2 3 4; do prof tinyvm$i run "$tmp/tiny_vm"; done
prof record record -o "$tmp/t.ttd" gzip -9 -c "$tmp/data3"
prof recordih record -o "$tmp/t2.ttd" "$tmp/inthash" 30
go tool pprof -proto "$tmp"/*.prof >cmd/ttd/default.pgo
echo "wrote cmd/ttd/default.pgo"
