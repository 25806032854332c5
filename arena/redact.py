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
_URL_USERINFO = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<userinfo>[^/@\s]+)@", re.IGNORECASE)
_URL_QUERY = re.compile(r"(?P<key>[?&](?:api[_-]?key|key|token|access_token|secret|password|sig)=)[^&#\s\"']+",
                        re.IGNORECASE)
MIN_SECRET = 8  # shorter values would redact ordinary words


def secrets_in_env() -> list[str]:
    values = {v for k, v in os.environ.items() if _NAME.search(k) and len(v) >= MIN_SECRET}
    return sorted(values, key=len, reverse=True)  # longest first: a secret containing another goes whole


def redact(text: str, extra: tuple[str, ...] = ()) -> str:
    """`text` with every known secret, URL credential and credential query value replaced."""
    for secret in (*extra, *secrets_in_env()):
        if secret and len(secret) >= MIN_SECRET:
            text = text.replace(secret, MARK)
    text = _URL_USERINFO.sub(lambda m: f"{m.group('scheme')}{MARK}@", text)
    return _URL_QUERY.sub(lambda m: f"{m.group('key')}{MARK}", text)
