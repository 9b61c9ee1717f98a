// Small helpers shared by the pages: elements, JSON, and live streams (SSE).

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k.startsWith("data-")) el.setAttribute(k, v);
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
  return el;
}

export function $(sel) { return document.querySelector(sel); }

export function replace(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}

export async function getJSON(url) {
  const r = await fetch(url, { headers: { Accept: "application/json" } });
  if (!r.ok) throw new Error(`${r.status}: ${(await r.text()).slice(0, 300)}`);
  return r.json();
}

// A moment (seconds since the epoch) in the viewer's time zone, the zone named
// ("2 Dec 2026, 05:14:03 GMT+1"): spectators of one tournament are anywhere.
const TIME_FORMAT = { year: "numeric", month: "short", day: "numeric", hour: "2-digit",
  minute: "2-digit", second: "2-digit", timeZoneName: "short" };
export function fmtTime(t) {
  if (!t) return "—";
  return new Date(t * 1000).toLocaleString(undefined, TIME_FORMAT);
}

// A moment as an element: the local time, the zone named, and UTC in its tooltip.
export function timeEl(t, attrs = {}) {
  if (!t) return h("span", attrs, "—");
  const d = new Date(t * 1000);
  return h("time", { ...attrs, datetime: d.toISOString(), title: d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC") },
    fmtTime(t));
}

// A number as text, negative ones with a real minus sign ("−4", never "--4").
export function fmtInt(x) { return Number(x) < 0 ? `\u2212${-Number(x)}` : String(x); }

// Scores or totals side by side: "116 – −4".
export function fmtScores(xs) { return (xs || []).map(fmtInt).join(" \u2013 "); }

// "1 card", "7 cards".
export function plural(n, one, many = `${one}s`) { return `${n} ${n === 1 ? one : many}`; }

// A wide table in a box of its own that scrolls sideways on a narrow screen, so that
// the page itself never gets wider than the screen.
export function scroller(el) { return el ? h("div", { class: "scroll" }, el) : el; }

export function fmtSeconds(s) {
  if (s === null || s === undefined) return "—";
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  if (s < 120) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return m < 120 ? `${m} min ${Math.round(s % 60)} s` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function esc(s) { return String(s); }

// A live stream of snapshots: calls onData(name, data) for each event; shows the
// connection's state in #conn; reopens by itself (EventSource retries while the
// server is away; if the browser gives up, a new one is opened). When the server
// refuses the stream, opts.probe (a JSON URL of the same thing) is asked: a 404 there
// means there is no such thing, and opts.onMissing(text) is called instead of retrying.
export function live(url, names, onData, opts = {}) {
  let es = null;
  let closed = false;
  let delay = 500;
  const badge = document.getElementById("conn");
  const state = (s) => {
    if (badge) { badge.textContent = s; badge.dataset.state = s; }
    document.body.dataset.live = s;
  };
  function open() {
    if (closed) return;
    es = new EventSource(url);
    state("connecting");
    es.onopen = () => { delay = 500; state("live"); };
    es.onerror = async () => {
      state("reconnecting");
      if (es.readyState !== EventSource.CLOSED) return;
      if (opts.probe && opts.onMissing) {
        try {
          const r = await fetch(opts.probe, { headers: { Accept: "application/json" }, cache: "no-store" });
          if (r.status === 404) {
            closed = true;
            state("gone");
            opts.onMissing((await r.text()).slice(0, 300));
            return;
          }
        } catch (e) { /* the server is away: retry below */ }
      }
      setTimeout(open, delay);
      delay = Math.min(delay * 2, 5000);
    };
    for (const n of names) {
      es.addEventListener(n, (ev) => {
        state("live");
        onData(n, JSON.parse(ev.data));
      });
    }
  }
  open();
  return { close() { closed = true; if (es) es.close(); } };
}

export function termName(t) {
  return String(t || "").replace("TERMINATION_", "").toLowerCase().replaceAll("_", " ");
}

// A live stream that needs a token (the organizer's full view): EventSource cannot send
// headers, so the stream is read with fetch, the token in `Authorization: Bearer` (never
// in the URL, nor in a cookie). Calls onData(name, data) per event, onRefused(status,
// text) when the server says no; reopens after a network failure. close() stops it.
export function liveWithToken(url, token, names, onData, onRefused) {
  const stop = new AbortController();
  let delay = 500;
  async function open() {
    let r;
    try {
      r = await fetch(url, { headers: { Authorization: `Bearer ${token}`, Accept: "text/event-stream" },
        signal: stop.signal, cache: "no-store", credentials: "omit" });
    } catch (e) {
      if (!stop.signal.aborted) { setTimeout(open, delay); delay = Math.min(delay * 2, 5000); }
      return;
    }
    if (!r.ok) { onRefused(r.status, (await r.text()).slice(0, 300)); return; }
    delay = 500;
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        let cut;
        while ((cut = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          let name = "message";
          const data = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("event: ")) name = line.slice(7);
            else if (line.startsWith("data: ")) data.push(line.slice(6));
          }
          if (data.length && names.includes(name)) onData(name, JSON.parse(data.join("\n")));
        }
      }
    } catch (e) { /* aborted, or the connection broke */ }
    if (!stop.signal.aborted) setTimeout(open, delay);
  }
  open();
  return { close() { stop.abort(); } };
}

// The referee's database does not take writes (no game starts): say so above everything.
export function storeNotice(store) {
  if (!store) return null;
  const what = store.state === "STORE_STATE_FULL" ? "the database's disk is full" : "the database cannot be reached";
  return h("p", { id: "store", class: "alert", role: "alert" },
    `The referee cannot store results now: ${what} (${store.problem}). `,
    `Games in progress finish; ${store.waiting} result(s) wait in memory; no new game starts until it can.`);
}

// The replay's speed menu (steps per second): the usual speeds and the one asked for
// (?speed=X takes 0.25 to 50), in order, so the menu always shows the speed in force.
export const SPEEDS = [0.25, 0.5, 1, 2, 4, 8, 16, 32, 50];
export function speedChoices(current) {
  return [...new Set([...SPEEDS, current])].sort((a, b) => a - b);
}
