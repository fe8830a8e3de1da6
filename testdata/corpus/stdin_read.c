/* Reads all of stdin (the harness feeds text): counts bytes, lines and
 * words, echoes lines reversed with line numbers, sums numbers it finds. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	/* Mix a raw read() with stdio afterwards. */
	char first[8];
	ssize_t n = read(0, first, sizeof first);
	if (n < 0)
		return 1;
	printf("raw read got %zd bytes: [%.*s]\n", n, (int)n, first);
	size_t cap = 1 << 12, len = 0;
	char *buf = malloc(cap);
	memcpy(buf, first, (size_t)n);
	len = (size_t)n;
	int c;
	while ((c = getchar()) != EOF) {
		if (len + 1 >= cap)
			buf = realloc(buf, cap *= 2);
		buf[len++] = (char)c;
	}
	buf[len] = 0;
	size_t lines = 0, words = 0;
	int inword = 0;
	long sum = 0;
	for (size_t i = 0; i < len; i++) {
		lines += buf[i] == '\n';
		if (isspace((unsigned char)buf[i]))
			inword = 0;
		else if (!inword) {
			inword = 1;
			words++;
			if (isdigit((unsigned char)buf[i]) || (buf[i] == '-' && isdigit((unsigned char)buf[i + 1])))
				sum += strtol(buf + i, NULL, 10);
		}
	}
	printf("bytes=%zu lines=%zu words=%zu sum=%ld\n", len, lines, words, sum);
	int ln = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		size_t l = strlen(line);
		printf("%3d: ", ++ln);
		for (size_t i = l; i > 0; i--)
			putchar(toupper((unsigned char)line[i - 1]));
		putchar('\n');
	}
	printf("EOF again: %d\n", getchar() == EOF);
	free(buf);
	return 0;
}
