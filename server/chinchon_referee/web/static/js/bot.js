// One bot: its results over its tournament games, forfeits, timeouts, illegal
// attempts, strikes, answer times (median of its recent answers), each tournament's
// figures and its games, newest first, each with a link to its replay.
import { $, fmtSeconds, fmtTime, getJSON, h, replace } from "./common.js";

const name = decodeURIComponent(location.pathname.split("/")[2] || "");

const FIGURES = [
  ["games", "games"], ["wins", "wins"], ["draws", "draws"], ["losses", "losses"],
  ["forfeits", "forfeits"], ["timeouts", "timeouts"], ["illegal", "illegal attempts"],
  ["strikes", "strikes"], ["decisions", "answers"],
];

function figures(f, timedGames) {
  return h("table", { id: "figures", class: "grid figures" },
    FIGURES.map(([k, label]) => h("tr", { "data-figure": k }, h("td", {}, label), h("td", { class: "value" }, String(f[k])))),
    h("tr", { "data-figure": "median_answer" }, h("td", {}, `median answer time (last ${timedGames} games)`),
      h("td", { class: "value" }, fmtSeconds(f.median_answer))),
    h("tr", { "data-figure": "mean_answer" }, h("td", {}, "mean answer time"),
      h("td", { class: "value" }, fmtSeconds(f.mean_answer))));
}

function tournaments(ts) {
  return h("div", { class: "wide" }, h("table", { id: "tournaments", class: "grid" },
    h("tr", {}, ["tournament", "status", "games", "W", "D", "L", "forfeits", "timeouts", "illegal", "median answer"].map((c) => h("th", {}, c))),
    ts.map((t) => h("tr", { "data-tournament": t.id },
      h("td", {}, h("a", { href: `/t/${encodeURIComponent(t.id)}` }, t.name)), h("td", {}, t.status),
      h("td", {}, String(t.games)), h("td", {}, String(t.wins)), h("td", {}, String(t.draws)), h("td", {}, String(t.losses)),
      h("td", {}, String(t.forfeits)), h("td", {}, String(t.timeouts)), h("td", {}, String(t.illegal)),
      h("td", {}, fmtSeconds(t.median_answer))))));
}

function games(gs) {
  return h("div", { class: "wide" }, h("table", { id: "games", class: "grid" },
    h("tr", {}, ["game", "players", "result", "how", "illegal", "timeouts", "strikes", "finished"].map((c) => h("th", {}, c))),
    gs.map((g) => h("tr", { "data-game": g.id, "data-result": g.result },
      h("td", {}, h("a", { href: `/r/${encodeURIComponent(g.id)}` }, g.id)),
      h("td", {}, g.players.join(" vs ")), h("td", { class: `result ${g.result}` }, g.result),
      h("td", {}, g.summary || g.termination), h("td", {}, String(g.illegal)), h("td", {}, String(g.timeouts)),
      h("td", {}, String(g.strikes)), h("td", {}, fmtTime(g.finished))))));
}

async function load() {
  let d;
  try {
    d = await getJSON(`/api/b/${encodeURIComponent(name)}`);
  } catch (e) {
    replace($("#main"), h("h1", {}, name), h("p", { class: "error", id: "error" }, e.message));
    return;
  }
  document.title = `${d.name} · Chinchón`;
  replace($("#main"), h("h1", { id: "bot-name" }, d.name), figures(d.figures, d.timed_games),
    h("h2", {}, "Tournaments"), tournaments(d.tournaments),
    h("h2", {}, `Games (the newest ${Math.min(d.games.length, d.listed)})`), games(d.games));
  document.body.dataset.loaded = "1";
}

load();
