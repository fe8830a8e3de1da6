// JSON and strings (check set).
const n = +process.argv[2];
const rows = [];
for (let i = 0; i < n; i++) rows.push({ id: i, name: "n" + (i * 7919 % n), tags: [i % 3, i % 5] });
const text = JSON.stringify(rows);
const back = JSON.parse(text);
back.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id);
console.log(text.length, back[0].id, back[back.length - 1].name);
