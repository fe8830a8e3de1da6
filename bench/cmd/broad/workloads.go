package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"ttd/bench"
)

const src = "bench/workloads/broad"

// workloads writes the inputs into dir, builds the C++ and Go programs and
// returns both sets. A program that is not installed is left out with a
// message (make bench-broad installs them all through make deps).
func workloads(dir string) []workload {
	file := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		bench.Check(os.WriteFile(p, b, 0o644))
		return p
	}
	// Tuning-set inputs.
	text := file("text.txt", textData(3<<20))
	bin := file("records.bin", binaryRecords(1, 3<<20))
	rnd := file("random.bin", randomBytes(2, 16<<20))
	sortIn := file("sort.txt", textData(6<<20)) // lines of words
	flat := file("flat.json", flatJSON(3, 1<<20))
	wordsIn := file("words.txt", textData(2<<20))
	words8 := file("words8.txt", textData(8<<20))
	text512 := file("text512.txt", textData(512<<10))
	bin512 := file("records512.bin", binaryRecords(1, 512<<10))
	// Check-set inputs: other generators, other sizes.
	csv := file("rows.csv", csvLines(11, 3<<20))
	smp := file("samples.bin", samples(12, 3<<20))
	csv512 := file("rows512.csv", csvLines(11, 512<<10))
	smp768 := file("samples768.bin", samples(12, 768<<10))
	rnd2 := file("random2.bin", randomBytes(13, 12<<20))
	nested := file("nested.json", nestedJSON(14, 1<<20))
	sqlTune := file("tune.sql", []byte(sqlTuning))
	sqlCheck := file("check.sql", []byte(sqlChecking))

	script := func(name string) string { return filepath.Join(src, name) }
	cxx := func(name string) string {
		out := filepath.Join(dir, name)
		if b, err := exec.Command("g++", "-O2", "-o", out, script(name+".cpp")).CombinedOutput(); err != nil {
			bench.Fail("g++ %s: %v\n%s", name, err, b)
		}
		return out
	}
	gobuild := func(name, dirName string) string {
		out := filepath.Join(dir, name)
		abs, err := filepath.Abs(out)
		bench.Check(err)
		cmd := exec.Command("go", "build", "-o", abs, "main.go")
		cmd.Dir = dirName
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=")
		if b, err := cmd.CombinedOutput(); err != nil {
			bench.Fail("go build %s: %v\n%s", name, err, b)
		}
		return abs
	}
	tool := func(name string) string {
		for _, d := range []string{"/usr/bin/", "/bin/"} {
			if _, err := os.Stat(d + name); err == nil {
				return d + name
			}
		}
		return ""
	}
	var ws []workload
	add := func(set, name string, stdin string, argv ...string) {
		if argv[0] == "" {
			fmt.Fprintf(os.Stderr, "broad: SKIPPING %q: program not installed (make deps)\n", name)
			return
		}
		ws = append(ws, workload{name: name, set: set, argv: argv, stdin: stdin})
	}
	xz, bz, gz, zs := tool("xz"), tool("bzip2"), tool("gzip"), tool("zstd")
	py, pl, lua, node := tool("python3"), tool("perl"), tool("lua5.4"), tool("node")
	sq, jq := tool("sqlite3"), tool("jq")

	add("tune", "xz -6 text 512K", text512, xz, "-6", "-c")
	add("tune", "xz -6 binary 512K", bin512, xz, "-6", "-c")
	add("tune", "bzip2 -9 text 3M", text, bz, "-9", "-c")
	add("tune", "gzip -9 text 3M", text, gz, "-9", "-c")
	add("tune", "gzip -6 binary 3M", bin, gz, "-6", "-c")
	add("tune", "zstd -12 text 3M", text, zs, "-12", "-c")
	add("tune", "sha256sum 16M", rnd, tool("sha256sum"))
	add("tune", "md5sum 16M", rnd, tool("md5sum"))
	add("tune", "sort 6M words", sortIn, tool("sort"))
	add("tune", "python3 arith loop", "", py, script("arith.py"), "2000000")
	add("tune", "python3 -c pass", "", py, "-c", "pass")
	add("tune", "perl hash loop", "", pl, script("loop.pl"), "2000000")
	add("tune", "lua table loop", "", lua, script("loop.lua"), "8000000")
	add("tune", "node map loop", "", node, script("loop.js"), "3000000")
	add("tune", "sqlite3 group by", "", sq, ":memory:", ".read "+sqlTune)
	add("tune", "jq group_by 1M", flat, jq, "-c", `map(select(.v > 300)) | group_by(.k) | map({k: .[0].k, n: length, s: (map(.v) | add)})`)
	add("tune", "Go json+sort", "", gobuild("gorecs", script("gorecs")), "40000")
	add("tune", "C++ wordfreq 8M", words8, cxx("wordfreq"))

	add("check", "xz -6 csv 512K", csv512, xz, "-6", "-c")
	add("check", "xz -3 samples 768K", smp768, xz, "-3", "-c")
	add("check", "bzip2 -6 samples 3M", smp, bz, "-6", "-c")
	add("check", "gzip -6 csv 3M", csv, gz, "-6", "-c")
	add("check", "zstd -9 samples 3M", smp, zs, "-9", "-c")
	add("check", "sha1sum 12M", rnd2, tool("sha1sum"))
	add("check", "b2sum 12M", rnd2, tool("b2sum"))
	add("check", "sort -t, -k4n csv 3M", csv, tool("sort"), "-t,", "-k4n")
	add("check", "python3 words", wordsIn, py, script("words.py"))
	add("check", "python3 -c import json,re", "", py, "-c", "import json, re")
	add("check", "perl regex", csv, pl, script("regex.pl"))
	add("check", "lua strings", wordsIn, lua, script("strings.lua"))
	add("check", "node json", "", node, script("json.js"), "150000")
	add("check", "sqlite3 index+join", "", sq, ":memory:", ".read "+sqlCheck)
	add("check", "jq strings nested 1M", nested, jq, "-c", `[.users[] | (.name | ascii_downcase | length) + (.orders | add) + (.addr.zip | tonumber % 7)] | add`)
	add("check", "Go goroutines+GC", "", gobuild("gowork", "bench/workloads/gowork"), "24")
	add("check", "C++ events", "", cxx("events"), "2000000")
	return ws
}

const sqlTuning = `
CREATE TABLE t(a INTEGER, b INTEGER, c TEXT);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i < 200000)
INSERT INTO t SELECT i, (i * 7919) % 1000, 'x' || (i % 313) FROM s;
SELECT b % 10, count(*), sum(a), max(c) FROM t GROUP BY b % 10 ORDER BY 1;
SELECT count(DISTINCT c), avg(b) FROM t WHERE a % 3 = 0;
`

const sqlChecking = `
CREATE TABLE u(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER);
CREATE TABLE o(id INTEGER PRIMARY KEY, uid INTEGER, amount REAL);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i < 30000)
INSERT INTO u SELECT i, printf('user%05d', (i * 104729) % 30000), i % 17 FROM s;
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM s WHERE i < 120000)
INSERT INTO o SELECT i, 1 + (i * 7877) % 30000, (i % 1000) / 7.0 FROM s;
CREATE INDEX o_uid ON o(uid);
SELECT u.grp, count(*), round(sum(o.amount), 2) FROM u JOIN o ON o.uid = u.id GROUP BY u.grp ORDER BY 3 DESC LIMIT 5;
SELECT upper(substr(name, 1, 6)), count(*) FROM u GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 3;
`
