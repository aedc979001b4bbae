"""The scheduler's signals: sleep windows (midnight, DST, two zones, weekdays), the idle detectors (parsed from
recorded command outputs; logind and host traffic for real on this machine), calendars (an ICS file and URL with
a recurring meeting; Google Calendar's events.list served by a local server)."""

from __future__ import annotations

import json
import stat
import threading
from collections.abc import Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse
from zoneinfo import ZoneInfo

import pytest

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.scheduling.attach import build_signals, file_activity, report
from metaclaw_plugin.scheduling.calendar import BusyCalendar, GoogleSource, IcsSource
from metaclaw_plugin.scheduling.idle import (
    IdleDetector,
    logind_idle,
    macos_idle,
    parse_ioreg,
    parse_logind,
    parse_xprintidle,
    x11_idle,
)
from metaclaw_plugin.scheduling.signals import safe_read
from metaclaw_plugin.scheduling.sleep import SleepWindow
from metaclaw_plugin.types import TurnContext

DATA = Path(__file__).parents[1] / "data" / "sched"


def ts(s: str, zone: str) -> float:
    return datetime.fromisoformat(s).replace(tzinfo=ZoneInfo(zone)).timestamp()


# Sleep window ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("zone", ["America/New_York", "Europe/Berlin"])
def test_sleep_window_across_midnight(zone: str) -> None:
    w = SleepWindow("23:00", "07:00", zone=zone)
    assert not w.read(ts("2026-06-10T22:59:59", zone)).away
    r = w.read(ts("2026-06-10T23:00:00", zone))
    assert r.away and r.until == ts("2026-06-11T07:00:00", zone)
    r = w.read(ts("2026-06-11T03:00:00", zone))  # after midnight: the window of the day before
    assert r.away and r.until == ts("2026-06-11T07:00:00", zone)
    assert not w.read(ts("2026-06-11T07:00:00", zone)).away
    assert w.next_away(ts("2026-06-11T12:00:00", zone)) == (
        ts("2026-06-11T23:00:00", zone),
        ts("2026-06-12T07:00:00", zone),
    )


@pytest.mark.parametrize(
    ("zone", "spring_eve", "fall_eve"),
    [("America/New_York", "2026-03-07", "2026-10-31"), ("Europe/Berlin", "2026-03-28", "2026-10-24")],
)
def test_sleep_window_over_a_dst_change_keeps_wall_clock_ends(zone: str, spring_eve: str, fall_eve: str) -> None:
    w = SleepWindow("23:00", "07:00", zone=zone)
    for eve, hours in ((spring_eve, 7), (fall_eve, 9)):  # an hour shorter in spring, longer in autumn
        start = ts(f"{eve}T23:00:00", zone)
        r = w.read(start + 3600)
        assert r.away and r.until is not None
        assert r.until - start == hours * 3600
        end_local = datetime.fromtimestamp(r.until, ZoneInfo(zone))
        assert (end_local.hour, end_local.minute) == (7, 0)
        assert not w.read(r.until).away and w.read(r.until - 1).away


def test_sleep_window_inside_the_skipped_hour() -> None:
    # 01:00-03:00 on the night New York skips 02:00-03:00 lasts one real hour
    w = SleepWindow("01:00", "03:00", zone="America/New_York")
    start = ts("2026-03-08T01:00:00", "America/New_York")
    r = w.read(start + 60)
    assert r.away and r.until == start + 3600


def test_sleep_window_weekdays_name_the_night_it_starts() -> None:
    zone = "Europe/Berlin"
    w = SleepWindow("23:00", "07:00", days=["fri"], zone=zone)  # 2026-01-09 is a Friday
    assert w.read(ts("2026-01-10T02:00:00", zone)).away  # Friday night, Saturday morning
    assert not w.read(ts("2026-01-10T23:30:00", zone)).away  # Saturday night: no window
    assert not w.read(ts("2026-01-08T23:30:00", zone)).away  # Thursday night
    assert w.next_away(ts("2026-01-10T08:00:00", zone)) == (
        ts("2026-01-16T23:00:00", zone),
        ts("2026-01-17T07:00:00", zone),
    )


def test_bad_timezone_is_a_clear_config_error() -> None:
    from metaclaw_plugin.config import ConfigError

    with pytest.raises(ValueError, match="unknown IANA time zone 'Mars/Olympus'"):
        Settings(scheduler={"timezone": "Mars/Olympus"})
    with pytest.raises(ConfigError, match=r"scheduler\.sleep_days"):
        Settings.load(None, scheduler={"sleep_days": ["someday"]})


# Idle detectors from recorded outputs ------------------------------------------------------------------------------
IOREG = (DATA / "ioreg.txt").read_text()
LOGIND_IDLE = "IdleHint=yes\nIdleSinceHint=1767258000000000\n"
LOGIND_ACTIVE = "IdleHint=no\nIdleSinceHint=0\n"


def test_parsers_read_recorded_outputs() -> None:
    assert parse_ioreg(IOREG) == pytest.approx(1830.263083)
    assert parse_xprintidle("61234\n") == pytest.approx(61.234)
    assert parse_logind(LOGIND_IDLE, 1767258000 + 2400) == pytest.approx(2400)
    assert parse_logind(LOGIND_ACTIVE, 1767258000) == 0.0
    for bad, fn in (("", parse_ioreg), ("X Error: unable to open display\n", parse_xprintidle)):
        with pytest.raises(ValueError):
            fn(bad)
    with pytest.raises(ValueError, match="no IdleHint"):
        parse_logind("Failed to connect to bus: Host is down\n", 0)


def test_detectors_turn_idle_seconds_into_away_present_or_unknown() -> None:
    outputs = {
        ("ioreg",): IOREG,  # 30.5 min idle
        ("xprintidle",): "120000\n",  # 2 min
        ("loginctl", "show-user"): "3\n",
        ("loginctl", "show-session"): LOGIND_IDLE,
    }
    calls: list[list[str]] = []

    def run(argv: list[str]) -> str:
        calls.append(argv)
        return outputs[tuple(argv[:2]) if argv[0] == "loginctl" else (argv[0],)]

    now = 1767258000 + 45 * 60
    mac = IdleDetector("macos", macos_idle(run), 30 * 60, 5 * 60).read(now)
    assert mac.away and not mac.present and mac.until == pytest.approx(now + 1830.263083)
    x11 = IdleDetector("x11", x11_idle(run), 30 * 60, 5 * 60).read(now)
    assert not x11.away and x11.present and x11.detail == "idle 2.0 min"
    lg = IdleDetector("logind", logind_idle(run), 30 * 60, 5 * 60).read(now)
    assert lg.away and lg.detail == "idle 45.0 min"
    assert ["loginctl", "show-session", "3", "-p", "IdleHint", "-p", "IdleSinceHint"] in calls

    def broken(argv: list[str]) -> str:
        raise RuntimeError("xprintidle exited 1: couldn't open display")

    r = IdleDetector("x11", x11_idle(broken), 30 * 60, 5 * 60).read(now)
    assert r.present and not r.away and "unknown" in r.detail  # failing safe: the user counts as present


def test_logind_for_real_on_this_machine() -> None:
    now = datetime.now().timestamp()
    try:
        logind_idle()(now)
        works = True
    except Exception:
        works = False
    named = IdleDetector("logind", logind_idle(), 30 * 60, 5 * 60).read(now)  # named in idle_sources
    default = IdleDetector("logind", logind_idle(), 30 * 60, 5 * 60, optional=True)  # picked by default
    if works:  # a systemd machine with a session: a real reading
        assert named.detail.startswith("idle ") and default.read(now).detail.startswith("idle ")
    else:  # this container has no systemd: named, it fails safe (present); by default it is off here
        assert named.present and not named.away and "unknown" in named.detail, named
        r = default.read(now)
        assert not r.present and not r.away and r.detail.startswith("off here") and default.off is not None


def test_a_default_detector_that_worked_and_then_fails_counts_as_present() -> None:
    answers = iter(["600000\n"])

    def run(argv: list[str]) -> str:
        return next(answers)  # StopIteration after the first answer: the detector broke

    det = IdleDetector("x11", x11_idle(run), 30 * 60, 5 * 60, optional=True)
    assert det.read(0).detail == "idle 10.0 min"
    r = det.read(60)
    assert r.present and "unknown" in r.detail and det.off is None


def test_host_traffic_for_real_in_process_and_across_processes(home: Path) -> None:
    settings = Settings(home=home, scheduler={"idle_sources": ["host"], "sleep_enabled": False})
    plugin = MetaClawPlugin(settings).start()
    try:
        from_file = file_activity(settings.activity_path)
        signals, notes = build_signals(
            settings.scheduler, lambda: max(plugin.last_request_at, from_file()), started=1.0
        )
        (host,) = signals
        assert notes == []
        assert host.read(1.0 + 31 * 60).away  # no request since the process started 31 min ago
        plugin.on_request(TurnContext(session_id="s1"), [{"role": "user", "content": "hi"}])
        now = datetime.now().timestamp()
        r = host.read(now)
        assert r.present and not r.away and plugin.last_request_at <= now
        assert plugin.worker.wait_idle(5)  # the activity file is touched by the worker, off the request path
        assert stat.S_IMODE(settings.activity_path.stat().st_mode) == 0o600
        # another process on the home (here: a fresh report, which reads only the file) sees it too
        seen = report(Settings(home=home, scheduler={"idle_sources": ["host"], "sleep_enabled": False}))
        assert seen["signals"]["host"]["present"] is True
        assert seen["window"]["reason"].startswith("user present (host:")  # mode auto: the window waits for the user
    finally:
        plugin.stop()


# Calendars ------------------------------------------------------------------------------------------------------------
BERLIN = "Europe/Berlin"


def test_ics_recurring_meeting_with_exdate_free_and_all_day_events() -> None:
    cal = BusyCalendar("calendar", IcsSource(str(DATA / "team.ics"), ZoneInfo(BERLIN)))
    r = cal.read(ts("2026-01-12T10:30:00", BERLIN))  # a Monday: the weekly sync, then the follow-up (merged)
    assert r.away and r.until == ts("2026-01-12T11:30:00", BERLIN) and "Weekly sync" in r.detail
    assert not cal.read(ts("2026-01-19T10:30:00", BERLIN)).away  # EXDATE
    assert cal.read(ts("2026-01-26T10:15:00", BERLIN)).until == ts("2026-01-26T11:00:00", BERLIN)
    assert not cal.read(ts("2026-01-13T15:00:00", BERLIN)).away  # TRANSP:TRANSPARENT
    assert not cal.read(ts("2026-01-14T12:00:00", BERLIN)).away  # all-day
    assert cal.next_away(ts("2026-01-12T12:00:00", BERLIN)) == (
        ts("2026-01-26T10:00:00", BERLIN),
        ts("2026-01-26T11:00:00", BERLIN),
    )
    # after the DST change the meeting stays at 10:00 local (08:00 UTC instead of 09:00)
    r = cal.read(ts("2026-03-30T10:30:00", BERLIN))
    assert r.away and r.until == ts("2026-03-30T11:00:00", BERLIN)


class _Server:
    def __init__(self, handler: type[BaseHTTPRequestHandler]):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def ics_server() -> Iterator[_Server]:
    body = (DATA / "team.ics").read_bytes()

    class H(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/calendar")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a: Any) -> None:
            pass

    s = _Server(H)
    yield s
    s.close()


def test_ics_from_a_url_is_fetched_once_per_refresh(ics_server: _Server) -> None:
    src = IcsSource(ics_server.url + "/team.ics", ZoneInfo(BERLIN))
    calls = []

    def counting(a: float, b: float):  # type: ignore[no-untyped-def]
        calls.append(a)
        return src(a, b)

    cal = BusyCalendar("calendar", counting, refresh_s=900)
    t = ts("2026-01-12T10:30:00", BERLIN)
    assert cal.read(t).away and cal.read(t + 60).away
    assert len(calls) == 1
    cal.read(t + 901)
    assert len(calls) == 2


class Google:
    """A local stand-in for Google's token endpoint and Calendar API, answering with the events.list document."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, Any]]] = []
        self.fail_with: int | None = None
        doc = (DATA / "google_events.json").read_bytes()
        outer = self

        class H(BaseHTTPRequestHandler):
            def _send(self, code: int, body: bytes) -> None:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                form = parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
                outer.seen.append(("POST", self.path, form))
                self._send(200, json.dumps({"access_token": "fresh-token", "expires_in": 3599}).encode())

            def do_GET(self) -> None:
                u = urlparse(self.path)
                outer.seen.append(("GET", u.path, {"auth": self.headers.get("Authorization"), **parse_qs(u.query)}))
                if outer.fail_with:
                    self._send(outer.fail_with, b'{"error": {"code": 401, "message": "Invalid Credentials"}}')
                elif self.headers.get("Authorization") != "Bearer fresh-token":
                    self._send(401, b"{}")
                else:
                    self._send(200, doc)

            def log_message(self, *a: Any) -> None:
                pass

        self.server = _Server(H)


@pytest.fixture()
def google() -> Iterator[Google]:
    g = Google()
    yield g
    g.server.close()


NY = "America/New_York"


def test_google_calendar_refreshes_the_token_and_reads_busy_time(google: Google, tmp_path: Path) -> None:
    token = tmp_path / "token.json"
    token.write_text(
        json.dumps(
            {
                "token": "expired-token",
                "refresh_token": "refresh-1",
                "client_id": "cid.apps.googleusercontent.com",
                "client_secret": "shh",
                "token_uri": google.server.url + "/token",
                "expiry": "2020-01-01T00:00:00Z",
            }
        )
    )
    src = GoogleSource(str(token), calendar_id="user@example.com", api_base=google.server.url)
    cal = BusyCalendar("google", src)
    r = cal.read(ts("2026-01-12T10:15:00", NY))  # standup then design review, merged
    assert r.away and r.until == ts("2026-01-12T11:30:00", NY)
    assert not cal.read(ts("2026-01-12T14:00:00", NY)).away  # transparent focus block
    assert not cal.read(ts("2026-01-12T16:30:00", NY)).away  # cancelled
    assert not cal.read(ts("2026-01-13T12:00:00", NY)).away  # all-day
    assert cal.next_away(ts("2026-01-12T12:00:00", NY)) == (
        ts("2026-01-14T09:00:00", NY),
        ts("2026-01-14T12:00:00", NY),
    )
    post, get = google.seen[:2]
    assert [m for m, _, _ in google.seen].count("POST") == 1  # refreshed once, then the saved token is reused
    assert (
        post[1] == "/token" and post[2]["refresh_token"] == ["refresh-1"] and post[2]["grant_type"] == ["refresh_token"]
    )
    assert get[1] == "/calendar/v3/calendars/user%40example.com/events"
    assert get[2]["auth"] == "Bearer fresh-token" and get[2]["singleEvents"] == ["true"]
    saved = json.loads(token.read_text())
    assert saved["token"] == "fresh-token" and saved["refresh_token"] == "refresh-1"
    assert stat.S_IMODE(token.stat().st_mode) == 0o600


def test_google_failure_reads_not_away_and_says_why(google: Google, tmp_path: Path) -> None:
    token = tmp_path / "token.json"
    token.write_text(json.dumps({"token": "revoked"}))
    google.fail_with = 401
    cal = BusyCalendar("google", GoogleSource(str(token), api_base=google.server.url))
    r = safe_read(cal, ts("2026-01-12T10:15:00", NY))
    assert not r.away and not r.present and "HTTP Error 401" in r.detail and "revoked" not in r.detail
    assert cal.error is not None


def test_configured_calendar_without_source_is_reported_off(home: Path) -> None:
    s = Settings(home=home, scheduler={"calendar_enabled": True, "idle_sources": ["host"]})
    _, notes = build_signals(s.scheduler, lambda: 0.0, started=1.0)
    assert notes == ["calendar_enabled is on but neither calendar_path nor google_token_path is set: no calendar"]
    s = Settings(home=home, scheduler={"calendar_path": str(DATA / "team.ics"), "idle_sources": ["host"]})
    _, notes = build_signals(s.scheduler, lambda: 0.0, started=1.0)
    assert notes == ["a calendar is configured but calendar_enabled is off: it is not read"]
