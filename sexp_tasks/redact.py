"""Keeping secrets out of what sexp writes and what models see (SPEC §4: API keys never appear in
output, logs, traces or the store; §10.1: credentials are known by name, and scripts cannot read
them through /proc)."""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit, urlunsplit

_KEY_PATTERN = re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}")
_URL_PATTERN = re.compile(r"\bhttps?://[^\s'\"<>]+")
_SHORTEST_SECRET = 8  # shorter values (`true`, `1`) would mask ordinary text
# What litellm's own masker treats as a credential: a name with one of these words in it, split
# at `_` and `-` (litellm_core_utils/sensitive_data_masker.py), unless a word says it is a price.
_CREDENTIAL_WORDS = frozenset(
    (
        "password",
        "secret",
        "key",
        "apikey",
        "token",
        "auth",
        "authorization",
        "cookie",
        "credential",
        "credentials",
        "access",
        "private",
        "certificate",
        "fingerprint",
        "tenancy",
    )
)
_NOT_CREDENTIAL_WORDS = frozenset(("cost",))
# Name endings that say a secret, beyond litellm's words: a personal access token (GITHUB_PAT), a
# password by its short names, credentials. A suffix, not a word: PWD and OLDPWD are directories.
_CREDENTIAL_SUFFIXES = ("_PAT", "_PASS", "_PASSWD", "_PWD", "_PASSPHRASE", "_CREDS")
PR_SET_DUMPABLE = 4
# Query parameters of a URL that carry a secret though is_credential_name would not say so.
_SECRET_PARAMETERS = frozenset(("sig", "signature", "code", "pass", "pwd", "pat", "session"))


def is_credential_name(name: str) -> bool:
    """Whether an environment variable of this name holds a credential: `*_API_KEY`, `*_APIKEY`,
    `*_KEY`, `*_TOKEN`, `*_SECRET*`, `*PASSWORD*`, `*_PAT`, `*_PASS`, `*_PASSWD`, `*_PWD`,
    `*_PASSPHRASE`, `*_CREDS`, or a name litellm masks (a word of it is `key`, `token`, `auth`...)."""
    upper = name.upper()
    if (
        upper.endswith(("_API_KEY", "_APIKEY", *_CREDENTIAL_SUFFIXES))
        or "_SECRET" in upper
        or "PASSWORD" in upper
    ):
        return True  # whatever else the name says (a COST_EXPLORER_API_KEY is a key)
    words = set(name.lower().replace("-", "_").split("_"))
    if words & _NOT_CREDENTIAL_WORDS:  # a price: INPUT_COST_PER_TOKEN
        return False
    return upper.endswith("_TOKEN") or bool(words & _CREDENTIAL_WORDS)


def credentials() -> list[str]:
    """The values of the environment's credentials, longest first (so none is left half-masked).

    Asked several times per model call and per stored step (a batch row asks ~5 times): judging
    every name each time was most of a row's scrubbing. The answer is kept with the environment it
    was read from, and read again when the environment has changed since (a set or deleted key)."""
    raw = getattr(os.environ, "_data", None)  # CPython's encoded copy: compared without decoding
    seen = tuple(raw.items()) if isinstance(raw, dict) else tuple(os.environ.items())
    global _credentials_read
    kept = _credentials_read
    if kept is not None and kept[0] == seen:
        return list(kept[1])
    values = {
        value
        for name, value in os.environ.items()
        if len(value) >= _SHORTEST_SECRET and is_credential_name(name)
    }
    found = sorted(values, key=len, reverse=True)
    _credentials_read = (seen, found)  # one assignment: threads see the old answer or the new
    return list(found)


_credentials_read: tuple[tuple[object, ...], list[str]] | None = None  # (environment, its credentials)


def provider_key_set() -> bool:
    """Whether the environment holds any credential a model call could send."""
    return bool(credentials())


def scrub(text: str, shaped: bool = True) -> str:
    """text with every credential from the environment (and, if shaped, anything like `sk-...`) masked."""
    for value in credentials():
        text = text.replace(value, "***")
    return _KEY_PATTERN.sub("sk-***", text) if shaped else text


def scrubber() -> Callable[[str], str]:
    """scrub, with the credentials the environment holds now taken once (reading the environment
    is most of scrub's cost): for what masks many texts, as each span's attributes."""
    values = credentials()

    def scrub_now(text: str) -> str:
        for value in values:
            text = text.replace(value, "***")
        return _KEY_PATTERN.sub("sk-***", text)

    return scrub_now


def is_secret_file(path: str) -> bool:
    """Files that hold keys by convention (.env, .env.local ...) or the run store itself."""
    parts = PurePosixPath(path.replace(os.sep, "/")).parts
    name = parts[-1] if parts else ""
    return name == ".env" or name.startswith(".env.") or ".sexp" in parts[:-1]


@functools.cache
def hide_credentials_from_other_processes() -> None:
    """Keep processes of the same user (scripts above all) from reading this process's keys in
    /proc/<pid>/environ: mask them in the environment block the kernel shows there (the values
    stay in os.environ and in the C environment, copied), and make the process not dumpable, so
    that /proc/<pid>/environ and /proc/<pid>/mem are closed to other processes of the user.
    Linux only; done once."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes  # lazy: --help starts without it (cli/startup.py)

        libc = ctypes.CDLL(None, use_errno=True)
    except (OSError, AttributeError):
        return
    _mask_initial_environment()
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def _mask_initial_environment() -> None:
    """Overwrite the credential values in the environment block the process started with."""
    import ctypes as c  # lazy, as above

    try:
        fields = Path("/proc/self/stat").read_bytes().rsplit(b")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])  # env_start and env_end, stat(5) fields 50 and 51
        shown = Path("/proc/self/environ").read_bytes()
    except (OSError, IndexError, ValueError):
        return
    if not start or end <= start or c.string_at(start, end - start) != shown:
        return  # not the layout this code knows: leave it alone
    offset = 0
    for entry in shown.split(b"\0"):
        name, equals, value = entry.partition(b"=")
        if equals and value and is_credential_name(name.decode("utf-8", "replace")):
            if os.environb.get(name) == value:  # still the C environment's value: give it a copy first
                os.putenv(name, value)
            c.memset(start + offset + len(name) + 1, ord("*"), len(value))
        offset += len(entry) + 1


def mask_urls_in(text: str) -> str:
    """text with every http(s) URL in it masked as mask_url does: a provider's error may quote
    the URL it failed to fetch (an image's, with its password or signature)."""

    def masked(found: re.Match[str]) -> str:  # the sentence's own punctuation left after it
        url = found.group()
        trail = len(url) - len(url.rstrip(".,;:!?)]}"))
        return mask_url(url[: len(url) - trail]) + url[len(url) - trail :]

    return _URL_PATTERN.sub(masked, text)


def mask_arguments(arguments: Sequence[str]) -> str:
    """A command line as it may be shown: the value of an option whose name says a secret
    (`--token=X`, `--api-key X`) masked, URLs masked, then scrubbed."""
    shown: list[str] = []
    for argument in arguments:
        option, equals, value = argument.partition("=")
        if shown and shown[-1].startswith("-") and "=" not in shown[-1] and _secret_option(shown[-1]):
            shown.append("***")
        elif option.startswith("-") and equals and value and _secret_option(option):
            shown.append(f"{option}=***")
        else:
            shown.append(mask_urls_in(argument))
    return scrub(" ".join(shown))


def _secret_option(option: str) -> bool:
    """Whether a command-line option's name (`--api-key`, `-token`) says its value is a secret."""
    name = option.lstrip("-")
    return bool(name) and _secret_name(name)


def _secret_name(name: str) -> bool:
    """Whether a parameter's or option's name says a secret: a credential's name, or a word of
    it does (a signed URL's X-Amz-Signature, X-Goog-Signature)."""
    words = re.split(r"[-_.]", name.lower())
    return is_credential_name(name) or any(word in _SECRET_PARAMETERS for word in words)


def mask_url(url: str) -> str:
    """url as it may be shown (api_base in `sexp config` and warnings): the password of its
    userinfo masked (all of a userinfo with no password, which is a token then), and the values
    of query parameters whose names say a secret (`api_key`, `key`, `token`, `sig`...); then scrubbed."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return scrub(url)
    netloc = parts.netloc
    userinfo, at, host = netloc.rpartition("@")
    if at:
        user, colon, _ = userinfo.partition(":")
        netloc = f"{user}:***@{host}" if colon else f"***@{host}"
    # a fragment may carry a token too (`#access_token=...`, as OAuth's implicit flow gives it)
    query, fragment = _masked_pairs(parts.query), _masked_pairs(parts.fragment)
    return scrub(urlunsplit(parts._replace(netloc=netloc, query=query, fragment=fragment)))


def _masked_pairs(text: str) -> str:
    """`a=1&token=***`: the `name=value` pairs of a query (or fragment), secrets masked."""
    return "&".join(_masked_parameter(pair) for pair in text.split("&")) if text else ""


def _masked_parameter(pair: str) -> str:
    """`name=***` for a query parameter whose name says a secret, else pair as it is."""
    name, equals, value = pair.partition("=")
    return f"{name}=***" if equals and value and _secret_name(name) else pair
