"""What an organizer declares in TOML, read and written in one place: a tournament
(``tournament/model.py``), a ladder (``ladder/spec.py``), the sandbox keys of a
declaration (``launch/declaration.py``, ``launch/limits.py``) and a submission's
``bot.toml`` (``launch/manifest.py``).

* :mod:`.errors`: :class:`~.errors.FieldError`, the one error of a declaration, naming
  the field's path (``format.stages[1].name: ...``);
* :mod:`.toml`: reading a file or a text (each way it can fail said in one line) and
  writing a declaration back;
* :mod:`.bounds`: the checks of a value's type and bounds shared by every declaration
  (whole numbers, numbers, durations, switches, choices, lists of strings, tables of
  known fields), each naming its field.

This package's ``__init__`` imports nothing: :mod:`..texts` imports :mod:`.errors`,
and :mod:`.bounds` imports :mod:`..texts`.
"""
