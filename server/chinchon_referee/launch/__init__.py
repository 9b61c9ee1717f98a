"""Bot processes the referee's commands start (``tournament run``, ``practice``): the
command, its token in the environment only, its output, its end."""
