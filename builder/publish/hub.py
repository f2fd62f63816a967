"""Publish a release directory to the Hugging Face Hub as one commit plus an immutable `v<version>` tag.

Steps, each safe to rerun: create the repo; refuse (or no-op) when the tag exists; commit the release
to main unless main already holds exactly this manifest (a rerun after a failure); tag that commit.
The token comes from HF_TOKEN or the stored login and never reaches output: messages are scrubbed.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from builder.release.card import PLOT_PATH
from builder.errors import InputError
from builder.io import read_json
from builder.record import SETTINGS, SPLITS
from builder.release import sha256_file
from builder.release.layout import MANIFEST, open_release

REPO_TYPE = "dataset"
CARD = "README.md"
DATA_FILES = [f"data/{s}.parquet" for s in SPLITS]
# Files of an older version that may be replaced or deleted on main (hand-added files elsewhere stay).
_OWNED_PREFIXES = ("data/", "assets/")


class PublishError(InputError):
    """Publishing stopped; the message says what was and was not published."""


@dataclass
class Retry:
    attempts: int = 4
    base_delay: float = 1.0  # seconds; doubles each attempt

    def delays(self) -> list[float]:
        return [self.base_delay * 2**i for i in range(self.attempts - 1)]


@dataclass
class PublishResult:
    repo_id: str
    version: str
    tag: str
    status: str  # published | already_published | tagged_existing_commit | pull_request
    commit: str | None = None
    pr_url: str | None = None
    uploaded: list[str] = field(default_factory=list)
    message: str = ""


def endpoint() -> str:
    """HF_ENDPOINT as set now (huggingface_hub reads it once at import)."""
    from huggingface_hub import constants

    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def cache_dir() -> Path:
    """The Hub cache as the environment says now (HF_HUB_CACHE, else HF_HOME/hub), like `endpoint()`."""
    from huggingface_hub import constants

    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]) / "hub"
    return Path(constants.HF_HUB_CACHE)


def resolve_token(token: str | None = None) -> str:
    from huggingface_hub import get_token

    token = token or get_token()
    if not token:
        raise InputError("no Hugging Face token: set HF_TOKEN or run `hf auth login`")
    return token


def scrub(text: str, token: str | None) -> str:
    return text.replace(token, "***") if token else text


def _retryable(err: BaseException) -> bool:
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError

    if isinstance(err, httpx2.TransportError):
        return True
    if isinstance(err, HfHubHTTPError) and err.response is not None:
        return err.response.status_code == 429 or err.response.status_code >= 500
    return False


def _status(err: BaseException) -> int | None:
    response = getattr(err, "response", None)
    return getattr(response, "status_code", None)


class _Publisher:
    def __init__(self, release_dir: Path, repo_id: str, token: str, retry: Retry, log: Callable[[str], None]):
        from huggingface_hub import HfApi

        self.dir = Path(release_dir)
        self.repo_id = repo_id
        self.token = token
        self.retry = retry
        self.log = lambda msg: log(scrub(msg, token))
        self.endpoint = endpoint()
        self.api = HfApi(endpoint=self.endpoint, token=token, library_name="clariedge")
        self.done: list[str] = []  # what is on the Hub so far, in words, for the final error

    # --- retries and error reports ---
    def step(self, what: str, fn: Callable[[], Any], before_retry: Callable[[], Any] | None = None) -> Any:
        """Run fn, retrying network errors and 5xx with backoff; `before_retry` may return a result instead."""
        delays = self.retry.delays()
        for attempt in range(len(delays) + 1):
            try:
                if attempt and before_retry is not None:
                    result = before_retry()
                    if result is not None:
                        return result
                return fn()
            except Exception as err:  # noqa: BLE001 - classified below
                if not _retryable(err) or attempt == len(delays):
                    # Before reporting, see whether it went through after all (a lost answer).
                    if _retryable(err) and before_retry is not None and (result := self._quietly(before_retry)):
                        return result
                    self.fail(what, err, attempt + 1)
                self.log(f"{what}: {type(err).__name__} ({_status(err) or 'network'}); retrying in {delays[attempt]:g}s")
                time.sleep(delays[attempt])
        raise AssertionError("unreachable")

    @staticmethod
    def _quietly(fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception:  # noqa: BLE001 - only a probe; the original error is reported
            return None

    def fail(self, what: str, err: BaseException, attempts: int) -> None:
        detail = " ".join(str(err).split())[:300]
        published = "; ".join(self.done) or "nothing"
        raise PublishError(
            scrub(
                f"publishing {self.repo_id} v{self.version} failed while {what} after {attempts} attempt(s): "
                f"{type(err).__name__}: {detail}. Published so far: {published}. Not published: {self.missing()}. "
                "Rerun the same command to finish; it will not duplicate the commit.",
                self.token,
            )
        ) from None

    def missing(self) -> str:
        todo = [] if any(d.startswith("commit") for d in self.done) else [f"the v{self.version} files on main"]
        return ", ".join(todo + [f"tag {self.tag}"])

    # --- Hub reads ---
    def remote_manifest(self, revision: str) -> dict[str, Any] | None:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import EntryNotFoundError, RevisionNotFoundError

        try:
            path = hf_hub_download(
                self.repo_id, MANIFEST, repo_type=REPO_TYPE, revision=revision, endpoint=self.endpoint,
                token=self.token, cache_dir=cache_dir(),
            )  # fmt: skip
        except (EntryNotFoundError, RevisionNotFoundError):
            return None
        return json.loads(Path(path).read_text(encoding="utf-8"))

    def remote_card(self) -> str | None:
        from huggingface_hub import DatasetCard, hf_hub_download
        from huggingface_hub.errors import EntryNotFoundError

        try:
            path = hf_hub_download(
                self.repo_id, CARD, repo_type=REPO_TYPE, endpoint=self.endpoint, token=self.token, cache_dir=cache_dir()
            )
        except EntryNotFoundError:
            return None
        return str(DatasetCard.load(path))

    def refs(self):
        return self.api.list_repo_refs(self.repo_id, repo_type=REPO_TYPE)

    # --- the job ---
    def run(self, private: bool, create_pr: bool) -> PublishResult:
        self.manifest = load_local_manifest(self.dir)
        self.version = str(self.manifest["version"])
        self.tag = f"v{self.version}"
        self.step("creating the repo", lambda: self.api.create_repo(
            self.repo_id, repo_type=REPO_TYPE, private=private or None, exist_ok=True))  # fmt: skip
        self.done.append(f"repo {self.repo_id} exists")

        refs = self.step("listing tags", self.refs)
        tags = {t.name: t.target_commit for t in refs.tags}
        if self.tag in tags:
            return self.already_tagged(tags[self.tag])

        main = {b.name: b.target_commit for b in refs.branches}.get("main")
        on_main = self.step("reading the manifest on main", lambda: self.remote_manifest("main")) if main else None
        if on_main == self.manifest:
            commit = main
            self.log(f"main already holds v{self.version} (commit {commit[:10]}) from an earlier run; tagging it")
            status = "tagged_existing_commit"
            uploaded: list[str] = []
        else:
            self.check_not_older(on_main)
            info, uploaded = self.commit(main, on_main, create_pr)
            if create_pr:
                msg = (f"opened pull request {info.pr_url} with v{self.version}; merge it, then run the same "
                       f"command again to tag {self.tag}")  # fmt: skip
                self.log(msg)
                return PublishResult(self.repo_id, self.version, self.tag, "pull_request", info.oid, info.pr_url, uploaded, msg)
            commit, status = info.oid, "published"
        self.step(f"creating tag {self.tag}", lambda: self.create_tag(commit))
        msg = f"published {self.repo_id} {self.tag} (commit {commit[:10]}); main holds {self.tag}"
        self.log(msg)
        return PublishResult(self.repo_id, self.version, self.tag, status, commit, None, uploaded, msg)

    def already_tagged(self, tagged_commit: str) -> PublishResult:
        remote = self.step(f"reading the manifest at {self.tag}", lambda: self.remote_manifest(self.tag))
        if remote == self.manifest:
            msg = f"{self.repo_id} {self.tag} is already published with identical content (commit {tagged_commit[:10]}); nothing to do"
            self.log(msg)
            return PublishResult(self.repo_id, self.version, self.tag, "already_published", tagged_commit, message=msg)
        differing = sorted(
            p
            for p in set((remote or {}).get("files", {})) | set(self.manifest.get("files", {}))
            if (remote or {}).get("files", {}).get(p) != self.manifest.get("files", {}).get(p)
        )
        what = f"files differ: {', '.join(differing[:5])}" if differing else "manifests differ"
        raise InputError(
            f"{self.repo_id}: tag {self.tag} already exists with different content ({what}); published versions are "
            "immutable: make a new version with `clariedge release --bump ...`"
        )

    def check_not_older(self, on_main: dict[str, Any] | None) -> None:
        from builder.release.versioning import parse_version

        if not on_main or "version" not in on_main:
            return
        if parse_version(str(on_main["version"]), "manifest.json on main") > parse_version(self.version, "manifest.json"):
            raise InputError(
                f"{self.repo_id}: main holds v{on_main['version']}, newer than v{self.version}; main must hold the "
                "latest version, so older versions cannot be published after newer ones"
            )

    def operations(self, on_main: dict[str, Any] | None, card: str, plot: bytes | None):
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete, RepoFile

        files = sorted(p for p in self.manifest.get("files", {}) if p != CARD)
        ops = [CommitOperationAdd(p, str(self.dir / p)) for p in files]
        ops.append(CommitOperationAdd(CARD, card.encode("utf-8")))
        ops.append(CommitOperationAdd(MANIFEST, str(self.dir / MANIFEST)))
        new_paths = set(files) | {CARD, MANIFEST}
        if plot is not None:
            ops.append(CommitOperationAdd(PLOT_PATH, plot))
            new_paths.add(PLOT_PATH)
        remote = self.step("listing files on main", lambda: [
            f.path for f in self.api.list_repo_tree(self.repo_id, recursive=True, repo_type=REPO_TYPE)
            if isinstance(f, RepoFile)])  # fmt: skip
        stale = sorted(
            p
            for p in remote
            if p not in new_paths and (p.startswith(_OWNED_PREFIXES) or p in (on_main or {}).get("files", {}))
        )
        ops += [CommitOperationDelete(p) for p in stale]
        return ops, sorted(new_paths), stale

    def commit(self, main: str | None, on_main: dict[str, Any] | None, create_pr: bool):
        from builder.publish.card import publish_card

        previous = self.previous_release(on_main)
        existing = self.step("reading the card on main", self.remote_card) if main else None
        card, plot, kept = publish_card(self.dir, self.manifest, self.repo_id, existing, previous)
        if kept:
            self.log(f"kept hand-edited card sections from the Hub: {', '.join(kept)}")
        message = f"ClariEdge {self.manifest.get('name', '')} v{self.version}".replace("  ", " ")

        def attempt():
            ops, new_paths, stale = self.operations(on_main, card, plot)
            self.uploaded = new_paths
            return self.api.create_commit(
                self.repo_id,
                ops,
                commit_message=message,
                commit_description=f"Release v{self.version}: {len(new_paths)} files, {len(stale)} removed.",
                repo_type=REPO_TYPE,
                create_pr=create_pr or None,
                parent_commit=None if create_pr else main,
            )

        def landed():
            # A commit whose answer was lost may have gone through: never commit the same version twice.
            if create_pr:
                return None
            head = {b.name: b.target_commit for b in self.refs().branches}.get("main")
            if head != main and self.remote_manifest("main") == self.manifest:
                self.log(f"the commit went through before the error (commit {head[:10]}); not committing again")
                from huggingface_hub import CommitInfo

                url = f"{self.endpoint}/datasets/{self.repo_id}/commit/{head}"
                return CommitInfo(
                    commit_url=url, commit_message=message, commit_description="", oid=head, _endpoint=self.endpoint
                )
            return None

        info = self.step(f"committing v{self.version}", attempt, before_retry=landed)
        self.done.append(f"commit {info.oid[:10]} with the v{self.version} files" + (" (pull request)" if create_pr else " on main"))
        self.log(f"committed v{self.version}: {len(self.uploaded)} files (commit {info.oid[:10]})")
        return info, self.uploaded

    def previous_release(self, on_main: dict[str, Any] | None):
        """Records of the version on main, for the changelog; None on a first publish."""
        if not on_main or not all(p in on_main.get("files", {}) for p in DATA_FILES):
            return None
        local = self.step("downloading the previous version", lambda: download_release(
            self.repo_id, "main", token=self.token))  # fmt: skip
        from builder.release import load_release

        return str(on_main.get("version", "?")), load_release(local)

    def create_tag(self, commit: str) -> None:
        from huggingface_hub.errors import HfHubHTTPError

        try:
            self.api.create_tag(self.repo_id, tag=self.tag, revision=commit, repo_type=REPO_TYPE,
                                tag_message=f"ClariEdge v{self.version}")  # fmt: skip
        except HfHubHTTPError as err:
            # 409 after a retry: our own earlier attempt created it. Anything else pointing elsewhere is an error.
            tags = {t.name: t.target_commit for t in self.refs().tags}
            if _status(err) != 409 or tags.get(self.tag) != commit:
                raise
        self.done.append(f"tag {self.tag}")


def load_local_manifest(release_dir: Path) -> dict[str, Any]:
    """The release's manifest, after checking that every file it lists is present with its sha256."""
    release = open_release(release_dir, splits=(), need_manifest=True)
    release_dir, path, manifest = release.path, release.manifest_path, release.manifest
    for key in ("version", "files"):
        if key not in manifest:
            raise InputError(f"{path}: field {key} is missing")
    from builder.release.versioning import parse_version

    parse_version(str(manifest["version"]), f"{path}: field version")
    for rel, digest in sorted(manifest["files"].items()):
        file = release_dir / rel
        if not file.is_file():
            raise InputError(f"{path}: files: {rel} is listed but missing from {release_dir}")
        if sha256_file(file) != digest:
            raise InputError(f"{path}: files: {rel} does not match its sha256 (changed after the release was written?)")
    return manifest


def download_release(repo_id: str, revision: str, *, cache: Path | None = None, token: str | None = None) -> Path:
    """The data files and manifest of one Hub revision, via the local Hugging Face cache."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import (
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    patterns = DATA_FILES + [MANIFEST] + [f"data/{st}/*" for st in SETTINGS]
    try:
        path = snapshot_download(
            repo_id, repo_type=REPO_TYPE, revision=revision, endpoint=endpoint(), cache_dir=cache or cache_dir(),
            allow_patterns=patterns, token=token,
        )  # fmt: skip
    except RevisionNotFoundError:
        raise InputError(f"{repo_id}: revision {revision} not found on {endpoint()}") from None
    except RepositoryNotFoundError:
        raise InputError(f"{repo_id}: dataset repo not found on {endpoint()} (or no access)") from None
    except (HfHubHTTPError, LocalEntryNotFoundError) as err:  # the latter: Hub unreachable and nothing cached
        raise InputError(scrub(f"{repo_id}@{revision}: download from {endpoint()} failed: {' '.join(str(err).split())[:300]}", token)) from None
    if not (Path(path) / DATA_FILES[0]).exists():
        raise InputError(f"{repo_id}@{revision}: not a ClariEdge release (no {DATA_FILES[0]})")
    return Path(path)


def publish(
    release_dir: Path,
    repo_id: str,
    *,
    private: bool = False,
    create_pr: bool = False,
    token: str | None = None,
    retry: Retry | None = None,
    log: Callable[[str], None] = print,
) -> PublishResult:
    """Publish `dist/<name>/<version>` to `repo_id` (a dataset repo) and tag it `v<version>`."""
    token = resolve_token(token)
    publisher = _Publisher(Path(release_dir), repo_id, token, retry or Retry(), log)
    try:
        return publisher.run(private, create_pr)
    except InputError as err:
        raise type(err)(scrub(str(err), token)) from None


_HUB_SPEC = re.compile(r"^(?:hf://datasets/)?(?P<repo>[\w.-]+/[\w.-]+)(?:@(?P<rev>.+))?$")


def load_side(spec: str, *, cache_dir: Path | None = None) -> tuple[str, dict[str, list[dict[str, Any]]], dict | None]:
    """A release directory, or a Hub revision `ORG/NAME@REV` (also `hf://datasets/ORG/NAME@REV`; REV defaults to main).

    Returns (display name, split -> records, manifest or None).
    """
    from builder.release import load_release

    path = Path(spec)
    if path.is_dir():
        release = open_release(path)
        return str(path), release.load(), release.manifest
    match = _HUB_SPEC.match(spec)
    if not match or path.exists():
        raise InputError(f"{spec}: neither a release directory nor a Hub revision like ORG/NAME@v1.0.0")
    repo, rev = match["repo"], match["rev"] or "main"
    local = download_release(repo, rev, cache=cache_dir)
    manifest = read_json(local / MANIFEST) if (local / MANIFEST).exists() else None
    return f"{repo}@{rev}", load_release(local), manifest
