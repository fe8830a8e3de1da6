// An unrecovered panic: the runtime prints the panic value and the
// panicking goroutine's stack to stderr and exits with status 2. Other
// goroutines are running when it happens.
package main

import (
	"fmt"
	"sync"
)

type customError struct{ code int }

func (e customError) Error() string { return fmt.Sprintf("custom error %d", e.code) }

func main() {
	var wg sync.WaitGroup
	results := make(chan int, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results <- i * i
		}(i)
	}
	wg.Wait()
	close(results)
	sum := 0
	for r := range results {
		sum += r
	}
	fmt.Println("sum", sum, "- about to panic")
	go func() { select {} }()
	panic(customError{sum})
}
