-- Tables and arithmetic (tuning set).
local n = tonumber(arg[1])
local t, acc = {}, 0
for i = 1, n do
  acc = (acc * 31 + i) % 1000003
  t[acc % 4096] = (t[acc % 4096] or 0) + 1
end
local s = 0
for k, v in pairs(t) do s = s + k * v end
print(acc, s)
