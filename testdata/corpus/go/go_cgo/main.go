// cgo: goroutines calling C on several threads (the runtime then creates
// its threads with pthread_create), C calling back into Go, and C code
// that starts its own pthread.
package main

/*
#include <pthread.h>
#include <stdint.h>

extern int goCallback(int);

static int add(int a, int b) { return a + b; }

static int callBack(int x) { return goCallback(x) * 2; }

static void *cthread(void *arg) {
	long n = (long)arg, s = 0;
	for (long i = 0; i < n; i++)
		s += i;
	return (void *)s;
}

static long runCThread(long n) {
	pthread_t t;
	void *r;
	pthread_create(&t, 0, cthread, (void *)n);
	pthread_join(t, &r);
	return (long)r;
}
*/
import "C"

import (
	"fmt"
	"sync"
)

//export goCallback
func goCallback(x C.int) C.int { return x + 1 }

func main() {
	var wg sync.WaitGroup
	sums := make([]int, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for k := 0; k < 100; k++ {
				sums[i] += int(C.add(C.int(i), C.int(k)))
			}
			sums[i] += int(C.callBack(C.int(i)))
		}(i)
	}
	wg.Wait()
	fmt.Println("cgo sums:", sums)
	fmt.Println("C thread:", C.runCThread(100000))
}
