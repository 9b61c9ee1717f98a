"""Competition formats: round-robin, gauntlet, Swiss, knockout and double elimination,
alone or as stages (docs/tournaments.md).

* :mod:`.spec`: the ``format`` field of the tournament model, its TOML spelling and bounds;
  :mod:`.proto`: its protobuf spelling.
* :mod:`.plan`: the one entry point, ``next_games(spec, tid, stored)``: the games to
  create next (a Swiss round, a match's next games, a stage), as a deterministic
  function of the declaration, its seed and the stored results.
* :mod:`.layout`: where each stage's games sit (their ``seq`` numbers) and the most
  games each stage can take; :mod:`.seeding`: seed orders and bracket positions.
* :mod:`.stage_rr`, :mod:`.stage_swiss`, :mod:`.stage_bracket`: each format's next games.
* :mod:`.swiss`, :mod:`.swiss_tables`: pairing a Swiss round (maximum-weight matching;
  tables of 3+ by score); :mod:`.bracket`: single and double elimination brackets;
  :mod:`.match`: a match of several games and how a level one is settled.
* :mod:`.structure`: the stages, rounds and bracket as JSON (report.md, exports, the web
  view) and as text (``chinchon tournament check``).
"""
