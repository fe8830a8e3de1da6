// A discrete-event simulation: std::priority_queue, std::map, doubles
// (check set of bench/cmd/broad).
#include <cstdio>
#include <cstdlib>
#include <map>
#include <queue>
#include <vector>

struct Ev { double t; int kind, who; bool operator<(const Ev &o) const { return t > o.t; } };

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    unsigned long x = 88172645463325252ul;
    auto rnd = [&]() { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return (x >> 11) * (1.0 / 9007199254740992.0); };
    std::priority_queue<Ev> q;
    std::map<int, double> busy;
    for (int i = 0; i < 64; i++) q.push({rnd(), 0, i});
    double sum = 0; long served = 0;
    while (!q.empty() && served < n) {
        Ev e = q.top(); q.pop();
        if (e.kind == 0) { q.push({e.t + rnd() * 2, 1, e.who}); busy[e.who % 97] += 1; }
        else { served++; sum += e.t; q.push({e.t + rnd(), 0, (e.who * 31 + 7) % 1000}); }
    }
    double m = 0; for (auto &kv : busy) m += kv.first * kv.second;
    printf("%ld %.6f %.1f %zu\n", served, sum / served, m, busy.size());
}
