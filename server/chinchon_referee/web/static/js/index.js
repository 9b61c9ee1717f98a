// Home: the tournaments (status, progress, start) and the bots connected now.
import { $, fmtScores, h, live, replace, scroller, storeNotice, timeEl } from "./common.js";

function render(d) {
  document.body.dataset.boot = d.boot;
  const ts = d.tournaments.map((t) => h("tr", { "data-tournament": t.id },
    h("td", {}, h("a", { href: `/t/${encodeURIComponent(t.id)}` }, t.name)),
    h("td", { class: `status status-${t.status}` }, t.status),
    h("td", {}, h("progress", { max: t.total || 1, value: t.done }), ` ${t.done} / ${t.total}`,
      t.running ? ` (${t.running} running)` : ""),
    h("td", {}, t.started ? timeEl(t.started) : `not yet (${t.start || "scheduled"})`),
    h("td", {}, t.bots.join(", "))));
  const bots = d.bots.map((b) => h("tr", { "data-bot": b.name },
    h("td", {}, b.name), h("td", {}, String(b.streams)),
    h("td", {}, b.seated ? `seated on ${b.seated}` : "idle", b.seated && b.idle ? `, ${b.idle} idle` : ""),
    h("td", {}, b.latency_ms === null ? "—" : `${b.latency_ms} ms`)));
  const games = d.running.map((g) => h("li", {},
    h("a", { href: `/g/${encodeURIComponent(g.id)}` }, g.id), ` ${g.players.join(" vs ")} · hand ${g.hand_no} · ${fmtScores(g.scores)}`));
  const records = (d.records || []).map((id) => h("li", {}, h("a", { href: `/r/${encodeURIComponent(id)}` }, id)));
  replace($("#main"), storeNotice(d.store),
    records.length ? h("section", {}, h("h2", {}, "Records"), h("ul", { id: "records" }, records)) : null,
    h("section", {}, h("h2", {}, "Tournaments"),
      ts.length ? scroller(h("table", { id: "tournaments", class: "grid" },
        h("tr", {}, h("th", {}, "name"), h("th", {}, "status"), h("th", {}, "progress"), h("th", {}, "start"), h("th", {}, "bots")), ts))
        : h("p", { id: "tournaments", class: "none" }, "No tournaments yet.")),
    h("section", {}, h("h2", {}, "Bots connected now"),
      bots.length ? scroller(h("table", { id: "bots", class: "grid" },
        h("tr", {}, h("th", {}, "bot"), h("th", {}, "streams"), h("th", {}, "seated or idle"), h("th", {}, "recent latency")), bots))
        : h("p", { id: "bots", class: "none" }, "No bot is connected.")),
    h("section", {}, h("h2", {}, "Games in progress"),
      games.length ? h("ul", { id: "running" }, games) : h("p", { id: "running", class: "none" }, "None.")),
    h("p", { class: "foot" }, "server ", h("code", { id: "boot" }, d.boot)));
}

live("/api/home/events", ["home"], (_n, d) => render(d));
