#!/usr/bin/env node
'use strict';
// Sample Chinchón bot for the referee's gRPC protocol (chinchon.v1).
//
// It needs only the .proto files of the protocol (loaded at run time: no generated
// code), @grpc/grpc-js and @grpc/proto-loader. The protos are found where the referee
// gives them (CHINCHON_PROTOS: every sandboxed bot has it), else in a protos/ folder
// beside this file, else in the repository's protos/.
//
//   export CHINCHON_TOKEN=$(cat my.token)      # the token: never on a command line (ps)
//   node bot.js --target HOST:PORT                        # queue: tournament games
//   node bot.js --target HOST:PORT --practice greedy --games 5
//   node bot.js --target HOST1:PORT,HOST2:PORT            # several referee processes
//
// See README.md beside this file for the protocol walk-through.

const path = require('path');
const fs = require('fs');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const solver = require('./solver');

const VERSION = '0.1.0';
const PROTO_DIR = protoDir(process.env.CHINCHON_PROTOS);
// How long to keep trying to reach the referee after losing it (--reconnect-for): longer
// than a restarted referee takes to come back and wait for its bots (30 s; see
// docs/tournaments.md), so that the bot is there when its tournament resumes.
const DEFAULT_RECONNECT_SECONDS = 60;

const USAGE = `usage: node bot.js --target HOST:PORT[,HOST:PORT...] --token TOKEN
                   [--practice OPPONENT [--games N] [--seed SEED] [--rules FILE.json]
                    [--wait SECONDS]]
                   [--strategy greedy|random] [--tls | --root-cert FILE]
                   [--reconnect-for SECONDS] [--verbose]

  --target HOST:PORT   referee address (or env CHINCHON_TARGET; unix:PATH for a Unix socket,
                       what a sandboxed bot dials); several, comma-separated,
                       for referee processes that share one database: one channel and
                       one stream on each, each reconnecting on its own; the bot exits
                       once every stream has ended (practice takes one address)
  --token TOKEN        the bot's secret token (or env CHINCHON_TOKEN)
  --practice OPPONENT  play practice games against a house bot ("random", "greedy",
                       "strong") or "any"; without it the bot waits in the queue for
                       tournament games until the referee ends the stream
  --games N            practice games to play (default 1, at most 100)
  --seed SEED          practice deal seed, to repeat a session exactly
  --rules FILE.json    practice rule set: a JSON object of RuleSet fields
                       (e.g. {"deck": 48, "jokers": 2}); unset fields take defaults
  --wait SECONDS       with --practice any: how long to wait for another bot (default:
                       the referee's, 2 minutes; at most 1 hour)
  --strategy NAME      greedy (default) or random
  --tls                connect with TLS (system roots) instead of plaintext
  --root-cert FILE     connect with TLS, trusting the certificates of this PEM file
                       (the organizer's CA, or the referee's self-signed certificate)
  --reconnect-for SECONDS
                       keep trying to reach the referee this long after losing it,
                       on a fresh channel each time, with a backoff (default ${DEFAULT_RECONNECT_SECONDS});
                       the budget starts again after every welcome
  --verbose            log every decision to stderr`;

// Exit codes.
const EXIT_OK = 0;
const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;
const EXIT_UNAUTHENTICATED = 3;
const EXIT_UNAVAILABLE = 4;

// The statuses that refuse this bot (its hello or its stream): final, never retried. Any
// other end of a stream is a lost stream, retried for --reconnect-for seconds.
const REFUSALS = new Set([
  grpc.status.INVALID_ARGUMENT,
  grpc.status.RESOURCE_EXHAUSTED,
  grpc.status.FAILED_PRECONDITION,
  grpc.status.PERMISSION_DENIED,
]);

function log(msg) {
  process.stderr.write(`[node-bot] ${msg}\n`);
}

function die(code, msg) {
  log(msg);
  process.exit(code);
}

// ---------------------------------------------------------------- command line

function parseArgs(argv) {
  const opts = {
    target: process.env.CHINCHON_TARGET || '',
    token: process.env.CHINCHON_TOKEN || '',
    practice: '',
    games: 1,
    seed: '',
    rules: null,
    wait: undefined, // seconds (--wait), or undefined: the referee's default
    strategy: 'greedy',
    tls: false,
    rootCert: null, // the PEM file's bytes (--root-cert)
    reconnectFor: DEFAULT_RECONNECT_SECONDS,
    verbose: false,
  };
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    const next = () => {
      if (value !== undefined) return value;
      if (i + 1 >= argv.length) die(EXIT_USAGE, `${arg} needs a value\n${USAGE}`);
      return argv[++i];
    };
    switch (arg) {
      case '--target': opts.target = next(); break;
      case '--token': opts.token = next(); break;
      case '--practice': opts.practice = next(); break;
      case '--games': opts.games = Number(next()); break;
      case '--seed': opts.seed = next(); break;
      case '--rules': opts.rules = next(); break;
      case '--wait': opts.wait = Number(next()); break;
      case '--strategy': opts.strategy = next(); break;
      case '--tls': opts.tls = true; break;
      case '--root-cert': opts.rootCert = next(); break;
      case '--reconnect-for': opts.reconnectFor = Number(next()); break;
      case '--verbose': case '-v': opts.verbose = true; break;
      case '--help': case '-h': process.stdout.write(`${USAGE}\n`); process.exit(EXIT_OK); break;
      default: die(EXIT_USAGE, `unknown argument ${JSON.stringify(argv[i])}\n${USAGE}`);
    }
  }
  if (!opts.target) die(EXIT_USAGE, `no referee address: pass --target HOST:PORT or set CHINCHON_TARGET\n${USAGE}`);
  opts.targets = parseTargets(opts.target);
  if (!opts.targets) die(EXIT_USAGE, `--target ${JSON.stringify(opts.target)}: an address is empty or given twice (HOST:PORT[,HOST:PORT...])`);
  if (opts.practice && opts.targets.length > 1) die(EXIT_USAGE, `--practice plays on one referee: give one --target address, not ${opts.targets.length}`);
  if (!opts.token) die(EXIT_USAGE, `no token: pass --token TOKEN or set CHINCHON_TOKEN\n${USAGE}`);
  if (!['greedy', 'random'].includes(opts.strategy)) die(EXIT_USAGE, `unknown strategy ${JSON.stringify(opts.strategy)}: greedy or random`);
  if (!Number.isInteger(opts.games) || opts.games < 1 || opts.games > 100) die(EXIT_USAGE, '--games must be a whole number from 1 to 100');
  if (opts.wait !== undefined && !(opts.wait > 0 && opts.wait <= 3600)) die(EXIT_USAGE, '--wait must be more than 0 and at most 3600 seconds');
  if (!(opts.reconnectFor >= 0 && opts.reconnectFor <= 86400)) die(EXIT_USAGE, '--reconnect-for must be from 0 to 86400 seconds');
  if (opts.rootCert !== null) {
    try {
      opts.rootCert = fs.readFileSync(opts.rootCert);
    } catch (e) {
      die(EXIT_USAGE, `cannot read --root-cert ${opts.rootCert}: ${e.message}`);
    }
    opts.tls = true;
  }
  if (opts.rules !== null) {
    try {
      opts.rules = JSON.parse(fs.readFileSync(opts.rules, 'utf8'));
    } catch (e) {
      die(EXIT_USAGE, `cannot read --rules ${opts.rules}: ${e.message}`);
    }
  }
  return opts;
}

// ---------------------------------------------------------------- protocol

/** The folder holding chinchon/v1/*.proto: the referee's (CHINCHON_PROTOS), one beside
 * this file, or the repository's, the first that has referee.proto. */
function protoDir(given) {
  const candidates = [given, path.join(__dirname, 'protos'), path.resolve(__dirname, '..', '..', 'protos')];
  for (const dir of candidates) {
    if (dir && fs.existsSync(path.join(dir, 'chinchon', 'v1', 'referee.proto'))) return dir;
  }
  return candidates[candidates.length - 1];
}

/** Loads chinchon.v1 from the .proto files; returns the RefereeService client constructor. */
function loadRefereeService() {
  const definition = protoLoader.loadSync('chinchon/v1/referee.proto', {
    keepCase: true, // field names exactly as in the .proto files: request_id, legal_actions...
    longs: String, // uint64 request_id arrives as a decimal string and is sent back as is
    enums: String, // "PHASE_DRAW", "ERROR_CODE_ILLEGAL_ACTION"...
    defaults: true,
    oneofs: true, // a oneof's name holds the field that is set: msg.kind === 'action_request'
    includeDirs: [PROTO_DIR], // google/protobuf/*.proto come with protobufjs
  });
  return grpc.loadPackageDefinition(definition).chinchon.v1.RefereeService;
}

/** Which field of an Action is set ("draw_stock", "discard", "close", ...). */
function kindOf(action) {
  if (action.kind) return action.kind;
  return ['draw_stock', 'draw_discard', 'discard', 'close', 'lay_off', 'lay_off_best', 'lay_down', 'pass']
    .find((k) => action[k] !== undefined && action[k] !== null);
}

/** Short text form of an action for logs, like the rules' table ("discard 7O"). */
function describe(action) {
  const k = kindOf(action);
  const a = action[k] || {};
  const melds = (m) => (m && m.melds ? m.melds.map((g) => g.cards.join(' ')).join(' / ') : '');
  switch (k) {
    case 'draw_stock': return 'draw stock';
    case 'draw_discard': return 'draw discard';
    case 'discard': return `discard ${a.card}`;
    case 'close': return `close ${a.card} ${a.best ? 'best' : melds(a.melds)}`;
    case 'lay_off': return `layoff ${a.card} on ${a.meld}${a.end && a.end !== 'RUN_END_UNSPECIFIED' ? ` ${a.end}` : ''}`;
    case 'lay_off_best': return 'layoff best';
    case 'lay_down': return `laydown ${a.best ? 'best' : melds(a.melds) || 'nothing'}`;
    case 'pass': return 'pass';
    default: return JSON.stringify(action);
  }
}

function seconds(duration) {
  if (!duration) return null;
  return Number(duration.seconds || 0) + Number(duration.nanos || 0) / 1e9;
}

// ---------------------------------------------------------------- strategies

function randomChoice(items) {
  return items[Math.floor(Math.random() * items.length)];
}

function isJoker(card, rules) {
  return solver.isJoker(card, rules); // JK1/JK2 and the rule set's wild cards
}

/** Removes one copy of `card` from `cards`. */
function without(cards, card) {
  const i = cards.indexOf(card);
  return i < 0 ? cards.slice() : [...cards.slice(0, i), ...cards.slice(i + 1)];
}

/** Discard choice: the card whose loss leaves the fewest unmatched points; keeps jokers. */
function bestDiscard(hand, discards, rules) {
  const natural = discards.filter((c) => !isJoker(c, rules));
  const pool = natural.length ? natural : discards;
  let best = null;
  for (const card of pool) {
    const left = solver.unmatchedPoints(without(hand, card), rules);
    const pts = solver.cardPoints(card, rules);
    // Fewest points left; on a tie throw the higher card away.
    if (!best || left < best.left || (left === best.left && pts > best.pts)) best = { card, left, pts };
  }
  return best;
}

/**
 * The greedy strategy. Works out everything from the observation; always returns one
 * of `legal` (verbatim), or a `best` action of the phase.
 */
function greedy(request, legal) {
  const obs = request.observation;
  const rules = solver.normalizeRules(obs.rules);
  const hand = obs.hand.slice();
  const byKind = (k) => legal.filter((a) => kindOf(a) === k);

  if (obs.phase === 'PHASE_DRAW') {
    const stock = byKind('draw_stock')[0];
    const fromPile = byKind('draw_discard')[0];
    const top = obs.discard_pile[obs.discard_pile.length - 1];
    if (fromPile && top) {
      if (isJoker(top, rules)) return { action: fromPile, why: `a joker (${top}) is on the pile` };
      const now = solver.unmatchedPoints(hand, rules);
      // With the top card in hand, which discard would follow, and what would be left?
      const eight = [...hand, top];
      const allowed = rules.retakeDiscard ? eight : hand; // the taken card may not go back
      const after = bestDiscard(eight, allowed, rules);
      if (after && after.left < now) {
        return { action: fromPile, why: `${top} lowers unmatched points ${now} -> ${after.left}` };
      }
    }
    return { action: stock || legal[0], why: 'the pile does not help' };
  }

  if (obs.phase === 'PHASE_DISCARD') {
    // Close whenever a close is legal, picking the closing discard that scores best
    // (chinchón, -50, -25, -10, then fewest unmatched points).
    const closes = byKind('close').filter((a) => a.close.best);
    if (closes.length) {
      let best = null;
      for (const a of closes) {
        const value = solver.closeValue(without(hand, a.close.card), rules);
        if (!best || value < best.value) best = { a, value };
      }
      return { action: best.a, why: `closing scores ${best.value}` };
    }
    const discards = byKind('discard');
    if (discards.length) {
      const choice = bestDiscard(hand, discards.map((a) => a.discard.card), rules);
      const action = discards.find((a) => a.discard.card === choice.card);
      return { action, why: `leaves ${choice.left} unmatched points` };
    }
  }

  if (obs.phase === 'PHASE_LAY_OFF') {
    const action = byKind('lay_off_best')[0] || byKind('pass')[0];
    if (action) return { action, why: 'lay-off turn' };
  }

  if (obs.phase === 'PHASE_LAY_DOWN') {
    const action = byKind('lay_down').find((a) => a.lay_down.best) || { lay_down: { best: true } };
    return { action, why: 'lay-down turn' };
  }

  return { action: legal[0], why: `phase ${obs.phase}: first legal action` };
}

function chooseAction(request, strategy) {
  const legal = request.legal_actions || [];
  // After a refused action the referee asks again (attempt > 0): play safe with a
  // random legal action rather than repeat the same mistake.
  if (legal.length && (strategy === 'random' || request.attempt > 0)) {
    return { action: randomChoice(legal), why: request.attempt > 0 ? `retry ${request.attempt}` : 'random' };
  }
  try {
    const choice = greedy(request, legal);
    if (choice.action) return choice;
  } catch (e) {
    log(`strategy failed (${e.message}); playing a legal action instead`);
  }
  return { action: legal[0], why: 'fallback' };
}

// ---------------------------------------------------------------- the stream

/**
 * One referee address: its own channel (client) and Play stream, its reconnects and the
 * newest request not answered yet. The bot holds one per address of --target.
 */
class Stream {
  constructor(bot, target) {
    this.bot = bot;
    this.opts = bot.opts;
    this.target = target;
    this.failingSince = null; // time of the first failure in a row of reconnects
    this.attempt = 0;
    this.pending = null; // the request to answer once the messages already here are read
    this.done = false; // ended for good: dismissed, ended, gave up
  }

  /** Logs a line, with the address in front when the bot holds several streams. */
  log(msg) {
    log(this.bot.several ? `[${this.target}] ${msg}` : msg);
  }

  /** A new channel (a client) and a new Play stream: after a failure, never reuse the old
   * channel, which keeps its own backoff and may sit on a dead connection. */
  connect() {
    if (this.done) return;
    // With --root-cert, those certificates are the roots; with --tls alone, the system's.
    const creds = this.opts.tls ? grpc.credentials.createSsl(this.opts.rootCert) : grpc.credentials.createInsecure();
    this.pending = null;
    this.client = new this.bot.Service(this.target, creds, {
      // Practice GameEnded messages carry the whole game record.
      'grpc.max_receive_message_length': 64 * 1024 * 1024,
    });
    const metadata = new grpc.Metadata();
    metadata.add('authorization', `Bearer ${this.opts.token}`);
    this.finished = false;
    this.stopping = null;
    this.call = this.client.Play(metadata);
    this.call.on('data', (msg) => this.onMessage(msg));
    this.call.on('error', (err) => this.onClosed(err.code, err.details || err.message));
    this.call.on('status', (status) => this.onClosed(status.code, status.details));
    this.call.write(this.bot.hello());
  }

  send(message) {
    if (!this.finished && !this.stopping) this.call.write(message);
  }

  onMessage(msg) {
    if (this.done) return;
    // `accepted` rides on whatever message comes next after an answer was applied.
    if (msg.accepted && this.opts.verbose) {
      this.log(`accepted ${msg.accepted.request_id}: ${describe(msg.accepted.action)}`);
    }
    switch (msg.kind) {
      case 'welcome': {
        const w = msg.welcome;
        this.failingSince = null; // connected: the reconnect budget starts afresh
        this.attempt = 0;
        const bot = this.bot;
        this.log(`connected as ${w.bot_name} to referee ${w.server_version} (protocol ${w.protocol})` +
          (bot.practiceMode() ? `: practice ${this.opts.games - bot.gamesDone} game(s) vs ${this.opts.practice}` : ': waiting in the queue'));
        if (w.protocol && w.protocol !== 'chinchon.v1') this.log(`warning: this bot speaks chinchon.v1, the referee ${w.protocol}`);
        break;
      }
      case 'game_started': {
        const g = msg.game_started;
        const clock = g.time_control ? ` clock ${seconds(g.time_control.per_move)}s/move + ${seconds(g.time_control.bank)}s bank` : '';
        this.log(`game ${g.game_id} ${g.resumed ? 'resumed' : 'started'}: seat ${g.seat} of [${g.players.join(', ')}]${clock}`);
        break;
      }
      case 'action_request':
        this.onRequest(msg.action_request);
        break;
      case 'dismissed': {
        const d = msg.dismissed;
        this.stop(EXIT_OK, `dismissed by the referee (${d.reason}): ${d.message}; ${this.bot.summary()}`);
        break;
      }
      case 'action_rejected': {
        const r = msg.action_rejected;
        const e = r.error || {};
        this.log(`action rejected (request ${r.request_id}): ${e.code}${e.violation ? ` ${e.violation}` : ''}: ${e.message} (retries left ${r.retries_left})`);
        break;
      }
      case 'default_played': {
        const d = msg.default_played;
        if (this.pending && this.pending.request_id === d.request_id) this.supersede();
        this.log(`referee played ${describe(d.action)} for us (${d.reason}, request ${d.request_id}): strike ${d.strikes} of ${d.max_strikes}`);
        break;
      }
      case 'hand_ended':
        if (this.opts.verbose) {
          const h = msg.hand_ended.result;
          this.log(`hand ${h.hand_number} ended (${h.end}): points [${h.points.join(', ')}] totals [${h.totals.join(', ')}]`);
        }
        break;
      case 'game_ended':
        if (this.pending && this.pending.game_id === msg.game_ended.game_id) this.supersede();
        this.onGameEnded(msg.game_ended);
        break;
      case 'error': {
        const e = msg.error;
        this.log(`error from referee: ${e.code}${e.violation ? ` ${e.violation}` : ''}: ${e.message}` +
          (e.request_id && e.request_id !== '0' ? ` (request ${e.request_id})` : ''));
        if (e.code === 'ERROR_CODE_BAD_REQUEST') this.stop(EXIT_FAILURE, `the referee at ${this.target} cannot serve this request; giving up`);
        break;
      }
      default:
        this.log(`ignoring unknown message ${JSON.stringify(msg.kind)}`);
    }
  }

  /**
   * Answer the newest request only. The answer is worked out once the messages that have
   * already arrived are read (setImmediate runs after them): after a stall, a request
   * replaced by a newer one, by the default the referee played for it or by the end of
   * its game is not answered (an answer would be stale, and working it out would make
   * the newest request late too). Each stream has its own: two games at once on two
   * streams never mix.
   */
  onRequest(request) {
    if (this.pending) this.supersede();
    this.pending = request;
    setImmediate(() => {
      if (this.pending !== request) return;
      this.pending = null;
      this.answer(request);
    });
  }

  supersede() {
    this.bot.superseded++;
    if (this.opts.verbose) this.log(`request ${this.pending.request_id} not answered: a later message replaced it`);
    this.pending = null;
  }

  answer(request) {
    const started = process.hrtime.bigint();
    const { action, why } = chooseAction(request, this.opts.strategy);
    // The reply must carry the request's id; request_id stays a decimal string end to end.
    this.send({ action: { request_id: request.request_id, action } });
    if (this.opts.verbose) {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      this.log(`request ${request.request_id} ${request.observation.phase} hand [${request.observation.hand.join(' ')}]` +
        ` -> ${describe(action)} (${why}; ${ms.toFixed(1)} ms of ${seconds(request.move_time)}s + bank ${seconds(request.bank_time)}s)`);
    }
  }

  onGameEnded(ended) {
    const bot = this.bot;
    const r = ended.result || {};
    const winners = r.winners || [];
    let outcome = 'LOST';
    if (winners.includes(ended.seat)) outcome = winners.length > 1 ? 'DRAW' : 'WON';
    if (outcome === 'WON') bot.record.wins++;
    else if (outcome === 'DRAW') bot.record.draws++;
    else bot.record.losses++;
    bot.gamesDone++;
    const how = r.end && r.end !== 'GAME_END_KIND_UNSPECIFIED' ? `${r.termination}/${r.end}` : r.termination;
    this.log(`game ${ended.game_id} ended: seat ${ended.seat} ${outcome}, winners [${winners.join(', ')}], totals [${(r.totals || []).join(', ')}], ` +
      `${r.hands_played} hands, ${how}${r.summary ? ` - ${r.summary}` : ''}`);
    if (bot.practiceMode() && bot.gamesDone >= this.opts.games) {
      this.stop(EXIT_OK, `practice done: ${bot.summary()}`);
    }
  }

  /** Ends the stream from our side; it is over once the referee has closed it (or after 3 s). */
  stop(code, msg) {
    if (this.stopping) return;
    this.stopping = { code, msg };
    this.call.end();
    this.stopTimer = setTimeout(() => this.end(code, msg), 3000);
  }

  /** This address is done with: close its channel and tell the bot how it ended. */
  end(code, msg) {
    if (this.done) return;
    this.done = true;
    this.pending = null;
    clearTimeout(this.stopTimer);
    clearTimeout(this.retryTimer);
    this.close();
    this.bot.streamEnded(this, code, msg);
  }

  close() {
    if (this.call) this.call.cancel();
    if (this.client) this.client.close();
  }

  onClosed(code, details) {
    if (this.finished || this.done) return; // 'error' and 'status' both report the same end
    this.finished = true;
    this.pending = null;
    if (this.stopping) return this.end(this.stopping.code, this.stopping.msg);
    const S = grpc.status;
    const name = Object.keys(S).find((k) => S[k] === code) || String(code);
    const bot = this.bot;
    if (code === S.OK) {
      if (bot.practiceMode()) {
        return this.end(EXIT_FAILURE, `the referee ended the stream after ${bot.summary()} of ${this.opts.games} requested`);
      }
      return this.end(EXIT_OK, `the referee ended the stream: ${bot.summary()}`);
    }
    if (code === S.UNAUTHENTICATED) {
      return this.end(EXIT_UNAUTHENTICATED, `the referee at ${this.target} refused the token (UNAUTHENTICATED: ${details}); check --token or CHINCHON_TOKEN`);
    }
    // A refusal of this bot is final: retrying would be refused the same way.
    if (REFUSALS.has(code)) {
      return this.end(EXIT_FAILURE, `the referee at ${this.target} closed the stream: ${name}: ${details} (${bot.summary()})`);
    }
    // Anything else is a lost stream: the referee is unreachable or restarting
    // (UNAVAILABLE), dropped the stream (DEADLINE_EXCEEDED: it thought we stopped
    // reading), or went away mid-call (a server stopping at once cancels its calls:
    // CANCELLED or INTERNAL, as grpc-js reports the connection's end). Try again on a
    // fresh channel, backing off, for up to --reconnect-for seconds without a welcome.
    const now = Date.now();
    if (this.failingSince === null) this.failingSince = now;
    const delay = Math.min(250 * 2 ** this.attempt, 4000);
    if (now - this.failingSince + delay <= this.opts.reconnectFor * 1000) {
      this.attempt++;
      this.log(`stream lost (${name}: ${details}); reconnecting in ${delay} ms`);
      this.client.close();
      this.retryTimer = setTimeout(() => this.connect(), delay);
      return undefined;
    }
    return this.end(EXIT_UNAVAILABLE, `cannot reach the referee at ${this.target} (${name}: ${details}); gave up after ${this.opts.reconnectFor} s`);
  }
}

/**
 * The bot: one Stream per referee address (several referee processes sharing one
 * database each need a stream of the bot: docs/bots.md, "Several referee processes").
 * It exits once every stream has ended: 0 if one at least was dismissed or ended
 * normally, 4 if every address stayed unreachable; a refused token (3) or another
 * error (1) at any address ends it at once.
 */
class Bot {
  constructor(opts) {
    this.opts = opts;
    this.Service = loadRefereeService();
    this.gamesDone = 0; // over every stream
    this.record = { wins: 0, draws: 0, losses: 0 };
    this.superseded = 0; // requests left unanswered: a later message replaced them
    this.streams = opts.targets.map((target) => new Stream(this, target));
    this.several = this.streams.length > 1;
  }

  practiceMode() {
    return Boolean(this.opts.practice);
  }

  hello() {
    const client = `chinchon-sample-bot-node/${VERSION} (${this.opts.strategy})`;
    if (!this.practiceMode()) return { hello: { client, queue: {} } };
    const practice = {
      opponent: this.opts.practice,
      games: this.opts.games - this.gamesDone, // after a reconnect: the games still owed
      seed: this.opts.seed,
    };
    if (this.opts.rules) practice.rules = this.opts.rules;
    if (this.opts.wait !== undefined) {
      // A google.protobuf.Duration.
      const whole = Math.floor(this.opts.wait);
      practice.wait = { seconds: whole, nanos: Math.round((this.opts.wait - whole) * 1e9) };
    }
    return { hello: { client, practice } };
  }

  start() {
    for (const stream of this.streams) stream.connect();
  }

  /** A stream is over (`code`: how this bot would exit for it alone). */
  streamEnded(stream, code, msg) {
    if (!this.several) return this.exit(code, msg);
    if (code !== EXIT_OK && code !== EXIT_UNAVAILABLE) return this.exit(code, `[${stream.target}] ${msg}`);
    stream.log(code === EXIT_OK ? msg : `${msg}; playing on the other addresses`);
    stream.code = code;
    if (this.streams.some((s) => !s.done)) return undefined;
    if (this.streams.every((s) => s.code === EXIT_UNAVAILABLE)) {
      return this.exit(EXIT_UNAVAILABLE, `cannot reach the referee at any of ${this.opts.targets.join(', ')}`);
    }
    return this.exit(EXIT_OK, `every stream has ended: ${this.summary()}`);
  }

  summary() {
    const { wins, draws, losses } = this.record;
    return `${this.gamesDone} game(s): ${wins} won, ${draws} drawn, ${losses} lost`;
  }

  exit(code, msg) {
    if (msg) log(msg);
    for (const stream of this.streams) stream.close();
    process.exit(code);
  }
}

/** The referee addresses of --target / CHINCHON_TARGET: one HOST:PORT, or several
 * separated by commas; null when one is empty or given twice. */
function parseTargets(text) {
  const targets = text.split(',').map((t) => t.trim());
  if (targets.some((t) => !t) || new Set(targets).size !== targets.length) return null;
  return targets;
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  const bot = new Bot(opts);
  process.on('SIGINT', () => bot.exit(130, `interrupted: ${bot.summary()}`));
  process.on('SIGTERM', () => bot.exit(143, `terminated: ${bot.summary()}`));
  bot.start();
}

if (require.main === module) main();

module.exports = { chooseAction, greedy, describe, kindOf, loadRefereeService, parseArgs, parseTargets, protoDir, PROTO_DIR };
