// The replay viewer: every step of a finished game, all cards face up or as one seat
// saw them (the engine's observation). Play, pause, step, seek, speed, keyboard
// (← → space). The step and the options are in the URL:
//   ?step=N  &view=all|SEAT  &autoplay=1  &speed=X (steps per second)  &controls=0
import { $, fmtSeconds, getJSON, h, replace } from "./common.js";
import { drawHandResult, drawTable } from "./table.js";

const gid = decodeURIComponent(location.pathname.split("/")[2] || "");
const params = new URLSearchParams(location.search);
const state = {
  data: null,
  step: Math.max(0, parseInt(params.get("step") || "0", 10) || 0),
  view: params.get("view") || "all",
  speed: Math.min(50, Math.max(0.25, parseFloat(params.get("speed") || "2") || 2)),
  controls: params.get("controls") !== "0",
  playing: params.get("autoplay") === "1",
  timer: null,
};

function syncURL() {
  const q = new URLSearchParams(location.search);
  q.set("step", String(state.step));
  if (state.view !== "all") q.set("view", state.view); else q.delete("view");
  history.replaceState(null, "", `${location.pathname}?${q}`);
}

async function load() {
  const v = encodeURIComponent(state.view);
  try {
    state.data = await getJSON(`/api/g/${encodeURIComponent(gid)}/replay?view=${v}`);
  } catch (e) {
    replace($("#main"), h("h1", {}, "No replay"), h("p", { class: "error", id: "error" }, e.message));
    return;
  }
  state.step = Math.min(state.step, state.data.steps.length);
  build();
  show();
}

function names() { return state.data.names; }

function lastHandResult(step) {
  let k = -1;
  for (let i = 0; i < step; i++) if (state.data.steps[i].hand_result !== undefined) k = state.data.steps[i].hand_result;
  return k;
}

function build() {
  const d = state.data;
  document.body.classList.toggle("embed", !state.controls);
  const viewSel = h("select", { id: "view", onchange: (e) => { state.view = e.target.value; syncURL(); load(); } },
    h("option", { value: "all", selected: state.view === "all" }, "all cards"),
    d.names.map((n, i) => h("option", { value: String(i), selected: state.view === String(i) }, `as seat ${i} (${n}) saw it`)));
  const speedSel = h("select", { id: "speed", onchange: (e) => { state.speed = parseFloat(e.target.value); if (state.playing) { pause(); play(); } } },
    [0.5, 1, 2, 4, 8, 16].map((s) => h("option", { value: String(s), selected: s === state.speed }, `${s}×`)));
  const controls = h("div", { class: "controls", id: "controls" },
    h("button", { id: "first", title: "first step (Home)", onclick: () => go(0) }, "|◀◀"),
    h("button", { id: "prev", title: "previous step (←)", onclick: () => go(state.step - 1) }, "◀"),
    h("button", { id: "play", title: "play / pause (space)", onclick: toggle }, "▶"),
    h("button", { id: "next", title: "next step (→)", onclick: () => go(state.step + 1) }, "▶|"),
    h("button", { id: "last", title: "last step (End)", onclick: () => go(d.steps.length) }, "▶▶|"),
    h("input", { id: "seek", type: "range", min: "0", max: String(d.steps.length), value: String(state.step),
      oninput: (e) => go(parseInt(e.target.value, 10)) }),
    h("span", { id: "stepno" }), " speed ", speedSel, " view ", viewSel);
  const res = d.result || {};
  replace($("#main"),
    h("h1", {}, d.names.join(" vs ")),
    h("p", { class: "meta" }, `game ${d.game_id} · ${res.summary || ""} · `,
      h("a", { href: `/api/g/${encodeURIComponent(gid)}/record.json`, download: `${gid}.json` }, "record")),
    state.controls ? controls : null,
    h("div", { id: "viewing", class: "viewing" }),
    h("div", { id: "action", class: "action" }),
    h("div", { id: "table" }),
    h("div", { id: "handresult" }));
}

function show() {
  const d = state.data;
  const n = d.steps.length;
  const st = state.step > 0 ? d.steps[state.step - 1] : null;
  const seek = $("#seek");
  if (seek) seek.value = String(state.step);
  const no = $("#stepno");
  if (no) no.textContent = ` step ${state.step} / ${n}`;
  document.body.dataset.step = String(state.step);
  replace($("#viewing"), d.view === "all" ? "all cards face up" : `as seat ${d.view} (${d.names[d.view]}) saw it`);
  if (!st) {
    replace($("#action"), h("span", {}, "start of the game"));
    replace($("#table"), h("p", { class: "none" }, "Step → to deal."));
  } else {
    const who = st.seat >= 0 && st.kind !== "deal" ? `${names()[st.seat]}: ` : "";
    const marks = [];
    if (st.origin === "ACTION_ORIGIN_DEFAULT_TIMEOUT") marks.push(h("span", { class: "mark default" }, " default (timeout)"));
    if (st.origin === "ACTION_ORIGIN_DEFAULT_ILLEGAL") marks.push(h("span", { class: "mark default" }, " default (illegal actions)"));
    replace($("#action"), h("span", { id: "action-text", "data-step": st.step }, `${st.step}. ${who}${st.text}`), marks,
      st.think !== undefined && st.think !== null ? h("span", { class: "think" }, ` · thought ${fmtSeconds(st.think)}`,
        st.bank_left !== undefined ? ` · bank left ${st.bank_left.toFixed(1)} s` : "") : null);
    replace($("#table"), drawTable(st.table));
  }
  const k = lastHandResult(state.step);
  const recent = st && st.hand_result !== undefined;
  replace($("#handresult"), k >= 0 ? h("div", { class: recent ? "fresh" : "" },
    h("h2", {}, recent ? "Hand result" : "Last hand result"), drawHandResult(d.hands[k], names())) : null);
  if (state.step >= n && state.playing) pause();
  syncURL();
}

function go(s) {
  if (!state.data) return;
  state.step = Math.max(0, Math.min(state.data.steps.length, s));
  show();
}

function play() {
  state.playing = true;
  const b = $("#play"); if (b) b.textContent = "⏸";
  if (state.step >= state.data.steps.length) state.step = 0;
  state.timer = setInterval(() => go(state.step + 1), 1000 / state.speed);
}

function pause() {
  state.playing = false;
  const b = $("#play"); if (b) b.textContent = "▶";
  if (state.timer) clearInterval(state.timer);
  state.timer = null;
}

function toggle() { if (state.playing) pause(); else play(); }

document.addEventListener("keydown", (e) => {
  if (e.target && ["INPUT", "SELECT", "TEXTAREA"].includes(e.target.tagName) && e.target.type !== "range") return;
  if (e.key === "ArrowRight") { e.preventDefault(); go(state.step + 1); }
  else if (e.key === "ArrowLeft") { e.preventDefault(); go(state.step - 1); }
  else if (e.key === " ") { e.preventDefault(); toggle(); }
  else if (e.key === "Home") go(0);
  else if (e.key === "End") go(state.data ? state.data.steps.length : 0);
});

// A focused button would also take the space bar as a click: the keydown above decides.
document.addEventListener("keyup", (e) => { if (e.key === " " && e.target && e.target.tagName === "BUTTON") e.preventDefault(); });

load().then(() => { if (state.playing && state.data) { state.playing = false; play(); } });
