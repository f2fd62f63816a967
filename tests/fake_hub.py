"""A small in-memory Hugging Face Hub on 127.0.0.1 for tests.

It answers the routes that huggingface_hub 2.4 calls for `create_repo`, `create_commit` (validate-yaml,
preupload, NDJSON commit), `create_tag`, `list_repo_refs`, `repo_info`, `list_repo_tree`, `paths-info`
and `hf_hub_download` / `snapshot_download` (HEAD + GET on resolve). Point the real client at it with
`HF_ENDPOINT=hub.url`. Failures can be injected to test retries and reruns.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import yaml


def git_hash(data: bytes) -> str:
    return hashlib.sha1(b"blob " + str(len(data)).encode() + b"\0" + data).hexdigest()


@dataclass
class Commit:
    oid: str
    parent: str | None
    message: str
    files: dict[str, bytes]


@dataclass
class Repo:
    repo_id: str
    private: bool
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    pulls: list[str] = field(default_factory=list)

    def resolve(self, rev: str) -> Commit | None:
        if rev in self.branches:
            return self.commits[self.branches[rev]]
        if rev in self.tags:
            return self.commits[self.tags[rev]]
        if rev.startswith("refs/pr/"):
            n = int(rev.rsplit("/", 1)[1])
            return self.commits[self.pulls[n - 1]] if 0 < n <= len(self.pulls) else None
        matches = [c for oid, c in self.commits.items() if oid.startswith(rev) and len(rev) >= 7]
        return matches[0] if len(matches) == 1 else None


class FakeHub:
    """State plus the server thread. Use as a context manager."""

    def __init__(self, token: str) -> None:
        self.token = token
        self.repos: dict[str, Repo] = {}
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request
        self.lock = threading.Lock()
        # Failure injection: each counter is used up one request at a time.
        self.fail_commits = 0  # commit answers 500 before applying anything
        self.fail_commits_after_apply = 0  # commit is applied, then the answer is a 500 (lost response)
        self.fail_tags = 0  # tag creation answers 500
        self.drop_commit_connections = 0  # commit: the connection is closed before anything is applied
        self._counter = 0
        self._salt = os.urandom(8).hex()  # commit ids differ between servers, as on the real Hub
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeHub":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def commits_made(self, repo_id: str) -> int:
        """Commits created by clients (the repo's initial commit left out)."""
        return len(self.repos[repo_id].commits) - 1

    def new_oid(self, seed: str) -> str:
        self._counter += 1
        return hashlib.sha1(f"{self._salt}:{seed}:{self._counter}".encode()).hexdigest()

    def create_repo(self, repo_id: str, private: bool = False) -> Repo:
        repo = Repo(repo_id, private)
        first = Commit(self.new_oid(repo_id), None, "initial commit", {".gitattributes": b"*.parquet filter=lfs\n"})
        repo.commits[first.oid] = first
        repo.branches["main"] = first.oid
        self.repos[repo_id] = repo
        return repo


def _handler_for(hub: FakeHub):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:  # keep test output quiet
            pass

        # --- plumbing ---
        def _send(self, status: int, body: bytes = b"", headers: dict | None = None, head: bool = False) -> None:
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def _json(self, status: int, obj, headers: dict | None = None) -> None:
            h = {"Content-Type": "application/json", **(headers or {})}
            self._send(status, json.dumps(obj).encode(), h)

        def _error(self, status: int, message: str, code: str | None = None, head: bool = False, extra=None) -> None:
            h = {"Content-Type": "application/json", "X-Error-Message": message, **(extra or {})}
            if code:
                h["X-Error-Code"] = code
            self._send(status, json.dumps({"error": message}).encode(), h, head=head)

        def _body(self) -> bytes:
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def _authorized(self) -> bool:
            return self.headers.get("Authorization") == f"Bearer {hub.token}"

        def _route(self, method: str) -> None:
            parts = urlsplit(self.path)
            segs = [unquote(s) for s in parts.path.split("/") if s]
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            with hub.lock:
                hub.requests.append((method, parts.path))
                if hub.drop_commit_connections and "/commit/" in parts.path:
                    hub.drop_commit_connections -= 1
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
            body = self._body() if method == "POST" else b""
            if method == "POST" and not self._authorized():
                return self._error(401, "Invalid credentials in Authorization header")
            try:
                self._dispatch(method, segs, query, body)
            except Exception as err:  # a bug in the fake should be loud, not a hang
                self._error(500, f"fake hub error: {err!r}")

        def do_GET(self) -> None:
            self._route("GET")

        def do_HEAD(self) -> None:
            self._route("HEAD")

        def do_POST(self) -> None:
            self._route("POST")

        # --- routes ---
        def _dispatch(self, method: str, segs: list[str], query: dict, body: bytes) -> None:
            if segs[:3] == ["api", "repos", "create"]:
                return self._create_repo(json.loads(body))
            if segs[:2] == ["api", "validate-yaml"]:
                return self._validate_yaml(json.loads(body))
            if len(segs) >= 4 and segs[:2] == ["api", "datasets"]:
                repo_id = f"{segs[2]}/{segs[3]}"
                repo = hub.repos.get(repo_id)
                if repo is None or (repo.private and not self._authorized()):
                    return self._error(404, "Repository not found", "RepoNotFound")
                action, rest = (segs[4], segs[5:]) if len(segs) > 4 else ("info", [])
                return self._repo_api(method, repo, action, rest, query, body)
            if len(segs) >= 6 and segs[0] == "datasets" and segs[3] == "resolve":
                repo = hub.repos.get(f"{segs[1]}/{segs[2]}")
                if repo is None or (repo.private and not self._authorized()):
                    return self._error(404, "Repository not found", "RepoNotFound", head=method == "HEAD")
                return self._resolve(method, repo, segs[4], "/".join(segs[5:]))
            return self._error(404, f"no route for {method} /{'/'.join(segs)}")

        def _create_repo(self, payload: dict) -> None:
            repo_id = f"{payload['organization']}/{payload['name']}" if payload.get("organization") else payload["name"]
            if payload.get("type") != "dataset":
                return self._error(400, "the fake hub only hosts datasets")
            if repo_id in hub.repos:  # the real Hub's 409 carries the url too; create_repo(exist_ok=True) reads it
                body = {"error": "You already created this dataset repo", "url": f"{hub.url}/datasets/{repo_id}"}
                return self._json(409, body, {"X-Error-Message": body["error"]})
            hub.create_repo(repo_id, private=payload.get("visibility") == "private")
            self._json(200, {"url": f"{hub.url}/datasets/{repo_id}", "name": repo_id})

        def _validate_yaml(self, payload: dict) -> None:
            text = payload["content"]
            if text.startswith("---"):
                try:
                    yaml.safe_load(text.split("---", 2)[1])
                except yaml.YAMLError as err:
                    return self._json(400, {"errors": [{"message": str(err)}]})
            self._json(200, {"errors": [], "warnings": []})

        def _repo_api(self, method, repo: Repo, action, rest, query, body) -> None:
            rev = rest[0] if rest else "main"
            if action == "info" or (action == "revision" and method == "GET"):
                return self._info(repo, rev)
            if action == "refs" and method == "GET":
                ref = lambda n, kind, oid: {"name": n, "ref": f"refs/{kind}/{n}", "targetCommit": oid}  # noqa: E731
                return self._json(
                    200,
                    {
                        "branches": [ref(n, "heads", o) for n, o in repo.branches.items()],
                        "converts": [],
                        "tags": [ref(n, "tags", o) for n, o in repo.tags.items()],
                        "pullRequests": [
                            {"name": str(i + 1), "ref": f"refs/pr/{i + 1}", "targetCommit": o}
                            for i, o in enumerate(repo.pulls)
                        ],
                    },
                )
            if action == "tree" and method == "GET":
                return self._tree(repo, rev, "/".join(rest[1:]), query)
            if action == "paths-info" and method == "POST":
                return self._paths_info(repo, rev, body)
            if action == "preupload" and method == "POST":
                return self._preupload(repo, rev, json.loads(body))
            if action == "commit" and method == "POST":
                return self._commit(repo, rev, query, body)
            if action == "tag" and method == "POST":
                return self._tag(repo, rev, json.loads(body))
            return self._error(404, f"no route for {method} {action}")

        def _commit_or_404(self, repo: Repo, rev: str, head: bool = False) -> Commit | None:
            commit = repo.resolve(rev)
            if commit is None:
                self._error(404, f"Invalid rev id: {rev}", "RevisionNotFound", head=head)
            return commit

        def _info(self, repo: Repo, rev: str) -> None:
            commit = self._commit_or_404(repo, rev)
            if commit:
                siblings = [{"rfilename": p} for p in sorted(commit.files)]
                self._json(200, {"id": repo.repo_id, "sha": commit.oid, "private": repo.private, "siblings": siblings})

        @staticmethod
        def _entry(path: str, data: bytes) -> dict:
            return {"type": "file", "path": path, "size": len(data), "oid": git_hash(data)}

        def _tree(self, repo: Repo, rev: str, prefix: str, query: dict) -> None:
            commit = self._commit_or_404(repo, rev)
            if not commit:
                return
            recursive = query.get("recursive", "False").lower() == "true"
            base = f"{prefix}/" if prefix else ""
            entries, folders = [], set()
            for path in sorted(commit.files):
                if not path.startswith(base):
                    continue
                tail = path[len(base) :]
                if "/" in tail and not recursive:
                    folders.add(base + tail.split("/", 1)[0])
                    continue
                if recursive:
                    parts = tail.split("/")[:-1]
                    folders.update(base + "/".join(parts[: i + 1]) for i in range(len(parts)))
                entries.append(self._entry(path, commit.files[path]))
            entries += [{"type": "directory", "path": f, "oid": git_hash(f.encode())} for f in sorted(folders)]
            self._json(200, entries)

        def _paths_info(self, repo: Repo, rev: str, body: bytes) -> None:
            commit = self._commit_or_404(repo, rev)
            if commit:
                paths = parse_qs(body.decode()).get("paths", [])
                self._json(200, [self._entry(p, commit.files[p]) for p in paths if p in commit.files])

        def _preupload(self, repo: Repo, rev: str, payload: dict) -> None:
            commit = repo.resolve(rev)
            files = commit.files if commit else {}
            answer = []
            for f in payload["files"]:
                item = {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                if f["path"] in files:
                    item["oid"] = git_hash(files[f["path"]])
                answer.append(item)
            self._json(200, {"files": answer, "commitOid": commit.oid if commit else None})

        def _commit(self, repo: Repo, rev: str, query: dict, body: bytes) -> None:
            with hub.lock:
                if hub.fail_commits:
                    hub.fail_commits -= 1
                    return self._error(500, "Internal Error (injected)")
            lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
            header = lines[0]["value"]
            parent = self._commit_or_404(repo, rev)
            if not parent:
                return
            if header.get("parentCommit") and not parent.oid.startswith(header["parentCommit"]):
                return self._error(412, "A commit has happened since. Please refresh and try again.")
            files = dict(parent.files)
            for line in lines[1:]:
                value = line["value"]
                if line["key"] == "file":
                    files[value["path"]] = base64.b64decode(value["content"])
                elif line["key"] == "deletedFile":
                    files.pop(value["path"], None)
                elif line["key"] == "deletedFolder":
                    files = {p: d for p, d in files.items() if not p.startswith(value["path"].rstrip("/") + "/")}
                else:
                    return self._error(400, f"the fake hub does not support {line['key']}")
            with hub.lock:
                commit = Commit(hub.new_oid(repo.repo_id), parent.oid, header["summary"], files)
                repo.commits[commit.oid] = commit
                pr_url = None
                if query.get("create_pr") == "1":
                    repo.pulls.append(commit.oid)
                    pr_url = f"{hub.url}/datasets/{repo.repo_id}/discussions/{len(repo.pulls)}"
                else:
                    repo.branches[rev] = commit.oid
                if hub.fail_commits_after_apply:
                    hub.fail_commits_after_apply -= 1
                    return self._error(500, "Internal Error after commit (injected)")
            url = f"{hub.url}/datasets/{repo.repo_id}/commit/{commit.oid}"
            self._json(200, {"commitUrl": url, "commitOid": commit.oid, "pullRequestUrl": pr_url})

        def _tag(self, repo: Repo, rev: str, payload: dict) -> None:
            commit = self._commit_or_404(repo, rev)
            if not commit:
                return
            with hub.lock:
                if hub.fail_tags:
                    hub.fail_tags -= 1
                    return self._error(500, "Internal Error (injected)")
            if payload["tag"] in repo.tags:
                return self._error(409, f"Tag {payload['tag']} already exists")
            repo.tags[payload["tag"]] = commit.oid
            self._json(200, {})

        def _resolve(self, method: str, repo: Repo, rev: str, path: str) -> None:
            head = method == "HEAD"
            commit = self._commit_or_404(repo, rev, head=head)
            if not commit:
                return
            if path not in commit.files:
                return self._error(
                    404, "Entry not found", "EntryNotFound", head=head, extra={"X-Repo-Commit": commit.oid}
                )
            data = commit.files[path]
            headers = {"X-Repo-Commit": commit.oid, "ETag": f'"{git_hash(data)}"'}
            self._send(200, data, headers, head=head)

    return Handler
