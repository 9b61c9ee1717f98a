// A game in progress, as any spectator sees it: no hand, only hand sizes, the discard
// pile, the stock's size, melds, scores, clocks and the last moves (pushed, never polled).
// The organizer's switch shows every hand instead, as the table was a while ago (the
// server's --web-full-view-delay), once given the admin token in a password field (never
// shown in clear, never in the URL or the history): kept in this tab's sessionStorage,
// sent in a header.
import { $, fmtInt, fmtScores, fmtSeconds, h, live, liveWithToken, replace } from "./common.js";
import { drawHandResult, drawTable } from "./table.js";

const gid = decodeURIComponent(location.pathname.split("/")[2] || "");
let last = null;
const TOKEN_KEY = "chinchon-admin-token";
let stream = null; // the stream open now
let full = false; // showing the organizer's full view
let notice = "";
let skew = 0; // server time - local time

// What a move did, in words; its cards are those the server names (public ones only).
const MOVES = {
  drawStock: () => "draws from the stock",
  drawDiscard: (c) => (c.length ? `takes ${c[0]} from the discard pile` : "takes from the discard pile"),
  discard: (c) => (c.length ? `discards ${c[0]}` : "discards"),
  close: (c) => (c.length ? `closes the hand, laying down ${c.join(" ")}` : "closes the hand"),
  layOff: (c) => (c.length ? `lays off ${c.join(" ")}` : "lays off"),
  layOffBest: (c) => (c.length ? `lays off ${c.join(" ")} (best)` : "lays off (best)"),
  layDown: (c) => (c.length ? `lays down ${c.join(" ")}` : "lays down"),
  pass: () => "passes",
  deal: () => "the deal",
  reshuffle: () => "the discard pile is shuffled into a new stock",
};
// This hand's public events (snake_case kinds), in words.
const EVENTS = {
  draw_stock: "draws from the stock", draw_discard: "takes from the discard pile", discard: "discards",
  reshuffle: "the discard pile is shuffled into a new stock", close: "closes", layoff: "lays off", laydown: "lays down",
};

function words(kind) { return String(kind).replace(/([a-z])([A-Z])/g, "$1 $2").replaceAll("_", " ").toLowerCase(); }

function clockOf(t) {
  return (s) => {
    const el = h("span", { class: "clock", "data-seat-clock": s.seat });
    el.dataset.bank = s.bank;
    return h("span", { class: "clockbox" }, " clock ", el,
      s.strikes ? h("span", { class: "strikes", title: "strikes" }, ` ${s.strikes}/${t.max_strikes} strikes`) : null,
      s.illegal ? h("span", { class: "illegal" }, ` ${s.illegal} illegal`) : null,
      s.timeouts ? h("span", { class: "timeouts" }, ` ${s.timeouts} timeouts`) : null,
      s.house ? h("span", { class: "house" }, " house bot") : null);
  };
}

function tick() {
  if (!last) return;
  const now = Date.now() / 1000 + skew;
  for (const el of document.querySelectorAll("[data-seat-clock]")) {
    const seat = Number(el.dataset.seatClock), bank = Number(el.dataset.bank);
    if (seat === last.to_act && !last.over && last.phase !== "deal") {
      const used = Math.max(0, now - last.since);
      const moveLeft = Math.max(0, last.per_move - used);
      const bankLeft = Math.max(0, bank - Math.max(0, used - last.per_move));
      el.textContent = `${moveLeft.toFixed(1)} s + bank ${bankLeft.toFixed(1)} s`;
      el.classList.add("running");
    } else {
      el.textContent = `bank ${bank.toFixed(1)} s`;
      el.classList.remove("running");
    }
  }
}

function moveText(m, names) {
  const say = MOVES[m.kind];
  const what = say ? say(m.cards || []) : words(m.kind);
  if (m.seat < 0) return what;
  const bits = [`${names[m.seat]} ${what}`];
  if (m.think) bits.push(`(${fmtSeconds(parseFloat(m.think))})`);
  return bits.join(" ");
}

function render(t) {
  last = t;
  skew = t.now - Date.now() / 1000;
  const names = t.seats.map((s) => s.name);
  const moves = t.moves.map((m) => h("li", {
    class: [m.origin && m.origin !== "ACTION_ORIGIN_PLAYER" ? "default" : "", m.illegal_before ? "after-illegal" : ""].join(" "),
  }, moveText(m, names),
  m.illegal_before ? h("span", { class: "mark illegal" }, ` after ${m.illegal_before} illegal attempt(s)`) : null,
  m.origin === "ACTION_ORIGIN_DEFAULT_TIMEOUT" ? h("span", { class: "mark default" }, " default: timeout (strike)") : null,
  m.origin === "ACTION_ORIGIN_DEFAULT_ILLEGAL" ? h("span", { class: "mark default" }, " default: illegal (strike)") : null));
  const events = t.events.slice(-8).map((e) => h("li", {},
    [names[e.seat] ?? "", EVENTS[e.kind] || words(e.kind), e.card || "", e.detail || ""].filter((x) => x !== "").join(" ")));
  replace($("#main"),
    h("h1", {}, `${names.join(" vs ")}`, " ", h("span", { class: "status status-running", id: "status" }, t.over ? "over" : "live")),
    switchBar(),
    h("p", { class: "meta" }, `game ${t.game_id}`, t.tournament_id ? [" · ", h("a", { href: `/t/${encodeURIComponent(t.tournament_id)}` }, "tournament")] : null,
      ` · step ${t.steps}`, t.over ? [" · ", h("a", { href: `/r/${encodeURIComponent(t.game_id)}`, id: "replay-link" }, "replay")] : null),
    h("div", { id: "table", "data-steps": t.steps }, t.over ? gameOver(t, names) : drawTable(t, { clock: clockOf(t) })),
    h("section", { class: "two" },
      h("div", {}, h("h2", {}, "Last moves"), h("ol", { id: "moves", class: "moves" }, moves)),
      t.over ? null : h("div", {}, h("h2", {}, "This hand"), h("ul", { class: "events" }, events))),
    t.hands.length ? h("section", {}, h("h2", {}, "Finished hands"), t.hands.slice().reverse().map((r) => drawHandResult(r, names))) : null);
  tick();
}

// The end of a game, instead of its empty table: who won, the totals, how it ended.
function gameOver(t, names) {
  const r = t.result;
  const replay = h("a", { href: `/r/${encodeURIComponent(t.game_id)}`, id: "over-replay" }, "watch its replay");
  if (!r) {
    return h("div", { class: "game-over", id: "game-over" }, h("p", { class: "winner" }, "The game is over."),
      h("p", {}, "It did not end at the table (a forfeit or an abort): its record says why; ", replay, "."));
  }
  const who = r.winners.map((w) => names[w]);
  const head = r.winners.length === 1 ? `${who[0]} wins` : `a draw between ${who.join(" and ")}`;
  const how = { chinchon: "by chinchón", last_player: "as the last player in the game", lowest_total: "with the lowest total",
    draw: "", length_limit: "at the game's length limit" }[r.end] ?? r.end.replaceAll("_", " ");
  return h("div", { class: "game-over", id: "game-over", "data-winners": r.winners.join(",") },
    h("p", { class: "winner", id: "winner" }, `${head}${how ? ` ${how}` : ""}.`),
    h("table", { class: "grid", id: "final" },
      h("tr", {}, h("th", {}, "seat"), h("th", {}, "total")),
      names.map((n, s) => h("tr", { class: r.winners.includes(s) ? "winner" : "" }, h("td", {}, n), h("td", {}, fmtInt(r.totals[s]))))),
    h("p", {}, `final totals ${fmtScores(r.totals)} after ${r.hands_played} hand${r.hands_played === 1 ? "" : "s"}; `, replay, "."));
}

function switchBar() {
  return h("div", { class: "viewswitch" },
    h("button", { id: "full-view", type: "button", onclick: full ? showPublic : showFull },
      full ? "back to the public view" : "full view (organizer)"),
    notice ? h("span", { class: "notice", id: "notice" }, " ", notice) : null);
}

// The admin token, asked in a password field (dots on a projected screen), above the
// page (which is drawn again at each move). The form is never submitted to the server:
// no action, no name on the field, so the token never lands in a URL, the history or
// the browser's saved form data.
function askToken() {
  if ($("#token-form")) { $("#admin-token").focus(); return; }
  const input = h("input", { id: "admin-token", type: "password", autocomplete: "off", spellcheck: "false",
    "aria-label": "admin token", placeholder: "admin token", required: true });
  const form = h("form", { id: "token-form", class: "token-form", autocomplete: "off", onsubmit: (e) => {
    e.preventDefault();
    const token = input.value.trim();
    input.value = "";
    form.remove();
    if (token) { sessionStorage.setItem(TOKEN_KEY, token); openFull(token); }
  } },
  h("label", { for: "admin-token" }, "admin token (kept in this tab only)"), input,
  h("button", { type: "submit", id: "token-ok" }, "show"),
  h("button", { type: "button", id: "token-cancel", onclick: () => form.remove() }, "cancel"));
  $("#main").before(form);
  input.focus();
}

// Draw the switch bar again (the table is drawn again at its next update).
function rerender() {
  const bar = $(".viewswitch");
  if (bar) bar.replaceWith(switchBar());
}

function renderFull(t) {
  last = null;
  const names = t.seats.map((s) => s.name);
  const head = h("h1", {}, `${names.join(" vs ")}`, " ", h("span", { class: "status status-full", id: "status" }, "full view"));
  if (t.pending) {
    replace($("#main"), head, switchBar(),
      h("p", { id: "pending" }, `The full view shows the table as it was ${t.delay} s ago at least: this game is younger.`));
    return;
  }
  replace($("#main"), head, switchBar(),
    h("p", { class: "meta" }, `game ${t.game_id} · every hand, as at step ${t.steps} `,
      `(${fmtSeconds(Math.max(0, t.now - t.at))} ago; live: step ${t.live_steps})`),
    h("div", { id: "table", "data-steps": t.steps, "data-view": "all" }, drawTable(t)),
    t.hands.length ? h("section", {}, h("h2", {}, "Finished hands"), t.hands.slice().reverse().map((r) => drawHandResult(r, names))) : null);
}

function showPublic() {
  if (stream) stream.close();
  full = false;
  stream = live(`/api/g/${encodeURIComponent(gid)}/live`, ["table", "gone"], (n, d) => {
    if (n === "gone") { last = null; over(); } else render(d);
  });
}

function showFull() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) { openFull(token); return; }
  notice = "";
  rerender();
  askToken();
}

function openFull(token) {
  const form = $("#token-form");
  if (form) form.remove();
  if (stream) stream.close();
  full = true;
  notice = "";
  stream = liveWithToken(`/api/g/${encodeURIComponent(gid)}/live?view=all`, token, ["table", "gone"],
    (n, d) => { if (n === "gone") { stream.close(); over(); } else renderFull(d); },
    (status, text) => {
      if (status === 401) sessionStorage.removeItem(TOKEN_KEY);
      notice = `refused (${status}): ${text}`;
      showPublic();
    });
}

function over() {
  replace($("#main"), h("h1", {}, "This game is not in progress here"),
    h("p", { id: "over" }, "It has ended (or has not started, or the referee restarted). ",
      h("a", { href: `/r/${encodeURIComponent(gid)}`, id: "replay-link" }, "Watch its replay"), " once it is finished."));
}

setInterval(tick, 200);
showPublic();
