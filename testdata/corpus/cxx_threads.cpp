// C++ threads: std::thread, std::mutex, std::condition_variable,
// std::atomic, std::async/std::future, std::promise, thread_local objects
// with constructors and destructors, std::shared_mutex, and an exception
// carried through a future. Results are printed after the joins.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <numeric>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

static std::atomic<int> tl_constructed{0}, tl_destroyed{0};

struct Tracker {
	std::string name = "tracker";
	int uses = 0;
	Tracker() { tl_constructed++; }
	~Tracker() { tl_destroyed++; }
};

thread_local Tracker tracker;

template <typename T> class Channel {
	std::mutex mu;
	std::condition_variable cv;
	std::deque<T> items;
	bool closed = false;

public:
	void send(T v)
	{
		{
			std::lock_guard<std::mutex> g(mu);
			items.push_back(std::move(v));
		}
		cv.notify_one();
	}
	void close()
	{
		{
			std::lock_guard<std::mutex> g(mu);
			closed = true;
		}
		cv.notify_all();
	}
	bool recv(T &out)
	{
		std::unique_lock<std::mutex> l(mu);
		cv.wait(l, [&] { return !items.empty() || closed; });
		if (items.empty())
			return false;
		out = std::move(items.front());
		items.pop_front();
		return true;
	}
};

static long long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

int main()
{
	// Workers summing slices of a vector into an atomic and a locked map.
	std::vector<int> data(200000);
	std::iota(data.begin(), data.end(), 1);
	std::atomic<long long> total{0};
	std::mutex map_mu;
	std::map<int, long long> per_worker;
	std::vector<std::thread> workers;
	for (int w = 0; w < 5; w++) {
		workers.emplace_back([&, w] {
			long long s = 0;
			for (size_t i = w; i < data.size(); i += 5)
				s += data[i];
			total += s;
			tracker.uses++;
			std::lock_guard<std::mutex> g(map_mu);
			per_worker[w] = s;
		});
	}
	for (auto &t : workers)
		t.join();
	std::printf("total %lld, workers:", total.load());
	for (auto &kv : per_worker)
		std::printf(" %d=%lld", kv.first, kv.second);
	std::printf("\n");

	// A pipeline of channels.
	Channel<std::string> words;
	Channel<size_t> lengths;
	std::thread stage1([&] {
		std::string w;
		while (words.recv(w))
			lengths.send(w.size());
		lengths.close();
	});
	size_t sum = 0, count = 0;
	std::thread stage2([&] {
		size_t n;
		while (lengths.recv(n)) {
			sum += n;
			count++;
		}
	});
	for (int i = 0; i < 1000; i++)
		words.send(std::string(i % 17 + 1, 'x'));
	words.close();
	stage1.join();
	stage2.join();
	std::printf("pipeline: %zu words, %zu letters\n", count, sum);

	// Futures.
	auto f1 = std::async(std::launch::async, fib, 22);
	auto f2 = std::async(std::launch::async, [] { return fib(20) * 2; });
	std::promise<std::string> p;
	std::future<std::string> pf = p.get_future();
	std::thread setter([&p] {
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
		p.set_value("promised");
	});
	auto bad = std::async(std::launch::async, []() -> int { throw std::runtime_error("from a thread"); });
	std::printf("futures: %lld %lld %s\n", f1.get(), f2.get(), pf.get().c_str());
	setter.join();
	try {
		bad.get();
	} catch (const std::exception &e) {
		std::printf("exception through a future: %s\n", e.what());
	}

	// shared_mutex: readers and a writer.
	std::shared_mutex sm;
	int shared_value = 0;
	std::atomic<int> reads{0};
	std::vector<std::thread> rw;
	for (int i = 0; i < 4; i++)
		rw.emplace_back([&] {
			for (int k = 0; k < 500; k++) {
				std::shared_lock<std::shared_mutex> l(sm);
				if (shared_value >= 0)
					reads++;
			}
		});
	rw.emplace_back([&] {
		for (int k = 0; k < 500; k++) {
			std::unique_lock<std::shared_mutex> l(sm);
			shared_value++;
		}
	});
	for (auto &t : rw)
		t.join();
	std::printf("shared_mutex: value %d, reads %d\n", shared_value, reads.load());

	// Timed waits.
	std::mutex m;
	std::condition_variable cv;
	std::unique_lock<std::mutex> l(m);
	bool woke = cv.wait_for(l, std::chrono::milliseconds(10), [] { return false; });
	std::printf("wait_for: %s\n", woke ? "woken" : "timed out");

	std::printf("thread_local: %d constructed, %d destroyed before exit\n", tl_constructed.load(),
		    tl_destroyed.load());
	return 0;
}
