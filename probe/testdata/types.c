// types.c prints, for each sample it visits, members that need more than
// integers: a struct reached through a typedef, signed and unsigned
// bit-fields, a float and a double. The probe tests read them through
// casts to the typedef and compare with what the program printed.
#include <stdio.h>
#include <stdlib.h>

typedef struct sample {
	int id;
	unsigned kind : 3;
	int delta : 5;
	unsigned wide : 20;
	unsigned char tag;
	float ratio;
	double weight;
	struct sample *next;
} sample_t;

typedef sample_t *sample_p;
typedef unsigned long counter_t;

counter_t visits;

__attribute__((noinline)) void visit(sample_t *s) { visits += s->id; }

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 5;
	sample_p head = NULL;
	for (int i = 0; i < n; i++) {
		sample_t *s = calloc(1, sizeof *s);
		s->id = i * 11 - 3;
		s->kind = i % 8;
		s->delta = (i % 32) - 16;
		s->wide = i * 40503u % (1u << 20);
		s->tag = 'a' + i % 26;
		s->ratio = i / 4.0f - 1.5f;
		s->weight = i * 1.25e3 / 7.0;
		s->next = head;
		head = s;
	}
	for (sample_t *s = head; s; s = s->next) {
		visit(s);
		printf("%d %u %d %u %c %f %.3f %g %e\n", s->id, s->kind, s->delta, s->wide, s->tag, s->ratio, s->weight, s->weight,
		       (double)s->ratio);
	}
	return 0;
}
