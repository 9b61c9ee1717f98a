"""The project's generators: the Python code of ``protos/`` and the violation list of
docs/bots.md (``python -m chinchon_referee.tools.protogen``, ``python -m
chinchon_referee.tools.violations_doc``)."""
