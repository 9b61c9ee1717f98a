"""Competition formats: round-robin, gauntlet, Swiss, knockout and double elimination,
alone or as stages (docs/tournaments.md).

* :mod:`.spec`: the ``format`` field of the tournament model (``Kind``: the declared
  names), its TOML spelling, the ``Declaration`` the formats read of the model;
  :mod:`.bounds`: its bounds; :mod:`.proto`: its protobuf spelling.
* :mod:`.kinds`: one class per kind (its bounds, its span of game numbers, its next
  games, its standings, its structure, its words), found through one registry
  (:func:`.kinds.registry.kind_of`); nothing else switches on a kind.
* :mod:`.chain`: the stage chain and ``plan_of(spec)``, the one road from a declaration
  to its games, standings and structure (a declaration without ``format``: the
  round-robin kind's whole schedule, made in advance).
* :mod:`.plan`: ``next_games(spec, tid, stored)``: the games to create next (a Swiss
  round, a match's next games, a stage), as a deterministic function of the
  declaration, its seed and the stored results.
* :mod:`.layout`: where each stage's games sit (their ``seq`` numbers);
  :mod:`.seeding`: seed orders and bracket positions; :mod:`.games`: what a stage reads
  of the stored games and asks for.
* :mod:`.stage_rr`, :mod:`.stage_swiss`, :mod:`.stage_bracket`: the kinds' engines.
* :mod:`.swiss`, :mod:`.swiss_tables`: pairing a Swiss round (maximum-weight matching;
  tables of 3+ by score); :mod:`.bracket`: single and double elimination brackets;
  :mod:`.match`: a match of several games and how a level one is settled.
* :mod:`.structure`: the stages, rounds and bracket as JSON (report.md, exports, the web
  view) and as text (``chinchon tournament check``).
"""
