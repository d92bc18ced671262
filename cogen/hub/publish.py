"""Publish a build folder to a Hugging Face Hub dataset repo in one commit (``cogen push``).

What is uploaded is exactly what the manifests describe: ``README.md`` (rendered for the target
repo), ``manifests/*.json``, the Parquet shards they list and the card's previews. Remote files
under ``data/``, ``manifests/`` and ``previews/`` that the folder no longer has are deleted in
the same commit, so a replaced config never keeps stale shards that its ``data/<config>/*``
pattern would pick up.

One commit, not ``upload_folder``: with ``hf_xet`` installed (the default), huggingface_hub's
``upload_folder`` streams large folders into *several* commits (over 256 files, over 100 MB of
small files, or after 5 minutes), so a failure half-way leaves a half-published repo.
``create_commit`` uploads every file first and then makes a single commit: either the whole
folder is published or nothing changes.

Environment: ``HF_ENDPOINT``, ``HF_TOKEN`` and ``HF_HUB_OFFLINE`` are read *now*, not when
huggingface_hub was imported (it copies them into module constants at import time).
"""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from cogen.errors import PublishError
from cogen.folder import (
                          CARD_FILE,
                          CROISSANT_FILE,
                          MANAGED_DIRS,
                          MANIFEST_DIR,
                          PREVIEW_DIR,
                          folder_manifests,
                          preview_path,
                          shard_records,
)

__all__ = ["HubSettings", "PushResult", "UploadFile", "UploadPlan", "hub_settings", "push",
           "upload_plan"]

_REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")


@dataclass(frozen=True)
class UploadFile:
    """One file of the upload: its path in the repo and its size in bytes."""

    path: str
    size: int


@dataclass
class UploadPlan:
    """What ``cogen push`` would upload: files with sizes, and the configs with their split sizes."""

    folder: Path
    files: list[UploadFile]
    configs: dict[str, dict[str, int]]
    readme: bytes = b""
    sha256: dict[str, str] = field(default_factory=dict)
    croissant: bytes = b""
    previous_readme: str = ""

    @property
    def readme_diff(self) -> str:
        """A unified diff from the card the folder holds now (README.md) to the one the push uploads."""
        import difflib

        new = self.readme.decode("utf-8")
        lines = difflib.unified_diff(self.previous_readme.splitlines(keepends=True), new.splitlines(keepends=True),
                                     fromfile=f"{self.folder / CARD_FILE}", tofile=f"{CARD_FILE} (to upload)")
        return "".join(lines)

    @property
    def total_bytes(self) -> int:
        """Bytes to upload, all files together."""
        return sum(f.size for f in self.files)


@dataclass
class PushResult:
    """The outcome of a push (or of a dry run, with no commit)."""

    repo_id: str
    plan: UploadPlan
    dry_run: bool
    commit_url: str | None = None
    commit_oid: str | None = None
    deleted: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass(frozen=True)
class HubSettings:
    """Endpoint, token and offline flag as the environment says now."""

    endpoint: str
    token: str | None
    offline: bool


def _is_true(value: str | None) -> bool:
    return (value or "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def hub_settings(token: str | None = None, endpoint: str | None = None) -> HubSettings:
    """The effective settings: explicit arguments, then the current environment, then huggingface_hub's constants."""
    from huggingface_hub import constants, get_token

    endpoint = endpoint or os.environ.get("HF_ENDPOINT") or constants.ENDPOINT
    offline = _is_true(os.environ["HF_HUB_OFFLINE"]) if "HF_HUB_OFFLINE" in os.environ else constants.HF_HUB_OFFLINE
    return HubSettings(endpoint.rstrip("/"), token or get_token(), bool(offline))


def upload_plan(folder: str | Path, repo_id: str | None = None, settings=None) -> UploadPlan:
    """The files of ``folder`` that a push uploads (README rendered for ``repo_id`` with the card
    ``settings``, default the folder's ``card.yaml``, keeping the user's regions of the folder's
    README.md); no network."""
    from cogen.card import render_card, render_croissant

    folder = Path(folder)
    manifests = folder_manifests(folder)
    try:
        previous = (folder / CARD_FILE).read_text(encoding="utf-8", errors="replace")
    except OSError:
        previous = ""
    readme = render_card(folder, repo_id=repo_id, settings=settings, previous=(previous,)).encode("utf-8")
    croissant = render_croissant(folder, repo_id=repo_id, settings=settings).encode("utf-8")
    paths = [f"{MANIFEST_DIR}/{name}.json" for name in manifests]
    paths += [f for m in manifests.values() for split in m["splits"].values() for f in split["files"]]
    paths += [f"{PREVIEW_DIR}/{name}.png" for name in manifests if preview_path(folder, name).is_file()]
    missing = [p for p in paths if not (folder / p).is_file()]
    if missing:
        raise PublishError(f"{folder} lacks {missing[0]} (and {len(missing) - 1} more); rebuild before pushing")
    files = [UploadFile(CARD_FILE, len(readme)), UploadFile(CROISSANT_FILE, len(croissant))]
    files += [UploadFile(p, (folder / p).stat().st_size) for p in paths]
    configs = {name: {s: v["rows"] for s, v in m["splits"].items()} for name, m in manifests.items()}
    sha256 = {path: record["sha256"] for m in manifests.values() for path, record in shard_records(m).items()}
    return UploadPlan(folder, files, configs, readme, sha256, croissant=croissant, previous_readme=previous)


def _keep_remote_regions(plan: UploadPlan, api, repo_id: str, remote: list[str]) -> None:
    """Keep the user regions of the README.md already on the Hub (edited there) in the card to upload."""
    from cogen.card.regions import fill_regions, user_regions

    if CARD_FILE not in remote:
        return
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        path = api.hf_hub_download(repo_id, CARD_FILE, repo_type="dataset", local_dir=scratch)
        remote_card = Path(path).read_text(encoding="utf-8", errors="replace")
    if any(user_regions(remote_card).values()):
        readme = plan.readme.decode("utf-8")
        merged = fill_regions(readme, readme, remote_card).encode("utf-8")
        plan.files = [UploadFile(CARD_FILE, len(merged)) if f.path == CARD_FILE else f for f in plan.files]
        plan.readme = merged


def _verify_folder(folder: Path, regenerate: bool = False) -> None:
    """Run every check of ``cogen verify`` (its defaults: not a reduced set; with ``regenerate``, its
    ``--regenerate``); refuse on any failure, naming the failing checks and, in their details, the files."""
    from cogen.pipeline.driver import available_cores
    from cogen.pipeline.verify import failed, verify

    checks = verify(folder, regenerate=regenerate, workers=available_cores())
    bad = failed(checks)
    if bad:
        details = "; ".join(f"{c.config or 'folder'}: {c.name}: {c.detail}" for c in bad[:5])
        raise PublishError(f"refusing to push {folder}: {len(bad)} of {len(checks)} checks of `cogen verify` fail "
                           f"({details}). Nothing was uploaded")


def _unchanged_since_verified(plan: UploadPlan, operations) -> None:
    """Refuse a shard whose bytes, as hashed for the upload, are not the ones its manifest records
    (the file changed after it was verified)."""
    for operation in operations:
        expected = plan.sha256.get(getattr(operation, "path_in_repo", ""))
        upload_info = getattr(operation, "upload_info", None)
        if expected and upload_info is not None and upload_info.sha256.hex() != expected:
            raise PublishError(f"{operation.path_in_repo} changed after it was verified (its SHA-256 is not the one "
                               "its manifest records); run `cogen verify`, then push again. Nothing was published")


def _network_errors() -> tuple[type[BaseException], ...]:
    """OSError plus the base error of whichever HTTP client huggingface_hub uses (already imported)."""
    errors: list[type[BaseException]] = [OSError]
    for module, name in (("httpx2", "HTTPError"), ("httpx", "HTTPError"), ("requests", "RequestException")):
        base = getattr(sys.modules.get(module), name, None)
        if isinstance(base, type) and issubclass(base, BaseException):
            errors.append(base)
    return tuple(errors)


def _explain(error: BaseException, repo_id: str, endpoint: str) -> PublishError:
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    if isinstance(error, RuntimeError):  # an upload worker's error, wrapped with the file's name
        if not isinstance(error.__cause__, _network_errors()):
            return PublishError(f"{error} ({error.__cause__!r}). Nothing was published")
        return PublishError(f"{error} {_explain(error.__cause__, repo_id, endpoint)}")
    if isinstance(error, OfflineModeIsEnabled):
        return PublishError("huggingface_hub is in offline mode (HF_HUB_OFFLINE was set when it was imported); "
                            "unset HF_HUB_OFFLINE and run again. Nothing was published")
    if isinstance(error, HfHubHTTPError):
        status = getattr(getattr(error, "response", None), "status_code", None)
        reason = {401: "rejected the token (401): check --token or HF_TOKEN",
                  403: f"refused access to {repo_id} (403): use a token with write access to its owner",
                  404: f"has no repository {repo_id} and did not create it (404): check the name and that the "
                       "token may create repos there"}.get(status, f"answered {status}: {str(error).splitlines()[0]}")
        return PublishError(f"the Hub at {endpoint} {reason}. Nothing was published")
    return PublishError(f"cannot reach the Hub at {endpoint} ({type(error).__name__}: {error}); check the network "
                        "or HF_ENDPOINT. Nothing was published")


def _operations(plan: UploadPlan, remote: list[str]):
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    local = {f.path for f in plan.files}
    deleted = sorted(p for p in remote if p.startswith(MANAGED_DIRS) and p not in local)
    additions = [CommitOperationAdd(path_in_repo=CARD_FILE, path_or_fileobj=plan.readme),
                 CommitOperationAdd(path_in_repo=CROISSANT_FILE, path_or_fileobj=plan.croissant)]
    additions += [CommitOperationAdd(path_in_repo=f.path, path_or_fileobj=str(plan.folder / f.path))
                  for f in plan.files if f.path not in (CARD_FILE, CROISSANT_FILE)]
    return [CommitOperationDelete(path_in_repo=p) for p in deleted] + additions, deleted


def _commit_message(plan: UploadPlan) -> str:
    from cogen import __version__

    names = list(plan.configs)
    span = names[0] if len(names) == 1 else f"{names[0]} … {names[-1]}"
    return f"cogen push: {len(names)} configs ({span}), cogen {__version__}"


def push(folder: str | Path, repo_id: str, *, token: str | None = None, private: bool = False,
         endpoint: str | None = None, dry_run: bool = False, verify: bool | str = True,
         commit_message: str | None = None, card_settings=None) -> PushResult:
    """Publish the build folder ``folder`` to the dataset repo ``repo_id`` in one commit.

    Creates the repo if needed (``private`` applies only then). ``dry_run`` returns the upload
    plan without touching the network. ``verify`` runs ``cogen verify`` first: True (or
    ``"default"``) its default checks, ``"regenerate"`` every check and every shard rebuilt
    (``cogen verify --regenerate``), False none. Raises :class:`cogen.errors.PublishError` for a missing token, a refused or
    unknown repo, or a network failure; the repo is then unchanged. ``card_settings`` (a
    :class:`cogen.card.settings.CardSettings`) default to the folder's ``card.yaml``; the text the
    user wrote in the card's marked regions, locally or on the Hub, is kept.
    """
    started = time.perf_counter()
    if not _REPO_ID.fullmatch(repo_id or ""):
        raise PublishError(f"--repo {repo_id!r} is not a Hub repo id; write it as owner/name, e.g. my-org/my-benchmark")
    plan = upload_plan(folder, repo_id, card_settings)
    if verify:
        _verify_folder(plan.folder, regenerate=verify == "regenerate")
    if dry_run:
        return PushResult(repo_id, plan, True, seconds=time.perf_counter() - started)
    settings = hub_settings(token, endpoint)
    if settings.offline:
        raise PublishError("HF_HUB_OFFLINE is set: unset it to push. Nothing was published")
    if not settings.token:
        raise PublishError("no Hugging Face token: pass --token, set HF_TOKEN, or run `hf auth login`. "
                           "Nothing was published")
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HFValidationError

    api = HfApi(endpoint=settings.endpoint, token=settings.token)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        remote = api.list_repo_files(repo_id, repo_type="dataset")
        _keep_remote_regions(plan, api, repo_id, remote)
        operations, deleted = _operations(plan, remote)
        _unchanged_since_verified(plan, operations)
        commit = api.create_commit(repo_id, operations, repo_type="dataset",
                                   commit_message=commit_message or _commit_message(plan))
    except HFValidationError as error:
        raise PublishError(f"the Hub client refused the request: {error}") from None
    except (RuntimeError, *_network_errors()) as error:
        raise _explain(error, repo_id, settings.endpoint) from None
    return PushResult(repo_id, plan, False, commit.commit_url, commit.oid, deleted, time.perf_counter() - started)
