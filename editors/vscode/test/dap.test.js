// End-to-end tests of `ttd dap` with VS Code's own DAP test client
// (@vscode/debugadapter-testsupport). Run by `go test ./dap -run Node`
// (make test), which builds ttd and the fixtures and sets:
//   TTD_BIN       the ttd binary
//   TTD_FIXTURES  a directory with cfix (gcc -g -O0) and gofix (go -N -l)
//   TTD_SRC       the directory of the fixtures' sources (dap/testdata)
// Lines are found by the MARK comments of the sources, never by number.
'use strict';
const { test } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const BIN = process.env.TTD_BIN;
const FIX = process.env.TTD_FIXTURES;
const SRC = process.env.TTD_SRC;
const skip = !BIN || !FIX || !SRC ? 'TTD_BIN, TTD_FIXTURES and TTD_SRC are not set (run go test ./dap -run Node)' : false;
const TIMEOUT = 60000;

function mark(file, name) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes('MARK ' + name));
  assert.ok(i >= 0, `no MARK ${name} in ${file}`);
  return i + 1;
}

async function start() {
  const dc = new DebugClient(BIN, 'dap', 'ttd');
  dc.defaultTimeout = 30000;
  await dc.start();
  return dc;
}

// launch records prog and starts the session at its beginning, with
// breakpoints set while the client configures.
async function launch(dc, prog, bps, extra = {}) {
  const stopped = dc.waitForEvent('stopped');
  await Promise.all([
    dc.waitForEvent('initialized').then(async () => {
      for (const [file, lines] of Object.entries(bps)) {
        await dc.setBreakpointsRequest({ source: { path: file }, breakpoints: lines.map((line) => ({ line })) });
      }
      return dc.configurationDoneRequest();
    }),
    // launch() sends initialize itself.
    dc.launch({ program: prog, stopOnEntry: true, ...extra }),
  ]);
  return stopped;
}

async function frames(dc, threadId) {
  const st = await dc.stackTraceRequest({ threadId, levels: 20 });
  return st.body.stackFrames;
}

async function expectFrame(dc, threadId, name, line) {
  const f = (await frames(dc, threadId))[0];
  assert.ok(f.name.startsWith(name), `frame ${f.name}, want ${name}`);
  assert.strictEqual(f.line, line, `${f.name} at line ${f.line}, want ${line}`);
  return f;
}

async function localsOf(dc, frameId) {
  const sc = await dc.scopesRequest({ frameId });
  const vs = await dc.variablesRequest({ variablesReference: sc.body.scopes[0].variablesReference });
  return Object.fromEntries(vs.body.variables.map((v) => [v.name, v]));
}

// step sends a stepping request and waits for the stop.
async function step(dc, what, threadId, args = {}) {
  const stopped = dc.waitForEvent('stopped');
  await dc.send(what, { threadId, ...args });
  return stopped;
}

for (const lang of ['c', 'go']) {
  test(`${lang} fixture: breakpoints, stepping both ways, data breakpoint in reverse, memory`, { skip, timeout: TIMEOUT }, async () => {
    const src = lang === 'c' ? path.join(SRC, 'cfix.c') : path.join(SRC, 'gofix', 'main.go');
    const prog = path.join(FIX, lang === 'c' ? 'cfix' : 'gofix');
    const fn = (n) => (lang === 'c' ? n : 'main.' + n);
    const sq = mark(src, 'square-body'), call = mark(src, 'loop-call'), bump = mark(src, 'loop-bump');
    const cw = mark(src, 'counter-write'), after = mark(src, 'after-loop');
    const dc = await start();
    try {
      // >> initialize, launch (records the program), setBreakpoints, configurationDone; << stopped (entry)
      let ev = await launch(dc, prog, { [src]: [sq] });
      assert.strictEqual(ev.body.reason, 'entry');
      const tid = ev.body.threadId;

      // >> continue; << stopped at the breakpoint in square, v == 0
      ev = await step(dc, 'continue', tid);
      assert.strictEqual(ev.body.reason, 'breakpoint');
      let fs0 = await frames(dc, tid);
      assert.ok(fs0[0].name.startsWith(fn('square')) && fs0[0].line === sq, `top frame ${fs0[0].name}:${fs0[0].line}`);
      assert.ok(fs0[1].name.startsWith(fn('main')) && fs0[1].line === call, `caller ${fs0[1].name}:${fs0[1].line}`);
      assert.strictEqual((await localsOf(dc, fs0[0].id)).v.value, '0');

      // >> continue; second hit, v == 1; next; stepOut back to main
      await step(dc, 'continue', tid);
      fs0 = await frames(dc, tid);
      assert.strictEqual((await localsOf(dc, fs0[0].id)).v.value, '1');
      await step(dc, 'next', tid);
      await expectFrame(dc, tid, fn('square'), sq + 1);
      await step(dc, 'stepOut', tid);
      await expectFrame(dc, tid, fn('main'), call);
      // >> next to the bump line, stepIn into bump
      await step(dc, 'next', tid);
      await expectFrame(dc, tid, fn('main'), bump);
      await step(dc, 'stepIn', tid);
      assert.ok((await frames(dc, tid))[0].name.startsWith(fn('bump')));
      // >> stepBack twice: the bump line, then the square call line
      await step(dc, 'stepBack', tid);
      await expectFrame(dc, tid, fn('main'), bump);
      await step(dc, 'stepBack', tid);
      await expectFrame(dc, tid, fn('main'), call);
      // >> reverseContinue: the breakpoint in square, v == 1 again
      ev = await step(dc, 'reverseContinue', tid);
      assert.strictEqual(ev.body.reason, 'breakpoint');
      const f = await expectFrame(dc, tid, fn('square'), sq);
      assert.strictEqual((await localsOf(dc, f.id)).v.value, '1');

      // Data breakpoint on counter, found in reverse from after the loop.
      await dc.setBreakpointsRequest({ source: { path: src }, breakpoints: [{ line: after }] });
      await step(dc, 'continue', tid);
      await expectFrame(dc, tid, fn('main'), after);
      if (lang === 'go') {
        // Go: the threads are goroutines, as delve shows them; a parked
        // one unwinds from its saved registers.
        const ths = (await dc.threadsRequest()).body.threads;
        const names = ths.map((t) => t.name);
        assert.ok(ths.some((t) => t.id === 1 && t.name.startsWith('[Go 1] main.main')), `threads ${names}`);
        const parked = ths.find((t) => t.id !== 1 && t.name.startsWith('[Go ') && !t.name.includes('(Thread '));
        assert.ok(parked, `no parked goroutine in ${names}`);
        const pf = await frames(dc, parked.id);
        assert.ok(pf.length >= 2 && pf.every((f) => f.name && !f.name.startsWith('??')), `goroutine ${parked.id}: ${pf.map((f) => f.name)}`);
      }
      const info = await dc.send('dataBreakpointInfo', { name: lang === 'c' ? 'counter' : 'main.counter' });
      assert.ok(info.body.dataId, info.body.description);
      await dc.send('setDataBreakpoints', { breakpoints: [{ dataId: info.body.dataId, accessType: 'write' }] });
      ev = await step(dc, 'reverseContinue', tid);
      assert.strictEqual(ev.body.reason, 'data breakpoint');
      const w = await expectFrame(dc, tid, fn('bump'), cw);
      assert.strictEqual((await localsOf(dc, w.id)).by.value, '4');
      await dc.send('setDataBreakpoints', { breakpoints: [] });

      // readMemory: counter before its last write is 0+1+2+3 = 6.
      const addr = info.body.dataId.split('/')[0];
      const mem = await dc.send('readMemory', { memoryReference: addr, count: 8 });
      assert.strictEqual(Buffer.from(mem.body.data, 'base64')[0], 6);
      // disassemble around pc
      const dis = await dc.send('disassemble', { memoryReference: w.instructionPointerReference, instructionOffset: -2, instructionCount: 5 });
      assert.strictEqual(dis.body.instructions.length, 5);
      assert.strictEqual(dis.body.instructions[2].address, w.instructionPointerReference);

      // No breakpoints: reverseContinue stops at the start of the recording.
      await dc.setBreakpointsRequest({ source: { path: src }, breakpoints: [] });
      ev = await step(dc, 'reverseContinue', tid);
      assert.strictEqual(ev.body.reason, 'start of recording');
    } finally {
      await dc.stop();
    }
  });
}

test('c fixture: a crash is where the session starts', { skip, timeout: TIMEOUT }, async () => {
  const dc = await start();
  try {
    const src = path.join(SRC, 'cfix.c');
    const stopped = dc.waitForEvent('stopped');
    await Promise.all([
      dc.waitForEvent('initialized').then(() => dc.configurationDoneRequest()),
      dc.launch({ program: path.join(FIX, 'cfix'), args: ['crash'] }),
    ]);
    const ev = await stopped;
    assert.strictEqual(ev.body.reason, 'exception');
    assert.match(ev.body.description, /SIGSEGV.*fault address 0x0/);
    await expectFrame(dc, ev.body.threadId, 'main', mark(src, 'crash'));
  } finally {
    await dc.stop();
  }
});
