package f80

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The differential test runs operations on the host's x87 through the C
// program in testdata/x87.c and compares result and status word with this
// package's.

type tcase struct {
	op   string
	cw   uint16
	a, b F80
}

var (
	oracleOnce sync.Once
	oraclePath string
	oracleErr  error
)

// oracle compiles testdata/x87.c once per test binary.
func oracle(t *testing.T) string {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skip("SKIPPING x87 DIFFERENTIAL TEST: host is not amd64, no x87 to compare against")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("SKIPPING x87 DIFFERENTIAL TEST: gcc not found in PATH; install gcc to check the package against the host's x87")
	}
	oracleOnce.Do(func() {
		dir, err := os.MkdirTemp("", "f80oracle")
		if err != nil {
			oracleErr = err
			return
		}
		oraclePath = filepath.Join(dir, "x87")
		out, err := exec.Command(gcc, "-O1", "-o", oraclePath, "testdata/x87.c").CombinedOutput()
		if err != nil {
			oracleErr = fmt.Errorf("gcc: %v\n%s", err, out)
		}
	})
	if oracleErr != nil {
		t.Fatal(oracleErr)
	}
	return oraclePath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if oraclePath != "" {
		os.RemoveAll(filepath.Dir(oraclePath))
	}
	os.Exit(code)
}

func hex80(a F80) string { return fmt.Sprintf("%04x%016x", a.SE, a.Mant) }

// runOracle runs the cases on the x87 and returns one output line each.
func runOracle(t *testing.T, cases []tcase) []string {
	t.Helper()
	bin := oracle(t)
	var in bytes.Buffer
	for _, c := range cases {
		fmt.Fprintf(&in, "%s %x %s %s\n", c.op, c.cw, hex80(c.a), hex80(c.b))
	}
	cmd := exec.Command(bin)
	cmd.Stdin = &in
	var out, stderr bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("oracle: %v\n%s\n%s", err, stderr.String(), lastLines(out.String()))
	}
	lines := make([]string, 0, len(cases))
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) != len(cases) {
		t.Fatalf("oracle returned %d lines for %d cases", len(lines), len(cases))
	}
	return lines
}

func lastLines(s string) string {
	if len(s) > 500 {
		s = s[len(s)-500:]
	}
	return s
}

// swMask drops TOP (bits 11-13) from the hardware status word.
const swMask = ^uint16(0x3800)

func rcpc(cw uint16) (Rounding, Precision) {
	return Rounding(cw >> 10 & 3), Precision(cw >> 8 & 3)
}

// excSW converts exception bits to status word bits.
func excSW(e Exc) uint16 { return uint16(e & (Flags | C1)) }

// eval computes what the oracle prints for c.
func eval(c tcase) string {
	rc, pc := rcpc(c.cw)
	one := func(r F80, e Exc) string { return fmt.Sprintf("%04x %s", excSW(e), hex80(r)) }
	a, b := c.a, c.b
	switch c.op {
	case "add", "addr", "addp":
		return one(Add(a, b, rc, pc))
	case "sub", "subr", "subp":
		return one(Sub(a, b, rc, pc))
	case "mul", "mulr":
		return one(Mul(a, b, rc, pc))
	case "div", "divr", "divp":
		return one(Div(a, b, rc, pc))
	case "addd", "muld", "divd":
		bb, e := OperandFloat64(math.Float64frombits(b.Mant))
		var r F80
		var e2 Exc
		switch c.op {
		case "addd":
			r, e2 = Add(a, bb, rc, pc)
		case "muld":
			r, e2 = Mul(a, bb, rc, pc)
		default:
			r, e2 = Div(a, bb, rc, pc)
		}
		return one(r, MergeOperandExc(a, e2, e))
	case "adds":
		bb, e := OperandFloat32(math.Float32frombits(uint32(b.Mant)))
		r, e2 := Add(a, bb, rc, pc)
		return one(r, MergeOperandExc(a, e2, e))
	case "sqrt":
		return one(Sqrt(a, rc, pc))
	case "rndint":
		return one(RoundInt(a, rc))
	case "scale":
		return one(Scale(a, b, rc))
	case "prem", "prem1":
		r, q, complete, e := Prem(a, b, c.op == "prem1")
		sw := excSW(e &^ C1)
		if !complete {
			sw |= 0x400
		}
		if q&1 != 0 {
			sw |= 0x200
		}
		if q&2 != 0 {
			sw |= 0x4000
		}
		if q&4 != 0 {
			sw |= 0x100
		}
		return fmt.Sprintf("%04x %s", sw, hex80(r))
	case "xtract":
		exp, sig, e := Xtract(a)
		return fmt.Sprintf("%04x %s %s", excSW(e), hex80(sig), hex80(exp))
	case "com", "ucom", "tst":
		if c.op == "tst" {
			b = Zero
		}
		cmp, un, e := Fcom(a, b, c.op != "ucom")
		sw := excSW(e)
		switch {
		case un:
			sw |= 0x4500
		case cmp < 0:
			sw |= 0x100
		case cmp == 0:
			sw |= 0x4000
		}
		return fmt.Sprintf("%04x", sw)
	case "xam":
		return fmt.Sprintf("%04x", a.Xam())
	case "fist16":
		v, e := a.Int16(rc)
		return fmt.Sprintf("%04x %04x", excSW(e), uint16(v))
	case "fist32":
		v, e := a.Int32(rc)
		return fmt.Sprintf("%04x %08x", excSW(e), uint32(v))
	case "fist64":
		v, e := a.Int64(rc)
		return fmt.Sprintf("%04x %016x", excSW(e), uint64(v))
	case "fistt64":
		v, e := a.Int64(RoundZero)
		return fmt.Sprintf("%04x %016x", excSW(e), uint64(v))
	case "fst64":
		v, e := a.Float64(rc)
		return fmt.Sprintf("%04x %016x", excSW(e), math.Float64bits(v))
	case "fst32":
		v, e := a.Float32(rc)
		return fmt.Sprintf("%04x %08x", excSW(e), math.Float32bits(v))
	case "fld64":
		return one(LoadFloat64(math.Float64frombits(b.Mant)))
	case "fld32":
		return one(LoadFloat32(math.Float32frombits(uint32(b.Mant))))
	case "fldpi", "fldl2t", "fldl2e", "fldlg2", "fldln2":
		return one(Const(constOf[c.op], rc), 0)
	}
	return evalTrans(c)
}

var constOf = map[string]Constant{"fldpi": ConstPi, "fldl2t": ConstL2T, "fldl2e": ConstL2E, "fldlg2": ConstLG2, "fldln2": ConstLN2}

// normalize masks the parts of the hardware output that are not the
// package's business.
func normalizeHW(line string) string {
	var sw uint16
	fmt.Sscanf(line, "%x", &sw)
	return fmt.Sprintf("%04x", sw&swMask) + line[4:]
}

type mismatch struct {
	c        tcase
	hw, mine string
}

// compare runs cases and returns the mismatches per op.
func compare(t *testing.T, cases []tcase) (map[string][]mismatch, map[string]int) {
	hw := runOracle(t, cases)
	mis := map[string][]mismatch{}
	count := map[string]int{}
	for i, c := range cases {
		count[c.op]++
		h := normalizeHW(hw[i])
		m := eval(c)
		if h != m {
			mis[c.op] = append(mis[c.op], mismatch{c, h, m})
		}
	}
	return mis, count
}

func report(t *testing.T, mis map[string][]mismatch, count map[string]int, fail bool) {
	t.Helper()
	ops := make([]string, 0, len(count))
	for op := range count {
		ops = append(ops, op)
	}
	sort.Strings(ops)
	var sb strings.Builder
	for _, op := range ops {
		fmt.Fprintf(&sb, "%-8s %7d cases %6d mismatches\n", op, count[op], len(mis[op]))
		for i, m := range mis[op] {
			if i == 8 {
				break
			}
			fmt.Fprintf(&sb, "    %s %04x %s %s: hw %s, got %s\n", m.c.op, m.c.cw, hex80(m.c.a), hex80(m.c.b), m.hw, m.mine)
		}
	}
	if fail {
		for _, op := range ops {
			if len(mis[op]) > 0 {
				t.Errorf("mismatches against the x87:\n%s", sb.String())
				return
			}
		}
	}
	t.Logf("results against the x87:\n%s", sb.String())
}

// Operand generation.

var specials = []F80{
	{0, 0}, {0, 0x8000}, // zeros
	{intBit, maxExp}, {intBit, 0x8000 | maxExp}, // infinities
	Indefinite, {0xC000000000000000, maxExp}, // QNaNs
	{0xC000000000000001, maxExp}, {0xFFFFFFFFFFFFFFFF, 0xFFFF},
	{0x8000000000000001, maxExp}, {0xA000000000000000, 0xFFFF}, // SNaNs
	{0xBFFFFFFFFFFFFFFF, maxExp},
	{1, 0}, {1, 0x8000}, {0x7FFFFFFFFFFFFFFF, 0}, {0x4000000000000000, 0x8000}, // denormals
	{0x8000000000000000, 0}, {0xC000000000000001, 0x8000}, // pseudo-denormals
	{intBit, 1}, {intBit, 0x8001}, {^uint64(0), maxExp - 1}, {^uint64(0), 0xFFFE}, // extremes
	{intBit, bias}, {intBit, 0x8000 | bias}, {intBit, bias + 1}, {0xC000000000000000, bias},
	{0x4000000000000000, bias}, {0, 1}, {0, 0x8000 | 0x100}, // unnormals
	{0, maxExp}, {0x4000000000000000, maxExp}, // pseudo-infinity, pseudo-NaN
	{intBit, bias + 63}, {intBit, 0x8000 | (bias + 63)}, {^uint64(0), bias + 62},
}

// lowPatterns produce significands at and near the rounding points of
// every precision.
var lowPatterns = []uint64{0, 1, ^uint64(0),
	1 << 39, 1<<39 - 1, 1<<39 + 1, 1<<40 - 1, 1 << 40, 3 << 39,
	1 << 10, 1<<10 - 1, 1<<10 + 1, 1<<11 - 1, 1 << 11, 3 << 10,
}

func randMant(r *rand.Rand) uint64 {
	m := r.Uint64() | intBit
	switch r.Intn(6) {
	case 0: // sparse: few significant bits
		k := uint(r.Intn(64))
		m = m >> k << k
	case 1, 2: // special low bits
		p := lowPatterns[r.Intn(len(lowPatterns))]
		w := uint(11 + r.Intn(3)*29) // 11 or 40 or 69 (all)
		if w > 63 {
			w = 63
		}
		mask := uint64(1)<<w - 1
		m = m&^mask | p&mask
	}
	return m | intBit
}

func randSign(r *rand.Rand) uint16 {
	if r.Intn(2) == 0 {
		return 0
	}
	return signBit
}

// randF80 returns an operand from a mix of categories.
func randF80(r *rand.Rand) F80 {
	switch n := r.Intn(20); {
	case n < 2:
		return specials[r.Intn(len(specials))]
	case n < 3: // any bit pattern
		return F80{r.Uint64(), uint16(r.Uint32())}
	case n < 4: // denormal
		return F80{randMant(r) >> uint(r.Intn(64)), randSign(r)}
	case n < 5: // tiny normals
		return F80{randMant(r), randSign(r) | uint16(1+r.Intn(70))}
	case n < 6: // huge
		return F80{randMant(r), randSign(r) | uint16(maxExp-1-r.Intn(70))}
	case n < 8: // anywhere
		return F80{randMant(r), randSign(r) | uint16(1+r.Intn(maxExp-1))}
	}
	return F80{randMant(r), randSign(r) | uint16(bias-70+r.Intn(140))}
}

// near returns a value close to a (for cancellation and near-equality).
func near(r *rand.Rand, a F80) F80 {
	b := a
	switch r.Intn(4) {
	case 0:
		b.Mant += uint64(r.Intn(5)) - 2
	case 1:
		b.SE += uint16(r.Intn(5)) - 2
	case 2:
		b.SE = b.SE&signBit | uint16(int(b.SE&maxExp)+r.Intn(140)-70)&maxExp
	case 3:
		b.Mant = randMant(r)
	}
	if r.Intn(2) == 0 {
		b.SE ^= signBit
	}
	if b.Mant&intBit == 0 && b.SE&maxExp != 0 && r.Intn(4) != 0 {
		b.Mant |= intBit
	}
	return b
}

func randPair(r *rand.Rand) (F80, F80) {
	a := randF80(r)
	if r.Intn(3) == 0 {
		return a, near(r, a)
	}
	return a, randF80(r)
}

var allCW = func() []uint16 {
	var cws []uint16
	for rc := uint16(0); rc < 4; rc++ {
		for _, pc := range []uint16{0, 2, 3} {
			cws = append(cws, 0x7F|pc<<8|rc<<10)
		}
	}
	return cws
}()

func rcOnly() []uint16 { return []uint16{0x37F, 0x77F, 0xB7F, 0xF7F} }

// TestArith compares the exact operations with the x87.
func TestArith(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	var cases []tcase
	add := func(op string, cws []uint16, n int, gen func() (F80, F80)) {
		if testing.Short() {
			n /= 8
		}
		for _, cw := range cws {
			for i := 0; i < n; i++ {
				a, b := gen()
				cases = append(cases, tcase{op, cw, a, b})
			}
		}
	}
	pair := func() (F80, F80) { return randPair(r) }
	single := func() (F80, F80) { return randF80(r), Zero }
	for _, op := range []string{"add", "sub", "mul", "div"} {
		add(op, allCW, 5000, pair)
		// all special pairs
		for _, cw := range allCW {
			for _, a := range specials {
				for _, b := range specials {
					cases = append(cases, tcase{op, cw, a, b})
				}
			}
		}
	}
	for _, op := range []string{"addr", "subr", "mulr", "divr", "addp", "subp", "divp"} {
		add(op, []uint16{0x37F}, 2000, pair)
		for _, a := range specials {
			for _, b := range specials {
				cases = append(cases, tcase{op, 0x37F, a, b})
			}
		}
	}
	dbl := func() (F80, F80) {
		a := randF80(r)
		var u uint64
		switch r.Intn(4) {
		case 0:
			u = r.Uint64() & 0x800FFFFFFFFFFFFF // denormal or zero
		case 1:
			u = r.Uint64() | 0x7FF0000000000000 // inf or NaN
		default:
			u = r.Uint64()
		}
		return a, F80{u, 0}
	}
	for _, op := range []string{"addd", "muld", "divd", "adds", "fld64", "fld32"} {
		add(op, []uint16{0x37F}, 3000, dbl)
	}
	sq := func() (F80, F80) {
		a := randF80(r)
		if r.Intn(3) == 0 {
			a.SE &^= signBit
			if r.Intn(2) == 0 { // near a perfect square
				x, _ := Mul(a, a, RoundNearest, Prec64)
				if x.Exp() != 0 && x.Exp() != maxExp {
					x.Mant += uint64(r.Intn(3)) - 1
					x.Mant |= intBit
				}
				a = x
			}
		}
		return a, Zero
	}
	add("sqrt", allCW, 4000, sq)
	intish := func() (F80, F80) {
		a := randF80(r)
		if r.Intn(2) == 0 {
			a.SE = a.SE&signBit | uint16(bias-2+r.Intn(68))
		}
		return a, Zero
	}
	for _, op := range []string{"rndint", "fist16", "fist32", "fist64", "fistt64"} {
		add(op, rcOnly(), 4000, intish)
		for _, cw := range rcOnly() {
			for _, a := range specials {
				cases = append(cases, tcase{op, cw, a, Zero})
			}
			for _, bits := range []int{15, 31, 63} {
				for d := -2; d <= 2; d++ {
					for _, s := range []uint16{0, signBit} {
						m := intBit >> uint(63-bits)
						v := F80{m, s | uint16(bias+bits)}
						w, _ := Add(v, FromInt64(int64(d)), RoundNearest, Prec64)
						h, _ := Add(w, F80{intBit, bias - 1}, RoundNearest, Prec64)
						cases = append(cases, tcase{op, cw, w, Zero}, tcase{op, cw, h, Zero})
						h, _ = Sub(w, F80{intBit, bias - 1}, RoundNearest, Prec64)
						cases = append(cases, tcase{op, cw, h, Zero})
					}
				}
			}
		}
	}
	conv := func() (F80, F80) {
		a := randF80(r)
		switch r.Intn(4) {
		case 0: // float64 range edges
			a.SE = a.SE&signBit | uint16(bias-1023+r.Intn(70)-66)
		case 1:
			a.SE = a.SE&signBit | uint16(bias+1023+r.Intn(4)-2)
		case 2: // float32 range edges
			a.SE = a.SE&signBit | uint16(bias-127+r.Intn(40)-36)
		case 3:
			a.SE = a.SE&signBit | uint16(bias+127+r.Intn(4)-2)
		}
		if r.Intn(4) == 0 { // just below a power of two
			a.Mant = ^uint64(0)<<uint(r.Intn(45)) | uint64(r.Intn(3))
		}
		return a, Zero
	}
	for _, op := range []string{"fst64", "fst32"} {
		add(op, rcOnly(), 5000, conv)
		add(op, rcOnly(), 2000, single)
	}
	for _, op := range []string{"com", "ucom"} {
		add(op, []uint16{0x37F}, 3000, pair)
		for _, a := range specials {
			for _, b := range specials {
				cases = append(cases, tcase{op, 0x37F, a, b})
			}
		}
	}
	add("tst", []uint16{0x37F}, 2000, single)
	add("xam", []uint16{0x37F}, 2000, single)
	add("xtract", []uint16{0x37F}, 2000, single)
	for _, a := range specials {
		cases = append(cases, tcase{"tst", 0x37F, a, Zero}, tcase{"xam", 0x37F, a, Zero}, tcase{"xtract", 0x37F, a, Zero})
	}
	scale := func() (F80, F80) {
		a := randF80(r)
		var b F80
		switch r.Intn(3) {
		case 0:
			b = randF80(r)
		case 1:
			b = FromInt64(int64(r.Intn(70000) - 35000))
		default:
			b = F80{randMant(r), randSign(r) | uint16(bias+r.Intn(16))}
		}
		return a, b
	}
	add("scale", rcOnly(), 3000, scale)
	for _, a := range specials {
		for _, b := range specials {
			cases = append(cases, tcase{"scale", 0x37F, a, b})
		}
	}
	// Precision control does not apply to these.
	for _, op := range []string{"rndint", "fist32", "fst64", "prem", "scale"} {
		add(op, []uint16{0x07F, 0x27F, 0xC7F}, 500, pair)
	}
	// The reserved precision control value 1.
	for _, op := range []string{"add", "sub", "mul", "div"} {
		add(op, []uint16{0x17F, 0x57F, 0x97F, 0xD7F}, 500, pair)
	}
	add("sqrt", []uint16{0x17F, 0x97F}, 500, sq)
	for _, op := range []string{"prem", "prem1"} {
		add(op, []uint16{0x37F}, 4000, pair)
		add(op, []uint16{0x37F}, 2000, func() (F80, F80) {
			a, b := randF80(r), randF80(r)
			b.SE = b.SE&signBit | uint16(int(a.SE&maxExp)-r.Intn(200)+2)&maxExp
			return a, b
		})
		for _, a := range specials {
			for _, b := range specials {
				cases = append(cases, tcase{op, 0x37F, a, b})
			}
		}
	}
	for op := range constOf {
		for _, cw := range rcOnly() {
			cases = append(cases, tcase{op, cw, Zero, Zero})
		}
	}
	mis, count := compare(t, cases)
	report(t, mis, count, true)
}
