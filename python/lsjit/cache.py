"""lsjit.cache: the kernel cache on disk, as `lsjit cache` shows it.

Each function runs the CLI's own subcommand (with --json) and returns its object, so
Python and the CLI see the same entries and trust the same ones. `dir` defaults to the
cache the solver uses: LSJIT_CACHE_DIR, else $XDG_CACHE_HOME/lsjit or ~/.cache/lsjit.
A failure (no such entry, an unusable directory) is an lsjit.Error with the CLI's message.

    lsjit.cache.list()["entries"]     # id, size, cost, mode, compile_s per entry
    lsjit.cache.show("9f3a")          # key parts, stage times, IR text
    lsjit.cache.verify()              # authenticate, recompile and compare every entry
"""

import builtins
import json

from . import _lsjit
from ._lsjit import Error


def _run(*args, dir=None):  # noqa: A002 (the CLI's flag)
    argv = builtins.list(args) + ["--json"] + (["--dir", str(dir)] if dir is not None else [])
    code, out, err = _lsjit._cache_command(argv)
    if code == 2 or (code != 0 and not out.strip()):
        raise Error(err.strip() or f"lsjit cache {args[0]} failed")
    result = json.loads(out) if out.strip() else {}
    if code != 0 and isinstance(result, dict):
        result.setdefault("failed", True)
    return result


def list(dir=None):  # noqa: A001,A002 (lsjit cache list)
    """Every entry: id, size, ok, and cost, mode, compile_s (or the reason it is bad)."""
    return _run("list", dir=dir)


def show(key, dir=None):  # noqa: A002
    """One entry (an id or a unique prefix): its key parts, stage times, symbol and IR text."""
    return _run("show", key, dir=dir)


def diff(key1, key2, dir=None):  # noqa: A002
    """The key parts in which two entries differ."""
    return _run("diff", key1, key2, dir=dir)


def stats(dir=None):  # noqa: A002
    """Entry count, total size and bad entries."""
    return _run("stats", dir=dir)


def verify(remove_bad=False, dir=None):  # noqa: A002
    """Checks every entry as `lsjit cache verify` does; the result's "failed" is True when an
    entry is bad (and, with remove_bad, it was deleted)."""
    return _run("verify", *(["--remove-bad"] if remove_bad else []), dir=dir)


def gc(max_size=None, dir=None):  # noqa: A002
    """Deletes least recently used entries until the total is at most max_size (bytes, or
    "500M", "2G"; 1G by default)."""
    return _run("gc", *(["--max-size", str(max_size)] if max_size is not None else []), dir=dir)


def clear(dir=None):  # noqa: A002
    """Deletes every entry (only the cache's own files)."""
    return _run("clear", dir=dir)
