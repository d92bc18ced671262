"""A stand-in for an OpenAI-compatible chat server on 127.0.0.1, for loopback tests (standard library only).

It serves ``POST /v1/chat/completions`` (and ``GET /v1/models``) as vLLM, llama.cpp's server or the
OpenAI API do, with a model that answers from a table: ``answers`` maps a prompt's text to the reply
(the test builds it from a split's answers, so the model is right, wrong or malformed as asked);
a prompt it does not know gets ``default``. Every request is logged (:class:`Request`: the prompt's
name from ``names``, the status answered, whether an image came with it, the Authorization header).

Faults are injected per request, in order (:meth:`FakeOpenAI.fail`): a status (429 with
``Retry-After``, 500, 401, ...), ``"drop"`` (the connection is closed without an answer) or
``"slow"`` (the answer comes after ``seconds``); ``delay`` slows every answer. ``key``, when set,
is the only API key accepted (401 otherwise, with the key quoted back the way some servers do, so a
test can check that a client never prints it).

Run as a script, it serves until killed and prints its URL (``python tests/fake_openai.py --answers
answers.json --delay 0.02``), and with ``--log`` appends one JSON line per request: what
``benchmarks/bench_llm.py`` and the closing note's resume log use.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Fault:
    """What one request gets instead of an answer: ``status`` (an HTTP code, ``"drop"`` or ``"slow"``),
    ``retry_after`` (seconds, sent as ``Retry-After``; ``retry_after_ms`` as ``retry-after-ms``),
    ``seconds`` (how long a ``slow`` answer waits), ``only`` (a prompt name: only its requests)."""

    status: int | str
    retry_after: float | None = None
    retry_after_ms: int | None = None
    seconds: float = 0.0
    only: str | None = None


@dataclass
class Request:
    """One logged request."""

    time: float
    name: str | None
    status: int | str
    model: str | None
    images: list[bytes] = field(default_factory=list)
    authorization: str | None = None
    body: dict = field(default_factory=dict)


class FakeOpenAI:
    """The server's state: answers, faults, the log (see the module docstring)."""

    def __init__(self, answers: dict[str, str] | None = None, names: dict[str, str] | None = None,
                 default: str = "I do not know.", delay: float = 0.0, key: str | None = None,
                 log_file: str | None = None):
        self.answers, self.names = answers or {}, names or {}
        self.default, self.delay, self.key = default, delay, key
        self.faults: list[Fault] = []
        self.log: list[Request] = []
        self.lock = threading.Lock()
        self.log_file = open(log_file, "a", encoding="utf-8") if log_file else None  # noqa: SIM115
        self.url = ""

    def fail(self, *faults: Fault | int | str) -> None:
        """Queue faults for the next matching requests, in order (an int or str is ``Fault(it)``)."""
        with self.lock:
            self.faults += [f if isinstance(f, Fault) else Fault(f) for f in faults]

    def _fault(self, name: str | None) -> Fault | None:
        with self.lock:
            for k, fault in enumerate(self.faults):
                if fault.only is None or fault.only == name:
                    return self.faults.pop(k)
        return None

    def _record(self, entry: Request) -> None:
        with self.lock:
            self.log.append(entry)
            if self.log_file:
                self.log_file.write(json.dumps({"t": round(entry.time, 4), "id": entry.name,
                                                "status": entry.status, "model": entry.model}) + "\n")
                self.log_file.flush()

    def answer(self, text: str) -> str:
        """The reply to a prompt: its answer, or the next of its answers (a list: one per request, the last repeated)."""
        with self.lock:
            found = self.answers.get(text, self.default)
            if isinstance(found, list):
                return found.pop(0) if len(found) > 1 else found[0]
            return found

    def answered(self) -> dict[str, int]:
        """How many successful answers each prompt name got."""
        counts: dict[str, int] = {}
        for entry in self.log:
            if entry.status == 200:
                counts[entry.name] = counts.get(entry.name, 0) + 1
        return counts


def _text_and_images(body: dict) -> tuple[str, list[bytes]]:
    """The user message's text and the bytes of its images (data URLs)."""
    messages = body.get("messages") or [{}]
    content = messages[-1].get("content", "")
    if isinstance(content, str):
        return content, []
    text = "".join(part.get("text", "") for part in content if part.get("type") == "text")
    images = [base64.b64decode(part["image_url"]["url"].split(",", 1)[1])
              for part in content if part.get("type") == "image_url"]
    return text, images


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else every keep-alive answer stalls about 40 ms
    state: FakeOpenAI

    def log_message(self, *args) -> None:
        pass

    def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send(200, {"object": "list", "data": [{"id": "stand-in", "object": "model"}]})

    def do_POST(self) -> None:
        state = self.state
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        text, images = _text_and_images(body)
        name = state.names.get(text)
        entry = Request(time.time(), name, 200, body.get("model"), images, self.headers.get("Authorization"), body)
        if not self.path.endswith("/v1/chat/completions"):
            entry.status = 404
            state._record(entry)
            return self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
        if state.key is not None and self.headers.get("Authorization") != f"Bearer {state.key}":
            entry.status = 401
            state._record(entry)
            given = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            return self._send(401, {"error": {"message": f"Incorrect API key provided: {given}.",
                                              "type": "invalid_request_error"}})
        fault = state._fault(name)
        if fault is not None and fault.status == "drop":
            entry.status = "drop"
            state._record(entry)
            self.close_connection = True
            self.connection.close()
            return None
        if fault is not None and fault.status == "slow":
            time.sleep(fault.seconds)
        elif fault is not None:
            entry.status = int(fault.status)
            state._record(entry)
            headers = {}
            if fault.retry_after is not None:
                headers["Retry-After"] = f"{fault.retry_after:g}"
            if fault.retry_after_ms is not None:
                headers["retry-after-ms"] = str(fault.retry_after_ms)
            return self._send(entry.status, {"error": {"message": f"injected {fault.status}", "type": "fault"}},
                              headers)
        if state.delay:
            time.sleep(state.delay)
        reply = state.answer(text)
        state._record(entry)
        words = len(text.split())
        self._send(200, {
            "id": f"chatcmpl-{len(state.log)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": words, "completion_tokens": len(reply.split()),
                      "total_tokens": words + len(reply.split())},
        })


def stand_in(data, config: str, split: str, kinds, **options) -> FakeOpenAI:
    """A server whose model answers the prompts of a split (made as ``cogen prompts export`` makes them with
    ``options``): ``kinds(number)`` says, for the prompt at that position, ``"right"`` (the answer),
    ``"wrong"`` (the input grid; for code, a program that writes dots), ``"malformed"`` (no grid, no code),
    or a list of those (one per request, the last repeated). ``.prompts`` holds the prompts, ``.kinds`` the kinds by id."""
    from cogen.eval import baseline_records
    from cogen.llm import make_prompts
    from cogen.llm.prompts import format_grid

    made = make_prompts(data, config, split, **options)
    prompts = list(made.prompts)
    grids = made.record.load("reply_parser") is not None
    right = dict(baseline_records(made.split, "target", **made.eval_options))
    wrong = dict(baseline_records(made.split, "identity", **made.eval_options)) if grids else {}

    def reply(kind: str, name: str) -> str:
        if kind == "malformed":
            return "I cannot solve this one."
        if not grids:
            return right[name] if kind == "right" else '```python\ndef f(s):\n    return "....\\n....\\n....\\n...."\n```'
        return "output: " + format_grid((right if kind == "right" else wrong)[name])

    answers, names, by_id = {}, {}, {}
    for number, prompt in enumerate(prompts):
        kind = kinds(number)
        by_id[prompt.id] = kind
        answers[prompt.prompt] = [reply(k, prompt.id) for k in kind] if isinstance(kind, list) else reply(kind, prompt.id)
        names[prompt.prompt] = prompt.id
    state = FakeOpenAI(answers, names)
    state.prompts, state.kinds = prompts, by_id
    return state


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # the listen backlog: socketserver's 5 drops the 6th simultaneous connect for 1 s

    def handle_error(self, request, client_address) -> None:
        """A client that left before its answer (a timeout, a stop) is expected here, not an error."""
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def serve(state: FakeOpenAI | None = None, port: int = 0) -> tuple[ThreadingHTTPServer, FakeOpenAI]:
    """Start a server on 127.0.0.1 in a daemon thread; ``state.url`` is its base URL (``.../v1``)."""
    state = state or FakeOpenAI()
    handler = type("BoundHandler", (Handler,), {"state": state})
    server = Server(("127.0.0.1", port), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    return server, state


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", help="JSON file: {prompt text: reply} (or {prompt text: [name, reply]})")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds before every answer")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", help="append one JSON line per request to this file")
    args = parser.parse_args(argv)
    answers, names = {}, {}
    if args.answers:
        for text, value in json.load(open(args.answers, encoding="utf-8")).items():
            if isinstance(value, list):
                names[text], answers[text] = value
            else:
                answers[text] = value
    server, state = serve(FakeOpenAI(answers, names, delay=args.delay, log_file=args.log), args.port)
    print(state.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
