/* cfix.c is the C fixture of the DAP tests (Go and node): the tests find
   lines by their MARK comments, never by number. */
#include <stdio.h>
#include <stdlib.h>

struct point {
	int x, y;
};

enum color { RED, GREEN, BLUE };

int counter;
int table[8];

int square(int v)
{
	int r = v * v; /* MARK square-body */
	return r;
}

void bump(struct point *p, int by)
{
	p->x += by;
	counter += by; /* MARK counter-write */
}

int main(int argc, char **argv)
{
	struct point pt = {1, 2};
	enum color col = GREEN;
	int total = 0;
	for (int i = 0; i < 5; i++) {
		total += square(i); /* MARK loop-call */
		bump(&pt, i);       /* MARK loop-bump */
	}
	table[3] = total; /* MARK after-loop */
	printf("total=%d x=%d col=%d\n", total, pt.x, col);
	if (argc > 1) {
		int *volatile bad = 0;
		*bad = total; /* MARK crash */
	}
	return 0;
}
