// Draws a table: seats with their hands (face up, or face down as a count), the
// discard pile, the stock, the melds on the table and the scores toward the limit.
import { h, plural } from "./common.js";
import { back, card, cards } from "./cards.js";

function bar(pct) {
  const inner = h("span");
  inner.style.width = `${pct}%`; // through the CSSOM: the pages allow no inline style
  return h("span", { class: "scorebar" }, inner);
}

export function drawTable(t, opts = {}) {
  const seats = t.seats.map((s) => {
    let hand;
    if (s.hand) hand = cards(s.hand);
    else {
      hand = h("span", { class: "cards hidden-hand" });
      for (let i = 0; i < s.hand_size; i++) hand.appendChild(back());
    }
    const melds = t.table.filter((m) => m.owner === s.seat).map((m) => h("span", { class: "meld" }, cards(m.cards)));
    const pct = Math.min(100, (100 * s.score) / (t.score_limit || 100));
    const clock = opts.clock ? opts.clock(s) : null;
    return h("div", {
      class: "seat" + (t.to_act === s.seat ? " to-act" : "") + (s.in_game ? "" : " out"),
      "data-seat": s.seat,
    },
    h("div", { class: "seat-head" },
      h("span", { class: "name" }, s.name), " ",
      h("span", { class: "handsize", "data-hand-size": s.hand_size }, plural(s.hand_size, "card")), " ",
      h("span", { class: "score" }, `${s.score} / ${t.score_limit}`),
      bar(pct),
      clock),
    h("div", { class: "hand" }, hand),
    melds.length ? h("div", { class: "melds" }, melds) : null);
  });
  const pile = t.discard_pile || [];
  const pileEl = h("div", { class: "pile" }, h("div", { class: "label" }, `discard pile (${pile.length})`),
    pile.length ? h("span", { class: "cards stack" }, pile.slice(-6).map((c) => card(c))) : h("span", { class: "empty" }, "empty"));
  const stockEl = h("div", { class: "stock" }, h("div", { class: "label" }, `stock: ${t.stock_size}`),
    t.stock_size ? back() : h("span", { class: "empty" }, "empty"),
    t.stock ? h("details", {}, h("summary", {}, "stock order"), cards(t.stock)) : null);
  return h("div", { class: "table", "data-view": String(t.view) },
    h("div", { class: "center" }, stockEl, pileEl,
      h("div", { class: "info" }, `hand ${t.hand_no} · ${t.phase}`)),
    h("div", { class: "seats" }, seats));
}

// A hand's result: each seat's cards as the engine arranged them (melds, then the
// unmatched cards) and the points.
export function drawHandResult(r, names) {
  const rows = names.map((n, s) => {
    const melds = (r.table || []).filter((m) => m.owner === s).map((m) => h("span", { class: "meld" }, cards(m.cards)));
    const unmatched = ((r.unmatched || [])[s] || {}).cards || [];
    return h("tr", { class: r.closer === s ? "closer" : "" },
      h("td", {}, n, r.closer === s ? " (closed)" : ""),
      h("td", {}, melds, unmatched.length ? h("span", { class: "meld unmatched" }, cards(unmatched)) : null),
      h("td", {}, String((r.points || [])[s] ?? "")),
      h("td", {}, String((r.totals || [])[s] ?? "")));
  });
  return h("div", { class: "hand-result" },
    h("div", { class: "label" }, `hand ${r.handNumber}: ${String(r.end || "").replace("HAND_END_KIND_", "").toLowerCase()}`,
      r.bonus && r.bonus !== "BONUS_NONE" ? ` · ${r.bonus.replace("BONUS_", "").toLowerCase()}` : "",
      r.closeDiscard ? " · closing discard " : "", r.closeDiscard ? card(r.closeDiscard) : null),
    h("table", {}, h("tr", {}, h("th", {}, "seat"), h("th", {}, "melds · unmatched"), h("th", {}, "points"), h("th", {}, "total")), rows));
}
