-- String processing over stdin (check set).
local counts, n = {}, 0
for line in io.lines() do
  for w in line:gmatch("%a+") do
    counts[w] = (counts[w] or 0) + 1
    n = n + 1
  end
end
local keys = {}
for k in pairs(counts) do keys[#keys + 1] = k end
table.sort(keys)
print(n, #keys, keys[1], counts[keys[1]])
print(string.rep("x", 3):upper(), string.format("%.3f", n / #keys))
