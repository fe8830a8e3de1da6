// Command gorecs builds records, encodes them as JSON, decodes and sorts
// them and hashes the result: maps, reflection, strings and the garbage
// collector (tuning set of bench/cmd/broad).
package main

import (
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

type rec struct {
	ID    int               `json:"id"`
	Name  string            `json:"name"`
	Score float64           `json:"score"`
	Tags  []string          `json:"tags"`
	Attrs map[string]string `json:"attrs"`
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	x := uint64(88172645463325252)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	rs := make([]rec, n)
	for i := range rs {
		v := next()
		rs[i] = rec{ID: i, Name: "r" + strconv.FormatUint(v%100000, 36), Score: float64(v%10000) / 7,
			Tags: strings.Fields("a b c d e f g h")[:v%8], Attrs: map[string]string{"k": strconv.Itoa(int(v % 97))}}
	}
	b, err := json.Marshal(rs)
	if err != nil {
		panic(err)
	}
	var back []rec
	if err := json.Unmarshal(b, &back); err != nil {
		panic(err)
	}
	sort.Slice(back, func(i, j int) bool {
		if back[i].Name != back[j].Name {
			return back[i].Name < back[j].Name
		}
		return back[i].ID < back[j].ID
	})
	h := sha1.New()
	for _, r := range back {
		fmt.Fprintf(h, "%d %s %.3f %d %s\n", r.ID, r.Name, r.Score, len(r.Tags), r.Attrs["k"])
	}
	fmt.Printf("%d bytes of JSON, %x\n", len(b), h.Sum(nil))
}
