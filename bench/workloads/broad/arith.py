# Integer and float arithmetic in a bytecode loop (tuning set).
import sys
n = int(sys.argv[1])
acc, f = 0, 0.0
for i in range(n):
    acc = (acc * 31 + i) % 1000003
    if i & 7 == 3:
        f += i / (acc + 1)
print(acc, round(f, 6))
