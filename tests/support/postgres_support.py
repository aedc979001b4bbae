"""A real PostgreSQL server for the tests: initdb into a temporary folder, started on a free port.

The binaries come from what ``scripts/setup.sh`` installs (Debian's ``postgresql``). PostgreSQL refuses to run
as root, so under root the server runs as the ``postgres`` system user. Clients log in over TCP with a
password (scram), the way a deployment does; the password reaches them through ``PGPASSWORD``."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from metaclaw_plugin.infra.procs import free_port

PASSWORD = "metaclaw-test-secret"


def find_bin_dir() -> Path | None:
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(d, "pg_ctl").exists():
            return Path(d)
    found = shutil.which("pg_ctl")
    return Path(found).parent if found else None


def missing_reason() -> str | None:
    if find_bin_dir() is None:
        return "PostgreSQL server binaries not found (scripts/setup.sh installs Debian's postgresql)"
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as e:
        return f"the postgres extra is not installed ({e}); scripts/setup.sh installs it"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser: cannot start PostgreSQL as a non-root user"
    return None


@dataclass
class PgServer:
    bin_dir: Path
    data: Path
    port: int
    as_user: list[str]
    root: Path

    @property
    def url(self) -> str:
        return f"postgresql://metaclaw@127.0.0.1:{self.port}/metaclaw"

    def _ctl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [*self.as_user, str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-w", "-t", "60", *args]
        return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=90)

    def start(self) -> None:
        opts = f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        self._ctl("-l", str(self.data / "server.log"), "-o", opts, "start")

    def stop(self, mode: str = "fast") -> None:
        self._ctl("-m", mode, "stop", check=False)

    def destroy(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    def log_tail(self) -> str:
        try:
            return (self.data / "server.log").read_text()[-3000:]
        except OSError:
            return ""


def start_server() -> PgServer:
    """initdb into a new folder under the system temp dir (the ``postgres`` user must reach it) and start it."""
    bin_dir = find_bin_dir()
    assert bin_dir is not None
    as_user: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="metaclaw-pg-"))
    root.chmod(0o755)
    if os.geteuid() == 0:
        as_user = ["runuser", "-u", "postgres", "--"]
        shutil.chown(root, "postgres")
    data = root / "data"
    pwfile = Path(tempfile.mkdtemp()) / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if as_user:
        shutil.chown(pwfile.parent, "postgres")
        shutil.chown(pwfile, "postgres")
    subprocess.run(
        [*as_user, str(bin_dir / "initdb"), "-D", str(data), "-U", "metaclaw", "--pwfile", str(pwfile)]
        + ["--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    shutil.rmtree(pwfile.parent, ignore_errors=True)
    srv = PgServer(bin_dir, data, free_port(), as_user, root)
    srv.start()
    subprocess.run(
        [*as_user, str(bin_dir / "createdb"), "-h", str(data), "-p", str(srv.port), "-U", "metaclaw", "metaclaw"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return srv


@pytest.fixture(scope="session")
def pg_server():
    reason = missing_reason()
    if reason:
        pytest.skip(f"NO POSTGRESQL: {reason}")
    srv = start_server()
    os.environ["PGPASSWORD"] = PASSWORD
    try:
        yield srv
    finally:
        srv.destroy()


_db_counter = iter(range(1, 10_000))


@pytest.fixture
def pg_url(pg_server: PgServer, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh, empty database on the shared server: its URL (the password comes from PGPASSWORD)."""
    import psycopg

    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    name = f"t{os.getpid()}_{next(_db_counter)}_{int(time.time() * 1000) % 100000}"
    with psycopg.connect(pg_server.url, autocommit=True) as c:
        c.execute(f'CREATE DATABASE "{name}"')
    return f"postgresql://metaclaw@127.0.0.1:{pg_server.port}/{name}"
