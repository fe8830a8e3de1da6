// Exceptions thrown across several frames with RAII unwinding, catch by
// base class, rethrow, nested exceptions, exception_ptr, standard library
// exceptions, exceptions from constructors and destructors during unwind.
#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <vector>

static std::string trail;

struct Guard {
	std::string name;
	explicit Guard(std::string n) : name(std::move(n)) { trail += "+" + name; }
	~Guard() { trail += "-" + name; }
};

struct AppError : std::runtime_error {
	int code;
	AppError(const std::string &m, int c) : std::runtime_error(m), code(c) {}
};
struct DeepError : AppError {
	int depth;
	DeepError(int d) : AppError("deep failure", 7), depth(d) {}
};

static int thrower(int depth)
{
	Guard g("f" + std::to_string(depth));
	if (depth == 0)
		throw DeepError(depth);
	return thrower(depth - 1) + 1;
}

static void rethrower()
{
	try {
		thrower(3);
	} catch (AppError &e) {
		trail += "[caught " + std::string(e.what()) + ", rethrow]";
		e.code += 100;
		throw;
	}
}

struct Member {
	int id;
	explicit Member(int i) : id(i) { trail += "+m" + std::to_string(id); }
	~Member() { trail += "-m" + std::to_string(id); }
};
struct Composite {
	Member a{1}, b{2};
	Member c;
	Composite() : c((throw std::logic_error("ctor fails"), 3)) {}
};

static void noexcept_ok() noexcept {}

int main()
{
	try {
		rethrower();
	} catch (const DeepError &e) {
		std::printf("caught DeepError code=%d depth=%d what=%s\n", e.code, e.depth, e.what());
	}
	std::printf("trail: %s\n", trail.c_str());

	trail.clear();
	try {
		Composite c;
		(void)c;
	} catch (const std::exception &e) {
		std::printf("ctor exception: %s (%s)\n", e.what(), typeid(e).name());
	}
	std::printf("partial construction trail: %s\n", trail.c_str());

	// Standard library exceptions
	std::vector<int> v(3);
	try {
		v.at(10) = 1;
	} catch (const std::out_of_range &e) {
		std::printf("out_of_range caught\n");
	}
	try {
		std::string s("abc");
		s.substr(5);
	} catch (const std::exception &e) {
		std::printf("substr: %s\n", typeid(e).name());
	}
	try {
		// Called through a volatile pointer so the allocation cannot be elided.
		void *(*volatile alloc)(std::size_t) = static_cast<void *(*)(std::size_t)>(::operator new);
		void *p = alloc((std::size_t)1 << 62);
		std::printf("huge allocation succeeded?\n");
		::operator delete(p);
	} catch (const std::bad_alloc &e) {
		std::printf("bad_alloc caught: %s\n", typeid(e).name());
	}
	try {
		std::stoi("not a number");
	} catch (const std::invalid_argument &e) {
		std::printf("stoi invalid_argument\n");
	}

	// Non-class exceptions and catch(...)
	for (int kind = 0; kind < 4; kind++) {
		try {
			switch (kind) {
			case 0: throw 42;
			case 1: throw "c string";
			case 2: throw 3.5;
			case 3: throw std::string("std::string");
			}
		} catch (int i) {
			std::printf("int %d\n", i);
		} catch (const char *s) {
			std::printf("const char* %s\n", s);
		} catch (const std::string &s) {
			std::printf("string %s\n", s.c_str());
		} catch (...) {
			std::printf("catch-all for kind %d\n", kind);
		}
	}

	// exception_ptr and nested exceptions
	std::exception_ptr saved;
	try {
		throw AppError("saved for later", 5);
	} catch (...) {
		saved = std::current_exception();
	}
	try {
		std::rethrow_exception(saved);
	} catch (const AppError &e) {
		std::printf("rethrown from exception_ptr: %s code=%d\n", e.what(), e.code);
	}
	try {
		try {
			throw std::runtime_error("inner");
		} catch (...) {
			std::throw_with_nested(std::logic_error("outer"));
		}
	} catch (const std::logic_error &e) {
		std::printf("nested outer: %s\n", e.what());
		try {
			std::rethrow_if_nested(e);
		} catch (const std::runtime_error &inner) {
			std::printf("nested inner: %s\n", inner.what());
		}
	}

	// Many throws in a loop exercise the unwinder caches.
	long total = 0;
	for (int i = 0; i < 2000; i++) {
		try {
			total += thrower(i % 7);
		} catch (const AppError &e) {
			total += e.code;
		}
	}
	std::printf("loop total=%ld uncaught=%d\n", total, std::uncaught_exceptions());
	noexcept_ok();
	std::printf("noexcept(noexcept_ok())=%d\n", (int)noexcept(noexcept_ok()));
	return 0;
}
