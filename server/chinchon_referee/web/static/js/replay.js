// The replay viewer: every step of a finished game, all cards face up or as one seat
// saw them (the engine's observation). Play, pause, step, seek, speed, keyboard
// (← → space), hand markers on the seek bar and "jump to hand N". Each step shows the
// answers the referee refused before it, the cards behind a "best" macro, each hand
// seen with its melds apart from its unmatched cards, and (for a decision) a link to
// the observation and legal actions its bot received, as JSON for a unit test.
// The step and the options are in the URL:
//   ?step=N  &view=all|SEAT  &autoplay=1  &speed=X (steps per second)  &controls=0
import { $, fmtSeconds, getJSON, h, replace, speedChoices } from "./common.js";
import { cards } from "./cards.js";
import { drawHandResult, drawTable } from "./table.js";

const gid = decodeURIComponent(location.pathname.split("/")[2] || "");
const params = new URLSearchParams(location.search);
const state = {
  data: null,
  step: Math.max(0, parseInt(params.get("step") || "0", 10) || 0),
  view: params.get("view") || "all",
  speed: Math.min(50, Math.max(0.25, parseFloat(params.get("speed") || "2") || 2)),
  controls: params.get("controls") !== "0",
  playing: params.get("autoplay") === "1",
  timer: null,
};

function syncURL() {
  const q = new URLSearchParams(location.search);
  q.set("step", String(state.step));
  if (state.view !== "all") q.set("view", state.view); else q.delete("view");
  history.replaceState(null, "", `${location.pathname}?${q}`);
}

async function load() {
  const v = encodeURIComponent(state.view);
  try {
    state.data = await getJSON(`/api/g/${encodeURIComponent(gid)}/replay?view=${v}`);
  } catch (e) {
    replace($("#main"), h("h1", {}, "No replay"), h("p", { class: "error", id: "error" }, e.message));
    return;
  }
  state.step = Math.min(state.step, state.data.steps.length);
  build();
  show();
}

function names() { return state.data.names; }
// A ladder game's players link to their pages on the ladder; others to the bot's page.
function botHref(d, n) {
  const ladder = (d.labels || {}).ladder;
  return ladder ? `/l/${encodeURIComponent(ladder)}/b/${encodeURIComponent(n)}` : `/b/${encodeURIComponent(n)}`;
}

function lastHandResult(step) {
  let k = -1;
  for (let i = 0; i < step; i++) if (state.data.steps[i].hand_result !== undefined) k = state.data.steps[i].hand_result;
  return k;
}

// The hand a step belongs to (1-based; 0 before the first deal).
function handOf(step) {
  let k = 0;
  for (const start of state.data.hand_starts || []) if (start <= step) k += 1;
  return k;
}

function handMarks(d) {
  const starts = d.hand_starts || [];
  const n = d.steps.length || 1;
  const marks = h("div", { id: "handmarks", class: "handmarks" }, starts.map((s, i) => {
    const b = h("button", { class: "handmark", "data-hand": i + 1, "data-step": s,
      title: `hand ${i + 1} (step ${s})`, onclick: () => go(s) }, String(i + 1));
    // Where the range's thumb stands at step s (the track is inset by the thumb's half
    // width at each end); set through the CSSOM: the pages allow no inline style.
    b.style.left = `calc(8px + (100% - 16px) * ${s / n})`;
    return b;
  }));
  const jump = h("select", { id: "hand", title: "jump to hand N",
    onchange: (e) => { const v = parseInt(e.target.value, 10); if (v > 0) go(starts[v - 1]); } },
  h("option", { value: "0" }, "jump to hand…"),
  starts.map((s, i) => h("option", { value: String(i + 1) }, `hand ${i + 1}`)));
  const ticks = h("datalist", { id: "handticks" }, starts.map((s) => h("option", { value: String(s) })));
  return { marks, jump, ticks };
}

// Hands that start a few steps apart would put their markers on top of each other:
// each marker goes on the first of three rows where it clears the one before it there
// (measured, as the seek bar's width follows the window's).
const MARK_ROWS = 3;
function stackMarks() {
  const box = document.getElementById("handmarks");
  if (!box) return;
  const ends = [];  // per row, the right edge of its last marker
  const placed = [];  // [marker, row]
  let height = 0;
  for (const m of box.querySelectorAll(".handmark")) {
    const r = m.getBoundingClientRect();
    height = Math.max(height, r.height);
    let row = ends.findIndex((end) => r.left >= end + 2);
    if (row < 0) row = ends.length < MARK_ROWS ? ends.length : ends.indexOf(Math.min(...ends));
    ends[row] = r.right;
    placed.push([m, row]);
  }
  // Set through the CSSOM, as the markers' places are: the pages allow no inline style.
  for (const [m, row] of placed) m.style.top = `${row * (height + 1)}px`;
  box.style.height = ends.length > 1 ? `${ends.length * (height + 1)}px` : "";
  box.dataset.rows = String(Math.max(1, ends.length));
}
window.addEventListener("resize", stackMarks);

const INCIDENT = {
  SEAT_INCIDENT_KIND_MALFORMED: "refused (unreadable)",
  SEAT_INCIDENT_KIND_ILLEGAL: "refused (illegal)",
  SEAT_INCIDENT_KIND_TIMEOUT: "timeout",
  SEAT_INCIDENT_KIND_DEFAULT: "default played",
};

function drawIncidents(st) {
  const list = st ? st.incidents || [] : [];
  if (!list.length) return null;
  return h("ol", { class: "incidents", id: "incidents" }, list.map((n) => h("li", {
    class: `incident k-${String(n.kind || "").replace("SEAT_INCIDENT_KIND_", "").toLowerCase()}`,
    "data-kind": n.kind, "data-request": n.requestId,
  },
  h("span", { class: "kind" }, INCIDENT[n.kind] || n.kind), " ",
  `${names()[n.seat] || `seat ${n.seat}`}`,
  n.attempt ? ` · attempt ${n.attempt + 1}` : "",
  n.violation ? ` · ${n.violation}` : "",
  n.sent ? h("code", { class: "sent" }, n.sent) : null,
  n.message ? h("span", { class: "why" }, n.message) : null)));
}

// The observation and legal actions of a decision, as its bot received them.
function stepLinks(st) {
  if (!st || st.seat < 0 || st.kind === "deal" || st.kind === "reshuffle") return null;
  const url = `/api/g/${encodeURIComponent(gid)}/step/${st.step}`;
  const copy = h("button", { id: "obs-copy", title: "copy the JSON, to paste into a unit test",
    onclick: async () => {
      const r = await fetch(url);
      const text = await r.text();
      try { await navigator.clipboard.writeText(text); copy.textContent = "copied"; } catch { copy.textContent = "copy failed"; }
    } }, "copy");
  return h("span", { class: "obslink" }, " · ",
    h("a", { id: "obs-json", href: url, target: "_blank", rel: "noopener" }, "observation as the bot received it (JSON)"),
    " ", copy);
}

// Each hand shown, its melds apart from its unmatched cards (the solver's best split).
function arrange(tableEl, t) {
  for (const s of t.seats) {
    if (!s.arranged || !s.hand) continue;
    const hand = tableEl.querySelector(`.seat[data-seat="${s.seat}"] .hand`);
    if (!hand) continue;
    hand.classList.add("arranged");
    replace(hand, s.arranged.melds.map((m) => h("span", { class: "meld inhand" }, cards(m))),
      s.arranged.unmatched.length ? h("span", { class: "meld unmatched" }, cards(s.arranged.unmatched)) : null);
  }
}

// A launched bot's stderr lines are its author's and the organizer's: the server wants
// that bot's token or the admin token in `Authorization: Bearer`. Asked once in a
// password field (no name, no action: never in a URL, the history or saved form data),
// kept in this tab's sessionStorage, sent as a header.
const LOG_TOKEN_KEY = "chinchon-log-token";

function logLinks(d) {
  const out = [];
  const named = new Set();
  for (const s of d.stderr || []) {
    const name = d.names[s.seat];
    out.push(" · ", h("a", { class: "stderr", href: s.url, "data-seat": s.seat,
      onclick: (e) => { e.preventDefault(); showLog(s.url, `${name}'s stderr in this game`); } },
    `${name}'s stderr`));
    if (s.bot_url && !named.has(name)) {
      named.add(name);
      out.push(" · ", h("a", { class: "botlog", href: s.bot_url, "data-seat": s.seat,
        onclick: (e) => { e.preventDefault(); showLog(s.bot_url, `${name}'s lines no one game owns`); } },
      `${name}'s other lines`));
    }
  }
  return out;
}

async function showLog(url, title) {
  const token = sessionStorage.getItem(LOG_TOKEN_KEY);
  const r = await fetch(url, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
  const body = await r.text();
  if (r.ok) {
    replace($("#stderr-view"), h("h2", {}, title), h("pre", { id: "stderr-text", class: "stderr-text" }, body));
    return;
  }
  let why = body;
  try { why = JSON.parse(body).error || body; } catch (e) { /* a plain text answer */ }
  if ((r.status === 401 || r.status === 403) && token) sessionStorage.removeItem(LOG_TOKEN_KEY);
  if (r.status !== 401 && r.status !== 403) {
    replace($("#stderr-view"), h("p", { id: "stderr-refused" }, `${title}: ${why}`));
    return;
  }
  const input = h("input", { id: "log-token", type: "password", autocomplete: "off", spellcheck: "false",
    "aria-label": "bot token or admin token", placeholder: "bot token or admin token", required: true });
  const form = h("form", { id: "log-token-form", class: "token-form", autocomplete: "off", onsubmit: (e) => {
    e.preventDefault();
    const t = input.value.trim();
    input.value = "";
    if (t) { sessionStorage.setItem(LOG_TOKEN_KEY, t); showLog(url, title); }
  } },
  h("label", { for: "log-token" }, "the bot's token or the admin token (kept in this tab only)"), input,
  h("button", { type: "submit", id: "log-token-ok" }, "show"));
  replace($("#stderr-view"), h("p", { id: "stderr-refused" }, `${title}: ${why}`), form);
  input.focus();
}

function build() {
  const d = state.data;
  const hm = handMarks(d);
  document.body.classList.toggle("embed", !state.controls);
  const viewSel = h("select", { id: "view", onchange: (e) => { state.view = e.target.value; syncURL(); load(); } },
    h("option", { value: "all", selected: state.view === "all" }, "all cards"),
    d.names.map((n, i) => h("option", { value: String(i), selected: state.view === String(i) }, `as seat ${i} (${n}) saw it`)));
  const speedSel = h("select", { id: "speed", onchange: (e) => { state.speed = parseFloat(e.target.value); if (state.playing) { pause(); play(); } } },
    speedChoices(state.speed).map((s) => h("option", { value: String(s), selected: s === state.speed }, `${s}×`)));
  const controls = h("div", { class: "controls", id: "controls" },
    h("button", { id: "first", title: "first step (Home)", onclick: () => go(0) }, "|◀◀"),
    h("button", { id: "prev", title: "previous step (←)", onclick: () => go(state.step - 1) }, "◀"),
    h("button", { id: "play", title: "play / pause (space)", onclick: toggle }, "▶"),
    h("button", { id: "next", title: "next step (→)", onclick: () => go(state.step + 1) }, "▶|"),
    h("button", { id: "last", title: "last step (End)", onclick: () => go(d.steps.length) }, "▶▶|"),
    h("div", { class: "seekbox" },
      h("input", { id: "seek", type: "range", min: "0", max: String(d.steps.length), value: String(state.step),
        list: "handticks", oninput: (e) => go(parseInt(e.target.value, 10)) }), hm.marks), hm.ticks,
    h("span", { id: "stepno" }), " ", hm.jump, " speed ", speedSel, " view ", viewSel);
  const res = d.result || {};
  replace($("#main"),
    h("h1", {}, d.names.map((n, i) => [i ? " vs " : "", h("a", { class: "botlink", href: botHref(d, n) }, n)]).flat()),
    h("p", { class: "meta" }, `game ${d.game_id} · ${res.summary || ""} · `,
      h("a", { href: `/api/g/${encodeURIComponent(gid)}/record.json`, download: `${gid}.json` }, "record"),
      logLinks(d)),
    h("div", { id: "stderr-view" }),
    state.controls ? controls : null,
    h("div", { id: "viewing", class: "viewing" }),
    h("div", { id: "action", class: "action" }),
    h("div", { id: "table" }),
    h("div", { id: "handresult" }));
  stackMarks();
}

function show() {
  const d = state.data;
  const n = d.steps.length;
  const st = state.step > 0 ? d.steps[state.step - 1] : null;
  const seek = $("#seek");
  if (seek) seek.value = String(state.step);
  const no = $("#stepno");
  if (no) no.textContent = ` step ${state.step} / ${n}`;
  const hand = handOf(state.step);
  document.body.dataset.hand = String(hand);
  const jump = $("#hand");
  if (jump) jump.value = String(hand);
  for (const m of document.querySelectorAll(".handmark")) m.classList.toggle("current", Number(m.dataset.hand) === hand);
  document.body.dataset.step = String(state.step);
  replace($("#viewing"), d.view === "all" ? "all cards face up" : `as seat ${d.view} (${d.names[d.view]}) saw it`);
  if (!st) {
    replace($("#action"), h("span", {}, "start of the game"));
    replace($("#table"), h("p", { class: "none" }, "Step → to deal."));
  } else {
    const who = st.seat >= 0 && st.kind !== "deal" ? `${names()[st.seat]}: ` : "";
    const marks = [];
    if (st.origin === "ACTION_ORIGIN_DEFAULT_TIMEOUT") marks.push(h("span", { class: "mark default" }, " default (timeout)"));
    if (st.origin === "ACTION_ORIGIN_DEFAULT_ILLEGAL") marks.push(h("span", { class: "mark default" }, " default (illegal actions)"));
    replace($("#action"), h("span", { id: "action-text", "data-step": st.step }, `${st.step}. ${who}${st.text}`), marks,
      st.think !== undefined && st.think !== null ? h("span", { class: "think" }, ` · thought ${fmtSeconds(st.think)}`,
        st.bank_left !== undefined ? ` · bank left ${st.bank_left.toFixed(1)} s` : "") : null,
      stepLinks(st), drawIncidents(st));
    const tableEl = drawTable(st.table);
    arrange(tableEl, st.table);
    replace($("#table"), tableEl);
  }
  const k = lastHandResult(state.step);
  const recent = st && st.hand_result !== undefined;
  replace($("#handresult"), k >= 0 ? h("div", { class: recent ? "fresh" : "" },
    h("h2", {}, recent ? "Hand result" : "Last hand result"), drawHandResult(d.hands[k], names())) : null);
  if (state.step >= n && state.playing) pause();
  syncURL();
}

function go(s) {
  if (!state.data) return;
  state.step = Math.max(0, Math.min(state.data.steps.length, s));
  show();
}

function play() {
  state.playing = true;
  const b = $("#play"); if (b) b.textContent = "⏸";
  if (state.step >= state.data.steps.length) state.step = 0;
  state.timer = setInterval(() => go(state.step + 1), 1000 / state.speed);
}

function pause() {
  state.playing = false;
  const b = $("#play"); if (b) b.textContent = "▶";
  if (state.timer) clearInterval(state.timer);
  state.timer = null;
}

function toggle() { if (state.playing) pause(); else play(); }

document.addEventListener("keydown", (e) => {
  if (e.target && ["INPUT", "SELECT", "TEXTAREA"].includes(e.target.tagName) && e.target.type !== "range") return;
  if (e.key === "ArrowRight") { e.preventDefault(); go(state.step + 1); }
  else if (e.key === "ArrowLeft") { e.preventDefault(); go(state.step - 1); }
  else if (e.key === " ") { e.preventDefault(); toggle(); }
  else if (e.key === "Home") go(0);
  else if (e.key === "End") go(state.data ? state.data.steps.length : 0);
});

// A focused button would also take the space bar as a click: the keydown above decides.
document.addEventListener("keyup", (e) => { if (e.key === " " && e.target && e.target.tagName === "BUTTON") e.preventDefault(); });

load().then(() => { if (state.playing && state.data) { state.playing = false; play(); } });
