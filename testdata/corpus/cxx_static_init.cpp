// Static initialisation and destruction: constructor attributes with
// priorities, namespace-scope objects with dynamic initialisers, function-
// local statics (guarded, initialised once), thread_local objects,
// destructors and atexit handlers running after main returns.
#include <cstdio>
#include <cstdlib>
#include <string>

static int init_seq;
static char init_log[256];
static void note(const char *s)
{
	size_t n = 0;
	while (init_log[n])
		n++;
	snprintf(init_log + n, sizeof init_log - n, "%s%d:%s", n ? " " : "", ++init_seq, s);
}

__attribute__((constructor(200))) static void ctor_200() { note("ctor200"); }
__attribute__((constructor(101))) static void ctor_101() { note("ctor101"); }
__attribute__((constructor)) static void ctor_default() { note("ctor-default"); }
__attribute__((destructor)) static void dtor_attr() { std::printf("destructor attribute\n"); }

struct Global {
	const char *name;
	std::string copy;
	explicit Global(const char *n) : name(n), copy(std::string(n) + "!") { note(n); }
	~Global() { std::printf("~Global(%s)\n", name); }
};

static Global g1("g1");
static int computed = [] {
	note("lambda-init");
	return 6 * 7;
}();
static Global g2("g2");
const std::string greeting = std::string("hello, ") + "static world";

static Global &lazy()
{
	static Global instance("lazy");
	return instance;
}

static int calls;
static int counted()
{
	static int once = ++calls * 100;
	return once;
}

struct TL {
	int v;
	TL() : v(5) { std::printf("thread_local constructed\n"); }
	~TL() { std::printf("thread_local destroyed (v=%d)\n", v); }
};
static thread_local TL tl;
static thread_local int tl_plain = 11;

static void at_exit_handler() { std::printf("atexit handler\n"); }

int main()
{
	std::printf("before main: %s\n", init_log);
	std::printf("computed=%d greeting=%s g1.copy=%s\n", computed, greeting.c_str(), g1.copy.c_str());
	std::atexit(at_exit_handler);
	std::printf("lazy first: %s\n", lazy().name);
	std::printf("lazy again same object: %d\n", &lazy() == &lazy());
	for (int i = 0; i < 5; i++)
		counted();
	std::printf("function-local static initialised %d time(s), value=%d\n", calls, counted());
	tl.v += 10;
	tl_plain *= 2;
	std::printf("thread_local v=%d plain=%d\n", tl.v, tl_plain);
	std::printf("init log now: %s\n", init_log);
	std::printf("main returns\n");
	return 0;
}
