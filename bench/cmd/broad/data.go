package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// The inputs of the broad benchmark, generated deterministically (a
// xorshift generator with a fixed seed per input), so that every run and
// every machine measures the same work. The tuning and check sets use
// different generators, not only different seeds: a speed-up that depends
// on the shape of the tuning data shows as a gap between the two sets.

type rng uint64

func (x *rng) next() uint64 {
	v := uint64(*x)
	v ^= v << 13
	v ^= v >> 7
	v ^= v << 17
	*x = rng(v)
	return v
}

// binaryRecords is a tuning-set binary input: fixed-size records of a
// counter, a small skewed field, a noisy float64 and, one record in four,
// eight random bytes (the rest repeat the previous ones), the shape of a
// database page or a columnar dump.
func binaryRecords(seed uint64, n int) []byte {
	x := rng(seed)
	var b bytes.Buffer
	var tail [8]byte
	f := 0.0
	for i := uint32(0); b.Len() < n; i++ {
		v := x.next()
		var rec [24]byte
		binary.LittleEndian.PutUint32(rec[0:], i)
		binary.LittleEndian.PutUint16(rec[4:], uint16(v>>60)*uint16(v>>62))
		f += float64(int64(v>>40)%1000) / 1000
		binary.LittleEndian.PutUint64(rec[8:], math.Float64bits(f))
		if v&3 == 0 {
			binary.LittleEndian.PutUint64(tail[:], x.next())
		}
		copy(rec[16:], tail[:])
		b.Write(rec[:])
	}
	return b.Bytes()[:n]
}

// csvLines is a check-set text input: CSV rows of an id, a name, a city,
// an amount and a date.
func csvLines(seed uint64, n int) []byte {
	x := rng(seed)
	names := []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "oscar", "peggy", "trent", "victor", "walter"}
	cities := []string{"Lyon", "Oslo", "Porto", "Kyoto", "Quito", "Perth", "Accra", "Lima", "Riga", "Turku", "Cork", "Bergen"}
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		v := x.next()
		fmt.Fprintf(&b, "%d,%s%d,%s,%d.%02d,2026-%02d-%02d\n", (v>>20)%1000000, names[v%16], (v>>8)%100,
			cities[(v>>12)%12], (v>>24)%10000, (v>>40)%100, 1+(v>>44)%12, 1+(v>>50)%28)
	}
	return b.Bytes()[:n]
}

// samples is a check-set binary input: 16-bit samples of a sum of sine
// waves with noise, the shape of audio or a sensor dump.
func samples(seed uint64, n int) []byte {
	x := rng(seed)
	b := make([]byte, n&^1)
	for i := 0; i < len(b)/2; i++ {
		t := float64(i)
		s := 9000*math.Sin(t/37) + 5000*math.Sin(t/5.3) + float64(int64(x.next()>>52)-2048)
		binary.LittleEndian.PutUint16(b[2*i:], uint16(int16(s)))
	}
	return b
}

// randomBytes is incompressible data, for the hashes.
func randomBytes(seed uint64, n int) []byte {
	x := rng(seed)
	b := make([]byte, n&^7)
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], x.next())
	}
	return b
}

// flatJSON is the tuning set's jq input: an array of flat objects.
func flatJSON(seed uint64, n int) []byte {
	x := rng(seed)
	var b bytes.Buffer
	b.WriteString("[")
	for i := 0; b.Len() < n; i++ {
		v := x.next()
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `{"id":%d,"k":"key%d","v":%d,"ok":%t,"note":"n%x"}`, i, v%37, (v>>8)%1000, v&1 == 0, v>>40)
	}
	b.WriteString("]\n")
	return b.Bytes()
}

// nestedJSON is the check set's jq input: objects holding arrays and
// objects, with strings to take apart.
func nestedJSON(seed uint64, n int) []byte {
	x := rng(seed)
	var b bytes.Buffer
	b.WriteString(`{"users":[`)
	for i := 0; b.Len() < n; i++ {
		v := x.next()
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"name":"User%dAbc","mail":"u%d@ex%d.org","orders":[%d,%d,%d],"addr":{"zip":"%05d","city":"c%d"}}`+"\n",
			v%5000, i, v%7, v%100, (v>>8)%100, (v>>16)%100, (v>>24)%100000, (v>>40)%50)
	}
	b.WriteString("]}\n")
	return b.Bytes()
}
