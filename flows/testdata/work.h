/* work.h: what server.c and forkserver.c do with a request: a
   checksum of its data, and the slow recovery of an invalid one. */
struct req {
	int id, op;
	char data[120];
};

__attribute__((noinline)) unsigned checksum(const char *p, int n) {
	unsigned h = 5381;
	for (int i = 0; i < n; i++)
		h = h * 33 + (unsigned char)p[i];
	return h;
}
__attribute__((noinline)) int validate(const struct req *r) { return r->op == 1; }
__attribute__((noinline)) unsigned slow_recover(const struct req *r) {
	unsigned h = 0;
	for (int k = 0; k < 40; k++)
		h ^= checksum(r->data + (k % 8), sizeof r->data - 8);
	return h;
}
