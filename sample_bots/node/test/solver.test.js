'use strict';
// Self-check of the JS meld solver against hands worked out by hand from docs/rules.md.
const test = require('node:test');
const assert = require('node:assert/strict');
const s = require('../solver');

const R40 = s.normalizeRules({}); // 40 cards, figures 8-9-10
const R48 = s.normalizeRules({ deck: 48 }); // 48 cards, figures 10-11-12
const hand = (text) => text.split(' ');

test('rule defaults follow the deck', () => {
  assert.equal(R40.figurePoints, '8-9-10');
  assert.equal(R48.figurePoints, '10-11-12');
  assert.equal(R40.jokerPoints, 25);
  assert.equal(s.normalizeRules({ deck: 48, figure_points: '10-10-10' }).figurePoints, '10-10-10');
  assert.equal(s.normalizeRules({ figurePoints: '10-10-10' }).figurePoints, '10-10-10');
});

test('card points', () => {
  assert.equal(s.cardPoints('7O', R40), 7);
  assert.equal(s.cardPoints('10E', R40), 8);
  assert.equal(s.cardPoints('11C', R40), 9);
  assert.equal(s.cardPoints('12B', R40), 10);
  assert.equal(s.cardPoints('9B', R48), 9);
  assert.equal(s.cardPoints('12B', R48), 12);
  assert.equal(s.cardPoints('JK1', R40), 25);
  assert.equal(s.cardPoints('11O', s.normalizeRules({ figure_points: '10-10-10' })), 10);
});

test('1O 2O 3O 5C 5E 5B 12B leaves 10 points (the 12B)', () => {
  const a = s.bestArrangement(hand('1O 2O 3O 5C 5E 5B 12B'), R40);
  assert.equal(a.points, 10);
  assert.deepEqual(a.unmatched, ['12B']);
  assert.equal(a.melds.length, 2);
});

test('runs follow the deck order: 7 and 10 are neighbours with 40 cards', () => {
  assert.ok(s.isRun(hand('6O 7O 10O'), R40));
  assert.ok(s.isRun(hand('7C 10C 11C'), R40));
  assert.ok(!s.isRun(hand('6O 7O 10O'), R48));
  assert.ok(s.isRun(hand('7O 8O 9O'), R48));
  assert.equal(s.unmatchedPoints(hand('6O 7O 10O'), R40), 0);
  assert.equal(s.unmatchedPoints(hand('6O 7O 10O'), R48), 6 + 7 + 10);
});

test('runs never wrap', () => {
  assert.ok(!s.isRun(hand('1O 12O 11O'), R40));
  assert.ok(!s.isRun(hand('11O 12O 1O'), R48));
  assert.equal(s.unmatchedPoints(hand('1O 12O 11O'), R40), 1 + 10 + 9);
});

test('sets: one rank, distinct suits, 3 or 4 cards', () => {
  assert.ok(s.isSet(hand('5O 5C 5E'), R40));
  assert.ok(s.isSet(hand('5O 5C 5E 5B'), R40));
  assert.ok(!s.isSet(hand('5O 5C'), R40));
  assert.ok(!s.isSet(hand('5O 5C 6E'), R40));
  assert.ok(!s.isSet(hand('8O 8C 8E'), R40)); // no 8 in the 40-card deck
});

test('a card cannot be in two melds: the solver picks the cheaper split', () => {
  // 4O belongs to 2O 3O 4O or to 4O 4C 4E, not both; 5O 6O extend the run instead.
  const a = s.bestArrangement(hand('2O 3O 4O 5O 6O 4C 4E'), R40);
  assert.equal(a.points, 8); // run 2O-6O melded, 4C 4E left: 4 + 4
  assert.equal(s.unmatchedPoints(hand('2O 3O 4O 4C 4E 4B 12E'), R40), 10 + 0);
});

test('jokers: fill a gap, need two naturals, cannot go past the deck ends', () => {
  const r = s.normalizeRules({ jokers: 2 });
  assert.ok(s.isRun(hand('3O JK1 5O'), r));
  assert.ok(s.isSet(hand('5O 5C JK1 JK2'), r));
  assert.ok(!s.isRun(hand('3O JK1 JK2'), r));
  assert.ok(s.isRun(hand('1O 2O JK1'), r)); // the joker can only be 3O
  assert.ok(!s.isRun(hand('1O 2O 3O 4O 5O 6O 7O 10O 11O 12O JK1'), r)); // no room left for it
  assert.equal(s.unmatchedPoints(hand('3O 5O JK1 11C 11E 11B 1E'), r), 1);
  assert.equal(s.unmatchedPoints(hand('JK1 JK2 7B'), r), 25 + 25 + 7);
});

test('equal points: the split with fewer unmatched cards wins', () => {
  // 4O 5O 7O 11O JK1 leaves 9 points as 7O JK1 11O + 4O 5O or as 4O 5O JK1 7O + 11O
  // (the Python engine's solver used to pick the first; docs/rules.md, section 3).
  const a = s.bestArrangement(hand('4O 5O 7O 11O JK1'), s.normalizeRules({ jokers: 1 }));
  assert.equal(a.points, 9);
  assert.deepEqual(a.unmatched, ['11O']);
  assert.deepEqual(a.melds, [{ kind: 'run', cards: ['4O', '5O', 'JK1', '7O'] }]);
});

test('close values: chinchón, -50, -25, -10, points', () => {
  const r = s.normalizeRules({ jokers: 2 });
  assert.equal(s.closeValue(hand('4B 5B 6B 7B 10B 11B 12B'), r), -1000);
  assert.equal(s.closeValue(hand('3C 4C JK1 6C 7C 10C 11C'), r), -50);
  assert.equal(s.closeValue(hand('3C 4C JK1 6C JK2 10C 11C'), r), -25);
  assert.equal(s.closeValue(hand('1O 2O 3O 7O 7C 7E 7B'), r), -10);
  assert.equal(s.closeValue(hand('1O 2O 3O 6C 6E 6B 2B'), r), 2);
});

test('every arrangement uses each card once and names valid melds', () => {
  const hands = [
    '1O 2O 3O 4O 5O 6O 7O 10O',
    '1O 1C 1E 1B 2O 3O 2C 3C',
    '5O 5C 5E 6O 7O 6C 7C 10E',
    'JK1 JK2 1O 2O 12B 12C 12E 7E',
  ];
  const r = s.normalizeRules({ jokers: 2 });
  for (const text of hands) {
    const cards = hand(text);
    const a = s.bestArrangement(cards, r);
    const used = [...a.melds.flatMap((m) => m.cards), ...a.unmatched].sort();
    assert.deepEqual(used, [...cards].sort(), text);
    for (const m of a.melds) {
      assert.ok(m.kind === 'set' ? s.isSet(m.cards, r) : s.isRun(m.cards, r, 7), `${text}: ${m.cards}`);
    }
    assert.equal(a.points, a.unmatched.reduce((t, c) => t + s.cardPoints(c, r), 0), text);
  }
});

test('house rules: a wild card is a joker (25 unmatched, -50 in its own place)', () => {
  const r = s.normalizeRules({ wild_cards: ['1o'] });
  assert.deepEqual(r.wildCards, ['1O']);
  assert.deepEqual(s.normalizeRules({ wildCards: ['1O'] }).wildCards, ['1O']);
  assert.ok(s.isJoker('1O', r) && !s.isJoker('1O', R40) && s.isJoker('JK2', R40));
  assert.equal(s.cardPoints('1O', r), 25);
  assert.equal(s.cardPoints('1O', R40), 1);
  assert.ok(s.isRun(hand('3C 1O 5C'), r)); // 1O stands for 4C
  assert.ok(s.isSet(hand('5O 5C 1O'), r));
  assert.equal(s.unmatchedPoints(hand('3C 1O 5C 7E'), r), 7);
  assert.equal(s.closeValue(hand('1O 2O 3O 4O 5O 6O 7O'), r), -50); // not chinchón
  assert.equal(s.closeValue(hand('1O 2O 3O 4O 5O 6O 7O'), R40), -1000);
  assert.equal(s.closeValue(hand('3C 4C 1O 6C 5E 10C 11C'), s.normalizeRules({ wild_cards: ['1O', '5E'] })), -25);
});

test('house rules: one joker per meld (runs of one suit may overlap)', () => {
  const r = s.normalizeRules({ jokers: 2, jokers_per_meld: 1 });
  assert.equal(r.jokersPerMeld, 1);
  assert.ok(!s.isSet(hand('5O 5C JK1 JK2'), r));
  assert.ok(!s.isRun(hand('3O JK1 5O JK2'), r));
  assert.ok(s.isSet(hand('5O 5C JK1'), r));
  // 1O 2O JK1 (the 3O) | 3O 4O 5O JK2: all seven melded.
  const a = s.bestArrangement(hand('1O 2O 3O 4O 5O JK1 JK2'), r);
  assert.equal(a.points, 0);
  for (const m of a.melds) assert.ok(m.kind === 'set' ? s.isSet(m.cards, r) : s.isRun(m.cards, r, 7));
  assert.equal(s.closeValue(hand('3C 4C JK1 6C JK2 10C 11C'), r), -10); // no -25
  assert.equal(s.normalizeRules({ close_first_round: false }).closeFirstRound, false);
});
