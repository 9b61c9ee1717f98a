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

export function fmtTime(t) {
  if (!t) return "—";
  return new Date(t * 1000).toLocaleString();
}

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
// server is away; if the browser gives up, a new one is opened).
export function live(url, names, onData) {
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
    es.onerror = () => {
      state("reconnecting");
      if (es.readyState === EventSource.CLOSED) {
        setTimeout(open, delay);
        delay = Math.min(delay * 2, 5000);
      }
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
