#!/bin/bash
# benchtraces.sh DIR [TTD] records the traces the speed work of the
# analysis layer is measured on (probe --jobs, calls, the first query),
# with ttd record's default mode, into DIR, and indexes them. The inputs
# are generated from fixed seeds, so every session measures the same
# programs on the same data.
#
#   tuning: sortn (sort -n of 300,000 integers), gz (gzip -9 of 4 MiB of
#           text), perl (regular expressions over 2 MiB of text), xz (xz -6
#           of 1 MiB of CSV)
#   check:  bz (bzip2 -9 of 1.5 MiB of text), sqlite (20,000 rows, then
#           queries), py (python3 json round trips of 60,000 records), jq
#           (jq over 400 KB of JSON)
#
# Keep the two sets apart: a change is tuned on the first and reported on
# both.
#
#   scripts/benchtraces.sh /tmp/tr bin/ttd
set -euo pipefail
dir=${1:?usage: benchtraces.sh DIR [TTD]}
ttd=$(realpath "${2:-bin/ttd}")
rm -rf "$dir/in"
mkdir -p "$dir/in"
cd "$dir"

python3 - <<'EOF'
import json, random
r = random.Random(33)
words = [''.join(r.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(r.randint(2, 9))) for _ in range(5000)]
def text(n):
    out, size = [], 0
    while size < n:
        line = ' '.join(r.choice(words) for _ in range(r.randint(4, 14))) + '\n'
        out.append(line)
        size += len(line)
    return ''.join(out)
open('in/ints', 'w').write(''.join('%d\n' % r.randint(-10**9, 10**9) for _ in range(300000)))
open('in/text4m', 'w').write(text(4 << 20))
open('in/text2m', 'w').write(text(2 << 20))
open('in/text15', 'w').write(text(1536 << 10))
rows = ['%d,%s,%d.%02d,%s\n' % (i, r.choice(words), r.randint(0, 9999), r.randint(0, 99), r.choice(words)) for i in range(25000)]
csv = ''.join(rows)
open('in/csv1m', 'w').write((csv * (1 + (1 << 20) // len(csv)))[:1 << 20])
recs = [{'id': i, 'name': r.choice(words), 'tags': [r.choice(words) for _ in range(3)], 'v': r.random()} for i in range(4000)]
open('in/data.json', 'w').write(json.dumps(recs))
open('in/sql', 'w').write('create table t(a integer, b text, c real);\nbegin;\n' +
    ''.join("insert into t values(%d, '%s', %f);\n" % (r.randint(0, 10**6), r.choice(words), r.random()) for _ in range(20000)) +
    'commit;\ncreate index ta on t(a);\nselect count(*), sum(a), max(b) from t where c > 0.5;\n' +
    'select b, count(*) from t group by b order by 2 desc limit 5;\n')
open('in/roundtrip.py', 'w').write('''import json, sys
recs = json.load(open(sys.argv[1]))
for _ in range(15):
    recs = json.loads(json.dumps(recs))
print(len(recs), sum(r["id"] for r in recs))
''')
open('in/re.pl', 'w').write('''my %n; while (<>) { for my $w (/\\b([a-z]{4,})\\b/g) { $n{$w}++ if $w =~ /^[a-m].*[aeiou]$/ } s/(\\w+) (\\w+)/$2 $1/g; }
my @k = sort { $n{$b} <=> $n{$a} || $a cmp $b } keys %n; print scalar(@k), " $k[0]\\n";
''')
EOF

rec() {
	local name=$1
	shift
	rm -f "$name.ttd" "$name.ttd.pages" "$name.ttd.sums"
	"$ttd" record -o "$name.ttd" -- "$@" >/dev/null
	"$ttd" index "$name.ttd" >/dev/null
	echo "$name.ttd: $*"
}
rec sortn sort -n in/ints
rec gz gzip -9 -c in/text4m
rec perl perl in/re.pl in/text2m
rec xz xz -6 -c in/csv1m
rec bz bzip2 -9 -c in/text15
rm -f in/db
rec sqlite sqlite3 in/db ".read in/sql"
rec py python3 in/roundtrip.py in/data.json
rec jq jq -c '[.[] | select(.v > 0.3) | {name, n: (.tags | length)}] | group_by(.name) | map({k: .[0].name, c: length}) | sort_by(-.c) | .[0:3]' in/data.json
