// Smart pointers: unique_ptr (custom deleters, arrays, release/reset),
// shared_ptr (use_count, aliasing, make_shared, custom deleter, casts),
// weak_ptr (lock/expired, cycles), enable_shared_from_this. Destruction
// order is logged.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

static std::string log_;

struct Res {
	std::string name;
	explicit Res(std::string n) : name(std::move(n)) { log_ += "+" + name; }
	virtual ~Res() { log_ += "-" + name; }
	virtual std::string kind() const { return "Res"; }
};
struct Special : Res {
	int extra;
	Special(std::string n, int e) : Res(std::move(n)), extra(e) {}
	std::string kind() const override { return "Special"; }
};
struct Node {
	std::string name;
	std::shared_ptr<Node> next;
	std::weak_ptr<Node> prev;
	explicit Node(std::string n) : name(std::move(n)) {}
	~Node() { log_ += "~" + name; }
};
struct Self : std::enable_shared_from_this<Self> {
	int v = 9;
	std::shared_ptr<Self> me() { return shared_from_this(); }
};

static void flush(const char *label)
{
	std::printf("%s: %s\n", label, log_.c_str());
	log_.clear();
}

int main()
{
	{
		auto a = std::make_unique<Res>("a");
		std::unique_ptr<Res> b(new Special("b", 3));
		std::unique_ptr<Res> c = std::move(a);
		std::printf("moved-from empty=%d kind=%s\n", a == nullptr, b->kind().c_str());
		b.reset(new Res("b2"));
		Res *raw = c.release();
		delete raw;
	}
	flush("unique_ptr");
	{
		int closed = 0;
		auto closer = [&closed](Res *r) {
			closed++;
			delete r;
		};
		std::unique_ptr<Res, decltype(closer)> custom(new Res("custom"), closer);
		std::unique_ptr<Res[]> arr(new Res[0]);
		auto many = std::make_unique<std::vector<Res>>();
		many->reserve(3);
		many->emplace_back("v0");
		many->emplace_back("v1");
		custom.reset();
		std::printf("custom deleter calls=%d\n", closed);
	}
	flush("custom/array/vector");
	{
		auto s1 = std::make_shared<Special>("s", 42);
		std::shared_ptr<Res> s2 = s1;
		std::printf("use_count=%ld\n", s1.use_count());
		{
			auto s3 = s2;
			std::printf("inner use_count=%ld\n", s1.use_count());
		}
		std::shared_ptr<int> alias(s1, &s1->extra);
		std::printf("aliasing: *alias=%d use_count=%ld\n", *alias, s1.use_count());
		auto down = std::dynamic_pointer_cast<Special>(s2);
		auto wrong = std::dynamic_pointer_cast<Special>(std::shared_ptr<Res>());
		std::printf("dynamic_pointer_cast ok=%d extra=%d null=%d\n", down != nullptr, down->extra, wrong == nullptr);
		auto sp = std::static_pointer_cast<Res>(down);
		s1.reset();
		s2.reset();
		down.reset();
		sp.reset();
		std::printf("still alive through alias: %d use_count=%ld\n", *alias, alias.use_count());
	}
	flush("shared_ptr");
	{
		std::weak_ptr<Res> w;
		{
			auto s = std::make_shared<Res>("weak-target");
			w = s;
			auto locked = w.lock();
			std::printf("lock ok=%d expired=%d use_count=%ld\n", locked != nullptr, w.expired(), w.use_count());
		}
		std::printf("after scope expired=%d lock null=%d\n", w.expired(), w.lock() == nullptr);
		try {
			std::shared_ptr<Res> bad(w);
		} catch (const std::bad_weak_ptr &e) {
			std::printf("bad_weak_ptr caught\n");
		}
	}
	flush("weak_ptr");
	{
		auto n1 = std::make_shared<Node>("n1");
		auto n2 = std::make_shared<Node>("n2");
		auto n3 = std::make_shared<Node>("n3");
		n1->next = n2;
		n2->next = n3;
		n3->prev = n2;
		n2->prev = n1;
		std::printf("list: %s <- %s count(n2)=%ld\n", n3->prev.lock()->name.c_str(), n2->prev.lock()->name.c_str(),
			    n2.use_count());
	}
	flush("doubly linked with weak back pointers");
	{
		auto a = std::make_shared<Node>("cycA");
		auto b = std::make_shared<Node>("cycB");
		a->next = b;
		b->next = a; // strong cycle: leaks (no destructor output)
		b->next.reset(); // break it before leaving
	}
	flush("cycle broken");
	{
		auto s = std::make_shared<Self>();
		auto t = s->me();
		std::printf("shared_from_this same=%d use_count=%ld v=%d\n", s == t, s.use_count(), t->v);
		Self stack_obj;
		try {
			stack_obj.me();
		} catch (const std::bad_weak_ptr &) {
			std::printf("shared_from_this on unowned object throws\n");
		}
	}
	{
		int deleted = 0;
		{
			std::shared_ptr<int> custom(new int(5), [&deleted](int *p) {
				deleted += *p;
				delete p;
			});
			auto copy = custom;
		}
		std::printf("shared custom deleter ran once: %d\n", deleted);
	}
	std::vector<std::shared_ptr<Res>> pool;
	for (int i = 0; i < 5; i++)
		pool.push_back(std::make_shared<Res>("p" + std::to_string(i)));
	pool.erase(pool.begin() + 1, pool.begin() + 3);
	flush("pool erase");
	pool.clear();
	flush("pool clear");
	return 0;
}
