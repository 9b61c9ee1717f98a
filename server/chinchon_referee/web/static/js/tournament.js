// Tournament: live standings (the numbers of GetStandings), progress and estimated
// finish, games running now, finished games (filtered, paged), head-to-head, ratings
// with their intervals, the event log, and the downloads.
import { $, fmtSeconds, fmtTime, getJSON, h, live, replace, termName } from "./common.js";

const tid = decodeURIComponent(location.pathname.split("/")[2] || "");
const api = `/api/t/${encodeURIComponent(tid)}`;
const filter = { bot: "", result: "any", offset: 0, limit: 25 };
let lastDone = -1;
let bots = [];

function num(x, d = 1) { return x === null || x === undefined ? "—" : Number(x).toFixed(d).replace(/\.0+$/, ""); }

function standings(st) {
  const rows = st.rows.map((r) => h("tr", { "data-bot": r.bot },
    h("td", {}, String(r.rank)), h("td", { class: "bot" }, r.bot),
    h("td", { class: "mp" }, num(r.match_points, 2)), h("td", { class: "games" }, String(r.games)),
    h("td", {}, String(r.wins)), h("td", {}, String(r.draws)), h("td", {}, String(r.losses)),
    h("td", {}, String(r.hands_won)), h("td", {}, String(r.chinchones)), h("td", {}, num(r.avg_points_per_hand, 2)),
    h("td", {}, String(r.forfeits)), h("td", {}, String(r.timeouts)), h("td", {}, String(r.illegal_actions)),
    h("td", {}, `${num(r.rating, 0)} (${num(r.rating_low, 0)}–${num(r.rating_high, 0)})`),
    h("td", {}, r.p_better_than_next === null ? "—" : `${Math.round(100 * r.p_better_than_next)}%`)));
  return h("table", { id: "standings", class: "grid", "data-games": st.games },
    h("tr", {}, ["#", "bot", "match pts", "games", "W", "D", "L", "hands won", "chinchón", "pts/hand",
      "forfeits", "timeouts", "illegal", "rating (95%)", "P(> next)"].map((c) => h("th", {}, c))), rows);
}

function ratingsChart(st) {
  const NS = "http://www.w3.org/2000/svg";
  const rows = st.rows;
  if (!rows.length) return null;
  const lo = Math.min(...rows.map((r) => r.rating_low)) - 20, hi = Math.max(...rows.map((r) => r.rating_high)) + 20;
  const W = 560, L = 120, rowH = 22, H = rows.length * rowH + 24;
  const x = (v) => L + ((v - lo) / (hi - lo || 1)) * (W - L - 50);
  const s = document.createElementNS(NS, "svg");
  s.setAttribute("viewBox", `0 0 ${W} ${H}`);
  s.setAttribute("class", "ratings");
  s.setAttribute("role", "img");
  s.setAttribute("aria-label", "ratings with 95% intervals");
  const add = (tag, a, text) => { const e = document.createElementNS(NS, tag); for (const k in a) e.setAttribute(k, a[k]); if (text) e.textContent = text; s.appendChild(e); return e; };
  rows.forEach((r, i) => {
    const y = 12 + i * rowH;
    add("text", { x: L - 6, y: y + 4, "text-anchor": "end", class: "lbl" }, r.bot);
    add("line", { x1: x(r.rating_low), x2: x(r.rating_high), y1: y, y2: y, class: "ci" });
    add("circle", { cx: x(r.rating), cy: y, r: 4, class: "pt" });
    add("text", { x: x(r.rating_high) + 4, y: y + 4, class: "val" }, num(r.rating, 0));
  });
  add("text", { x: L, y: H - 2, class: "axis" }, num(lo, 0));
  add("text", { x: W - 10, y: H - 2, "text-anchor": "end", class: "axis" }, num(hi, 0));
  return s;
}

function headToHead(st) {
  const names = st.rows.map((r) => r.bot);
  const cell = {};
  for (const x of st.head_to_head) cell[`${x.bot}\u0000${x.opponent}`] = x;
  return h("table", { id: "h2h", class: "grid matrix" },
    h("tr", {}, h("th", {}, ""), names.map((n) => h("th", {}, n))),
    names.map((a) => h("tr", {}, h("th", {}, a), names.map((b) => {
      const c = cell[`${a}\u0000${b}`];
      return h("td", { title: c ? `${a} vs ${b}: ${c.score} of ${c.games}` : "" }, a === b ? "·" : c ? `${num(c.score, 1)}/${c.games}` : "");
    }))));
}

function gameRow(g) {
  return h("tr", { "data-game": g.id },
    h("td", {}, String(g.seq)),
    h("td", {}, g.players.map((p, i) => h("span", { class: g.winners.includes(i) ? "winner" : "" }, p, i < g.players.length - 1 ? " vs " : ""))),
    h("td", {}, (g.totals || []).join("–")), h("td", {}, termName(g.termination)), h("td", {}, g.summary),
    h("td", {}, h("a", { href: `/r/${encodeURIComponent(g.id)}` }, "replay"), " ",
      h("a", { href: `/api/g/${encodeURIComponent(g.id)}/record.json`, download: `${g.id}.json` }, "record")));
}

async function loadGames() {
  const q = new URLSearchParams({ bot: filter.bot, result: filter.result, offset: filter.offset, limit: filter.limit });
  const box = $("#games");
  if (!box) return;
  try {
    const d = await getJSON(`${api}/games?${q}`);
    const pages = Math.max(1, Math.ceil(d.total / d.limit)), page = Math.floor(d.offset / d.limit) + 1;
    replace(box,
      h("table", { class: "grid", id: "games-table", "data-total": d.total },
        h("tr", {}, ["#", "players (winner bold)", "totals", "end", "summary", ""].map((c) => h("th", {}, c))),
        d.games.map(gameRow)),
      h("div", { class: "pager" },
        h("button", { id: "prev", disabled: page <= 1, onclick: () => { filter.offset = Math.max(0, filter.offset - filter.limit); loadGames(); } }, "← newer"),
        ` page ${page} of ${pages} (${d.total} games) `,
        h("button", { id: "next", disabled: page >= pages, onclick: () => { filter.offset += filter.limit; loadGames(); } }, "older →")));
  } catch (e) {
    replace(box, h("p", { class: "error" }, String(e.message)));
  }
}

function filters() {
  const botSel = h("select", { id: "f-bot", onchange: (e) => { filter.bot = e.target.value; filter.offset = 0; loadGames(); } },
    h("option", { value: "" }, "any bot"), bots.map((b) => h("option", { value: b, selected: b === filter.bot }, b)));
  const resSel = h("select", { id: "f-result", onchange: (e) => { filter.result = e.target.value; filter.offset = 0; loadGames(); } },
    ["any", "win", "loss", "draw", "forfeit"].map((r) => h("option", { value: r, selected: r === filter.result }, r)));
  return h("div", { class: "filters" }, "bot ", botSel, " result ", resSel);
}

function render(d) {
  const t = d.tournament, p = d.progress;
  document.title = `${t.name} · Chinchón`;
  document.body.dataset.boot = d.boot;
  const first = !$("#games");
  bots = t.bots;
  const eta = p.eta ? `estimated finish ${fmtTime(p.eta)} (in ${fmtSeconds(p.eta - Date.now() / 1000)})` : "";
  const sections = [
    h("h1", {}, t.name, " ", h("span", { class: `status status-${t.status}`, id: "status" }, t.status)),
    h("div", { class: "progress-line" }, h("progress", { id: "progress", max: p.total || 1, value: p.done }),
      h("span", { id: "done", "data-done": p.done }, ` ${p.done} / ${p.total} games (${p.percent}%)`),
      p.running ? ` · ${p.running} running` : "", eta ? ` · ${eta}` : "",
      ` · started ${fmtTime(t.started)}`),
    h("p", { class: "downloads" }, "Downloads: ",
      h("a", { href: `${api}/standings.json`, download: "" }, "standings JSON"), " · ",
      h("a", { href: `${api}/standings.csv`, download: "" }, "standings CSV"), " · ",
      h("a", { id: "archive", href: `${api}/records.zip`, download: "" }, "all records (zip)")),
    h("section", {}, h("h2", {}, "Standings"), standings(d.standings)),
    h("section", { class: "two" },
      h("div", {}, h("h2", {}, "Ratings (95% intervals)"), ratingsChart(d.standings), h("p", { class: "note" }, `model: ${d.standings.rating_model}`)),
      h("div", {}, h("h2", {}, "Head to head"), headToHead(d.standings))),
    h("section", {}, h("h2", {}, "Games running now"),
      d.running.length ? h("ul", { id: "running" }, d.running.map((g) => h("li", {},
        h("a", { href: `/g/${encodeURIComponent(g.id)}` }, g.id), g.elsewhere
          ? ` ${g.players.join(" vs ")} · on another referee process`
          : ` ${g.players.join(" vs ")} · hand ${g.hand_no} · ${g.scores.join("–")}`)))
        : h("p", { id: "running", class: "none" }, "None.")),
    h("section", {}, h("h2", {}, "Event log"),
      d.events.length ? h("ul", { id: "events", class: "events" }, d.events.map((e) => h("li", { class: `ev-${e.kind}` },
        h("span", { class: "kind" }, e.kind), " ", h("a", { href: `/r/${encodeURIComponent(e.game)}` }, e.game), " ", e.text)))
        : h("p", { id: "events", class: "none" }, "No forfeits, timeouts, illegal actions or aborts.")),
  ];
  let gamesSec = $("#games-section");
  if (!gamesSec) gamesSec = h("section", { id: "games-section" }, h("h2", {}, "Finished games"), filters(), h("div", { id: "games" }));
  replace($("#main"), sections, gamesSec);
  if (first || p.done !== lastDone) { lastDone = p.done; if (filter.offset === 0 || first) loadGames(); }
}

live(`${api}/events`, ["tournament", "gone"], (n, d) => {
  if (n === "gone") replace($("#main"), h("p", {}, "No such tournament."));
  else render(d);
});
