// os.Exit with a code: deferred calls do not run, buffered output written
// before is kept.
package main

import (
	"fmt"
	"os"
)

func main() {
	defer fmt.Println("deferred (must not print)")
	go func() { select {} }()
	fmt.Println("exiting with 3")
	os.Exit(3)
}
