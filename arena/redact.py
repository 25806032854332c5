"""Secrets never leave the process: every run directory file and every printed result is redacted.

A secret is the value of a credential in the environment (OPENAI_API_KEY, ARENA_API_KEY, and any
variable whose name says key, token, secret or password), or the user:password and credential query
parameters of a URL. Whatever carries one (a provider's error that echoes the key, a base URL with a
token in it) is written with the secret replaced, so reports built from run directories are clean too.
"""

from __future__ import annotations

import os
import re

MARK = "[REDACTED]"
_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)
# A URL's user:password: found from its "://" (a pattern that began with the scheme's characters was tried at
# every letter of a long run of them, which took seconds on a trace holding 16,000 of them), then kept only
# where a scheme precedes it: a letter, then letters, digits, "+", "." or "-".
_URL_USERINFO = re.compile(r"://[^/@\s]+@")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_URL_QUERY = re.compile(r"(?P<key>[?&](?:api[_-]?key|key|token|access_token|secret|password|sig)=)[^&#\s\"']+",
                        re.IGNORECASE)
MIN_SECRET = 8  # shorter values would redact ordinary words


_SEEN: tuple[tuple[object, ...], list[str]] | None = None  # (the environment as last read, its secrets)


def secrets_in_env() -> list[str]:
    """The environment's secrets, longest first (a secret containing another goes whole). Read again only when
    the environment changed: a run directory write redacts several times an item, and decoding every variable
    each time was a tenth of the harness's own cost per item."""
    global _SEEN
    raw = getattr(os.environ, "_data", None)  # the encoded variables: a snapshot of them is cheap to compare
    now = tuple(raw.items()) if isinstance(raw, dict) else tuple(os.environ.items())
    seen = _SEEN
    if seen is not None and seen[0] == now:
        return seen[1]
    values = {v for k, v in os.environ.items() if _NAME.search(k) and len(v) >= MIN_SECRET}
    found = sorted(values, key=len, reverse=True)
    _SEEN = (now, found)
    return found


def redact(text: str, extra: tuple[str, ...] = ()) -> str:
    """`text` with every known secret, URL credential and credential query value replaced."""
    for secret in (*extra, *secrets_in_env()):
        if secret and len(secret) >= MIN_SECRET:
            text = text.replace(secret, MARK)
    text = _URL_USERINFO.sub(lambda m: f"://{MARK}@" if _after_scheme(text, m.start()) else m.group(0), text)
    return _URL_QUERY.sub(lambda m: f"{m.group('key')}{MARK}", text)


def _after_scheme(text: str, end: int) -> bool:
    """Whether `text[:end]` ends in a URL scheme: a run of scheme characters with a letter in it (the scheme
    starts at its first letter)."""
    start = end
    while start > 0 and text[start - 1] in _SCHEME_CHARS:
        start -= 1
    return any(c.isascii() and c.isalpha() for c in text[start:end])
