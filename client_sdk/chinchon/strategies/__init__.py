"""Playing strategies shared by the house bots and the sample bots."""

from chinchon.engine import GreedyBot


class StrongBot(GreedyBot):  # placeholder until the strong strategy lands
    name = "strong"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed


__all__ = ["StrongBot"]
