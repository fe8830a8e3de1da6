// Virtual inheritance: diamonds, construction/destruction order, calls
// through every base, pointer adjustments (checked, not printed), virtual
// base initialised by the most-derived class, sizes of the layouts.
#include <cstdio>
#include <string>

static std::string order;

struct Base {
	int id;
	explicit Base(int i = -1) : id(i) { order += "Base(" + std::to_string(i) + ") "; }
	virtual ~Base() { order += "~Base "; }
	virtual std::string who() const { return "Base"; }
	virtual int value() const { return id; }
};
struct Left : virtual Base {
	int l = 10;
	Left() : Base(1) { order += "Left "; }
	~Left() override { order += "~Left "; }
	std::string who() const override { return "Left"; }
	virtual int left_only() const { return l + id; }
};
struct Right : virtual Base {
	int r = 20;
	Right() : Base(2) { order += "Right "; }
	~Right() override { order += "~Right "; }
	int value() const override { return id * 100 + r; }
};
struct Diamond : Left, Right {
	int d = 30;
	Diamond() : Base(3) { order += "Diamond "; }
	~Diamond() override { order += "~Diamond "; }
	std::string who() const override { return "Diamond(" + Left::who() + ")"; }
};
struct NonVirtualA {
	int a = 1;
	virtual ~NonVirtualA() = default;
	virtual int f() { return a; }
};
struct NonVirtualB {
	int b = 2;
	virtual ~NonVirtualB() = default;
	virtual int g() { return b; }
};
struct Multi : NonVirtualA, NonVirtualB {
	int f() override { return 100 + a; }
	int g() override { return 200 + b; }
};

int main()
{
	{
		Diamond dm;
		std::printf("construct: %s\n", order.c_str());
		order.clear();
		Base *b = &dm;
		Left *l = &dm;
		Right *r = &dm;
		std::printf("via Base: who=%s value=%d\n", b->who().c_str(), b->value());
		std::printf("via Left: who=%s left_only=%d value=%d\n", l->who().c_str(), l->left_only(), l->value());
		std::printf("via Right: who=%s value=%d id=%d\n", r->who().c_str(), r->value(), r->id);
		std::printf("single Base subobject: %d\n", static_cast<Base *>(l) == static_cast<Base *>(r));
		std::printf("dynamic_cast Base->Diamond round trip: %d\n", dynamic_cast<Diamond *>(b) == &dm);
		std::printf("Right* adjusted from Diamond*: %d\n", static_cast<void *>(r) != static_cast<void *>(&dm));
		std::printf("dynamic_cast<Right*>(Left*) cross: %d\n", dynamic_cast<Right *>(l) == r);
	}
	std::printf("destruct: %s\n", order.c_str());
	order.clear();
	{
		Left only;
		std::printf("Left alone: id=%d who=%s value=%d\n", only.id, only.who().c_str(), only.value());
	}
	std::printf("Left alone order: %s\n", order.c_str());
	Multi m;
	NonVirtualB *nb = &m;
	NonVirtualA *na = &m;
	std::printf("Multi: f=%d g=%d thunk-adjusted=%d\n", na->f(), nb->g(),
		    static_cast<void *>(nb) != static_cast<void *>(na));
	std::printf("sizes: Base=%zu Left=%zu Right=%zu Diamond=%zu Multi=%zu\n", sizeof(Base), sizeof(Left),
		    sizeof(Right), sizeof(Diamond), sizeof(Multi));
	Base *heap = new Diamond;
	order.clear();
	delete heap;
	std::printf("delete via Base*: %s\n", order.c_str());
	return 0;
}
