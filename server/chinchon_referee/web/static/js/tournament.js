// Tournament: live standings (the numbers of GetStandings), progress and estimated
// finish, games running now, finished games (filtered, paged), head-to-head, ratings
// with their intervals, the event log, the rule set in force, and the downloads.
// The finished games' filter is in the URL (?bot=NAME&opponent=NAME&result=R&offset=N,
// docs/web.md): a bot's name links to its games, a head-to-head cell to the games
// between the pair. A tournament of several stages shows one tab per stage and one for
// the final ranking, the tab chosen in the URL too (?stage=N, 1 first, or ?stage=final).
import { $, fmtScores, fmtSeconds, getJSON, h, live, replace, scroller, storeNotice, termName, timeEl } from "./common.js";

const tid = decodeURIComponent(location.pathname.split("/")[2] || "");
const api = `/api/t/${encodeURIComponent(tid)}`;
const RESULTS = ["any", "win", "loss", "draw", "forfeit"];
const filter = fromURL();
let stageTab = stageFromURL();
let lastDone = -1;
let bots = [];

// The filter as the page's URL gives it (bad values are the defaults).
function fromURL() {
  const q = new URLSearchParams(location.search);
  const result = RESULTS.includes(q.get("result")) ? q.get("result") : "any";
  const bot = (q.get("bot") || "").slice(0, 100);
  const offset = Math.max(0, parseInt(q.get("offset") || "0", 10) || 0);
  return { bot, opponent: bot ? (q.get("opponent") || "").slice(0, 100) : "", result, offset, limit: 25 };
}

// The stage tab the URL chooses: "1", "2", ... or "final"; "" for none (the first).
function stageFromURL() {
  const v = new URLSearchParams(location.search).get("stage") || "";
  return v === "final" || /^[1-9][0-9]{0,2}$/.test(v) ? v : "";
}

// This tournament's page with a filter of its finished games, at that list.
function gamesHref(f) {
  const q = new URLSearchParams();
  if (stageTab) q.set("stage", stageTab);
  if (f.bot) q.set("bot", f.bot);
  if (f.bot && f.opponent) q.set("opponent", f.opponent);
  if (f.result && f.result !== "any") q.set("result", f.result);
  if (f.offset) q.set("offset", String(f.offset));
  const qs = q.toString();
  return `/t/${encodeURIComponent(tid)}${qs ? `?${qs}` : ""}`;
}

// Where a bot's name links: its finished games in this tournament (its page across
// tournaments, /b/NAME, is linked beside it in the standings).
function botLink(name) {
  return h("a", { href: `${gamesHref({ bot: name })}#games-section`, class: "bot-link", onclick: (e) => showGames(e, { bot: name }) }, name);
}

// A link of this page to a filter of the list: applied in place (the URL follows).
function showGames(e, f) {
  if (e.button || e.ctrlKey || e.metaKey || e.shiftKey) return;
  e.preventDefault();
  Object.assign(filter, { bot: "", opponent: "", result: "any", offset: 0 }, f);
  history.pushState(null, "", `${gamesHref(filter)}#games-section`);
  const sec = $("#games-section");
  if (sec) replace(sec, h("h2", {}, "Finished games"), filters(), h("div", { id: "games" }));
  loadGames().then(() => { const el = $("#games-section"); if (el) el.scrollIntoView(); });
}

function num(x, d = 1) { return x === null || x === undefined ? "—" : Number(x).toFixed(d).replace(/\.0+$/, ""); }

function standings(st, id = "standings") {
  const rows = st.rows.map((r) => h("tr", { "data-bot": r.bot },
    h("td", {}, String(r.rank)), h("td", { class: "bot" }, botLink(r.bot), " ",
      h("a", { href: `/b/${encodeURIComponent(r.bot)}`, class: "bot-page", title: `${r.bot}'s page: every tournament, answer times` }, "page")),
    h("td", { class: "mp" }, num(r.match_points, 2)), h("td", { class: "games" }, String(r.games)),
    h("td", {}, String(r.wins)), h("td", {}, String(r.draws)), h("td", {}, String(r.losses)),
    h("td", {}, String(r.hands_won)), h("td", {}, String(r.chinchones)), h("td", {}, num(r.avg_points_per_hand, 2)),
    h("td", {}, String(r.forfeits)), h("td", {}, String(r.timeouts)), h("td", {}, String(r.illegal_actions)),
    h("td", {}, `${num(r.rating, 0)} (${num(r.rating_low, 0)}–${num(r.rating_high, 0)})`),
    h("td", {}, r.p_better_than_next === null ? "—" : `${Math.round(100 * r.p_better_than_next)}%`)));
  return scroller(h("table", { id, class: "grid", "data-games": st.games },
    h("tr", {}, ["#", "bot", "match pts", "games", "W", "D", "L", "hands won", "chinchón", "pts/hand",
      "forfeits", "timeouts", "illegal", "rating (95%)", "P(> next)"].map((c) => h("th", {}, c))), rows));
}

// A format's stages (docs/tournaments.md: the structure as JSON): each stage's own
// standings, a Swiss's rounds and byes, a gauntlet's challengers, a bracket drawn as
// columns of matches (one per section and round), each match linking to its games.
function gameLinks(ids, finished) {
  return ids.map((id, i) => h("a", { class: "glink", href: `/${finished ? "r" : "g"}/${encodeURIComponent(id)}`, title: id }, String(i + 1)));
}

function swissRounds(rounds) {
  const rows = [];
  for (const r of rounds) {
    for (const t of r.tables) {
      rows.push(h("tr", { "data-round": r.round },
        h("td", {}, String(r.round)), h("td", {}, String(t.table)),
        h("td", {}, t.players.join(" v ")), h("td", {}, t.points.map((x) => num(x, 2)).join(" – ") + (t.finished ? "" : " (playing)")),
        h("td", {}, gameLinks(t.games, t.finished))));
    }
    if (r.byes.length) rows.push(h("tr", { class: "bye", "data-round": r.round }, h("td", {}, String(r.round)), h("td", {}, "bye"), h("td", {}, r.byes.join(", ")), h("td", {}, `${num(r.bye_points, 2)} each`), h("td", {})));
  }
  return h("table", { class: "grid swiss-rounds" },
    h("tr", {}, ["round", "table", "bots (seat order)", "points", "games"].map((c) => h("th", {}, c))), rows);
}

function bracketView(b) {
  const cols = new Map();
  for (const m of b.matches) {
    if (m.status === "empty" || m.status === "skipped") continue;
    const key = `${m.section} ${m.round}`;
    if (!cols.has(key)) cols.set(key, []);
    cols.get(key).push(m);
  }
  const side = (m, i) => {
    const bot = i === 0 ? m.a : m.b;
    const name = bot || (m.status === "waiting" ? m.from[i] : "(bye)");
    return h("div", { class: `side${bot && bot === m.winner ? " won" : ""}` },
      h("span", { class: "who" }, name), m.games.length ? h("span", { class: "wins" }, String(m.wins[i])) : null);
  };
  return h("div", { class: "bracket", "data-size": b.size }, [...cols].map(([key, ms]) =>
    h("div", { class: "bracket-col" }, h("h4", {}, key.replace(/_/g, " ")),
      ms.map((m) => h("div", { class: `match match-${m.status.replace(/ /g, "-")}`, "data-match": m.match },
        side(m, 0), side(m, 1),
        h("div", { class: "how" }, m.decided_by || m.status, " ", gameLinks(m.games, m.status === "decided")))))));
}

// A Swiss stage's crosstable: a row per bot in the stage's standings order, a column
// per round. A cell names the opponent by rank (the name in its tooltip; a table of 3+
// seats: every other bot at it), linked to the game (one game a table: its replay or
// live page) or to the games of the pair (the list filtered below); then the result
// (W, D or L, and the points when a table plays several games), the seat when a table
// plays one game, or "bye". The totals and the tie-breaks are the stage's standings'.
function crosstable(s, mine) {
  const rows = mine ? mine.standings.rows : s.bots.map((b, i) => ({ bot: b, rank: i + 1 }));
  const rank = new Map(rows.map((r) => [r.bot, r.rank]));
  const cell = (bot, rd) => {
    if (rd.byes.includes(bot)) {
      return h("td", { class: "x-bye", "data-round": rd.round, "data-result": "bye", title: `a bye: ${num(rd.bye_points, 2)} points` },
        `bye +${num(rd.bye_points, 2)}`);
    }
    const t = rd.tables.find((x) => x.players.includes(bot));
    if (!t) return h("td", { "data-round": rd.round }, "");
    const seat = t.players.indexOf(bot), others = t.players.filter((b) => b !== bot);
    const mineP = t.points[seat], best = Math.max(...t.points.filter((_, i) => i !== seat));
    const res = !t.finished ? "…" : mineP > best ? "W" : mineP < best ? "L" : "D";
    const one = t.games.length === 1;
    const href = one ? `/${t.finished ? "r" : "g"}/${encodeURIComponent(t.games[0])}`
      : `${gamesHref({ bot, opponent: others[0] })}#games-section`;
    const label = others.map((o) => String(rank.get(o) ?? o)).join(",");
    const link = h("a", { href, class: "x-opp", title: `${others.join(", ")} (${t.games.length} game${one ? "" : "s"})`,
      onclick: one ? null : (e) => showGames(e, { bot, opponent: others[0] }) }, label);
    return h("td", { "data-round": rd.round, "data-opponent": others.join(","), "data-result": res, "data-games": t.games.join(" ") },
      link, " ", h("span", { class: `x-res x-${res === "…" ? "playing" : res}` }, res),
      one ? "" : h("span", { class: "x-pts" }, ` ${num(mineP, 2)}`),
      one && t.players.length > 1 ? h("span", { class: "x-seat", title: `seat ${seat + 1}` }, ` s${seat + 1}`) : "");
  };
  const rounds = s.rounds || [];
  return scroller(h("table", { class: "grid crosstable", id: `crosstable-${s.index}` },
    h("tr", {}, h("th", {}, "#"), h("th", {}, "bot"), rounds.map((r) => h("th", {}, `R${r.round}`)),
      h("th", {}, "pts"), h("th", { title: "Buchholz: the opponents' points" }, "Buchholz"),
      h("th", { title: "Sonneborn–Berger" }, "S–B")),
    rows.map((r) => h("tr", { "data-bot": r.bot }, h("td", {}, String(r.rank)), h("td", { class: "bot" }, r.bot),
      rounds.map((rd) => cell(r.bot, rd)),
      h("td", { class: "x-total" }, num(r.match_points, 2)),
      h("td", { class: "x-buchholz" }, num(r.buchholz, 2)), h("td", { class: "x-sb" }, num(r.sonneborn_berger, 2))))));
}

function stageView(d, s, per) {
  const mine = per.get(s.index);
  return h("div", { class: "stage", "data-stage": s.index, "data-kind": s.kind },
    h("h3", {}, `Stage ${s.index + 1}: ${s.name} `, h("span", { class: "stage-status" }, s.status.replace(/_/g, " "))),
    s.advance ? h("p", { class: "note" }, `The top ${s.advance} go on to stage ${s.index + 2}.`) : null,
    s.challengers ? h("p", {}, `Challengers: ${s.challengers.join(", ")}; field: ${s.field.join(", ")}.`) : null,
    mine && d.format.stages.length > 1 ? standings(mine.standings, `standings-${s.index}`) : null,
    s.rounds ? [h("h4", {}, "Rounds"), scroller(swissRounds(s.rounds)), h("h4", {}, "Crosstable"), crosstable(s, mine)] : null,
    s.bracket ? bracketView(s.bracket) : null,
    s.ranking ? h("p", {}, `Ranking: ${s.ranking.join(", ")}.`) : null);
}

function finalView(d) {
  return h("div", { id: "final-ranking" }, h("h3", {}, "Final ranking"), d.format.ranking
    ? h("ol", {}, d.format.ranking.map((b) => h("li", {}, b)))
    : h("p", { class: "none" }, "Not decided yet: the last stage is still to be played."));
}

// The tab shown: the URL's if it names one, else the final ranking once there is one,
// else the stage being played (the last one reached).
function chosenTab(d) {
  const keys = [...d.format.stages.map((s) => String(s.index + 1)), "final"];
  if (keys.includes(stageTab)) return stageTab;
  if (d.format.ranking) return "final";
  const reached = d.format.stages.filter((s) => s.status !== "not_started");
  return String((reached.length ? reached[reached.length - 1].index : 0) + 1);
}

// Tabs as WAI-ARIA has them: the arrow keys, Home and End move between them (and show
// the tab reached), Tab goes on into the panel shown.
function tabKey(e) {
  const tabs = [...document.querySelectorAll("#stage-tabs [role=tab]")];
  const i = tabs.indexOf(e.currentTarget);
  const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
  if (to === undefined) return;
  e.preventDefault();
  const t = tabs[(to + tabs.length) % tabs.length];
  selectTab(t.dataset.tab, true);
  t.focus();
}

// Show tab ``key``; ``push``: a new history entry (the back button returns to the last).
function selectTab(key, push) {
  if (push && key !== stageTab) {
    stageTab = key;
    history.pushState(null, "", gamesHref(filter));
  }
  for (const t of document.querySelectorAll("#stage-tabs [role=tab]")) {
    const on = t.dataset.tab === key;
    t.setAttribute("aria-selected", String(on));
    t.tabIndex = on ? 0 : -1;
  }
  for (const p of document.querySelectorAll("#format [role=tabpanel]")) p.hidden = p.dataset.tab !== key;
}

function formatView(d) {
  if (!d.format) return null;
  const per = new Map((d.stages || []).map((s) => [s.index, s]));
  if (d.format.stages.length === 1) {
    return h("section", { id: "format" }, h("h2", {}, "Format"), stageView(d, d.format.stages[0], per),
      d.format.ranking ? finalView(d) : null);
  }
  const sel = chosenTab(d);
  const tabs = [...d.format.stages.map((s) => [String(s.index + 1), `${s.index + 1}. ${s.name}`]), ["final", "Final ranking"]];
  const panel = (key, body) => h("div", { role: "tabpanel", id: `panel-${key}`, "data-tab": key, "aria-labelledby": `tab-${key}`,
    tabindex: "0", hidden: key !== sel }, body);
  return h("section", { id: "format" }, h("h2", {}, "Format"),
    h("div", { role: "tablist", id: "stage-tabs", class: "tabs", "aria-label": "Stages" }, tabs.map(([key, label]) =>
      h("button", { role: "tab", id: `tab-${key}`, "data-tab": key, "aria-selected": String(key === sel), "aria-controls": `panel-${key}`,
        tabindex: key === sel ? "0" : "-1", onclick: () => selectTab(key, true), onkeydown: tabKey }, label))),
    d.format.stages.map((s) => panel(String(s.index + 1), stageView(d, s, per))),
    panel("final", finalView(d)));
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
  const pair = (a, b, c) => h("a", { href: `${gamesHref({ bot: a, opponent: b })}#games-section`, "data-pair": `${a} vs ${b}`,
    onclick: (e) => showGames(e, { bot: a, opponent: b }) }, `${num(c.score, 1)}/${c.games}`);
  return scroller(h("table", { id: "h2h", class: "grid matrix" },
    h("tr", {}, h("th", {}, ""), names.map((n) => h("th", {}, n))),
    names.map((a) => h("tr", {}, h("th", {}, botLink(a)), names.map((b) => {
      const c = cell[`${a}\u0000${b}`];
      return h("td", { title: c ? `${a} vs ${b}: ${c.score} of ${c.games}` : "" }, a === b ? "·" : c ? pair(a, b, c) : "");
    })))));
}

// The rule set in force: every option, those changed from their default marked.
function rulesTable(rows) {
  return scroller(h("table", { class: "grid rules", id: "rules" },
    h("tr", {}, h("th", {}, "option"), h("th", {}, "value"), h("th", {}, "default"), h("th", {}, "meaning")),
    rows.map((r) => h("tr", { class: r.value === r.default ? "" : "changed", "data-option": r.option },
      h("td", {}, r.option), h("td", {}, r.value), h("td", {}, r.default), h("td", {}, r.meaning)))));
}

function gameRow(g) {
  return h("tr", { "data-game": g.id },
    h("td", {}, String(g.seq)),
    h("td", {}, g.players.map((p, i) => h("span", { class: g.winners.includes(i) ? "winner" : "" }, p, i < g.players.length - 1 ? " vs " : ""))),
    h("td", { class: "totals" }, fmtScores(g.totals)), h("td", {}, termName(g.termination)), h("td", {}, g.summary),
    h("td", {}, timeEl(g.finished)),
    h("td", {}, h("a", { href: `/r/${encodeURIComponent(g.id)}` }, "replay"), " ",
      h("a", { href: `/api/g/${encodeURIComponent(g.id)}/record.json`, download: `${g.id}.json` }, "record")));
}

// The latest list asked for: an answer to an older one (a filter changed again before it
// came) is dropped, or it could land last and show the old filter's games.
let gamesAsked = 0;

async function loadGames() {
  const mine = ++gamesAsked;
  const q = new URLSearchParams({ bot: filter.bot, result: filter.result, offset: filter.offset, limit: filter.limit });
  if (filter.bot && filter.opponent) q.set("opponent", filter.opponent);
  const box = $("#games");
  if (!box) return;
  try {
    const d = await getJSON(`${api}/games?${q}`);
    if (mine !== gamesAsked) return;
    const pages = Math.max(1, Math.ceil(d.total / d.limit)), page = Math.floor(d.offset / d.limit) + 1;
    replace(box,
      scroller(h("table", { class: "grid", id: "games-table", "data-total": d.total },
        h("tr", {}, ["#", "players (winner bold)", "totals", "end", "summary", "finished", ""].map((c) => h("th", {}, c))),
        d.games.map(gameRow))),
      h("div", { class: "pager" },
        h("button", { id: "prev", disabled: page <= 1, onclick: () => { filter.offset = Math.max(0, filter.offset - filter.limit); changed(); } }, "← newer"),
        ` page ${page} of ${pages} (${d.total} games) `,
        h("button", { id: "next", disabled: page >= pages, onclick: () => { filter.offset += filter.limit; changed(); } }, "older →")));
  } catch (e) {
    if (mine === gamesAsked) replace(box, h("p", { class: "error" }, String(e.message)));
  }
}

// The filter changed on this page: the URL follows (without a new history entry), then
// the list.
function changed() {
  history.replaceState(null, "", gamesHref(filter) + location.hash);
  loadGames();
}

function filters() {
  const known = (b) => (b && !bots.includes(b) ? [b, ...bots] : bots);
  const botSel = h("select", { id: "f-bot", onchange: (e) => {
    filter.bot = e.target.value; if (!filter.bot || filter.opponent === filter.bot) filter.opponent = "";
    filter.offset = 0; $("#filters").replaceWith(filters()); changed();
  } }, h("option", { value: "" }, "any bot"), known(filter.bot).map((b) => h("option", { value: b, selected: b === filter.bot }, b)));
  const oppSel = h("select", { id: "f-opponent", disabled: !filter.bot, onchange: (e) => { filter.opponent = e.target.value; filter.offset = 0; changed(); } },
    h("option", { value: "" }, "anyone"),
    known(filter.opponent).filter((b) => b !== filter.bot).map((b) => h("option", { value: b, selected: b === filter.opponent }, b)));
  const resSel = h("select", { id: "f-result", onchange: (e) => { filter.result = e.target.value; filter.offset = 0; changed(); } },
    RESULTS.map((r) => h("option", { value: r, selected: r === filter.result }, r)));
  return h("div", { class: "filters", id: "filters" }, "bot ", botSel, " against ", oppSel, " result ", resSel);
}

let lastSnap = null;

function render(d) {
  lastSnap = d;
  const t = d.tournament, p = d.progress;
  document.title = `${t.name} · Chinchón`;
  document.body.dataset.boot = d.boot;
  const first = !$("#games");
  bots = t.bots;
  const eta = p.eta ? ["estimated finish ", timeEl(p.eta, { id: "eta" }), ` (in ${fmtSeconds(p.eta - Date.now() / 1000)})`] : null;
  const sections = [
    storeNotice(d.store),
    h("h1", {}, t.name, " ", h("span", { class: `status status-${t.status}`, id: "status" }, t.status)),
    h("div", { class: "progress-line" }, h("progress", { id: "progress", max: p.total || 1, value: p.done }),
      h("span", { id: "done", "data-done": p.done }, ` ${p.done} / ${p.total} games (${p.percent}%)`),
      p.running ? ` · ${p.running} running` : "", eta ? [" · ", ...eta] : "",
      " · started ", timeEl(t.started, { id: "started" }),
      t.finished ? [" · finished ", timeEl(t.finished, { id: "finished" })] : null),
    h("p", { class: "downloads" }, "Downloads: ",
      h("a", { href: `${api}/standings.json`, download: "" }, "standings JSON"), " · ",
      h("a", { href: `${api}/standings.csv`, download: "" }, "standings CSV"), " · ",
      h("a", { id: "archive", href: `${api}/records.zip`, download: "" }, "all records (zip)")),
    h("section", {}, h("h2", {}, "Standings"), d.format ? h("p", { class: "note", id: "format-name" },
      `Format: ${d.format.stages.map((s) => s.name).join(" then ")}`) : null, standings(d.standings)),
    formatView(d),
    h("section", { class: "two" },
      h("div", {}, h("h2", {}, "Ratings (95% intervals)"), ratingsChart(d.standings), h("p", { class: "note" }, `model: ${d.standings.rating_model}`)),
      h("div", {}, h("h2", {}, "Head to head"), headToHead(d.standings))),
    h("section", {}, h("h2", {}, "Games running now"),
      d.running.length ? h("ul", { id: "running" }, d.running.map((g) => h("li", {},
        h("a", { href: `/g/${encodeURIComponent(g.id)}` }, g.id), g.elsewhere
          ? ` ${g.players.join(" vs ")} · on another referee process`
          : ` ${g.players.join(" vs ")} · hand ${g.hand_no} · ${fmtScores(g.scores)}`)))
        : h("p", { id: "running", class: "none" }, "None.")),
    h("section", {}, h("h2", {}, "Event log"),
      d.events.length ? h("ul", { id: "events", class: "events" }, d.events.map((e) => h("li", { class: `ev-${e.kind}` },
        h("span", { class: "kind" }, e.kind), " ", h("a", { href: `/r/${encodeURIComponent(e.game)}` }, e.game), " ", e.text,
        e.time ? [" · ", timeEl(e.time)] : null)))
        : h("p", { id: "events", class: "none" }, "No forfeits, timeouts, illegal actions or aborts.")),
    h("section", {}, h("h2", {}, "Rules"), rulesTable(t.rules || [])),
  ];
  let gamesSec = $("#games-section");
  if (!gamesSec) gamesSec = h("section", { id: "games-section" }, h("h2", {}, "Finished games"), filters(), h("div", { id: "games" }));
  // a live update redraws the page: the stage tab that had the focus keeps it
  const act = document.activeElement;
  const focused = act && act.getAttribute("role") === "tab" ? act.dataset.tab : undefined;
  replace($("#main"), sections, gamesSec);
  if (focused) { const t = $(`#tab-${focused}`); if (t) t.focus(); }
  if (first || p.done !== lastDone) {
    lastDone = p.done;
    if (filter.offset === 0 || first) {
      loadGames().then(() => { if (first && location.hash === "#games-section") gamesSec.scrollIntoView(); });
    }
  }
}

function missing() {
  document.title = "No such tournament · Chinchón";
  replace($("#main"), h("h1", {}, "No such tournament"),
    h("p", { id: "missing" }, `There is no tournament “${tid}” here. `, h("a", { href: "/" }, "The tournaments"), " are on the home page."));
}

// The back and forward buttons move between filters and stage tabs of this page.
window.addEventListener("popstate", () => {
  Object.assign(filter, fromURL());
  stageTab = stageFromURL();
  if ($("#stage-tabs") && lastSnap) selectTab(chosenTab(lastSnap), false);
  const sec = $("#games-section");
  if (sec) { replace(sec, h("h2", {}, "Finished games"), filters(), h("div", { id: "games" })); loadGames(); }
});

live(`${api}/events`, ["tournament", "gone"], (n, d) => {
  if (n === "gone") missing();
  else render(d);
}, { probe: api, onMissing: missing });
