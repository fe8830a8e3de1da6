#include <stdio.h>
#include <stdlib.h>
int counter;
int *cell;
int add(int a, int b) {
	int s = a + b;
	return s;
}
int main(void) {
	cell = malloc(16 * sizeof(int));
	for (int i = 0; i < 16; i++) cell[i] = 0;
	for (int i = 0; i < 5; i++) {
		counter = add(counter, i);
		cell[3] = counter * 2;
	}
	printf("%d %d\n", counter, cell[3]);
	return 0;
}
