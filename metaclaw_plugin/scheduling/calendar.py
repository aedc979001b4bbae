"""Calendar busy time as an away signal: an ICS file or URL, or Google Calendar (read-only).

A timed event that is not marked free (``TRANSP:TRANSPARENT`` / ``transparency: transparent``) and not
cancelled makes the user busy, so away from the agent, until it ends; back-to-back events merge. All-day events
are ignored (a birthday or a holiday marker does not say where the user is). Recurrences are expanded with
``recurring-ical-events`` (extra ``calendar``). Google is read with plain HTTPS and an OAuth authorized-user
token (the JSON that google-auth writes), refreshed with its refresh token when it has expired.

Sources are read in the scheduler's thread (never on the request path) and cached for
``calendar_refresh_minutes``; a source that fails reads as "not away" and the failure is kept for status.
"""

from __future__ import annotations

import json
import os
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any

from .signals import Reading

Interval = tuple[float, float, str]  # start, end (epoch seconds), title
LOOKBACK_S = 24 * 3600.0
LOOKAHEAD_S = 15 * 24 * 3600.0  # next-window looks two weeks ahead


def _ts(v: Any, zone: tzinfo) -> float | None:
    if isinstance(v, datetime):
        return (v if v.tzinfo else v.replace(tzinfo=zone)).timestamp()
    return None  # a date: all-day


def ics_busy(data: bytes | str, start: float, end: float, zone: tzinfo) -> list[Interval]:
    """Busy intervals of an ICS document overlapping [start, end], recurrences expanded."""
    try:
        import icalendar
        import recurring_ical_events
    except ImportError as missing:
        raise RuntimeError(f"{missing.name} is not installed (pip install 'metaclaw-plugin[calendar]')") from None

    cal = icalendar.Calendar.from_ical(data)
    lo = datetime.fromtimestamp(start, UTC)
    hi = datetime.fromtimestamp(end, UTC)
    out: list[Interval] = []
    for ev in recurring_ical_events.of(cal).between(lo, hi):
        if str(ev.get("TRANSP", "OPAQUE")).upper() == "TRANSPARENT" or str(ev.get("STATUS", "")).upper() == "CANCELLED":
            continue
        s = _ts(ev.decoded("DTSTART"), zone)
        e = _ts(ev.decoded("DTEND"), zone) if ev.get("DTEND") is not None else None
        if e is None and s is not None and ev.get("DURATION") is not None:
            e = s + ev.decoded("DURATION").total_seconds()
        if s is None or e is None or e <= s:
            continue
        out.append((s, e, str(ev.get("SUMMARY", ""))))
    return out


def google_busy(doc: dict[str, Any]) -> list[Interval]:
    """Busy intervals from a Calendar API ``events.list`` response (``singleEvents=true``)."""
    out: list[Interval] = []
    for it in doc.get("items") or []:
        if it.get("status") == "cancelled" or it.get("transparency") == "transparent":
            continue
        s, e = (it.get("start") or {}).get("dateTime"), (it.get("end") or {}).get("dateTime")
        if not s or not e:
            continue  # all-day
        a, b = datetime.fromisoformat(s).timestamp(), datetime.fromisoformat(e).timestamp()
        if b > a:
            out.append((a, b, str(it.get("summary", ""))))
    return out


def _get(url: str, headers: dict[str, str] | None = None, data: bytes | None = None) -> bytes:
    req = urllib.request.Request(url, data=data, headers=headers or {})
    with urllib.request.urlopen(req, timeout=20) as r:
        body: bytes = r.read(20_000_000)
        return body


class IcsSource:
    """An ICS file path or an http(s) URL."""

    def __init__(self, where: str, zone: tzinfo):
        self.where, self.zone = where, zone
        self.is_url = where.startswith(("http://", "https://"))

    def __call__(self, start: float, end: float) -> list[Interval]:
        data = _get(self.where) if self.is_url else Path(self.where).expanduser().read_bytes()
        return ics_busy(data, start, end, self.zone)


class GoogleSource:
    """Google Calendar ``events.list`` with a bearer token; refreshes an expired token and saves it (0600)."""

    def __init__(
        self,
        token_path: str,
        credentials_path: str | None = None,
        calendar_id: str = "primary",
        api_base: str = "https://www.googleapis.com",
    ):
        self.token_path = Path(token_path).expanduser()
        self.credentials_path = Path(credentials_path).expanduser() if credentials_path else None
        self.calendar_id = calendar_id
        self.api_base = api_base.rstrip("/")

    def _token(self) -> str:
        tok = json.loads(self.token_path.read_text())
        expiry = tok.get("expiry")
        expired = bool(expiry) and datetime.fromisoformat(expiry.replace("Z", "+00:00")).timestamp() < time.time() + 60
        if (expired or not tok.get("token")) and tok.get("refresh_token"):
            tok = self._refresh(tok)
        if not tok.get("token"):
            raise RuntimeError(f"{self.token_path} holds no access token and no refresh token")
        return str(tok["token"])

    def _refresh(self, tok: dict[str, Any]) -> dict[str, Any]:
        client = {k: tok.get(k) for k in ("client_id", "client_secret")}
        if not client["client_id"] and self.credentials_path:
            creds = json.loads(self.credentials_path.read_text())
            creds = creds.get("installed") or creds.get("web") or creds
            client = {k: creds.get(k) for k in ("client_id", "client_secret")}
        form = urllib.parse.urlencode(
            {
                "grant_type": "refresh_token",
                "refresh_token": tok["refresh_token"],
                **{k: v for k, v in client.items() if v},
            }
        ).encode()
        uri = tok.get("token_uri") or "https://oauth2.googleapis.com/token"
        resp = json.loads(_get(uri, {"Content-Type": "application/x-www-form-urlencoded"}, form))
        tok = {**tok, "token": resp["access_token"]}
        if resp.get("expires_in"):
            tok["expiry"] = datetime.fromtimestamp(time.time() + float(resp["expires_in"]), UTC).isoformat()
        tmp = self.token_path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(tok, f)
        os.replace(tmp, self.token_path)
        return tok

    def __call__(self, start: float, end: float) -> list[Interval]:
        q = urllib.parse.urlencode(
            {
                "timeMin": datetime.fromtimestamp(start, UTC).isoformat(),
                "timeMax": datetime.fromtimestamp(end, UTC).isoformat(),
                "singleEvents": "true",
                "orderBy": "startTime",
                "maxResults": "250",
            }
        )
        cal = urllib.parse.quote(self.calendar_id, safe="")
        url = f"{self.api_base}/calendar/v3/calendars/{cal}/events?{q}"
        return google_busy(json.loads(_get(url, {"Authorization": f"Bearer {self._token()}"})))


def merge(intervals: list[Interval]) -> list[Interval]:
    out: list[Interval] = []
    for s, e, t in sorted(intervals):
        if out and s <= out[-1][1]:
            ps, pe, pt = out[-1]
            out[-1] = (ps, max(pe, e), f"{pt}; {t}" if t and t not in pt else pt)
        else:
            out.append((s, e, t))
    return out


class BusyCalendar:
    """The away signal of one calendar source, cached for ``refresh_s``."""

    activity = False

    def __init__(self, name: str, source: Callable[[float, float], list[Interval]], refresh_s: float = 900.0):
        self.name, self.source, self.refresh_s = name, source, float(refresh_s)
        self._blocks: list[Interval] = []
        self._read_at: float | None = None
        self.error: str | None = None

    def blocks(self, now: float) -> list[Interval]:
        if self._read_at is None or now - self._read_at >= self.refresh_s or now < self._read_at:
            self._read_at = now
            try:
                self._blocks = merge(self.source(now - LOOKBACK_S, now + LOOKAHEAD_S))
                self.error = None
            except Exception as e:
                self._blocks, self.error = [], f"{type(e).__name__}: {str(e)[:200]}"
        if self.error:
            raise RuntimeError(self.error)
        return self._blocks

    def read(self, now: float) -> Reading:
        for s, e, t in self.blocks(now):
            if s <= now < e:
                return Reading(
                    away=True, until=e, detail=f"busy ({t or 'event'}) until {datetime.fromtimestamp(e):%H:%M}"
                )
        return Reading(away=False, detail="no event now")

    def next_away(self, now: float) -> tuple[float, float] | None:
        return next(((s, e) for s, e, _ in self.blocks(now) if s > now), None)
