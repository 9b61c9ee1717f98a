"""The format kinds, one module each (:mod:`.round_robin`, :mod:`.gauntlet`,
:mod:`.swiss`, :mod:`.knockout`, :mod:`.double_elimination`), found through one
registry (:mod:`.registry`, filled by importing :mod:`.catalog`); :mod:`.base` is the
interface each implements."""
