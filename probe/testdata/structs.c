// structs.c builds a list of structs and prints every member of each as
// it visits it: the probe tests read the same members through casts to
// the program's DWARF types and compare.
#include <stdio.h>
#include <stdlib.h>

struct point {
	int x;
	short y;
};

struct item {
	long id;
	char label[12];
	const char *name;
	struct point pos;
	struct item *next;
	unsigned char flags;
	union {
		int i;
		unsigned u;
	} v;
};

long visited;

__attribute__((noinline)) void visit(struct item *it) { visited += it->id; }

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 5;
	static const char *names[] = {"red", "green", "blue"};
	struct item *head = NULL;
	for (int i = 0; i < n; i++) {
		struct item *it = calloc(1, sizeof *it);
		it->id = i * 1000L - 7;
		snprintf(it->label, sizeof it->label, "L%d", i * i);
		it->name = names[i % 3];
		it->pos.x = -i;
		it->pos.y = i * 3;
		it->next = head;
		it->flags = 250 + i % 5;
		it->v.i = -i * 7;
		head = it;
	}
	for (struct item *it = head; it; it = it->next) {
		visit(it);
		printf("%ld %s %s %d %d %u %d %ld\n", it->id, it->label, it->name, it->pos.x, it->pos.y, it->flags, it->v.i,
		       it->next ? it->next->id : -1L);
	}
	return 0;
}
