"""When the host counts as quiet for the plugin's own calls (``hosttraffic.py``), on a clock the test moves.

The waits themselves, against a real host and its requests, are in ``tests/host_litellm/test_give_way.py``.
"""

from __future__ import annotations

from metaclaw_plugin.hosttraffic import POLL_S, GiveWay, GiveWayPolicy, HostTraffic


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_quiet_after_the_last_request_ends_and_the_quiet_time_passes() -> None:
    clock, policy = Clock(), GiveWayPolicy(quiet_s=0.5, max_wait_s=30)
    t = HostTraffic(0, clock)
    assert t.quiet_in(policy) == 0  # a host that never had a request is quiet
    t.start()
    t.start()
    assert t.in_flight() == 2 and t.quiet_in(policy) == POLL_S  # busy: look again soon
    clock.now += 10
    t.end()
    assert t.in_flight() == 1 and t.quiet_in(policy) == POLL_S
    t.end()
    assert t.in_flight() == 0 and t.quiet_in(policy) == 0.5  # quiet once nothing starts for quiet_s
    clock.now += 0.3
    assert abs(t.quiet_in(policy) - 0.2) < 1e-9
    clock.now += 0.2
    assert t.quiet_in(policy) == 0


def test_a_host_under_its_in_flight_threshold_counts_as_quiet() -> None:
    clock, policy = Clock(), GiveWayPolicy(quiet_s=0.5, quiet_in_flight=2, max_wait_s=30)
    t = HostTraffic(2, clock)
    t.start()
    t.start()
    clock.now += 1
    assert t.in_flight() == 2 and t.quiet_in(policy) == 0  # two in flight is light load here
    t.start()  # a third: busy
    assert t.quiet_in(policy) == POLL_S
    clock.now += 1
    t.end()  # back to two: quiet after quiet_s from this end
    assert t.quiet_in(policy) == 0.5
    clock.now += 0.5
    t.end()  # an end at or under the threshold does not restart the quiet time
    assert t.quiet_in(policy) == 0


def test_requests_in_flight_with_no_sign_of_life_for_the_bound_count_as_gone() -> None:
    """An answer the host never reported (a client gone mid-stream) must not hold every later call to the bound."""
    clock, policy = Clock(), GiveWayPolicy(quiet_s=0.5, max_wait_s=30)
    t = HostTraffic(0, clock)
    t.start()
    clock.now += 29.9
    assert t.quiet_in(policy) == POLL_S
    clock.now += 0.1
    assert t.in_flight() == 1 and t.quiet_in(policy) == 0


def test_an_end_never_counted_as_a_start_does_not_go_below_none() -> None:
    t = HostTraffic(0, Clock())
    t.end()
    assert t.in_flight() == 0


def test_off_and_closed_go_at_once() -> None:
    off = GiveWay(GiveWayPolicy(enabled=False))
    off.traffic.start()  # busy, but the policy is off
    off.wait()
    assert off.status()["calls"] == 1 and off.status()["waited"] == 0
    assert "off" in off.policy.describe()
    quiet = GiveWay(GiveWayPolicy(quiet_s=0.5))
    quiet.wait()  # nothing ever in flight: at once, not counted as a wait
    assert (quiet.counts.calls, quiet.counts.waited) == (1, 0)
    busy = GiveWay(GiveWayPolicy(max_wait_s=3600))
    busy.traffic.start()
    busy.close()  # the plugin stopping: a busy host holds no call back
    busy.wait()
    assert (busy.counts.calls, busy.counts.waited) == (1, 0)
    assert "more than 2 requests" in GiveWayPolicy(quiet_in_flight=2).describe()
