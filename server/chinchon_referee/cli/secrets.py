"""Where ``chinchon serve`` takes its secrets from, so that none needs a command line.

A command line is visible to every local user (``ps``, ``/proc/PID/cmdline``); files
and the environment are not. Sources, first match wins:

* admin token: ``--admin-token`` (discouraged: a warning), ``$CHINCHON_ADMIN_TOKEN``,
  ``--admin-token-file FILE`` (read; created with a generated token, mode 0600, when it
  does not exist); with none of them, the file beside the database
  (``DB.admin-token``), read or created the same way. A generated token is written only
  to that file: the stdout log names the file, never the token.
* bot tokens: ``--bots-file FILE`` (a TOML ``[bots]`` table of name = token), and
  ``--bot NAME=@FILE`` (the token is the file's content); ``--bot NAME=TOKEN`` still
  works, with a warning.

Every token given by the organizer must meet the token rule (texts.py): 16 to 256
characters of printable ASCII.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..auth import digest, new_token
from ..declarations import toml
from ..declarations.errors import FieldError
from ..texts import BOT_NAME_RULE, check_token, clip, is_bot_name

ADMIN_ENV = "CHINCHON_ADMIN_TOKEN"


class SecretError(ValueError):
    """A secret that cannot be used; the message names where it came from."""


def read_secret_file(path: str | Path, where: str) -> str:
    """The token in ``path`` (surrounding whitespace removed)."""
    try:
        tok = Path(path).read_text(encoding="utf-8").strip()
    except OSError as e:
        raise SecretError(f"{where}: cannot read {path}: {e.strerror}") from None
    if not tok:
        raise SecretError(f"{where}: {path} is empty")
    return tok


def shared_with_others(path: str | Path) -> bool:
    """The file may be read by users other than its owner."""
    return bool(os.stat(path).st_mode & (stat.S_IRWXG | stat.S_IRWXO))


def write_secret_file(path: Path, token: str) -> None:
    """Create ``path`` holding ``token``, readable by its owner only (never replaces a
    file: two servers starting at once cannot swap tokens under each other)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(token + "\n")


def replace_secret_file(path: Path, token: str) -> None:
    """Write ``token`` to ``path``, readable by its owner only, replacing the file if it
    exists (a rotated token over the old one): written to a new 0600 file beside it, then
    renamed over it, so that ``path`` holds the old token or the new one, whole, and is
    never readable by others, even for a moment."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".new", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:  # mkstemp's file: mode 0600
            f.write(token + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@dataclass(frozen=True)
class AdminToken:
    token: str
    #: Where it came from: "--admin-token", "$CHINCHON_ADMIN_TOKEN" or a file path.
    source: str
    #: True when it was generated now (and written to ``source``).
    generated: bool = False


def admin_token(flag: str | None, file: str | None, db: str) -> AdminToken:
    """The admin token, from the first source that has one (see the module doc)."""
    if flag:
        return AdminToken(check_token(flag, "--admin-token"), "--admin-token")
    env = os.environ.get(ADMIN_ENV)
    if env:
        return AdminToken(check_token(env, f"${ADMIN_ENV}"), f"${ADMIN_ENV}")
    if not file and db.startswith(("postgresql://", "postgres://")):
        raise SecretError("with a PostgreSQL database, give the admin token with "
                          f"--admin-token-file FILE or ${ADMIN_ENV} (there is no database "
                          "file to keep a generated one beside)")
    path = Path(file) if file else Path(f"{db}.admin-token")
    where = "--admin-token-file" if file else "admin token file"
    if path.exists():
        tok = read_secret_file(path, where)
        try:
            return AdminToken(check_token(tok, f"{where} {path}"), str(path))
        except ValueError as e:
            raise SecretError(str(e)) from None
    tok = new_token()
    try:
        write_secret_file(path, tok)
    except OSError as e:
        raise SecretError(f"{where}: cannot create {path}: {e.strerror}") from None
    return AdminToken(tok, str(path), generated=True)


def client_admin_token(flag: str | None, file: str | None) -> AdminToken:
    """The admin token of a client (``chinchon admin``): ``--admin-token``,
    ``$CHINCHON_ADMIN_TOKEN`` or ``--admin-token-file`` (first match wins); never made."""
    if flag:
        return AdminToken(_checked(flag, "--admin-token"), "--admin-token")
    env = os.environ.get(ADMIN_ENV)
    if env:
        return AdminToken(_checked(env, f"${ADMIN_ENV}"), f"${ADMIN_ENV}")
    if file:
        return AdminToken(_checked(read_secret_file(file, "--admin-token-file"),
                                   f"--admin-token-file {file}"), file)
    raise SecretError(f"no admin token: give --admin-token-file FILE (the server's "
                      f"DB.admin-token), set ${ADMIN_ENV}, or --admin-token")


def bot_tokens(items: list[str], bots_file: str | None) -> dict[str, str]:
    """Bot name -> token from ``--bots-file`` and the ``--bot`` items (later wins)."""
    bots: dict[str, str] = {}
    if bots_file:
        try:
            data = toml.read(bots_file)
        except FieldError as e:  # unreadable, not UTF-8, not TOML: said in one line
            raise SecretError(f"--bots-file: {e}") from None
        table = data.get("bots", data)
        if not isinstance(table, dict) or not all(isinstance(v, str) for v in table.values()):
            raise SecretError(f"--bots-file: {bots_file}: expected a [bots] table of "
                              'name = "token"')
        for name, tok in table.items():
            bots[name] = _checked(tok, f"--bots-file {bots_file}: bot {clip(name)}")
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            # The argument is not echoed: it may be a token.
            raise SecretError("--bot expects NAME=TOKEN or NAME=@FILE"
                              + (f" (bot {clip(name)} has no token)" if sep and name else ""))
        if value.startswith("@"):
            value = read_secret_file(value[1:], f"--bot {clip(name, quote='')}")
        bots[name] = _checked(value, f"--bot {clip(name, quote='')}")
    return bots


def _checked(token: str, where: str) -> str:
    try:
        return check_token(token, where)
    except ValueError as e:
        raise SecretError(str(e)) from None


def check_registrations(
    bots: dict[str, str], admin: str | None, stored: Sequence[tuple[str, str]] = (),
) -> None:
    """Refuse registrations that would let one token stand for two identities: a bot
    whose token is the admin token (it would hold admin rights), two bots with one token
    (only one of them could ever log in), or a bot given the token another bot already
    has in the database. ``admin``: None when it is not known yet. ``stored``: (name,
    token digest) of the registered bots. The
    messages name the bots, never the tokens."""
    for name in bots:
        if not is_bot_name(name):
            raise SecretError(f"--bot {clip(name, ascii_only=True)}: {BOT_NAME_RULE}")
    admin_digest = digest(admin) if admin else None
    holders: dict[str, str] = {d: n for n, d in stored if n not in bots}
    for name, token in bots.items():
        d = digest(token)
        if d == admin_digest:
            raise SecretError(f"--bot {name}: its token is the admin token (the bot would hold "
                              "admin rights): give it its own")
        if d in holders:
            raise SecretError(f"--bot {name}: its token is already the token of bot "
                              f"{holders[d]} (each bot needs its own)")
        holders[d] = name
    for name, d in stored:
        if name not in bots and d == admin_digest:
            raise SecretError(f"bot {name} (registered in the database) has the admin token: "
                              "choose another admin token")
