# Dictionaries, strings and sorting over stdin (check set).
import sys
counts = {}
for line in sys.stdin:
    for w in line.split():
        w = w.strip(".").lower()
        counts[w] = counts.get(w, 0) + 1
pairs = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
for w, c in pairs[:20]:
    print(w, c)
print(sum(len(w) * c for w, c in pairs))
