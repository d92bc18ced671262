"""``cogen prompts run``: send a split's prompts to an OpenAI-compatible server, keep every reply once, score the run.

The prompts are made exactly as ``cogen prompts export`` makes them (:func:`cogen.llm.make_prompts`,
written to ``DIR/prompts.jsonl``); a prompt with an image (a text+image prompt)
is sent with the image as an OpenAI ``image_url`` content part (a PNG data URL). Each prompt is
asked ``attempts`` times (attempt-major: every prompt's first attempt before any second one).

What ``DIR`` holds (:data:`RUN_FILES`):

* ``replies.jsonl``: one record per (id, attempt) answered: ``id``, ``attempt``, ``model``,
  ``prompt_version``, ``reply``, ``finish_reason``, ``usage`` (the server's token counts),
  ``latency_s``, ``tries`` (requests it took), ``served_model``, ``time``. Appended and flushed as
  each reply arrives; a request that failed is not written, so running the command again asks for
  exactly what is missing (a last line cut by a crash is dropped first).
* ``predictions.jsonl`` (attempt 1) and ``predictions-<k>.jsonl`` (attempt k): what ``cogen eval``
  and ``cogen view --predictions`` read, the reply made into the family's prediction by its
  ``reply_parser`` (a grid, or null), or the reply itself for a family scored on code.
* ``run.json``: the settings (never the API key: only the name of its environment variable),
  cogen's version, what makes a reply (:func:`identity`), counts, tokens, timing and scores.
* ``metrics.json`` (and ``report.md`` for a family that makes one): what ``cogen eval`` reports.

Exactly once: each (id, attempt) is one job, done by one thread, written by the main thread only,
after its reply arrived; retries (429, 5xx, timeouts, dropped connections) repeat the request, never
the record. A rerun with settings that make other replies (:func:`identity`: model, sampling, the
prompts' digest, ...) is refused, naming what differs, unless ``force`` starts the run again.

Stopping: the first Ctrl-C (or SIGTERM) stops sending and waits for the requests in flight, keeping
their replies; a second one leaves at once. Either way what arrived is kept and the next run
resumes. Rate limits: a 429 pauses every thread for the ``Retry-After`` the server asks (else an
exponential back-off with jitter), so the pool does not hammer a throttled server.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import queue
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cogen.errors import CogenError, EvalError, Interrupted, os_error_text
from cogen.llm.client import ChatClient, ChatError, Completion
from cogen.llm.scoring import prediction_line, split_options
from cogen.safe_text import clean

__all__ = ["RUN_FILES", "RunSettings", "estimate_tokens", "identity", "read_replies", "run_prompts", "user_content"]

#: The files a run writes into its folder (``predictions-<k>.jsonl`` for attempts after the first).
RUN_FILES = ("prompts.jsonl", "replies.jsonl", "predictions.jsonl", "run.json", "metrics.json", "report.md")
#: Longest wait a server may ask for (``Retry-After``) before the request counts as failed, in seconds.
MAX_WAIT = 600.0
#: First back-off after a failure without ``Retry-After``; it doubles per try up to :data:`MAX_BACKOFF`.
FIRST_BACKOFF, MAX_BACKOFF = 1.0, 60.0
#: Waits between the tries to reach the server before a run's first request: a server that accepts no
#: connection for this long is taken to be down or misnamed (one line), not retried for minutes.
REACH_WAITS = (1.0, 2.0)
#: Notes about retries are printed at most this often, in seconds.
NOTE_EVERY = 10.0
_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class RunSettings:
    """What ``cogen prompts run`` is asked to do (the API key is not here: only where to find it).

    ``options`` are the family's options (prompt and evaluation options alike, as its record
    declares them); ``params`` extra fields of the request body (``{"top_p": 1.0,
    "reasoning_effort": "low"}``); ``api_key_env`` the environment variable holding the key (None:
    ``OPENAI_API_KEY`` if set, else no key); ``retries`` the further requests a failing prompt may
    get; ``first_backoff`` the first wait after a failure the server gave no ``Retry-After`` for.
    """

    data: str
    config: str
    split: str
    base_url: str
    model: str
    options: dict = field(default_factory=dict)
    attempts: int = 1
    concurrency: int = 8
    max_tokens: int | None = None
    temperature: float | None = None
    params: dict = field(default_factory=dict)
    limit: int | None = None
    api_key_env: str | None = None
    request_timeout: float = 600.0
    retries: int = 8
    first_backoff: float = FIRST_BACKOFF

    def body(self, content: Any) -> dict:
        """The request body of one prompt."""
        body = {"model": self.model, "messages": [{"role": "user", "content": content}]}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return {**body, **self.params}

    def recorded(self) -> dict:
        """JSON-ready settings for ``run.json`` (the key's variable name, never the key)."""
        return {**asdict(self), "data": str(self.data)}


def _api_key(name: str | None) -> str | None:
    if name is None:
        return os.environ.get("OPENAI_API_KEY") or None
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise EvalError(f"--api-key-env {name!r} is not an environment variable name (e.g. OPENAI_API_KEY)")
    key = os.environ.get(name)
    if not key:
        raise EvalError(f"--api-key-env {name}: the environment variable {name} is not set (export {name}=...)")
    return key


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` is for a BPE tokenizer: its words and punctuation marks (grids are
    mostly digits, commas and brackets, one token each); the model's own tokenizer decides."""
    return len(_TOKEN.findall(text))


def user_content(record: dict) -> str | list[dict]:
    """The user message of an exported prompt record: its text, or its text and image as content parts."""
    if not record.get("image"):
        return record["prompt"]
    try:
        data = Path(record["image"]).read_bytes()
    except OSError as error:
        raise EvalError(f"cannot read the image {record['image']} of prompt {record['id']}: "
                        f"{os_error_text(error)}") from None
    url = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return [{"type": "text", "text": record["prompt"]}, {"type": "image_url", "image_url": {"url": url}}]


def _prompts_digest(records: list[dict]) -> str:
    """SHA-256 of what the prompts ask: each id, text and image's bytes (not where the image was written)."""
    digest = hashlib.sha256()
    for record in records:
        image = hashlib.sha256(Path(record["image"]).read_bytes()).hexdigest() if record.get("image") else ""
        digest.update(json.dumps([record["id"], record["prompt"], image]).encode())
    return digest.hexdigest()


def identity(settings: RunSettings, made, records: list[dict]) -> dict:
    """What decides the replies of a run: rerunning in the same folder with another identity is refused."""
    options = {k: str(v) if isinstance(v, Path) else v for k, v in made.options.items() if k != "images"}
    return {"family": made.record.name, "config": made.split.config, "split": made.split.split,
            "prompt_options": options, "prompts": len(records), "prompts_sha256": _prompts_digest(records),
            "model": settings.model, "max_tokens": settings.max_tokens, "temperature": settings.temperature,
            "params": settings.params}


def _differences(old: dict, new: dict) -> list[str]:
    return [f"{key}: {json.dumps(old.get(key))} now {json.dumps(new.get(key))}"
            for key in new if old.get(key) != new.get(key)]


# ---------------------------------------------------------------- the replies file
def read_replies(path: Path, repair: bool = False) -> list[dict]:
    """The records of a replies file, in order; with ``repair``, a last line cut short (a killed run) is
    removed from the file first."""
    if not path.exists():
        return []
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if repair and end < len(data):
        with path.open("r+b") as handle:
            handle.truncate(end)
    records = []
    for line in data[:end].splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("id"), str) and isinstance(record.get("attempt"), int):
            records.append(record)
    return records


class _Gate:
    """A pause every thread honours before its next request (a 429's ``Retry-After``)."""

    def __init__(self):
        self.until, self.lock = 0.0, threading.Lock()

    def pause(self, seconds: float) -> None:
        with self.lock:
            self.until = max(self.until, time.monotonic() + seconds)

    def wait(self, stop: threading.Event) -> bool:
        """Wait out the pause; False when ``stop`` was set meanwhile."""
        while (left := self.until - time.monotonic()) > 0:
            if stop.wait(min(left, 1.0)):
                return False
        return not stop.is_set()


def _backoff(tries: int, first: float) -> float:
    return min(MAX_BACKOFF, first * 2 ** (tries - 1)) * random.uniform(0.5, 1.0)


def _ask(client: ChatClient, body: dict, settings: RunSettings, stop: threading.Event, gate: _Gate,
         report: Callable[[tuple], None]) -> tuple:
    """One job's requests until a completion, a failure that asking again cannot mend, or ``stop``."""
    for tries in range(1, settings.retries + 2):
        if not gate.wait(stop):
            return ("stopped",)
        try:
            return ("reply", client.complete(body), tries)
        except ChatError as error:
            if not error.retryable:
                return ("fatal", error)
            if tries > settings.retries:
                return ("failed", error, tries)
            wait = error.retry_after if error.retry_after is not None else _backoff(tries, settings.first_backoff)
            if wait > MAX_WAIT:
                return ("failed", ChatError(f"{error} (the server asked to wait {wait:,.0f} s)", error.status), tries)
            if error.status == 429:
                gate.pause(wait)
            report(("retry", error, wait))
            if stop.wait(wait):
                return ("stopped",)
    return ("stopped",)


def _worker(client: ChatClient, jobs: queue.Queue, results: queue.Queue, settings: RunSettings,
            stop: threading.Event, gate: _Gate) -> None:
    try:
        while not stop.is_set():
            try:
                job = jobs.get_nowait()
            except queue.Empty:
                return
            outcome = _ask(client, settings.body(user_content(job[0])), settings, stop, gate, results.put)
            results.put((outcome[0], job, *outcome[1:]))
    except CogenError as error:
        results.put(("fatal", None, error))
    finally:
        client.close()
        results.put(("exit",))


@dataclass
class _Tally:
    """What a run's sending phase did."""

    replies: int = 0
    failed: list = field(default_factory=list)
    retries: Counter = field(default_factory=Counter)
    tokens: Counter = field(default_factory=Counter)
    fatal: BaseException | None = None
    stopped: bool = False
    last_note: float = 0.0


def _record(job: tuple, completion: Completion, tries: int, settings: RunSettings) -> dict:
    prompt, attempt = job
    return {"id": prompt["id"], "attempt": attempt, "model": settings.model,
            "prompt_version": prompt.get("prompt_version"), "reply": completion.text,
            "finish_reason": completion.finish_reason, "usage": completion.usage, "latency_s": completion.seconds,
            "tries": tries, "served_model": completion.model, "time": round(time.time(), 3)}


def _send(jobs: list[tuple], settings: RunSettings, key: str | None, replies: Path,
          progress: Callable | None, note: Callable[[str], None]) -> _Tally:
    """Ask every job with ``settings.concurrency`` threads; append each reply to ``replies`` as it arrives."""
    client = ChatClient(settings.base_url, key, settings.request_timeout)
    work: queue.Queue = queue.Queue()
    for job in jobs:
        work.put(job)
    results: queue.Queue = queue.Queue()
    stop, gate, tally = threading.Event(), _Gate(), _Tally()
    threads = [threading.Thread(target=_worker, args=(client, work, results, settings, stop, gate), daemon=True,
                                name=f"cogen-ask-{n}") for n in range(min(settings.concurrency, len(jobs)))]
    if progress:
        progress("replies", 0, len(jobs))
    with replies.open("a", encoding="utf-8") as out:
        for thread in threads:
            thread.start()
        alive, interrupts = len(threads), 0
        while alive:
            try:
                try:
                    item = results.get(timeout=0.25)
                except queue.Empty:
                    continue
                alive -= item[0] == "exit"
                _handle(item, out, settings, tally, stop, progress, note)
            except KeyboardInterrupt:
                interrupts += 1
                stop.set()
                tally.stopped = True
                if interrupts > 1:
                    break
                note(f"stopping: waiting for the requests in flight (at most {alive}, {settings.request_timeout:g} s "
                     "each) to keep their replies; press Ctrl-C again to leave at once")
        out.flush()
        os.fsync(out.fileno())
    return tally


def _handle(item: tuple, out, settings: RunSettings, tally: _Tally, stop: threading.Event,
            progress: Callable | None, note: Callable[[str], None]) -> None:
    kind = item[0]
    if kind == "reply":
        _, job, completion, tries = item
        out.write(json.dumps(_record(job, completion, tries, settings), ensure_ascii=False) + "\n")
        out.flush()
        tally.replies += 1
        tally.tokens.update({k: v for k, v in completion.usage.items() if isinstance(v, int)})
        if progress:
            progress("replies", 1, 0)
    elif kind == "retry":
        _, error, wait = item
        tally.retries[str(error.status or "connection")] += 1
        if time.monotonic() - tally.last_note > NOTE_EVERY:
            tally.last_note = time.monotonic()
            note(f"{error}; asking again in {wait:.1f} s ({sum(tally.retries.values())} retries so far)")
    elif kind == "failed":
        tally.failed.append((item[1][0]["id"], item[1][1], str(item[2])))
    elif kind == "fatal":
        if tally.fatal is None:
            tally.fatal = item[2]
        stop.set()


# ---------------------------------------------------------------- the run
def _write_json(path: Path, value: dict) -> None:
    from cogen.folder.atomic import atomic_write

    atomic_write(path, lambda temporary: temporary.write_text(json.dumps(value, indent=2, default=str) + "\n",
                                                              encoding="utf-8"))


def _prepare(out: Path, settings: RunSettings, made, records: list[dict], force: bool) -> dict:
    """Check ``out`` against the run asked for (refusing another run's replies unless ``force``); the run.json start."""
    wanted = identity(settings, made, records)
    state = out / "run.json"
    if state.exists():
        try:
            old = json.loads(state.read_text(encoding="utf-8"))
            before = old["identity"]
        except (OSError, ValueError, KeyError, TypeError):
            old, before = None, None
        if before != wanted and not force:
            what = "; ".join(_differences(before, wanted)) if isinstance(before, dict) else "run.json is unreadable"
            raise EvalError(f"{out} holds the replies of another run ({what}); choose another --out, or add --force "
                            "to discard them and start again")
        if before != wanted:
            _discard(out)
    elif (out / "replies.jsonl").exists() and not force:
        raise EvalError(f"{out} holds replies.jsonl but no run.json, so what made those replies is unknown; choose "
                        "another --out, or add --force to discard them")
    elif force:
        _discard(out)
    from cogen._version import __version__

    return {"cogen_version": __version__, "identity": wanted, "settings": settings.recorded(),
            "files": {"prompts": "prompts.jsonl", "replies": "replies.jsonl"}}


def _discard(out: Path) -> None:
    for path in [*(out / name for name in RUN_FILES if name != "prompts.jsonl"), *out.glob("predictions-*.jsonl")]:
        path.unlink(missing_ok=True)


def _write_prompts(path: Path, records: list[dict]) -> None:
    from cogen.folder.atomic import atomic_write

    text = "".join(json.dumps(record) + "\n" for record in records)
    atomic_write(path, lambda temporary: temporary.write_text(text, encoding="utf-8"))


def predictions_file(out: Path, attempt: int) -> Path:
    """Where a run writes the predictions of ``attempt``."""
    return out / ("predictions.jsonl" if attempt == 1 else f"predictions-{attempt}.jsonl")


def _write_predictions(out: Path, record, records: list[dict], replies: list[dict], attempts: int) -> list[Path]:
    """One predictions file per attempt, each reply made into the family's prediction (:func:`prediction_line`)."""
    parser = record.load("reply_parser")
    order = {r["id"]: k for k, r in enumerate(records)}
    paths = []
    for attempt in range(1, attempts + 1):
        found = {r["id"]: r for r in replies if r["attempt"] == attempt and r["id"] in order}
        lines = [json.dumps(prediction_line(parser, name, found[name].get("reply"), found[name].get("model"),
                                            found[name].get("prompt_version"))) + "\n"
                 for name in sorted(found, key=order.get)]
        path = predictions_file(out, attempt)
        path.write_text("".join(lines), encoding="utf-8")
        paths.append(path)
    return paths


def _score(made, records: list[dict], paths: list[Path], eval_options: dict, data: str) -> tuple[dict, dict]:
    """``cogen eval``'s metrics of attempt 1 over the prompted rows, and pass@k over the attempts."""
    from cogen.eval import evaluate, only_rows, sample_scores

    rows = {str(r.get("row", r["id"])) for r in records}
    metrics = evaluate(data, made.split.config, made.split.split, paths[0], rows=rows, **eval_options)
    split = only_rows(made.split, rows)
    asked = [r["id"] for r in records]
    right = []
    for path in paths:
        found = {s["id"]: bool(s["correct"]) for s in sample_scores(split, path, **eval_options)}
        right.append([found.get(name, False) for name in asked])
    solved = {f"pass@{k}": sum(any(column[:k]) for column in zip(*right, strict=True)) for k in range(1, len(paths) + 1)}
    return metrics, {"n": len(asked), **{name: count / len(asked) for name, count in solved.items()}, "solved": solved}


def run_prompts(settings: RunSettings, out: str | Path, force: bool = False, dry_run: bool = False,
                progress: Callable[[str, int, int], None] | None = None,
                note: Callable[[str], None] = lambda message: None,
                announce: Callable[[dict], None] | None = None) -> dict:
    """Run ``settings`` into the folder ``out`` (see the module docstring) and return its ``run.json`` record.

    ``dry_run`` makes the prompts and counts what would be asked (``plan``: requests, prompt tokens
    estimated by :func:`estimate_tokens`) without writing or sending anything. ``progress(phase,
    advance, total)`` hears of replies kept; ``note(message)`` of retries and stops; ``announce(plan)`` gets
    the plan before the first request is sent.
    Raises :class:`~cogen.errors.Interrupted` after a stop (what arrived is kept) and
    :class:`~cogen.errors.EvalError` for a server's refusal (401, 403, 404, 400, ...).
    """
    from cogen.family import family
    from cogen.folder import read_split
    from cogen.llm import make_prompts, scoring_options

    out = Path(out)
    key = _api_key(settings.api_key_env)
    split = read_split(settings.data, settings.config, settings.split)
    record = family(split.family)
    prompt_options, eval_options = split_options(record, settings.options, split.config)
    made = make_prompts(settings.data, settings.config, settings.split, **prompt_options)
    records = [prompt.as_dict() for prompt in made.prompts]
    eval_options = {**scoring_options(record, made.options), **eval_options}
    asked = records[: settings.limit] if settings.limit is not None else records
    if dry_run:
        return _plan(settings, asked, {}, made)
    from cogen.folder.lock import FolderLock

    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise EvalError(f"cannot write into {out}: {os_error_text(error)}") from None
    with FolderLock(out, "prompts run"):
        state = _prepare(out, settings, made, records, force)
        _write_prompts(out / "prompts.jsonl", records)
        done = {(r["id"], r["attempt"]) for r in read_replies(out / "replies.jsonl", repair=True)}
        state["plan"] = _plan(settings, asked, done, made)["plan"]
        if announce:
            announce(state["plan"])
        state["status"] = "running"
        _write_json(out / "run.json", state)
        jobs = [(r, attempt) for attempt in range(1, settings.attempts + 1) for r in asked
                if (r["id"], attempt) not in done]
        if jobs:
            _check_reachable(settings, key)
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        tally = _send(jobs, settings, key, out / "replies.jsonl", progress, note) if jobs else _Tally()
        state["timing"] = {"replies": tally.replies, "send_wall_s": round(time.perf_counter() - start_wall, 4),
                           "send_cpu_s": round(time.process_time() - start_cpu, 4),
                           "concurrency": settings.concurrency}
        return _finish(out, state, settings, made, asked, eval_options, tally)


def _check_reachable(settings: RunSettings, key: str | None) -> None:
    """Refuse in one line when no connection to the server opens (a typo in --base-url, a server not
    started), after :data:`REACH_WAITS`; once a run is under way, connection errors are retried."""
    client = ChatClient(settings.base_url, key, min(settings.request_timeout, 30.0))
    for wait in (*REACH_WAITS, None):
        why = client.reachable()
        if why is None:
            return
        if wait is not None:
            time.sleep(wait)
    raise EvalError(f"cannot reach {clean(client.base_url)}: {clean(why)}; is the server running, and is "
                    "--base-url its OpenAI-compatible root (e.g. http://localhost:8000/v1)?")


def _plan(settings: RunSettings, asked: list[dict], done: set, made) -> dict:
    """How much a run asks: requests left, prompt tokens (estimated), the reply tokens it may get."""
    left = [(r, a) for a in range(1, settings.attempts + 1) for r in asked if (r["id"], a) not in done]
    tokens = sum(estimate_tokens(r["prompt"]) for r, _ in left)
    return {"family": made.record.name, "config": made.split.config, "split": made.split.split, "plan": {
        "prompts": len(asked), "attempts": settings.attempts, "requests": len(left),
        "already_answered": len(asked) * settings.attempts - len(left), "prompt_tokens_estimate": tokens,
        "images": sum(1 for r, _ in left if r.get("image")),
        "reply_tokens_at_most": None if settings.max_tokens is None else settings.max_tokens * len(left)}}


def _finish(out: Path, state: dict, settings: RunSettings, made, asked: list[dict], eval_options: dict,
            tally: _Tally) -> dict:
    replies = read_replies(out / "replies.jsonl")
    paths = _write_predictions(out, made.record, asked, replies, settings.attempts)
    wanted = {(r["id"], a) for a in range(1, settings.attempts + 1) for r in asked}
    have = {(r["id"], r["attempt"]) for r in replies} & wanted
    usage = Counter()
    for reply in replies:
        usage.update({k: v for k, v in (reply.get("usage") or {}).items() if isinstance(v, int)})
    state["counts"] = {"requests": len(wanted), "replies": len(have), "missing": len(wanted - have),
                       "this_run": tally.replies, "retries": dict(tally.retries), "failed": len(tally.failed)}
    state["tokens"] = {name: usage.get(name, 0) for name in ("prompt_tokens", "completion_tokens", "total_tokens")}
    state["predictions"] = [path.name for path in paths]
    if tally.fatal is not None or tally.stopped:
        state["status"] = "stopped" if tally.fatal is None else "refused"
        _write_json(out / "run.json", state)
        if tally.fatal is not None:
            raise EvalError(f"the server refused the run: {tally.fatal} ({len(have)} of {len(wanted)} replies kept "
                            f"in {out})")
        raise Interrupted(f"stopped: {len(have)} of {len(wanted)} replies kept in {out}; run the same command "
                          "again to ask for the rest")
    metrics, passes = _score(made, asked, paths, eval_options, settings.data)
    state["scores"] = passes
    state["status"] = "complete" if not wanted - have else "incomplete"
    if tally.failed:
        state["failed"] = [{"id": name, "attempt": attempt, "error": error} for name, attempt, error in tally.failed[:20]]
    from cogen.eval import json_ready

    _write_json(out / "metrics.json", json_ready(metrics))
    if "markdown" in metrics:
        (out / "report.md").write_text(metrics["markdown"], encoding="utf-8")
    _write_json(out / "run.json", state)
    return {**state, "metrics": metrics}
