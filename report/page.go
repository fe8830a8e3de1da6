package report

import (
	"html/template"
	"sync"
)

// page is the report: the data as JSON, drawn by a small script with
// plain DOM elements (no library, no network). It is parsed on first
// use, not at package initialisation, which every ttd command pays.
var page = sync.OnceValue(func() *template.Template { return template.Must(template.New("report").Parse(pageHTML)) })

const pageHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font: 13px/1.4 system-ui, sans-serif; margin: 0 0 120px 0; color: #222; }
header, section { padding: 8px 16px; }
h1 { font-size: 18px; margin: 4px 0; }
h2 { font-size: 15px; margin: 12px 0 6px; }
code, .mono { font-family: ui-monospace, monospace; }
#timeline { position: relative; }
.proc { font-family: ui-monospace, monospace; font-weight: bold; padding: 6px 0 2px; border-bottom: 1px solid #ccc; cursor: pointer; }
.lane { display: flex; align-items: center; height: 26px; border-bottom: 1px solid #eee; }
.lane .name { width: 110px; flex: none; font-family: ui-monospace, monospace; }
.track { position: relative; flex: 1; height: 22px; background: #fafafa; }
.life { position: absolute; top: 9px; height: 4px; background: #ddd; }
.run { position: absolute; top: 4px; height: 14px; background: #7aa7d8; min-width: 1px; cursor: pointer; }
.mark { position: absolute; top: 0; width: 2px; height: 22px; background: #444; cursor: pointer; }
.mark.signal { background: #d33; width: 3px; }
.mark.start, .mark.exit { background: #2a2; }
.mark.process { background: #a3a; width: 3px; }
.axis { position: relative; margin-left: 110px; height: 18px; border-top: 1px solid #999; }
.cp { position: absolute; top: 0; width: 1px; height: 18px; background: #c90; cursor: pointer; }
.tick { position: absolute; top: 2px; font-size: 10px; color: #666; }
#flame { position: relative; overflow: hidden; border: 1px solid #eee; }
.frame { position: absolute; height: 17px; box-sizing: border-box; border: 1px solid #fff; overflow: hidden;
  white-space: nowrap; font-size: 11px; padding: 0 3px; cursor: pointer; }
table { border-collapse: collapse; }
td, th { padding: 2px 8px; text-align: left; border-bottom: 1px solid #eee; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.click { cursor: pointer; }
#info { position: fixed; left: 0; right: 0; bottom: 0; background: #f4f4f4; border-top: 2px solid #999;
  padding: 8px 16px; min-height: 48px; }
#info code { background: #fff; padding: 2px 4px; user-select: all; }
.legend span { display: inline-block; margin-right: 14px; }
.sw { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: middle; }
</style>
</head>
<body>
<header><h1 id="title">ttd report</h1><div id="summary"></div></header>
<section><h2>Threads along the recording</h2>
<div class="legend"><span><i class="sw" style="background:#7aa7d8"></i>running</span><span><i class="sw" style="background:#444"></i>syscall</span><span><i class="sw" style="background:#d33"></i>signal</span><span><i class="sw" style="background:#2a2"></i>thread start/exit</span><span><i class="sw" style="background:#a3a"></i>fork, exec, process end</span><span><i class="sw" style="background:#c90"></i>checkpoint</span></div>
<div id="timeline"></div><div id="marknote"></div></section>
<section><h2>Flame graph: instructions by call path</h2><div id="flame"></div></section>
<section><h2>Hottest functions (instructions run in the function itself)</h2><table id="hot"></table></section>
<section id="diffsec" hidden><h2>Differences with <span id="difftrace"></span></h2><div id="divergence"></div><table id="diff"></table></section>
<div id="info">Click a lane, a mark, a checkpoint, a box of the flame graph or a row to see its position and the command that opens it.</div>
<script id="data" type="application/json">{{.Data}}</script>
<script>
"use strict";
window.addEventListener("error", function (e) {
  document.body.setAttribute("data-errors", (document.body.getAttribute("data-errors") || "") + e.message + ";");
});
(function () {
  var D = JSON.parse(document.getElementById("data").textContent);
  var end = Math.max(D.end, 1);
  function el(tag, cls, parent) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (parent) parent.appendChild(e);
    return e;
  }
  function pct(p) { return (100 * p / end) + "%"; }
  function fmt(n) { return Number(n).toLocaleString("en-US"); }
  function quote(s) { return /^[\w.\/-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'"; }
  var info = document.getElementById("info");
  function show(text, pos, trace) {
    info.textContent = "";
    el("div", "", info).textContent = text;
    if (pos !== undefined && pos !== null) {
      var d = el("div", "", info);
      d.appendChild(document.createTextNode("position " + fmt(pos) + ": "));
      el("code", "", d).textContent = "ttd query " + quote(trace || D.trace) + " --at " + pos + " --where";
    }
  }
  document.getElementById("title").textContent = "ttd report: " + D.program;
  document.getElementById("summary").textContent = D.trace + ": " + fmt(D.instructions) + " instructions, " +
    D.processes.length + " processes, " + D.lanes.length + " threads, " + D.checkpoints.length + " checkpoints; the program ended: " + D.exit;

  var tl = document.getElementById("timeline");
  var byTid = {};
  // One group per process: a header, then its threads' lanes.
  var groups = [], byPid = {};
  (D.processes || []).forEach(function (p) { var g = {p: p, lanes: []}; groups.push(g); byPid[p.pid] = g; });
  D.lanes.forEach(function (l) {
    var g = byPid[l.pid];
    if (!g) { g = {p: null, lanes: []}; groups.push(g); byPid[l.pid] = g; }
    g.lanes.push(l);
  });
  var lanes = [];
  groups.forEach(function (g) {
    if (g.p && D.processes.length > 1) {
      var h = el("div", "proc", tl);
      h.setAttribute("data-pid", g.p.pid);
      h.textContent = "process " + g.p.pid + " " + g.p.name + ": " + g.p.argv + " (" + fmt(g.p.start) + "–" + fmt(g.p.end) + ")";
      h.onclick = (function (p) { return function () { show("process " + p.pid + " (" + p.name + ") starts", p.start); }; })(g.p);
    }
    g.lanes.forEach(function (l) { lanes.push(l); drawLane(l); });
  });
  function drawLane(l) {
    var row = el("div", "lane", tl);
    row.setAttribute("data-tid", l.tid);
    el("div", "name", row).textContent = "thread " + l.tid;
    var tr = el("div", "track", row);
    byTid[l.tid] = tr;
    var life = el("div", "life", tr);
    life.style.left = pct(l.start);
    life.style.width = pct(Math.max(l.end - l.start, 0));
    l.runs.forEach(function (r) {
      var b = el("div", "run", tr);
      b.style.left = pct(r[0]);
      b.style.width = pct(r[1] - r[0]);
      b.title = "thread " + l.tid + " runs " + fmt(r[0]) + "–" + fmt(r[1]);
      b.onclick = function () { show("thread " + l.tid + " runs from " + fmt(r[0]) + " to " + fmt(r[1]), r[0]); };
    });
  }
  D.marks.forEach(function (m) {
    var tr = byTid[m.tid];
    if (!tr) return;
    var b = el("div", "mark " + m.kind, tr);
    b.style.left = pct(m.pos);
    b.title = m.label + " at " + fmt(m.pos);
    b.onclick = function (ev) { ev.stopPropagation(); show("thread " + m.tid + ": " + m.label, m.pos); };
  });
  if (D.marksShown < D.marksTotal) {
    document.getElementById("marknote").textContent = D.marksShown + " of " + D.marksTotal + " events shown (syscalls evenly sampled).";
  }
  var axis = el("div", "axis", tl);
  for (var i = 0; i <= 4; i++) {
    var t = el("div", "tick", axis);
    t.style.left = (i * 25) + "%";
    if (i === 4) { t.style.left = ""; t.style.right = "0"; }
    t.textContent = fmt(Math.round(end * i / 4));
  }
  D.checkpoints.forEach(function (p, k) {
    var c = el("div", "cp", axis);
    c.style.left = pct(p);
    c.title = "checkpoint " + k + " at " + fmt(p);
    c.onclick = function () { show("checkpoint " + k + ": re-simulation can start here", p); };
  });

  var fl = document.getElementById("flame");
  var rowH = 17, depth = 0, total = Math.max(D.flame.v, 1);
  var colors = ["#f8b26a", "#f79d65", "#f4845f", "#f6c177", "#e9a96b", "#f2b880"];
  function draw(f, left, d, path) {
    depth = Math.max(depth, d);
    var b = el("div", "frame", fl);
    b.style.left = (100 * left / total) + "%";
    b.style.width = (100 * f.v / total) + "%";
    b.style.top = (d * rowH) + "px";
    b.style.background = d === 0 ? "#ddd" : colors[(f.n.length + d) % colors.length];
    b.textContent = f.n;
    var p = d === 0 ? [] : path.concat([f.n]);
    b.title = (p.join(" → ") || f.n) + ": " + fmt(f.v) + " instructions (" + (100 * f.v / total).toFixed(1) + "%)";
    b.onclick = function () {
      if (d === 0) { show("all threads: " + fmt(f.v) + " instructions"); return; }
      show(p.join(" → ") + (f.site ? " (called at " + f.site + ")" : "") + ": " + fmt(f.c) + " calls, " + fmt(f.v) +
        " instructions, " + fmt(f.s) + " in the function itself; first call", f.f);
    };
    var x = left;
    (f.k || []).forEach(function (c) { draw(c, x, d + 1, p); x += c.v; });
  }
  draw(D.flame, 0, 0, []);
  fl.style.height = ((depth + 1) * rowH + 2) + "px";

  var hot = document.getElementById("hot");
  var h = el("tr", "", hot);
  ["function", "instructions", "share", "calls", "first call"].forEach(function (s) { el("th", "", h).textContent = s; });
  D.hot.forEach(function (x) {
    var r = el("tr", "click", hot);
    el("td", "mono", r).textContent = x.func;
    el("td", "num", r).textContent = fmt(x.self);
    el("td", "num", r).textContent = (100 * x.self / Math.max(D.instructions, 1)).toFixed(1) + "%";
    el("td", "num", r).textContent = fmt(x.calls);
    el("td", "num", r).textContent = x.first < 1.8e19 ? fmt(x.first) : "-";
    r.onclick = function () { show(x.func + ": " + fmt(x.self) + " instructions over " + fmt(x.calls) + " calls; first call", x.first < 1.8e19 ? x.first : null); };
  });

  if (D.diff || D.divergence) {
    document.getElementById("diffsec").hidden = false;
    document.getElementById("difftrace").textContent = D.diffTrace;
    if (D.divergence) {
      var dv = document.getElementById("divergence");
      dv.textContent = "first divergence: " + D.divergence.pathA + " at " + fmt(D.divergence.posA) + " here; " +
        D.divergence.pathB + " at " + fmt(D.divergence.posB) + " in " + D.diffTrace;
    }
    var dt = document.getElementById("diff");
    var hh = el("tr", "", dt);
    ["rank", "only in", "call path", "position here", "position in " + D.diffTrace].forEach(function (s) { el("th", "", hh).textContent = s; });
    (D.diff || []).forEach(function (x, i) {
      var r = el("tr", "click", dt);
      el("td", "num", r).textContent = i + 1;
      el("td", "mono", r).textContent = x.only;
      el("td", "mono", r).textContent = x.path;
      el("td", "num", r).textContent = fmt(x.posA);
      el("td", "num", r).textContent = fmt(x.posB);
      r.onclick = function () {
        show(x.path + " (only in " + x.only + "); in " + D.diffTrace + ": ttd query " + quote(D.diffTrace) + " --at " + x.posB + " --where", x.posA);
      };
    });
  }
  // report.html#click clicks the first syscall mark, as a person would
  // (the rendering test checks what the click shows).
  if (location.hash === "#click") {
    var first = document.querySelector(".mark.syscall");
    if (first) first.click();
  }
  document.body.setAttribute("data-rendered", "procs:" + document.querySelectorAll(".proc").length + " lanes:" + document.querySelectorAll(".lane").length +
    " frames:" + document.querySelectorAll(".frame").length);
})();
</script>
</body>
</html>
`
