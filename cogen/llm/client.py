"""One chat completion over HTTP: the OpenAI chat protocol, with the standard library's ``http.client``.

``POST {base_url}/chat/completions`` is what vLLM, SGLang, llama.cpp's server, Ollama, OpenRouter and
OpenAI serve. :class:`ChatClient` keeps one keep-alive connection per thread (``cogen prompts run``
calls it from a pool of threads), follows ``HTTPS_PROXY`` / ``HTTP_PROXY`` / ``NO_PROXY`` as
``urllib`` does, and turns every failure into a :class:`ChatError` that says whether asking again
may help (429, 408, 409, 5xx, a timeout, a dropped connection, a garbled answer) and how long the
server asked to wait (``Retry-After`` in seconds or as a date, or ``retry-after-ms``).

The API key is sent as ``Authorization: Bearer ...`` and nowhere else: it is not an attribute a
``repr`` shows, no error message holds a header, and a server message that quotes the key (some do)
has it masked before it becomes an error.

Why the standard library (``benchmarks/bench_llm.py clients`` measured it against ``httpx`` and the
``openai`` package on the loopback server): it costs the least CPU per reply and nothing to import,
it adds no dependency, and what the others would add (pooling, retries) the runner does itself,
with the exactly-once bookkeeping they cannot know about.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import re
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

from cogen.errors import CogenError

__all__ = ["RETRY_STATUSES", "ChatClient", "ChatError", "Completion"]

#: Statuses worth asking again: rate limits, timeouts, conflicts, and the server's own failures (5xx).
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 521, 522, 523, 524, 529})
#: At most this much of a server's error message is kept.
MESSAGE_CHARS = 300


class ChatError(CogenError):
    """A request that got no completion: ``status`` (None: no HTTP answer), whether asking again may help
    (``retryable``), and how long the server asked to wait (``retry_after``, seconds, or None)."""

    def __init__(self, message: str, status: int | None = None, retryable: bool = False,
                 retry_after: float | None = None):
        super().__init__(message)
        self.status, self.retryable, self.retry_after = status, retryable, retry_after


@dataclass(frozen=True)
class Completion:
    """A reply: its ``text`` (None when the server sent no content), ``finish_reason``, token ``usage``
    as the server counted it, the ``model`` that answered, and the request's wall ``seconds``."""

    text: str | None
    finish_reason: str | None
    usage: dict = field(default_factory=dict)
    model: str | None = None
    seconds: float = 0.0


class ChatClient:
    """``complete(body)`` posts a chat request to ``{base_url}/chat/completions`` (see the module docstring).

    ``timeout`` bounds each connect and each wait for bytes, in seconds.
    """

    def __init__(self, base_url: str, api_key: str | None = None, timeout: float = 600.0):
        parts = urllib.parse.urlsplit(base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise CogenError(f"--base-url {base_url!r} is not an http(s) URL such as http://localhost:8000/v1")
        self.scheme, self.host = parts.scheme, parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.path = (parts.path or "") + "/chat/completions"
        self.base_url = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        self.timeout = timeout
        self._key = api_key or None
        self._local = threading.local()
        self._proxy = _proxy_for(parts.scheme, self.host)

    def __repr__(self) -> str:
        return f"ChatClient({self.base_url!r}, key {'set' if self._key else 'not set'})"

    def _connection(self) -> http.client.HTTPConnection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._connect()
            self._local.connection = connection
        return connection

    def _connect(self) -> http.client.HTTPConnection:
        if self._proxy is not None:
            host, port = self._proxy
            if self.scheme == "https":
                connection = http.client.HTTPSConnection(host, port, timeout=self.timeout,
                                                         context=ssl.create_default_context())
                connection.set_tunnel(self.host, self.port)
                return connection
            return http.client.HTTPConnection(host, port, timeout=self.timeout)
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=self.timeout,
                                               context=ssl.create_default_context())
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def reachable(self) -> str | None:
        """None when a connection to the server (or its proxy) opens, TLS included; else why not."""
        try:
            connection = self._connect()
            connection.connect()
            connection.close()
        except (OSError, http.client.HTTPException) as error:
            return _error_name(error)
        return None

    def close(self) -> None:
        """Close this thread's connection (the next request opens another)."""
        connection = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is not None:
            connection.close()

    def complete(self, body: dict) -> Completion:
        """Post ``body`` (``model``, ``messages``, sampling settings) and return the first choice; a
        :class:`ChatError` for anything else."""
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json", "User-Agent": "cogen"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        target = self.path
        if self._proxy is not None and self.scheme == "http":  # a plain proxy takes the whole URL
            target = f"http://{self.host}:{self.port}{self.path}"
        start = time.perf_counter()
        try:
            connection = self._connection()
            connection.request("POST", target, body=data, headers=headers)
            response = connection.getresponse()
            payload = response.read()
        except (TimeoutError, socket.timeout):
            self.close()
            raise ChatError(f"no answer within {self.timeout:g} s", retryable=True) from None
        except (OSError, http.client.HTTPException) as error:
            self.close()
            raise ChatError(f"connection failed ({_error_name(error)})", retryable=True) from None
        seconds = time.perf_counter() - start
        if response.will_close:
            self.close()
        if response.status != 200:
            raise ChatError(f"HTTP {response.status}: {self._message(payload)}", response.status,
                            response.status in RETRY_STATUSES or response.status >= 500,
                            _retry_after(response.headers))
        return _completion(payload, seconds)

    def _message(self, payload: bytes) -> str:
        """The server's error message, shortened, cleaned of control characters, the key masked."""
        from cogen.safe_text import clean

        try:
            found = json.loads(payload)
            error = found.get("error", found) if isinstance(found, dict) else found
            text = error.get("message") if isinstance(error, dict) else error
            text = text if isinstance(text, str) else json.dumps(error)
        except ValueError:
            text = payload.decode("utf-8", "replace")
        return clean(mask_key(text, self._key), MESSAGE_CHARS)


def mask_key(text: str, key: str | None) -> str:
    """``text`` with ``key`` (and anything that starts like it, as servers quote keys in part) masked."""
    if not key or len(key) < 8:
        return text.replace(key, "***") if key else text
    return re.sub(re.escape(key[:6]) + r"\S*", "***", text.replace(key, "***"))


def _completion(payload: bytes, seconds: float) -> Completion:
    try:
        found = json.loads(payload)
        choice = found["choices"][0]
        message = choice.get("message") or {}
        text = message.get("content")
        if isinstance(text, list):  # content parts
            text = "".join(part.get("text", "") for part in text if isinstance(part, dict))
        if text is not None and not isinstance(text, str):
            raise TypeError("content is not text")
        usage = found.get("usage") if isinstance(found.get("usage"), dict) else {}
        model = found.get("model") if isinstance(found.get("model"), str) else None
        return Completion(text, choice.get("finish_reason"), usage, model, round(seconds, 4))
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise ChatError("the server's answer is not a chat completion (JSON with choices[0].message)",
                        200, retryable=True) from None


def _retry_after(headers) -> float | None:
    """Seconds the server asked to wait: ``retry-after-ms``, else ``Retry-After`` (seconds or an HTTP date)."""
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError):
        return None


def _proxy_for(scheme: str, host: str) -> tuple[str, int] | None:
    """The proxy ``urllib`` would use for ``scheme://host`` (environment variables), as (host, port)."""
    if urllib.request.proxy_bypass(host):
        return None
    proxy = urllib.request.getproxies().get(scheme)
    if not proxy:
        return None
    parts = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    if not parts.hostname:
        return None
    return parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)


def _error_name(error: BaseException) -> str:
    text = str(error)
    return type(error).__name__ + (f": {text[:120]}" if text else "")
