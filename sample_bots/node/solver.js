'use strict';
// A small exact meld solver for Chinchón, written from docs/rules.md only.
//
// Cards are text: rank then suit letter ("7O", "12B"), jokers "JK1" / "JK2". The rule
// set's wild_cards (e.g. ["1O"]) are jokers in every respect, and jokers_per_meld (1 or
// 2) bounds the jokers of one meld (docs/rules.md, section 3).
// A hand has at most 8 cards, so the solver simply lists every meld the hand can
// make and searches the disjoint combinations (memoised on the cards left), which
// is exact and takes well under a millisecond.

const SUITS = ['O', 'C', 'E', 'B'];
const FIGURE_POINTS = {
  '8-9-10': [8, 9, 10],
  '10-11-12': [10, 11, 12],
  '10-10-10': [10, 10, 10],
};
/** Longest run laid down from a hand (lay-offs may lengthen it on the table). */
const MAX_RUN_FROM_HAND = 7;

/**
 * The rule set with every default filled in (docs/rules.md, section 2). Accepts the
 * RuleSet message as proto-loader decodes it (snake_case or camelCase names; unset
 * optional fields are undefined or null).
 */
function normalizeRules(rules) {
  const r = rules || {};
  const pick = (snake, camel, dflt) => {
    const v = r[snake] !== undefined && r[snake] !== null ? r[snake] : r[camel];
    return v === undefined || v === null || v === '' ? dflt : v;
  };
  const deck = Number(pick('deck', 'deck', 40));
  const figure = pick('figure_points', 'figurePoints', deck === 48 ? '10-11-12' : '8-9-10');
  if (!FIGURE_POINTS[figure]) throw new Error(`unknown figure_points ${JSON.stringify(figure)}`);
  const wild = pick('wild_cards', 'wildCards', []);
  return {
    players: Number(pick('players', 'players', 2)),
    deck,
    jokers: Number(pick('jokers', 'jokers', 0)),
    figurePoints: figure,
    jokerPoints: Number(pick('joker_points', 'jokerPoints', 25)),
    openDiscard: Boolean(pick('open_discard', 'openDiscard', true)),
    retakeDiscard: Boolean(pick('retake_discard', 'retakeDiscard', false)),
    closeMaxUnmatched: Number(pick('close_max_unmatched', 'closeMaxUnmatched', 1)),
    closeMaxPoints: Number(pick('close_max_points', 'closeMaxPoints', 5)),
    maxTurnsPerHand: Number(pick('max_turns_per_hand', 'maxTurnsPerHand', 200)),
    scoreLimit: Number(pick('score_limit', 'scoreLimit', 100)),
    wildCards: (Array.isArray(wild) ? wild : []).map((t) => parseCard(t).text),
    jokersPerMeld: Number(pick('jokers_per_meld', 'jokersPerMeld', 2)),
    closeFirstRound: Boolean(pick('close_first_round', 'closeFirstRound', true)),
  };
}

/** The rules, normalised once (a RuleSet message, or what normalizeRules returned). */
function norm(rules) {
  return rules && rules.figurePoints ? rules : normalizeRules(rules);
}

/** Ranks of one suit in run order: 40 cards 1-7 10 11 12 (7 and 10 are neighbours); 48 cards 1-12. */
function rankOrder(deck) {
  return deck === 48 ? [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] : [1, 2, 3, 4, 5, 6, 7, 10, 11, 12];
}

/**
 * Parses "7O", "12b", "JK1" into {text, joker, rank, suit}. Throws on anything else.
 * With `rules`, a wild card (rules.wild_cards) is a joker: {joker: true, rank: 0}.
 */
function parseCard(text, rules) {
  const t = String(text).trim().toUpperCase();
  if (t === 'JK1' || t === 'JK2') return { text: t, joker: true, rank: 0, suit: '' };
  const m = /^(\d{1,2})([OCEB])$/.exec(t);
  if (!m || Number(m[1]) < 1 || Number(m[1]) > 12) throw new Error(`not a card: ${JSON.stringify(text)}`);
  if (rules && norm(rules).wildCards.includes(t)) return { text: t, joker: true, rank: 0, suit: '' };
  return { text: t, joker: false, rank: Number(m[1]), suit: m[2] };
}

/** Does the card play as a joker under these rules (JK1/JK2, or a wild card)? */
function isJoker(card, rules) {
  return parseCard(typeof card === 'string' ? card : card.text, rules).joker;
}

/** Points of one card left unmatched. */
function cardPoints(card, rules) {
  const r = norm(rules);
  const c = typeof card === 'string' ? parseCard(card, r) : card;
  if (c.joker) return r.jokerPoints;
  if (c.rank >= 10) return FIGURE_POINTS[r.figurePoints][c.rank - 10];
  return c.rank;
}

/** Is this group a valid set? 3-4 cards, one rank, natural suits distinct, >= 2 naturals. */
function isSet(cards, rules) {
  const r = norm(rules);
  const cs = cards.map((c) => (typeof c === 'string' ? parseCard(c, r) : c));
  const nat = cs.filter((c) => !c.joker);
  if (cs.length < 3 || cs.length > 4 || nat.length < 2) return false;
  if (cs.length - nat.length > r.jokersPerMeld) return false;
  if (new Set(nat.map((c) => c.rank)).size !== 1) return false;
  if (new Set(nat.map((c) => c.suit)).size !== nat.length) return false;
  return rankOrder(r.deck).includes(nat[0].rank);
}

/**
 * Is this group a valid run, in any order? Same suit, consecutive in the deck's rank
 * order (no wrap), at least 3 cards and 2 naturals; jokers fill gaps or extend an end
 * that has room. maxLength defaults to no limit (pass 7 for a run laid from a hand).
 */
function isRun(cards, rules, maxLength = Infinity) {
  const r = norm(rules);
  const order = rankOrder(r.deck);
  const cs = cards.map((c) => (typeof c === 'string' ? parseCard(c, r) : c));
  const nat = cs.filter((c) => !c.joker);
  const jokers = cs.length - nat.length;
  if (cs.length < 3 || cs.length > maxLength || nat.length < 2) return false;
  if (jokers > r.jokersPerMeld) return false;
  if (new Set(nat.map((c) => c.suit)).size !== 1) return false;
  const pos = nat.map((c) => order.indexOf(c.rank));
  if (pos.includes(-1) || new Set(pos).size !== pos.length) return false;
  const span = Math.max(...pos) - Math.min(...pos) + 1;
  const gaps = span - nat.length;
  if (gaps > jokers) return false;
  return span + (jokers - gaps) <= order.length; // spare jokers need room at the ends
}

/**
 * Every meld the cards can make: [{mask, jokers, kind, layout}] where mask is a bit
 * mask over the natural cards (indices into `naturals`), jokers the number of jokers
 * used, and layout the meld's cards with null where a joker stands (runs ascending).
 */
function meldCandidates(naturals, jokerCount, r) {
  const out = [];
  const perMeld = Math.min(jokerCount, r.jokersPerMeld); // jokers one meld may hold
  const seen = new Set();
  const push = (mask, jokers, kind, layout) => {
    const key = `${mask}/${jokers}`;
    if (seen.has(key)) return; // same cards used: one layout is enough for scoring
    seen.add(key);
    out.push({ mask, jokers, kind, layout });
  };
  // Sets: 2-4 naturals of one rank (distinct suits: a hand never holds a card twice),
  // topped up with jokers to 3 or 4 cards.
  const byRank = new Map();
  naturals.forEach((c, i) => {
    if (!byRank.has(c.rank)) byRank.set(c.rank, []);
    byRank.get(c.rank).push(i);
  });
  for (const idx of byRank.values()) {
    const n = idx.length;
    for (let sub = 1; sub < 1 << n; sub++) {
      const chosen = idx.filter((_, k) => sub & (1 << k));
      if (chosen.length < 2) continue;
      for (let j = 0; j <= perMeld; j++) {
        const size = chosen.length + j;
        if (size < 3 || size > 4) continue;
        const mask = chosen.reduce((m, i) => m | (1 << i), 0);
        push(mask, j, 'set', [...chosen.map((i) => naturals[i].text), ...Array(j).fill(null)]);
      }
    }
  }
  // Runs: every window of 3-7 positions of one suit; each position is the natural
  // card (if held) or a joker (also in a place whose card the hand holds: that card then
  // goes in another meld, e.g. 1O 2O JK1 | 3O 4O 5O JK2 with one joker per meld); at
  // least 2 naturals.
  const order = rankOrder(r.deck);
  for (const suit of SUITS) {
    const at = order.map((rank) => naturals.findIndex((c) => c.suit === suit && c.rank === rank));
    if (at.filter((i) => i >= 0).length < 2) continue;
    for (let start = 0; start < order.length; start++) {
      for (let len = 3; len <= MAX_RUN_FROM_HAND && start + len <= order.length; len++) {
        // Enumerate natural/joker choices per position within the joker budget.
        const walk = (p, mask, jokers, nat, layout) => {
          if (p === start + len) {
            if (nat >= 2) push(mask, jokers, 'run', layout);
            return;
          }
          const i = at[p];
          if (i >= 0) walk(p + 1, mask | (1 << i), jokers, nat + 1, [...layout, naturals[i].text]);
          if (jokers < perMeld) walk(p + 1, mask, jokers + 1, nat, [...layout, null]);
        };
        walk(start, 0, 0, 0, []);
      }
    }
  }
  return out;
}

/**
 * The split of `cards` into melds with the fewest unmatched points.
 * Returns {points, melds: [{kind, cards}], unmatched: [text]}. Ties: fewer unmatched cards.
 */
function bestArrangement(cards, rules) {
  const r = norm(rules);
  const parsed = cards.map((c) => (typeof c === 'string' ? parseCard(c, r) : c));
  const naturals = parsed.filter((c) => !c.joker);
  const jokerTexts = parsed.filter((c) => c.joker).map((c) => c.text);
  const cands = meldCandidates(naturals, jokerTexts.length, r);
  const pts = naturals.map((c) => cardPoints(c, r));
  const memo = new Map();
  // best(mask, jokersLeft) -> {points, count, choice}; mask = naturals still free.
  const best = (mask, jokersLeft) => {
    const key = mask * 4 + jokersLeft;
    if (memo.has(key)) return memo.get(key);
    let res;
    if (mask === 0) {
      res = { points: jokersLeft * r.jokerPoints, count: jokersLeft, choice: null };
    } else {
      const low = mask & -mask;
      const i = 31 - Math.clz32(low);
      const skip = best(mask & ~low, jokersLeft);
      res = { points: skip.points + pts[i], count: skip.count + 1, choice: { unmatched: i } };
      for (const m of cands) {
        if (!(m.mask & low) || (m.mask & ~mask) || m.jokers > jokersLeft) continue;
        const rest = best(mask & ~m.mask, jokersLeft - m.jokers);
        if (rest.points < res.points || (rest.points === res.points && rest.count < res.count)) {
          res = { points: rest.points, count: rest.count, choice: { meld: m } };
        }
      }
    }
    memo.set(key, res);
    return res;
  };
  const all = (1 << naturals.length) - 1;
  const top = best(all, jokerTexts.length);
  // Walk the choices back to name the melds, giving each joker slot a real joker.
  const melds = [];
  const unmatched = [];
  let mask = all;
  let jokersLeft = jokerTexts.length;
  const jokerPool = [...jokerTexts];
  while (mask) {
    const step = best(mask, jokersLeft).choice;
    if (step.meld) {
      const m = step.meld;
      melds.push({ kind: m.kind, cards: m.layout.map((t) => (t === null ? jokerPool.shift() : t)) });
      mask &= ~m.mask;
      jokersLeft -= m.jokers;
    } else {
      unmatched.push(naturals[step.unmatched].text);
      mask &= ~(1 << step.unmatched);
    }
  }
  unmatched.push(...jokerPool);
  return { points: top.points, melds, unmatched };
}

/** Least unmatched points of `cards`. */
function unmatchedPoints(cards, rules) {
  return bestArrangement(cards, rules).points;
}

/**
 * What closing with these seven cards would score for the closer, lower is better:
 * -1000 for chinchón (a natural run of seven wins the game), -50 / -25 for a run of
 * seven with one / two jokers, -10 when all seven meld, else the unmatched points.
 */
function closeValue(seven, rules) {
  const r = norm(rules);
  const arr = bestArrangement(seven, r);
  if (arr.points > 0 || arr.unmatched.length > 0) return arr.points;
  if (seven.length === 7 && isRun(seven, r, 7)) {
    // A wild card is a joker even in its own place: 1O..7O with 1O wild is -50.
    const jokers = seven.filter((c) => parseCard(c, r).joker).length;
    return jokers === 0 ? -1000 : jokers === 1 ? -50 : -25;
  }
  return -10;
}

module.exports = {
  SUITS,
  normalizeRules,
  rankOrder,
  parseCard,
  isJoker,
  cardPoints,
  isSet,
  isRun,
  bestArrangement,
  unmatchedPoints,
  closeValue,
};
