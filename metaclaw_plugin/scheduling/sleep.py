"""The sleep window: a nightly away period in the user's time zone, across midnight and DST changes.

Times are wall-clock times in ``scheduler.timezone`` (default: the machine's local zone). A window belongs to
the day it starts on, and ``sleep_days`` picks those days: with 23:00-07:00 and only ``fri``, the window runs
Friday 23:00 to Saturday 07:00. Across a DST change the window keeps its wall-clock ends, so it lasts an hour
more or less that night (a start or end inside a skipped hour resolves as Python's ``zoneinfo`` does: fold 0).
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, tzinfo
from zoneinfo import ZoneInfo

from .signals import Reading

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def local_zone(name: str | None) -> tzinfo:
    if name:
        return ZoneInfo(name)
    try:
        import tzlocal

        return tzlocal.get_localzone()
    except Exception:
        return datetime.now().astimezone().tzinfo or ZoneInfo("UTC")


def _hhmm(s: str) -> time:
    h, m = s.split(":")
    return time(int(h), int(m))


class SleepWindow:
    name = "sleep"
    activity = False

    def __init__(self, start: str, end: str, days: list[str] | None = None, zone: tzinfo | str | None = None):
        self.start, self.end = _hhmm(start), _hhmm(end)
        self.days = {WEEKDAYS.index(d) for d in (days if days is not None else WEEKDAYS)}
        self.zone = zone if isinstance(zone, tzinfo) else local_zone(zone)

    def _window(self, day: date) -> tuple[float, float] | None:
        """The window that starts on ``day`` (epoch seconds), if that day has one."""
        if day.weekday() not in self.days or self.start == self.end:
            return None
        s = datetime.combine(day, self.start, self.zone)
        e_day = day + timedelta(days=1) if self.end <= self.start else day
        e = datetime.combine(e_day, self.end, self.zone)
        return s.timestamp(), e.timestamp()

    def _around(self, now: float) -> list[tuple[float, float]]:
        today = datetime.fromtimestamp(now, self.zone).date()
        out = [self._window(today + timedelta(days=k)) for k in range(-1, 8)]
        return [w for w in out if w is not None]

    def read(self, now: float) -> Reading:
        for s, e in self._around(now):
            if s <= now < e:
                end = datetime.fromtimestamp(e, self.zone)
                return Reading(away=True, until=e, detail=f"sleep window until {end:%a %H:%M %Z}")
        return Reading(away=False, detail="outside the sleep window")

    def next_away(self, now: float) -> tuple[float, float] | None:
        return next(((s, e) for s, e in self._around(now) if s > now), None)
