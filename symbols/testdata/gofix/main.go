// Command gofix is the Go fixture of the symbols tests: the tests stop it
// under gdb at the line marked BREAK and compare what they read.
package main

import (
	"errors"
	"fmt"
	"os"
)

type Point struct {
	X, Y int
}

type Shape interface {
	Area() int
}

type Rect struct {
	Min, Max Point
	Name     string
}

func (r *Rect) Area() int { return (r.Max.X - r.Min.X) * (r.Max.Y - r.Min.Y) }

var Global = 12345

//go:noinline
func work(n int, name string, p *Point) int {
	small := map[string]int{"one": 1, "two": 2, "three": 3}
	big := make(map[int]string)
	for i := 0; i < 20; i++ {
		big[i] = fmt.Sprint("v", i)
	}
	nums := []int{10, 20, 30, 40}
	var sh Shape = &Rect{Min: Point{1, 2}, Max: Point{4, 6}, Name: "box"}
	var any interface{} = 42
	var err error = errors.New("boom")
	f := 2.75
	b := true
	bs := []byte("hi")
	arr := [3]int8{-1, 0, 1}
	total := n + len(name) + p.X + len(small) + len(big) + nums[1] + sh.Area() + any.(int) + len(err.Error()) + int(f) + len(bs) + int(arr[2]) // BREAK
	if b {
		total++
	}
	return total
}

func main() {
	p := &Point{X: 3, Y: 4}
	r := work(len(os.Args), "gopher", p)
	fmt.Println(r, Global)
}
