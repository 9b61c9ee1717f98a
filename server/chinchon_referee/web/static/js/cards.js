// Spanish cards drawn as SVG by the project (no images, nothing from the internet).
// Each card is also text: its code ("7O", "12B", "JK1") is in the element and in
// data-card, and its name ("7 de oros") in the title and aria-label.

const NS = "http://www.w3.org/2000/svg";
const SUITS = { O: "oros", C: "copas", E: "espadas", B: "bastos" };
const COLORS = { O: "#c8961e", C: "#c0392b", E: "#2c5aa0", B: "#2e7d32" };
const FIGURES = { 10: "sota", 11: "caballo", 12: "rey" };

function svg(tag, attrs, parent) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (parent) parent.appendChild(e);
  return e;
}

// One suit symbol centred on (x, y), about 2*r wide.
function pip(g, suit, x, y, r) {
  const c = COLORS[suit];
  if (suit === "O") {
    svg("circle", { cx: x, cy: y, r, fill: c, stroke: "#7a5a0a", "stroke-width": 1.2 }, g);
    svg("circle", { cx: x, cy: y, r: r * 0.55, fill: "none", stroke: "#7a5a0a", "stroke-width": 1 }, g);
  } else if (suit === "C") {
    svg("path", {
      d: `M${x - r} ${y - r} h${2 * r} q0 ${r * 1.1} ${-r} ${r * 1.2} q${-r} ${-r * 0.1} ${-r} ${-r * 1.2}z`,
      fill: c, stroke: "#6d1f16", "stroke-width": 1,
    }, g);
    svg("rect", { x: x - r * 0.15, y: y + r * 0.2, width: r * 0.3, height: r * 0.6, fill: c }, g);
    svg("rect", { x: x - r * 0.55, y: y + r * 0.8, width: r * 1.1, height: r * 0.25, fill: c }, g);
  } else if (suit === "E") {
    svg("path", { d: `M${x} ${y - r * 1.3} l${r * 0.22} ${r * 1.6} h${-r * 0.44}z`, fill: c }, g);
    svg("rect", { x: x - r * 0.7, y: y + r * 0.3, width: r * 1.4, height: r * 0.22, fill: "#1b365d" }, g);
    svg("rect", { x: x - r * 0.12, y: y + r * 0.52, width: r * 0.24, height: r * 0.7, fill: "#1b365d" }, g);
  } else if (suit === "B") {
    svg("path", {
      d: `M${x - r * 0.35} ${y + r * 1.2} L${x - r * 0.55} ${y - r * 0.9} Q${x} ${y - r * 1.5} ${x + r * 0.55} ${y - r * 0.9} L${x + r * 0.35} ${y + r * 1.2}z`,
      fill: c, stroke: "#1b4d1e", "stroke-width": 1,
    }, g);
    svg("circle", { cx: x - r * 0.2, cy: y - r * 0.3, r: r * 0.12, fill: "#1b4d1e" }, g);
    svg("circle", { cx: x + r * 0.2, cy: y + r * 0.3, r: r * 0.12, fill: "#1b4d1e" }, g);
  }
}

export function cardName(code) {
  if (code.startsWith("JK")) return `comodín ${code.slice(2)}`;
  const suit = code.slice(-1), rank = Number(code.slice(0, -1));
  const name = FIGURES[rank] ? `${rank} (${FIGURES[rank]})` : String(rank);
  return `${name} de ${SUITS[suit] || "?"}`;
}

// A face-up card: <span class="card" data-card="7O">.
export function card(code, extra = "") {
  const el = document.createElement("span");
  el.className = "card face " + extra;
  el.dataset.card = code;
  el.title = cardName(code);
  el.setAttribute("role", "img");
  el.setAttribute("aria-label", cardName(code));
  const s = svg("svg", { viewBox: "0 0 60 90", class: "cardsvg", "aria-hidden": "true" });
  svg("rect", { x: 1, y: 1, width: 58, height: 88, rx: 6, fill: "#fffdf6", stroke: "#555", "stroke-width": 1.5 }, s);
  if (code.startsWith("JK")) {
    svg("path", { d: "M30 22 l6 14 h15 l-12 9 l5 15 l-14 -9 l-14 9 l5 -15 l-12 -9 h15z", fill: "#8e44ad" }, s);
    const t = svg("text", { x: 30, y: 80, "text-anchor": "middle", "font-size": 11, fill: "#8e44ad" }, s);
    t.textContent = "JOKER";
  } else {
    const suit = code.slice(-1), rank = code.slice(0, -1);
    const c = COLORS[suit] || "#000";
    for (const [x, y, a] of [[8, 16, "start"], [52, 84, "end"]]) {
      const t = svg("text", { x, y, "text-anchor": a, "font-size": 14, "font-weight": "bold", fill: c }, s);
      t.textContent = rank;
    }
    // A frame broken at the corners, as Spanish cards have (its breaks mark the suit).
    svg("rect", { x: 12, y: 20, width: 36, height: 50, rx: 3, fill: "none", stroke: c, "stroke-width": 0.8,
      "stroke-dasharray": { O: "0", C: "6 2", E: "10 3", B: "14 4" }[suit] }, s);
    pip(s, suit, 30, 45, Number(rank) >= 10 ? 9 : 11);
    if (FIGURES[Number(rank)]) {
      const t = svg("text", { x: 30, y: 66, "text-anchor": "middle", "font-size": 7, fill: c }, s);
      t.textContent = FIGURES[Number(rank)];
    }
  }
  el.appendChild(s);
  const txt = document.createElement("span");
  txt.className = "code";
  txt.textContent = code;
  el.appendChild(txt);
  return el;
}

// A face-down card (no code anywhere in it).
export function back(extra = "") {
  const el = document.createElement("span");
  el.className = "card back " + extra;
  el.title = "face down";
  el.setAttribute("role", "img");
  el.setAttribute("aria-label", "face-down card");
  const s = svg("svg", { viewBox: "0 0 60 90", class: "cardsvg", "aria-hidden": "true" });
  svg("rect", { x: 1, y: 1, width: 58, height: 88, rx: 6, fill: "#7b1e1e", stroke: "#3d0f0f", "stroke-width": 1.5 }, s);
  svg("rect", { x: 7, y: 7, width: 46, height: 76, rx: 4, fill: "none", stroke: "#e0b060", "stroke-width": 1.5 }, s);
  svg("circle", { cx: 30, cy: 45, r: 10, fill: "none", stroke: "#e0b060", "stroke-width": 1.5 }, s);
  el.appendChild(s);
  return el;
}

export function cards(codes, extra = "") {
  const span = document.createElement("span");
  span.className = "cards";
  for (const c of codes) span.appendChild(card(c, extra));
  return span;
}
