#!/usr/bin/env bash
# everyday.sh: run everyday Debian commands natively, under `ttd run`, and
# under `ttd record` followed by `ttd replay --verify`, and compare their
# output and exit status. It is the "try it as a new user would" check:
#
#   make build && scripts/everyday.sh            # all commands
#   scripts/everyday.sh 'grep|sed'               # those matching a regexp
#
# Each command runs with a scratch directory as its working directory. A
# line per command: ok, or what differed (the outputs are kept under $OUT).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
TTD=${TTD:-$root/bin/ttd}
OUT=${OUT:-$(mktemp -d /tmp/everyday.XXXXXX)}
filter=${1:-.}
LIMIT=${LIMIT:-300} # seconds a ttd command may take: a hang is a failure (status 124)
work=$OUT/work
mkdir -p "$work"
cd "$work" || exit 1
seq 1 2000 > nums.txt
printf 'b,2\na,1\nc,3\na,4\n' > t.csv
printf '{"a":[1,2,3],"b":{"c":"x"}}\n' > j.json
head -c 200000 /usr/share/dict/words 2>/dev/null > words.txt || seq 1 30000 | sed 's/^/w/' > words.txt
mkdir -p tree/sub && echo one > tree/a && echo two > tree/sub/b

cmds=(
  'ls -la tree'
  'ls -lR --time-style=+ tree | sed "s/ [0-9]* [a-z]* [a-z]* / /"'
  'cat nums.txt | wc -l'
  'grep -c 7 nums.txt'
  'grep -E "^1[0-9]{2}$" nums.txt | tail -3'
  'sed -n "5,10p;s/1/one/g" nums.txt | head'
  'awk -F, "{s+=\$2} END {print s}" t.csv'
  'sort -t, -k2n t.csv'
  'sort -r words.txt | uniq -c | sort -rn | head -3'
  'cut -d, -f1 t.csv | tr a-z A-Z'
  'find tree -type f | sort'
  'tar cf - tree | tar tvf - | wc -l'
  'du -sb tree'
  'stat -c "%s %n" tree/a'
  'file /bin/ls'
  'sha256sum nums.txt'
  'md5sum words.txt'
  'b2sum nums.txt'
  'xz -c words.txt | xz -dc | md5sum'
  'bzip2 -c nums.txt | bzip2 -dc | tail -1'
  'gzip -9c words.txt | gzip -dc | wc -c'
  'zstd -q -c words.txt | zstd -dc | wc -l'
  'openssl dgst -sha256 nums.txt'
  'od -An -tx1 -N16 /bin/ls'
  'base64 t.csv | base64 -d'
  'python3 -c "import json,sys; print(sum(range(10**5)), json.dumps({\"a\":1}))"'
  'perl -e "print join(\",\", map { \$_*\$_ } 1..10), \"\n\""'
  'lua -e "local s=0 for i=1,100000 do s=s+i end print(s)"'
  'node -e "console.log([1,2,3].map(x=>x*2).join())"'
  'jq ".a|add" j.json'
  'sqlite3 :memory: "create table t(a); insert into t values(1),(2),(3); select sum(a) from t;"'
  'echo "2^64" | bc'
  'date -d @0 -u'
  'env -i PATH=/usr/bin sh -c "echo \$PATH"'
  'getent passwd root'
  'id -u'
  'locale'
  'git init -q g && cd g && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x && git log --format=%s'
  'seq 10 | paste -sd+ | bc'
  'xargs -n2 echo < nums.txt | tail -2'
  'bash -c "for i in 1 2 3; do echo \$i; done | tac"'
  'sh -c "exit 3"'
  'ls /nonexistent'
  'timeout 5 sleep 0.1; echo $?'
  'make -v | head -1'
  'gcc --version | head -1'
  'rm -f p && mkfifo p && (echo hi > p &) && cat p'
  'ip -o link show lo | cut -d: -f2'
  'ss -tln | head -1'
  'script -qc "echo hi" /dev/null | tr -d "\r"'
  'ionice -c3 echo idle'
  'timeout 0.3 yes > /dev/null; echo $?'
  'perl -e "alarm 1; sleep 3"; echo $?'
  'python3 -c "import multiprocessing as m; print(m.Pool(2).map(abs,[-1,-2]))"'
  'python3 -c "import asyncio; asyncio.run(asyncio.sleep(0.01)); print(1)"'
  'sqlite3 w.db "pragma journal_mode=wal; create table if not exists t(a); insert into t values(1); select count(*)>0 from t;"'
  'rm -rf c && cp -a tree c && diff -r tree c && echo same'
  'ping -c1 -W1 127.0.0.1 | head -1'
  'strace -f -qq -e trace=openat,execve -e signal=none -o st.log sh -c "cat t.csv > /dev/null"; sed "s/^[0-9]* *//; s/0x[0-9a-f]*//g" st.log'
  'strace -c -o sc.log ls tree > /dev/null; grep -c total sc.log'
  'gdb -batch -ex run -ex "print \$_siginfo.si_signo" --args sh -c "kill -SEGV \$\$" 2>&1 | grep -E "^Program|^[$]1"'
  'ldd /bin/ls | sed "s/ (0x.*//"'
  '/lib64/ld-linux-x86-64.so.2 /bin/echo via ld.so'
  'setarch -R --uname-2.6 uname -r | cut -d. -f1,2; linux32 uname -m'
  'grep -c "\[vdso\]" /proc/self/maps'
)
fail=0
for i in "${!cmds[@]}"; do
  c=${cmds[$i]}
  [[ $c =~ $filter ]] || continue
  d=$OUT/$i
  mkdir -p "$d"
  rm -rf g; (bash -c "$c" >"$d/native.out" 2>"$d/native.err"; echo $? >"$d/native.rc")
  rm -rf g; (timeout "$LIMIT" "$TTD" run -- bash -c "$c" >"$d/run.out" 2>"$d/run.err"; echo $? >"$d/run.rc")
  rm -rf g; (timeout "$LIMIT" "$TTD" record -o "$d/t.ttd" -- bash -c "$c" >"$d/rec.out" 2>"$d/rec.err"; echo $? >"$d/rec.rc")
  timeout "$LIMIT" "$TTD" replay --verify "$d/t.ttd" >"$d/replay.out" 2>"$d/replay.err"; echo $? >"$d/replay.rc"
  rm -rf g
  bad=""
  cmp -s "$d/native.out" "$d/run.out" || bad+=" run-output"
  cmp -s "$d/native.rc" "$d/run.rc" || bad+=" run-status"
  cmp -s "$d/native.out" "$d/rec.out" || bad+=" record-output"
  cmp -s "$d/native.rc" "$d/rec.rc" || bad+=" record-status"
  [ "$(cat "$d/replay.rc")" = 0 ] || bad+=" replay-verify"
  if [ -n "$bad" ]; then
    echo "FAIL [$i] $c:$bad ($d)"; fail=1
  else
    echo "ok   [$i] $c"
  fi
done
exit $fail
