// clib.c is the shared library of the C fixture: a frame in another
// module between main and the callback.
struct node;

int lib_apply(int (*fn)(int, struct node *), int v, struct node *n)
{
	int twice = v * 2;
	return fn(twice, n) + twice;
}
