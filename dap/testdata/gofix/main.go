// Command gofix is the Go fixture of the DAP tests: the tests find lines
// by their MARK comments, never by number.
package main

import (
	"fmt"
	"os"
)

type point struct {
	X, Y int
	Name string
}

var counter int

//go:noinline
func square(v int) int {
	r := v * v // MARK square-body
	return r
}

//go:noinline
func bump(p *point, by int) {
	p.X += by
	counter += by // MARK counter-write
}

func main() {
	pt := &point{X: 1, Y: 2, Name: "origin"}
	words := []string{"a", "bb", "ccc"}
	ages := map[string]int{"ann": 31}
	var any interface{} = pt
	total := 0
	for i := 0; i < 5; i++ {
		total += square(i) // MARK loop-call
		bump(pt, i)        // MARK loop-bump
	}
	fmt.Println("total", total, pt.X, len(words), len(ages), any != nil) // MARK after-loop
	if len(os.Args) > 1 {
		var bad *point
		bad.X = total // MARK crash
	}
}
