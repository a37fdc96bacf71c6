"""The cluster lock: a scripted run owns the cluster while it measures it.

Two things could drive the variants during a run: the in-cluster Locust (``no_other_load.py``) and another
scripted run, from this clone or another, this machine or another that reaches the same cluster. The
lock is a ConfigMap, ``<release>-run-lock`` (``liveness-lab-run-lock``) in the release's namespace: creating an object that exists
fails atomically in the API server (409 AlreadyExists), so it works across clones and machines and needs
no flock (macOS has none). It holds owner, host, pid, script, command, clone, started and expires (epoch
seconds) and a token.

A holder is stale when its expiry has passed (its run could not last that long) or, on this host, when
its pid is gone or is no longer its run. A stale lock is taken over by a replace that names the
resourceVersion read (409 Conflict otherwise), so two runs that both found it stale cannot both win.
A run that starts others (the lab, or a user's script) passes its token on in ``LIVENESS_LAB_LOCK_TOKEN``:
a run that finds that token in the lock runs under it, takes nothing and gives nothing back.

The store is the Kubernetes API (``ConfigMapStore``); the tests drive it with the API's recorded answers.
"""

import os
import random
import subprocess
import time
from dataclasses import dataclass, field

from liveness_lab.base.console import LOG
from liveness_lab.base.exits import SetupError

LOCK_NAME = "liveness-lab-run-lock"  # the default release's; lock_name() gives each release its own


def lock_name(release: str) -> str:
    """The lock of RELEASE: ``<release>-run-lock`` in its namespace, so two releases (in one namespace or
    two) never share one."""
    return f"{release}-run-lock"


TOKEN_ENV = "LIVENESS_LAB_LOCK_TOKEN"
ATTEMPTS = 3


class AlreadyExists(Exception):
    """The lock exists (the API's 409 on create)."""


class Conflict(Exception):
    """The lock changed since it was read (the API's 409 on a replace naming an old resourceVersion)."""


class Unavailable(Exception):
    """The API refused for another reason (no cluster, no permission)."""


def utc(epoch) -> str:
    """Epoch seconds as '2026-11-24 15:00:00 UTC' (the text as given when it is not a number)."""
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(int(epoch)))
    except (TypeError, ValueError):
        return str(epoch)


@dataclass(frozen=True)
class LockRecord:
    """The lock as read: its resourceVersion and its fields."""

    resource_version: str
    data: dict = field(default_factory=dict)

    def get(self, key: str) -> str:
        return str(self.data.get(key, ""))

    def holder(self) -> str:
        """The holder in one line, for messages."""
        g = self.get
        return (
            f"{g('owner')} (pid {g('pid')} on {g('host')}, clone {g('clone')}) since {utc(g('started'))}, "
            f"until {utc(g('expires'))} at the latest: {g('command')}"
        )


class ConfigMapStore:
    """The lock object in the API, through the official client's CoreV1Api (or anything with its four
    config-map calls: the tests pass recorded answers)."""

    def __init__(self, core_v1, namespace: str, name: str = LOCK_NAME):
        self.api, self.namespace, self.name = core_v1, namespace, name

    @staticmethod
    def _status(e) -> int | None:
        return getattr(e, "status", None)

    def _body(self, data: dict, resource_version: str | None = None) -> dict:
        meta = {"name": self.name}
        if resource_version is not None:
            meta["resourceVersion"] = resource_version
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {k: str(v) for k, v in data.items()}}

    def create(self, data: dict) -> None:
        try:
            self.api.create_namespaced_config_map(self.namespace, self._body(data))
        except Exception as e:
            if self._status(e) == 409:
                raise AlreadyExists(str(e)) from e
            raise Unavailable(_short(e)) from e

    def read(self) -> LockRecord | None:
        try:
            cm = self.api.read_namespaced_config_map(self.name, self.namespace)
        except Exception as e:
            if self._status(e) == 404:
                return None
            raise Unavailable(_short(e)) from e
        cm = _as_dict(self.api, cm)
        return LockRecord(str(cm["metadata"].get("resourceVersion", "")), dict(cm.get("data") or {}))

    def replace(self, resource_version: str, data: dict) -> None:
        try:
            self.api.replace_namespaced_config_map(self.name, self.namespace, self._body(data, resource_version))
        except Exception as e:
            if self._status(e) == 409:
                raise Conflict(str(e)) from e
            raise Unavailable(_short(e)) from e

    def delete(self) -> None:
        try:
            self.api.delete_namespaced_config_map(self.name, self.namespace)
        except Exception as e:
            if self._status(e) != 404:
                raise Unavailable(_short(e)) from e


def _as_dict(api, obj) -> dict:
    """An API object as the API's JSON (camelCase), whether the client gave a model or a dict."""
    if isinstance(obj, dict):
        return obj
    return api.api_client.sanitize_for_serialization(obj)


def _short(e: Exception) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:240]


def process_command(pid: str) -> str | None:
    """The command line of PID on this host (``ps``, the same on Linux and macOS), None when it is gone."""
    try:
        out = subprocess.run(["ps", "-p", str(int(pid)), "-o", "command="], capture_output=True, text=True, timeout=10)
    except (ValueError, OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


# A holder's pid still runs its run when its command names its script (demo.sh, lab.sh: a bash run) or
# this package (the Python run the scripts exec into).
RUN_MARKS = ("liveness_lab",)


def stale_reason(record: LockRecord, now: float, host: str, command_of=process_command) -> str | None:
    """Why the holder is gone, or None when it may still be running."""
    expires = record.get("expires")
    if expires.isdigit() and now > int(expires):
        return f"its run would have ended by {utc(expires)}"
    if record.get("host") != host:
        return None  # another machine: only the expiry can tell
    pid = record.get("pid")
    cmd = command_of(pid)
    if not cmd:
        return f"pid {pid} is gone from this host"
    script = record.get("script")
    if (script and script in cmd) or any(mark in cmd for mark in RUN_MARKS):
        return None
    return f"pid {pid} on this host is now another program ({cmd})"


@dataclass
class Claim:
    """This run's hold on the cluster: its token, and whether it took the lock (a child of the run that
    did, running under it, gives nothing back)."""

    store: ConfigMapStore
    token: str
    owned: bool
    clear: str  # the command that clears the lock by hand
    environ: dict | None = None  # where the token was passed on

    def release(self) -> None:
        """Removes the lock if this run took it and it is still this run's."""
        if not self.owned:
            return
        self.owned = False
        if self.environ is not None and self.environ.get(TOKEN_ENV) == self.token:
            del self.environ[TOKEN_ENV]
        try:
            record = self.store.read()
            if record is None:
                return
            if record.get("token") == self.token:
                self.store.delete()
            else:
                LOG.warning("the cluster lock is no longer this run's (now: %s): left as it is", record.holder())
        except Unavailable:
            LOG.warning("could not remove the cluster lock: %s", self.clear)


class ClusterLock:
    """Takes the lock for a run (``claim``), or says who holds it and how to clear it."""

    def __init__(
        self,
        store: ConfigMapStore,
        context: str,
        environ=None,
        host: str | None = None,
        pid: int | None = None,
        clock=time.time,
        command_of=process_command,
        clone: str = "",
    ):
        self.store, self.context = store, context
        self.environ = os.environ if environ is None else environ
        self.host = os.uname().nodename if host is None else host  # as `uname -n` says it
        self.pid = os.getpid() if pid is None else pid
        self.clock, self.command_of, self.clone = clock, command_of, clone

    @property
    def clear(self) -> str:
        return f"kubectl --context {self.context} -n {self.store.namespace} delete configmap {self.store.name}"

    def claim(self, script: str, seconds: int, command: str) -> Claim:
        """This run (SCRIPT, e.g. demo.sh, lasting SECONDS at most, started as COMMAND) holds the cluster,
        or SetupError naming the holder and how to clear the lock. Sets LIVENESS_LAB_LOCK_TOKEN for the
        runs it starts."""
        inherited = self.environ.get(TOKEN_ENV)
        if inherited:
            return self._under_parent(inherited)
        now = int(self.clock())
        token = f"{self.host}-{self.pid}-{now}-{random.randrange(10**9)}"
        entry = {
            "owner": f"{os.environ.get('USER') or 'someone'}@{self.host}",
            "host": self.host,
            "pid": str(self.pid),
            "script": script,
            "command": command,
            "clone": self.clone,
            "started": str(now),
            "expires": str(now + int(seconds)),
            "token": token,
        }
        for _ in range(ATTEMPTS):
            try:
                self.store.create(entry)
                LOG.info(
                    "cluster lock taken (configmap %s in %s, until %s at the latest)",
                    self.store.name,
                    self.store.namespace,
                    utc(now + int(seconds)),
                )
                return self._taken(token)
            except AlreadyExists:
                pass
            except Unavailable as e:
                raise SetupError(f"could not take the cluster lock: {e}", "is the cluster up? scripts/cluster-up.sh") from e
            record = self._read()
            if record is None:
                continue  # given back between our create and our read: try again
            why = stale_reason(record, self.clock(), self.host, self.command_of)
            if why is None:
                raise SetupError(
                    f"another scripted run holds the cluster: {record.holder()}",
                    "wait for it to end (two runs would swarm the same pods and each count the other's load). "
                    f"If that run is gone and its lock was left behind: {self.clear}",
                )
            try:
                self.store.replace(record.resource_version, entry)
            except Conflict:
                continue  # someone else took it over first: look again
            except Unavailable as e:
                raise SetupError(f"could not take the cluster lock: {e}", "is the cluster up? scripts/cluster-up.sh") from e
            LOG.warning("took over a stale cluster lock (%s): %s", why, record.holder())
            return self._taken(token)
        raise SetupError(
            f"could not take the cluster lock after {ATTEMPTS} attempts (it keeps changing hands)", f"try again; to clear it: {self.clear}"
        )

    def _read(self) -> LockRecord | None:
        try:
            return self.store.read()
        except Unavailable as e:
            raise SetupError(f"could not read the cluster lock: {e}", "is the cluster up? scripts/cluster-up.sh") from e

    def _taken(self, token: str) -> Claim:
        self.environ[TOKEN_ENV] = token
        return Claim(self.store, token, True, self.clear, self.environ)

    def _under_parent(self, token: str) -> Claim:
        record = self._read()
        if record is not None and record.get("token") == token:
            LOG.info(
                "the cluster is held by the run that started this one (%s, pid %s): running under its lock",
                record.get("script"),
                record.get("pid"),
            )
            return Claim(self.store, token, False, self.clear)
        held = f"holder: {record.holder()}" if record is not None else "no lock"
        raise SetupError(
            f"{TOKEN_ENV} is set, but the cluster's lock is not that run's ({held})",
            f"{TOKEN_ENV} is for runs a parent run starts: unset it (unset {TOKEN_ENV}) and run again",
        )
