// Objects, arrays and arithmetic (tuning set).
const n = +process.argv[2];
let acc = 0; const m = new Map();
for (let i = 0; i < n; i++) {
  acc = (acc * 31 + i) % 1000003;
  m.set(acc & 4095, (m.get(acc & 4095) || 0) + 1);
}
let s = 0; for (const [k, v] of m) s += k * v;
console.log(acc, s);
