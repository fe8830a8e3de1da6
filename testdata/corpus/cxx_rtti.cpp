// RTTI: typeid names (mangled and demangled), typeid through references to
// polymorphic bases, dynamic_cast up/down/cross and failures, bad_cast,
// std::type_index ordering and hashing containers.
#include <cstdio>
#include <cstdlib>
#include <cxxabi.h>
#include <map>
#include <memory>
#include <string>
#include <typeindex>
#include <typeinfo>
#include <vector>

namespace zoo {
struct Animal {
	virtual ~Animal() = default;
	virtual const char *sound() const = 0;
};
struct Swimmer {
	virtual ~Swimmer() = default;
	virtual int depth() const { return 1; }
};
struct Dog : Animal {
	const char *sound() const override { return "woof"; }
};
struct Puppy : Dog {
	const char *sound() const override { return "yip"; }
};
struct Duck : Animal, Swimmer {
	const char *sound() const override { return "quack"; }
	int depth() const override { return 2; }
};
template <typename T> struct Box {
	T value;
};
} // namespace zoo

struct Plain {
	int x;
};

static std::string demangle(const char *name)
{
	int status = 0;
	char *d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
	std::string s = status == 0 && d ? d : name;
	std::free(d);
	return s;
}

template <typename T> static void show(const char *label, const T &v)
{
	const std::type_info &ti = typeid(v);
	std::printf("%-22s mangled=%-28s demangled=%s\n", label, ti.name(), demangle(ti.name()).c_str());
}

int main()
{
	show("int", 1);
	show("double", 1.0);
	show("const char*", (const char *)"x");
	show("Plain", Plain{});
	show("Box<long>", zoo::Box<long>{});
	show("vector<string>", std::vector<std::string>{});
	show("map<int,Plain*>", std::map<int, Plain *>{});
	int (*fp)(const char *) = std::atoi;
	show("function pointer", fp);
	show("lambda-free array", "abc");

	std::vector<std::unique_ptr<zoo::Animal>> animals;
	animals.emplace_back(new zoo::Dog);
	animals.emplace_back(new zoo::Puppy);
	animals.emplace_back(new zoo::Duck);
	for (auto &a : animals) {
		zoo::Animal &ref = *a;
		std::printf("dynamic type %-12s sound=%-5s is Dog=%d is Puppy=%d is Swimmer=%d typeid==Dog %d\n",
			    demangle(typeid(ref).name()).c_str(), ref.sound(), dynamic_cast<zoo::Dog *>(a.get()) != nullptr,
			    dynamic_cast<zoo::Puppy *>(a.get()) != nullptr, dynamic_cast<zoo::Swimmer *>(a.get()) != nullptr,
			    typeid(ref) == typeid(zoo::Dog));
	}
	// Cross cast from Swimmer back to Animal and to the most-derived object.
	zoo::Duck duck;
	zoo::Swimmer *s = &duck;
	zoo::Animal *back = dynamic_cast<zoo::Animal *>(s);
	std::printf("cross cast ok=%d same object=%d depth=%d\n", back != nullptr,
		    dynamic_cast<void *>(s) == static_cast<void *>(&duck), s->depth());
	try {
		zoo::Dog dog;
		zoo::Animal &a = dog;
		(void)dynamic_cast<zoo::Duck &>(a);
	} catch (const std::bad_cast &e) {
		std::printf("bad_cast: %s\n", demangle(typeid(e).name()).c_str());
	}
	try {
		zoo::Animal *none = nullptr;
		(void)typeid(*none);
	} catch (const std::bad_typeid &e) {
		std::printf("bad_typeid caught\n");
	}
	std::map<std::type_index, std::string> names;
	names[typeid(int)] = "int";
	names[typeid(zoo::Dog)] = "Dog";
	names[typeid(double)] = "double";
	names[typeid(Plain)] = "Plain";
	names[typeid(zoo::Duck)] = "Duck";
	std::printf("type_index map:");
	for (auto &kv : names)
		std::printf(" %s", kv.second.c_str());
	std::printf("\n");
	std::printf("hash equal for same type: %d\n", std::type_index(typeid(zoo::Dog)).hash_code() == typeid(zoo::Dog).hash_code());
	return 0;
}
