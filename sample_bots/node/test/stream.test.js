'use strict';
// The bot against a scripted stand-in referee (same .proto files, in this process):
// hello, one request of each phase, a refused action, the end of the game and exit
// codes. The real referee is tested by the project's own suite.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('path');
const { spawn } = require('child_process');
const grpc = require('@grpc/grpc-js');
const { loadRefereeService, parseTargets } = require('../bot');

const BOT = path.join(__dirname, '..', 'bot.js');
const TOKEN = 'secret-token';
const Service = loadRefereeService();

const draw = (hand, pile) => ({
  observation: { phase: 'PHASE_DRAW', hand: hand.split(' '), discard_pile: pile.split(' '), rules: {} },
  legal_actions: [{ draw_stock: {} }, { draw_discard: {} }],
});
const discardPhase = (hand, legal, extra = []) => ({
  observation: { phase: 'PHASE_DISCARD', hand: hand.split(' '), discard_pile: ['1C'], rules: {} },
  legal_actions: [...legal.split(' ').map((card) => ({ discard: { card } })), ...extra],
});

/** Each step: a request to send and a check of the bot's action. */
const SCRIPT = [
  // 3O completes 1O 2O 3O: 38 unmatched points now, 25 after taking it and dropping 12E.
  [draw('1O 2O 4C 5E 7B 11C 12E', '6B 3O'), (a) => assert.ok(a.draw_discard)],
  // 12E is the highest unmatched card; 3O (just taken) is not a legal discard.
  [discardPhase('1O 2O 3O 4C 5E 7B 11C 12E', '1O 2O 4C 5E 7B 11C 12E'), (a) => assert.equal(a.discard.card, '12E')],
  // Nothing on the pile helps: draw from the stock.
  [draw('1O 2O 3O 4C 5E 7B 11C', '12B'), (a) => assert.ok(a.draw_stock)],
  // Two legal closes: putting 12E face down leaves 2B (2 points), putting 2B leaves 12E... only
  // legal ones are listed; the bot takes the one that scores best.
  [discardPhase('1O 2O 3O 6C 6E 6B 2B 12E', '1O 2O 3O 6C 6E 6B 2B 12E', [
    { close: { card: '2B', best: true } },
    { close: { card: '12E', best: true } },
  ]), (a) => assert.deepEqual([a.close.card, a.close.best], ['12E', true])],
  [{ observation: { phase: 'PHASE_LAY_OFF', hand: ['4O', '5O'], rules: {} },
    legal_actions: [{ lay_off: { card: '4O', meld: 0 } }, { lay_off_best: {} }, { pass: {} }] },
  (a) => assert.ok(a.lay_off_best)],
  [{ observation: { phase: 'PHASE_LAY_DOWN', hand: ['11C', '11E', '11B', '7B'], rules: {} },
    legal_actions: [{ lay_down: { best: true } }, { lay_down: { melds: { melds: [{ cards: ['11C', '11E', '11B'] }] } } }] },
  (a) => assert.equal(a.lay_down.best, true)],
];

/** Starts a stand-in referee; `onHello(call, hello)` plays the game. */
async function startReferee(onHello) {
  const server = new grpc.Server();
  const seen = { hellos: [], replies: [], metadata: [] };
  server.addService(Service.service, {
    Play(call) {
      seen.metadata.push(call.metadata.get('authorization')[0]);
      let first = true;
      call.on('data', (msg) => {
        if (first) {
          first = false;
          seen.hellos.push(msg.hello);
          if (call.metadata.get('authorization')[0] !== `Bearer ${TOKEN}`) {
            call.emit('error', { code: grpc.status.UNAUTHENTICATED, details: 'unknown token' });
            return;
          }
          onHello(call, msg.hello, seen);
        } else {
          seen.replies.push(msg.action);
          if (call.onReply) call.onReply(msg.action);
        }
      });
      call.on('end', () => call.end());
      call.on('error', () => {});
    },
  });
  const port = await new Promise((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p)));
  });
  return { server, port, seen };
}

/** An Action's wire bytes, to compare actions whatever their JS shape. */
function wire(action) {
  // Encode then decode: protobufjs writes explicitly set zero values (an `end` of
  // RUN_END_UNSPECIFIED) that a peer omits, so compare the decoded forms.
  const play = Service.service.Play;
  const decoded = play.requestDeserialize(play.requestSerialize({ action: { request_id: '1', action } }));
  return Buffer.from(JSON.stringify(decoded));
}

/** Plays SCRIPT (with one refused action at step 2), then ends the game. */
function playScript(call, hello, seen, { endStream = false, strict = true } = {}) {
  call.write({ welcome: { bot_name: 'node-sample', server_version: 'fake', protocol: 'chinchon.v1', limits: {} } });
  call.write({ game_started: { game_id: 'g1', seat: 0, players: ['node-sample', 'house'], rules: {},
    time_control: { per_move: { seconds: 5 }, bank: { seconds: 30 } } } });
  let step = 0;
  let id = 1000000000000n; // bigger than 2^32: request ids are uint64
  let rejectedOnce = false;
  let accepted = null; // confirms the last answer, on the next message (as the referee does)
  const ask = (attempt = 0) => {
    const [request] = SCRIPT[step];
    id += 1n;
    call.write({ action_request: { request_id: id.toString(), game_id: 'g1', attempt,
      move_time: { seconds: 5 }, bank_time: { seconds: 30 }, ...request },
      ...(accepted ? { accepted } : {}) });
    accepted = null;
  };
  call.onReply = (reply) => {
    seen.ids = seen.ids || [];
    seen.ids.push([reply.request_id, id.toString()]);
    const [request, check] = SCRIPT[step];
    const action = reply.action;
    const isLegal = request.legal_actions.some((a) => wire(a).equals(wire(action)));
    if (!strict) {
      // Random play: any legal action (sent back verbatim) will do.
      assert.ok(isLegal, `${JSON.stringify(action)} is legal`);
    } else if (step === 1 && !rejectedOnce) {
      // Refuse the (right) first answer to step 1: the bot must log it and answer
      // the retry with one of the legal actions.
      check(action);
      rejectedOnce = true;
      call.write({ action_rejected: { request_id: reply.request_id, retries_left: 1,
        error: { code: 'ERROR_CODE_ILLEGAL_ACTION', violation: 'TEST_REFUSAL', message: 'refused by the test' } } });
      ask(1);
      return;
    } else if (step === 1) {
      assert.ok(isLegal, `retry answer ${JSON.stringify(action)} is legal`);
    } else {
      check(action);
    }
    accepted = { request_id: reply.request_id, action, time_taken: { nanos: 1000000 } };
    step += 1;
    if (step < SCRIPT.length) return ask();
    call.write({ error: { code: 'ERROR_CODE_STALE_REQUEST', message: 'a test error', request_id: '7' } });
    call.write({ ...(accepted ? { accepted } : {}), game_ended: { game_id: 'g1', seat: 0,
      result: { termination: 'TERMINATION_NORMAL', end: 'GAME_END_KIND_LAST_PLAYER', winners: [0], totals: [12, 104],
        hands_played: 3, summary: 'node-sample wins' } } });
    if (endStream) call.end();
  };
  ask();
}

// Only a guard against a bot that hangs: every test waits on what the bot prints or on
// its exit, never on a process starting or connecting within a set time (a busy machine
// takes seconds just to start Node).
const HANG_GUARD_MS = 120000;

function runBot(args, env = {}, onSpawn = () => {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BOT, ...args], { env: { ...process.env, ...env } });
    onSpawn(child);
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), HANG_GUARD_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}

/** Resolves once the child has written a line matching `pattern` to stderr. */
function printed(child, pattern) {
  return new Promise((resolve) => {
    let seen = '';
    const look = (d) => {
      seen += d;
      if (pattern.test(seen)) {
        child.stderr.off('data', look);
        resolve(seen);
      }
    };
    child.stderr.on('data', look);
  });
}

test('practice: plays every phase, answers by request_id, exits 0 after the games', async () => {
  const ref = await startReferee((call, hello, seen) => playScript(call, hello, seen));
  try {
    const { code, stderr } = await runBot(['--target', `127.0.0.1:${ref.port}`, '--token', TOKEN,
      '--practice', 'greedy', '--games', '1', '--seed', 's1', '--wait', '2.5']);
    assert.equal(code, 0, stderr);
    assert.equal(ref.seen.metadata[0], `Bearer ${TOKEN}`);
    const hello = ref.seen.hellos[0];
    assert.equal(hello.mode, 'practice');
    assert.deepEqual([hello.practice.opponent, hello.practice.games, hello.practice.seed], ['greedy', 1, 's1']);
    assert.deepEqual([Number(hello.practice.wait.seconds), hello.practice.wait.nanos], [2, 500000000]);
    assert.match(hello.client, /chinchon-sample-bot-node/);
    for (const [got, want] of ref.seen.ids) assert.equal(got, want);
    assert.equal(ref.seen.replies.length, SCRIPT.length + 1);
    assert.match(stderr, /action rejected \(request \d+\): ERROR_CODE_ILLEGAL_ACTION TEST_REFUSAL: refused by the test/);
    assert.match(stderr, /error from referee: ERROR_CODE_STALE_REQUEST: a test error/);
    assert.match(stderr, /game g1 ended: seat 0 WON/);
    assert.match(stderr, /practice done: 1 game\(s\): 1 won/);
  } finally {
    ref.server.forceShutdown();
  }
});

test('queue mode (env vars): plays until the referee ends the stream, then exits 0', async () => {
  const ref = await startReferee((call, hello, seen) => playScript(call, hello, seen, { endStream: true, strict: false }));
  try {
    const { code, stderr } = await runBot(['--strategy', 'random'],
      { CHINCHON_TARGET: `127.0.0.1:${ref.port}`, CHINCHON_TOKEN: TOKEN });
    assert.equal(code, 0, stderr);
    assert.equal(ref.seen.hellos[0].mode, 'queue');
    assert.match(stderr, /the referee ended the stream: 1 game\(s\)/);
  } finally {
    ref.server.forceShutdown();
  }
});

test('a refused token exits non-zero with a clear message', async () => {
  const ref = await startReferee(() => assert.fail('not reached'));
  try {
    const { code, stderr } = await runBot(['--target', `127.0.0.1:${ref.port}`, '--token', 'wrong']);
    assert.equal(code, 3, stderr);
    assert.match(stderr, /UNAUTHENTICATED/);
  } finally {
    ref.server.forceShutdown();
  }
});

test('an unreachable referee is retried, then the bot exits non-zero', async () => {
  // Find a free port, then leave nothing listening on it.
  const probe = await startReferee(() => {});
  const port = probe.port;
  probe.server.forceShutdown();
  const { code, stderr } = await runBot(['--target', `127.0.0.1:${port}`, '--token', TOKEN, '--reconnect-for', '3']);
  assert.equal(code, 4, stderr);
  assert.match(stderr, /reconnecting in/);
  assert.match(stderr, /cannot reach the referee .*gave up after 3 s/);
  // It gives up within its budget: the waits it announced add up to 3 s at most (counted
  // from what it printed, not from a clock, which a busy machine stretches).
  const waits = [...stderr.matchAll(/reconnecting in (\d+) ms/g)].map((m) => Number(m[1]));
  assert.ok(waits.reduce((a, b) => a + b, 0) <= 3000, stderr);
});

test('a referee that comes back is reached again on a fresh channel', async () => {
  // Nothing listens on the port at first; the referee starts there once the bot has
  // failed to reach it and said it will try again.
  const probe = await startReferee(() => {});
  const port = probe.port;
  probe.server.forceShutdown();
  let failed = null;
  const running = runBot(['--target', `127.0.0.1:${port}`, '--token', TOKEN], {},
    (child) => { failed = printed(child, /reconnecting in/); });
  await Promise.race([failed, running]); // (a bot that exits first fails the checks below)
  const server = new grpc.Server();
  const hellos = [];
  server.addService(Service.service, {
    Play(call) {
      call.on('data', (msg) => {
        hellos.push(msg.hello);
        call.write({ welcome: { bot_name: 'node-sample', protocol: 'chinchon.v1', limits: {} } });
        call.end(); // OK: a queue stream ended normally
      });
      call.on('error', () => {});
    },
  });
  await new Promise((resolve, reject) => {
    server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve()));
  });
  try {
    const { code, stderr } = await running;
    assert.equal(code, 0, stderr);
    assert.match(stderr, /reconnecting in/);
    assert.equal(hellos.length, 1);
  } finally {
    server.forceShutdown();
  }
});

test('queue mode: dismissed by the referee, the bot exits 0 without reconnecting', async () => {
  const ref = await startReferee((call) => {
    call.write({ welcome: { bot_name: 'node-sample', protocol: 'chinchon.v1', limits: {} } });
    call.write({ dismissed: { reason: 'DISMISS_REASON_GAMES_PLAYED', tournament_id: 't-1', message: 'tournament t-1 finished' } });
    // The stream is left open: the bot ends it itself (the referee would end it with OK).
  });
  try {
    const { code, stderr } = await runBot(['--target', `127.0.0.1:${ref.port}`, '--token', TOKEN]);
    assert.equal(code, 0, stderr);
    assert.match(stderr, /dismissed by the referee \(DISMISS_REASON_GAMES_PLAYED\): tournament t-1 finished/);
    assert.equal(ref.seen.hellos.length, 1);
  } finally {
    ref.server.forceShutdown();
  }
});

test('after a stall the bot answers only the newest request', async () => {
  let bot = null;
  const write = (call, msg) => new Promise((resolve) => call.write(msg, resolve));
  const ref = await startReferee(async (call, hello, seen) => {
    call.write({ welcome: { bot_name: 'node-sample', protocol: 'chinchon.v1', limits: {} } });
    call.write({ game_started: { game_id: 'g1', seat: 0, players: ['node-sample', 'house'], rules: {} } });
    const [request] = SCRIPT[2];
    const ask = (id) => ({ action_request: { request_id: String(id), game_id: 'g1', move_time: { seconds: 5 }, bank_time: { seconds: 30 }, ...request } });
    call.onReply = (reply) => {
      seen.answered = reply.request_id;
      call.write({ game_ended: { game_id: 'g1', seat: 0, result: { termination: 'TERMINATION_NORMAL', winners: [0], totals: [0, 100] } } });
      call.end();
    };
    // A real stall: the bot is stopped while the messages are sent, so they wait together
    // in its socket (on a busy machine, sent to a running bot, they could arrive one by one).
    // Request 1, replaced by the default played for it; request 2, replaced by request 3.
    // Only request 3 may be answered.
    process.kill(bot.pid, 'SIGSTOP');
    try {
      await write(call, ask(1));
      await write(call, { default_played: { request_id: '1', action: { draw_stock: {} }, reason: 'DEFAULT_REASON_TIMEOUT', strikes: 1, max_strikes: 3 } });
      await write(call, ask(2));
      await write(call, ask(3));
      // The writes are handed to the HTTP/2 session; it sends them on its next turns.
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.kill(bot.pid, 'SIGCONT');
    }
  });
  try {
    const { code, stderr } = await runBot(['--target', `127.0.0.1:${ref.port}`, '--token', TOKEN, '--verbose'], {},
      (child) => { bot = child; });
    assert.equal(code, 0, stderr);
    assert.deepEqual(ref.seen.replies.map((r) => r.request_id), ['3']);
    assert.match(stderr, /request 1 not answered/);
    assert.match(stderr, /request 2 not answered/);
  } finally {
    ref.server.forceShutdown();
  }
});

test('several addresses: one stream each; one unreachable gives up alone, the bot exits 0 once all ended', async () => {
  const dismiss = (call) => {
    call.write({ welcome: { bot_name: 'node-sample', protocol: 'chinchon.v1', limits: {} } });
    call.write({ dismissed: { reason: 'DISMISS_REASON_GAMES_PLAYED', tournament_id: 't-1', message: 'all played' } });
  };
  const one = await startReferee(dismiss);
  const two = await startReferee(dismiss);
  const probe = await startReferee(() => {});
  const gone = `127.0.0.1:${probe.port}`;
  probe.server.forceShutdown();
  try {
    const targets = [`127.0.0.1:${one.port}`, `127.0.0.1:${two.port}`, gone];
    const { code, stderr } = await runBot(['--target', targets.join(','), '--token', TOKEN, '--reconnect-for', '1']);
    assert.equal(code, 0, stderr);
    assert.equal(one.seen.hellos.length, 1);
    assert.equal(two.seen.hellos.length, 1);
    for (const t of targets.slice(0, 2)) assert.ok(stderr.includes(`[${t}] dismissed by the referee`), stderr);
    assert.ok(stderr.includes(`[${gone}] cannot reach the referee at ${gone}`), stderr);
    assert.match(stderr, /playing on the other addresses/);
    assert.match(stderr, /every stream has ended/);
  } finally {
    one.server.forceShutdown();
    two.server.forceShutdown();
  }
});

test('several addresses: a stream the referee cancels or ends with INTERNAL is retried, the others play on', async () => {
  // A referee that stops at once cancels its calls and closes its connections: grpc-js can
  // report that as CANCELLED or INTERNAL. Neither is a refusal: the bot must reconnect to
  // that address (here, it is back at once) and never drop the streams to the others.
  for (const code of [grpc.status.CANCELLED, grpc.status.INTERNAL]) {
    let cut = 0;
    let release = null;
    const cutOnce = (call) => {
      call.write({ welcome: { bot_name: 'node-sample', protocol: 'chinchon.v1', limits: {} } });
      if (cut++ === 0) {
        call.emit('error', { code, details: 'the referee went away' });
        return;
      }
      call.write({ dismissed: { reason: 'DISMISS_REASON_GAMES_PLAYED', tournament_id: 't-1', message: 'all played' } });
      release(); // the other referee dismisses the bot only once this one was reached again
    };
    const released = new Promise((resolve) => { release = resolve; });
    const one = await startReferee(cutOnce);
    const two = await startReferee((call) => {
      call.write({ welcome: { bot_name: 'node-sample', protocol: 'chinchon.v1', limits: {} } });
      released.then(() => call.write({ dismissed: { reason: 'DISMISS_REASON_GAMES_PLAYED', tournament_id: 't-2', message: 'all played' } }));
    });
    try {
      const targets = [`127.0.0.1:${one.port}`, `127.0.0.1:${two.port}`];
      const { code: exit, stderr } = await runBot(['--target', targets.join(','), '--token', TOKEN, '--reconnect-for', '5']);
      assert.equal(exit, 0, stderr);
      assert.equal(one.seen.hellos.length, 2, stderr);
      assert.equal(two.seen.hellos.length, 1, stderr);
      assert.ok(stderr.includes(`[${targets[0]}] stream lost (`), stderr);
      for (const t of targets) assert.ok(stderr.includes(`[${t}] dismissed by the referee`), stderr);
      assert.match(stderr, /every stream has ended/);
    } finally {
      one.server.forceShutdown();
      two.server.forceShutdown();
    }
  }
});

test('--target takes one address or several, comma-separated, none empty or repeated', () => {
  assert.deepEqual(parseTargets('h:1'), ['h:1']);
  assert.deepEqual(parseTargets(' h:1, k:2 '), ['h:1', 'k:2']);
  for (const bad of ['h:1,', ',', 'h:1,h:1']) assert.equal(parseTargets(bad), null, bad);
});
