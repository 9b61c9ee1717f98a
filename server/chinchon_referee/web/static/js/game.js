// A game in progress, as any spectator sees it: no hand, only hand sizes, the discard
// pile, the stock's size, melds, scores, clocks and the last moves (pushed, never polled).
// The organizer's switch shows every hand instead, as the table was a while ago (the
// server's --web-full-view-delay), once given the admin token: kept in this tab's
// sessionStorage, sent in a header, never in the URL.
import { $, fmtSeconds, h, live, liveWithToken, replace } from "./common.js";
import { drawHandResult, drawTable } from "./table.js";

const gid = decodeURIComponent(location.pathname.split("/")[2] || "");
let last = null;
const TOKEN_KEY = "chinchon-admin-token";
let stream = null; // the stream open now
let full = false; // showing the organizer's full view
let notice = "";
let skew = 0; // server time - local time

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
  if (m.seat < 0) return m.kind;
  const bits = [`${names[m.seat]}: ${m.kind}`];
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
  const events = t.events.slice(-8).map((e) => h("li", {}, `${names[e.seat] ?? ""} ${e.kind.replace("_", " ")} ${e.card || ""} ${e.detail || ""}`));
  replace($("#main"),
    h("h1", {}, `${names.join(" vs ")}`, " ", h("span", { class: "status status-running", id: "status" }, t.over ? "over" : "live")),
    switchBar(),
    h("p", { class: "meta" }, `game ${t.game_id}`, t.tournament_id ? [" · ", h("a", { href: `/t/${encodeURIComponent(t.tournament_id)}` }, "tournament")] : null,
      ` · step ${t.steps}`, t.over ? [" · ", h("a", { href: `/r/${encodeURIComponent(t.game_id)}`, id: "replay-link" }, "replay")] : null),
    h("div", { id: "table", "data-steps": t.steps }, drawTable(t, { clock: clockOf(t) })),
    h("section", { class: "two" },
      h("div", {}, h("h2", {}, "Last moves"), h("ol", { id: "moves", class: "moves" }, moves)),
      h("div", {}, h("h2", {}, "This hand"), h("ul", { class: "events" }, events))),
    t.hands.length ? h("section", {}, h("h2", {}, "Finished hands"), t.hands.slice().reverse().map((r) => drawHandResult(r, names))) : null);
  tick();
}

function switchBar() {
  return h("p", { class: "viewswitch" },
    h("button", { id: "full-view", type: "button", onclick: full ? showPublic : showFull },
      full ? "back to the public view" : "full view (organizer)"),
    notice ? h("span", { class: "notice", id: "notice" }, " ", notice) : null);
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
  let token = sessionStorage.getItem(TOKEN_KEY);
  if (!token) token = prompt("The admin token (kept in this tab only):") || "";
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
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
