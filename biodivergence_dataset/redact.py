"""Secrets never leave the process: one redaction for every writer of cards, manifests, provenance, logs and
error messages, and the credential check ``validate`` runs over a release.

:func:`redact` replaces by ``***`` the whole user-info of URLs, whatever its characters (``http://user:p'w
@x@host`` → ``http://***@host``), the values of secret query parameters (``api_key``, ``apikey``, ``token``,
``key``, ``access_token``), the values of secrets in the environment (``NCBI_API_KEY``, ``OPENAI_API_KEY``,
``HF_TOKEN``, ``HUGGING_FACE_HUB_TOKEN`` and any variable whose name ends in ``_KEY``, ``_TOKEN`` or ``_SECRET``,
from :data:`MIN_SECRET_CHARS` characters on) and the secrets registered while the process runs
(:func:`register_secret`, :func:`register_url_secrets`: a key given on the command line, the user and password
of a server's URL), wherever they appear — in a server's answer that echoes them too. :func:`find_credentials` names what still looks like a credential
(a ``user:pass@`` URL, ``sk-…``, ``hf_…``, ``api_key=…``).
"""

from __future__ import annotations

import logging
import os
import re
import sys
import traceback
from typing import Any

MASK = "***"
#: Query parameters (and mapping keys) whose value is a secret.
SECRET_PARAMS = ("api_key", "apikey", "token", "key", "access_token")
#: Environment variables that always hold a secret, whatever their length.
SECRET_ENV = ("NCBI_API_KEY", "OPENAI_API_KEY", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
SECRET_ENV_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET")
#: Shorter values of ``*_KEY`` / ``*_TOKEN`` / ``*_SECRET`` variables are not taken for secrets (flags, ids).
MIN_SECRET_CHARS = 8

_PARAM_NAMES = "|".join(SECRET_PARAMS)
#: A URL's user-info: everything between ``scheme://`` and the last ``@`` before the host (quotes, spaces and
#: further ``@`` included; not across a path, query, fragment or line).
_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?!\*\*\*@)[^/?#\r\n]*@(?=[A-Za-z0-9\[])")
_PARAM = re.compile(rf"(?P<name>[?&;](?:{_PARAM_NAMES})=)(?!\*\*\*)[^&#\s'\"]+", re.IGNORECASE)
#: What a credential looks like in a release (checked by ``validate``).
CREDENTIAL_PATTERNS: dict[str, re.Pattern[str]] = {
    "URL with user:password": re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://(?!\*\*\*@)[^/?#@\s:]+:[^/?#\r\n]*@"
                                         r"[A-Za-z0-9\[]"),
    "OpenAI-style key (sk-…)": re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{10,}"),
    "Hugging Face token (hf_…)": re.compile(r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{10,}"),
    "secret query parameter": re.compile(rf"[?&;](?:{_PARAM_NAMES})=(?!\*\*\*)[^&#\s'\"]+", re.IGNORECASE),
}


#: Secrets registered while the process runs (:func:`register_secret`).
_REGISTERED: set[str] = set()
#: A registered value shorter than this is not masked (it would mask common words: a user named "ab").
MIN_REGISTERED_CHARS = 4


def register_secret(value: str | None) -> None:
    """Mask ``value`` wherever it appears from now on (a key given on the command line, not in the environment)."""
    if value and len(value.strip()) >= MIN_REGISTERED_CHARS:
        _REGISTERED.add(value)


def register_url_secrets(url: str) -> None:
    """Register the user-info of ``url`` as secrets: whole, its password, and ``user:password``, each as written and
    percent-decoded, so a server that echoes them (a 401 body) is masked too."""
    from urllib.parse import unquote

    rest = url.split("://", 1)[1] if "://" in url else ""
    authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
    if "@" not in authority:
        return
    userinfo = authority.rsplit("@", 1)[0]
    user, _, password = userinfo.partition(":")
    for value in (userinfo, password, f"{unquote(user)}:{unquote(password)}", unquote(password)):
        register_secret(value)


def env_secrets() -> list[str]:
    """Values of the secrets in the environment now and of those registered, longest first (so a secret holding
    another is masked whole)."""
    values = {value for name, value in os.environ.items() if value.strip() and (
        name in SECRET_ENV or (name.upper().endswith(SECRET_ENV_SUFFIXES) and len(value) >= MIN_SECRET_CHARS))}
    return sorted(values | _REGISTERED, key=len, reverse=True)


def _env_pattern() -> re.Pattern[str] | None:
    """One pattern matching any environment secret (read now), or None when there is none."""
    secrets = env_secrets()
    return re.compile("|".join(map(re.escape, secrets))) if secrets else None


def _redact(text: str, env: re.Pattern[str] | None) -> str:
    if not text:
        return text
    if env is not None:
        text = env.sub(MASK, text)
    if "@" in text:
        text = _USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)
    if "=" in text:
        text = _PARAM.sub(lambda m: f"{m['name']}{MASK}", text)
    return text


def redact(text: str) -> str:
    """``text`` with URL user-info, secret query parameters and environment secrets replaced by ``***``."""
    return _redact(text, _env_pattern())


def redact_data(value: Any) -> Any:
    """A JSON-like value with every string redacted and the value of every secret-named key masked."""
    env = _env_pattern()

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return _redact(value, env)
        if isinstance(value, dict):
            return {k: MASK if _secret_key(k) and isinstance(v, str) and v else walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        return value

    return walk(value)


def _secret_key(key: Any) -> bool:
    return isinstance(key, str) and key.lower() in SECRET_PARAMS


def find_credentials(text: str) -> list[str]:
    """The kinds of credential ``text`` seems to hold (empty when none)."""
    return [kind for kind, pattern in CREDENTIAL_PATTERNS.items() if pattern.search(text)]


def install_redaction() -> None:
    """Redact from now on every log record's message (whatever logger or handler it goes to) and the
    traceback of an uncaught exception."""
    install_excepthook()
    factory = logging.getLogRecordFactory()
    if getattr(factory, "redacting", False):
        return

    def redacting_factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = factory(*args, **kwargs)
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a bad format string: logging reports it when the record is emitted
            return record
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, ()
        return record

    redacting_factory.redacting = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(redacting_factory)


def install_excepthook() -> None:
    """Print uncaught exceptions with their traceback redacted."""
    if getattr(sys.excepthook, "redacting", False):
        return

    def redacting_hook(kind: type[BaseException], exc: BaseException, tb: Any) -> None:
        sys.stderr.write(redact("".join(traceback.format_exception(kind, exc, tb))))

    redacting_hook.redacting = True  # type: ignore[attr-defined]
    sys.excepthook = redacting_hook
