"""The gRPC services and the server that hosts them: the referee's ``Play`` service (from
``referee``), the organizer's ``TournamentService`` (tournaments, games, bot tokens),
health and reflection, the auth interceptor, and an organizer's call that finds the
database out of reach."""
