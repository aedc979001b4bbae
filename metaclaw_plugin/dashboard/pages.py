"""The dashboard's HTML, drawn on the server. Every value that comes from a skill, a session or the database is
escaped here (skill text is untrusted: it may come from an evolver fed by user messages). Charts are Plotly
figures written as JSON into ``<script type="application/json">`` (``<`` escaped), drawn by static/dashboard.js
with the plotly.js bundle that the ``plotly`` package ships; no inline script, no CDN."""

from __future__ import annotations

import json
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

from ..text import local_time, message_text
from .data import SkillRow, windows

NAV = [
    ("/", "Skills"),
    ("/memory", "Memory"),
    ("/sessions", "Sessions"),
    ("/training", "Training"),
    ("/scheduler", "Scheduler"),
]
MEMORY_STATUSES = ("active", "quarantined", "superseded", "expired", "forgotten", "all")


def e(v: Any) -> str:
    return escape("" if v is None else str(v), quote=True)


def _num(v: float | None, fmt: str = "{:+.2f}") -> str:
    return "-" if v is None else fmt.format(v)


def _when(ts: float | None) -> str:
    return local_time(ts, "-")


def layout(title: str, active: str, body: str, *, charts: bool = False, notice: str | None = None) -> str:
    nav = " ".join(f'<a href="{href}"{" class=on" if href == active else ""}>{e(label)}</a>' for href, label in NAV)
    scripts = '<script src="/static/plotly.min.js"></script>' if charts else ""
    flash = f'<p class="notice">{e(notice)}</p>' if notice else ""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{e(title)} · metaclaw</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="/static/dashboard.css">'
        f'{scripts}<script src="/static/dashboard.js" defer></script></head><body>'
        f"<header><b>metaclaw</b> <nav>{nav}</nav>"
        '<form method="post" action="/logout" class="inline"><button>sign out</button></form></header>'
        f"<main><h1>{e(title)}</h1>{flash}{body}</main></body></html>"
    )


def login(error: str | None = None, next_path: str = "/") -> str:
    err = f'<p class="error">{e(error)}</p>' if error else ""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>metaclaw · sign in</title>"
        '<link rel="stylesheet" href="/static/dashboard.css"></head><body><main class="login">'
        "<h1>metaclaw dashboard</h1>"
        "<p>Paste the token from <code>$METACLAW_HOME/server.token</code> (or open the link that "
        "<code>metaclaw-plugin serve</code> prints).</p>"
        f'{err}<form method="post" action="/login"><input type="hidden" name="next" value="{e(next_path)}">'
        '<input type="password" name="token" autocomplete="current-password" autofocus required>'
        "<button>sign in</button></form></main></body></html>"
    )


def chart(chart_id: str, fig: dict[str, Any]) -> str:
    data = (
        json.dumps(fig, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    )
    return (
        f'<div class="chart" id="{e(chart_id)}"></div>'
        f'<script type="application/json" data-chart="{e(chart_id)}">{data}</script>'
    )


def _action(name: str, action: str, csrf: str, label: str | None = None) -> str:
    return (
        f'<form method="post" action="/skills/{quote(name, safe="")}/{action}" class="inline">'
        f'<input type="hidden" name="csrf" value="{e(csrf)}">'
        f'<button name="do" value="{action}" data-skill="{e(name)}">{e(label or action)}</button></form>'
    )


def skills_page(rows: list[SkillRow], csrf: str, notice: str | None = None) -> str:
    counts: dict[str, int] = {}
    for r in rows:
        key = r.status.split(" ")[0]
        counts[key] = counts.get(key, 0) + 1
    summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    body = [
        f"<p>{len(rows)} skills: {e(summary)}. Rewards are the mean score of the scored main turns that "
        "carried the skill, and of those that did not.</p>"
    ]
    body.append(
        "<table id=skills><thead><tr><th>name</th><th>status</th><th>origin</th><th>kind</th><th>ver</th>"
        "<th>gen</th><th>uses</th><th>reward with</th><th>without</th><th>trial</th><th></th></tr></thead><tbody>"
    )
    for r in rows:
        if r.error is not None:
            body.append(
                f'<tr data-skill="{e(r.name)}" class=error><td>{e(r.name)}</td><td class="status st-error">error</td>'
                f"<td colspan=9>{e(r.error)}</td></tr>"
            )
            continue
        t = r.trial
        trial = (
            f"with {t['s_with']}/{t['n_with']} ok, without {t['s_without']}/{t['n_without']} ok, "
            f"P(better) {t['p_better']:.2f}"
            if t
            else ""
        )
        actions = "".join(
            [
                _action(r.name, "approve", csrf) if r.can_approve else "",
                _action(r.name, "retire", csrf) if r.can_retire else "",
                _action(r.name, "rollback", csrf) if r.can_rollback else "",
            ]
        )
        body.append(
            f'<tr data-skill="{e(r.name)}"><td title="{e(r.description)}">{e(r.name)}</td>'
            f'<td class="status st-{e(r.status.split(" ")[0])}">{e(r.status)}</td><td>{e(r.origin)}</td>'
            f"<td>{e(r.kind)}</td><td>{r.version}</td><td>{r.generation}</td><td>{r.uses}</td>"
            f"<td>{_num(r.reward_with)}</td><td>{_num(r.reward_without if r.uses else None)}</td><td>{e(trial)}</td>"
            f"<td class=actions>{actions}</td></tr>"
        )
    body.append("</tbody></table>")
    return layout("Skills", "/", "".join(body), notice=notice)


def sessions_page(total: int, rows: list[dict[str, Any]], offset: int, limit: int) -> str:
    if not rows:
        return layout("Sessions", "/sessions", "<p>No sessions recorded yet.</p>")
    body = [f"<p>{total} sessions, most recent first ({offset + 1}-{offset + len(rows)}).</p>"]
    body.append(
        "<table id=sessions><thead><tr><th>session</th><th>tenant</th><th>host</th><th>last turn</th><th>turns</th>"
        "<th>mean reward</th><th>outcome</th><th>skills carried</th></tr></thead><tbody>"
    )
    for r in rows:
        link = f"/sessions/{quote(r['session_id'], safe='')}?tenant={quote(r['tenant'], safe='')}"
        outcome = r["outcome"] or {}
        out = "ended" if r["ended_at"] else "open"
        if "success" in outcome:
            out += ", success" if outcome["success"] else ", failed"
        body.append(
            f'<tr><td><a href="{e(link)}">{e(r["session_id"])}</a></td><td>{e(r["tenant"])}</td>'
            f"<td>{e(r['host'])}</td><td>{_when(r['last_at'])}</td><td>{r['turn_count']}</td>"
            f"<td>{_num(r['mean_reward'])} ({r['scored']} scored)</td><td>{e(out)}</td>"
            f"<td>{e(', '.join(r['injected']))}</td></tr>"
        )
    body.append("</tbody></table>")
    nav = []
    if offset > 0:
        nav.append(f'<a href="/sessions?offset={max(0, offset - limit)}">newer</a>')
    if offset + limit < total:
        nav.append(f'<a href="/sessions?offset={offset + limit}">older</a>')
    body.append(f"<p>{' · '.join(nav)}</p>")
    return layout("Sessions", "/sessions", "".join(body))


def _text(msg: dict[str, Any] | None, limit: int = 2000) -> str:
    if not msg:
        return ""
    s = message_text(msg)
    return s if len(s) <= limit else s[:limit] + " …"


def session_page(session: Any, rewards: dict[str, list[dict[str, Any]]]) -> str:
    body = [
        f"<p>tenant {e(session.tenant)}, host {e(session.host)}, started {_when(session.started_at)}, "
        f"{'ended ' + _when(session.ended_at) if session.ended_at else 'open'}"
        f"{', outcome ' + e(json.dumps(session.outcome)) if session.outcome else ''}.</p>"
    ]
    for t in session.turns:
        user = next((m for m in reversed(t.messages) if m.get("role") == "user"), None)
        rw = ", ".join(f"{r['source']} {r['score']:+g}" for r in rewards.get(t.turn_id, [])) or "not scored"
        body.append(
            f'<section class="turn"><h2>#{t.seq} {e(t.kind)} · {e(t.model)} · generation {t.skill_generation}</h2>'
            f"<p>skills injected: {e(', '.join(t.injected_skills) or 'none')} · rewards: {e(rw)}</p>"
            f'<pre class="user">{e(_text(user))}</pre><pre class="assistant">{e(_text(t.response))}</pre>'
            + (f'<p class="error">{e(t.error)}</p>' if t.error else "")
            + "</section>"
        )
    return layout(f"Session {session.session_id}", "/sessions", "".join(body))


def _line(title: str, steps: list[dict[str, Any]], key: str, color: str) -> dict[str, Any]:
    pts = [(s["step"], s[key]) for s in steps if s.get(key) is not None]
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "x": [p[0] for p in pts],
                "y": [p[1] for p in pts],
                "name": title,
                "line": {"color": color},
            }
        ],
        "layout": {
            "title": {"text": title},
            "height": 260,
            "margin": {"l": 50, "r": 20, "t": 40, "b": 40},
            "xaxis": {"title": {"text": "step"}},
        },
    }


def _daily_chart(daily: list[dict[str, Any]]) -> dict[str, Any]:
    """Success per day (share of judged main turns rewarded above 0) as bars, the steps taken that day beside."""
    days = [d["day"] for d in daily]
    return {
        "data": [
            {
                "type": "bar",
                "x": days,
                "y": [d["success"] for d in daily],
                "name": "success (judged main turns)",
                "marker": {"color": "#1e8449"},
                "customdata": [[d["positive"], d["judged"]] for d in daily],
                "hovertemplate": "%{x}: %{y:.0%} (%{customdata[0]} of %{customdata[1]})<extra></extra>",
            },
            {
                "type": "scatter",
                "mode": "lines+markers",
                "x": days,
                "y": [d["steps"] for d in daily],
                "name": "training steps",
                "yaxis": "y2",
                "line": {"color": "#7d3c98"},
            },
        ],
        "layout": {
            "title": {"text": "success per day"},
            "height": 260,
            "margin": {"l": 50, "r": 50, "t": 40, "b": 40},
            "xaxis": {"title": {"text": "day"}, "type": "category"},
            "yaxis": {"range": [0, 1], "tickformat": ".0%"},
            "yaxis2": {"overlaying": "y", "side": "right", "rangemode": "tozero", "title": {"text": "steps"}},
            "legend": {"orientation": "h"},
        },
    }


def _daily_section(daily: list[dict[str, Any]], have_plotly: bool) -> list[str]:
    if not any(d["judged"] for d in daily):
        return ["<p id=daily-none>No judged main turns yet: success per day appears once turns get rewards.</p>"]
    out = [chart("chart-daily", _daily_chart(daily))] if have_plotly else []
    out.append(
        "<table id=daily><thead><tr><th>day</th><th>success</th><th>judged turns</th><th>steps</th></tr></thead><tbody>"
    )
    for d in reversed(daily[-14:]):
        out.append(
            f"<tr><td>{e(d['day'])}</td><td>{_num(d['success'], '{:.0%}')}</td><td>{d['judged']}</td>"
            f"<td>{d['steps']}</td></tr>"
        )
    out.append("</tbody></table>")
    return out


def _spend_section(spend: dict[str, Any] | None) -> list[str]:
    """The plugin's own model calls today, per part, against the daily budgets (:func:`.data.model_spend`)."""
    if not spend:
        return []
    hm = spend.get("host_model")
    if spend.get("learning_model") == "host":
        who = (
            f"{e(hm.get('name'))} ({e(hm.get('via'))})"
            if hm
            else "not known yet (the host offers it with its first request)"
        )
        head = f"<p>The host's own model serves the parts with no model of their own: {who}.</p>"
    else:
        head = f"<p>learning.model: {e(spend.get('learning_model'))}.</p>"
    rows = [
        f"<tr><td>{e(part)}</td><td>{b['calls_used']}</td><td>{'-' if b['calls_left'] is None else b['calls_left']}</td>"
        f"<td>{b['tokens_used']}</td><td>{'-' if b['tokens_left'] is None else b['tokens_left']}</td></tr>"
        for part, b in spend.get("budget", {}).items()
    ]
    return [
        "<h2>The plugin's own model calls today</h2>",
        head,
        "<table id=spend><thead><tr><th>part</th><th>calls</th><th>calls left</th><th>tokens</th><th>tokens left</th>"
        "</tr></thead><tbody>",
        *rows,
        "</tbody></table>",
    ]


def training_page(
    steps: list[dict[str, Any]],
    have_plotly: bool,
    daily: list[dict[str, Any]] | None = None,
    spend: dict[str, Any] | None = None,
) -> str:
    """The training curves and, beside them, success per day (``daily``: :func:`.data.daily_success`) and the
    plugin's own model calls (``spend``)."""
    day_part = _daily_section(daily or [], have_plotly) + _spend_section(spend)
    if not steps:
        return layout(
            "Training",
            "/training",
            "<p>No training steps yet. The slow loop writes one row per step (loss, reward, success, samples) "
            "when a trainer runs in an idle window.</p>" + "".join(day_part),
            charts=have_plotly and "chart-daily" in day_part[0],
        )
    last = steps[-1]
    body = [
        f"<p>{len(steps)} steps; the last: step {last['step']} on {e(last['backend'])}, loss {_num(last['loss'], '{:.4f}')}, "
        f"mean reward {_num(last['mean_reward'])}, success {_num(last['success_rate'], '{:.0%}')}, "
        f"weights {e(last['weights'] or '-')}.</p>"
    ]
    if have_plotly:
        body += [
            chart("chart-loss", _line("loss", steps, "loss", "#c0392b")),
            chart("chart-reward", _line("mean reward", steps, "mean_reward", "#2471a3")),
            chart("chart-success", _line("success rate", steps, "success_rate", "#1e8449")),
        ]
    else:
        body.append(_no_plotly())
    body += day_part
    body.append(
        "<table id=steps><thead><tr><th>step</th><th>backend</th><th>loss</th><th>mean reward</th><th>success</th>"
        "<th>samples used</th><th>dropped</th><th>seconds</th><th>tokens/s</th><th>weights</th></tr></thead><tbody>"
    )
    for s in reversed(steps[-50:]):
        body.append(
            f"<tr><td>{s['step']}</td><td>{e(s['backend'])}</td><td>{_num(s['loss'], '{:.4f}')}</td>"
            f"<td>{_num(s['mean_reward'])}</td><td>{_num(s['success_rate'], '{:.0%}')}</td>"
            f"<td>{s['samples_used']}</td><td>{s['samples_dropped']}</td><td>{_num(s['step_seconds'], '{:.1f}')}</td>"
            f"<td>{_num(s['tokens_per_s'], '{:.0f}')}</td><td>{e(s['weights'] or '')}</td></tr>"
        )
    body.append("</tbody></table>")
    return layout("Training", "/training", "".join(body), charts=have_plotly)


def scheduler_page(rows: list[dict[str, Any]], have_plotly: bool) -> str:
    if not rows:
        return layout(
            "Scheduler",
            "/scheduler",
            "<p>Scheduler not running: no state transitions recorded. It records one each time a training "
            "window opens or closes (sleep hours, idle time, calendar).</p>",
        )
    wins = windows(rows)
    body = [f"<p>{len(rows)} transitions; now: {e(rows[-1]['to_state'])} since {_when(rows[-1]['at'])}.</p>"]
    if have_plotly:
        states = sorted({w["state"] for w in wins})
        fig = {
            "data": [
                {
                    "type": "bar",
                    "orientation": "h",
                    "name": e(st),
                    "y": [e(st) for w in wins if w["state"] == st],
                    "base": [w["start"] * 1000 for w in wins if w["state"] == st],
                    "x": [max(1.0, (w["end"] - w["start"]) * 1000) for w in wins if w["state"] == st],
                    # plotly reads a little HTML in labels (links included): hand it escaped text only
                    "text": [e(w["reason"] or "") for w in wins if w["state"] == st],
                    "textposition": "none",
                    "hovertemplate": "%{y}: %{text}<extra></extra>",
                }
                for st in states
            ],
            "layout": {
                "title": {"text": "windows"},
                "height": 120 + 40 * len(states),
                "barmode": "overlay",
                "xaxis": {"type": "date"},
                "margin": {"l": 110, "r": 20, "t": 40, "b": 40},
            },
        }
        body.append(chart("chart-windows", fig))
    else:
        body.append(_no_plotly())
    body.append(
        "<table id=transitions><thead><tr><th>at</th><th>from</th><th>to</th><th>reason</th></tr></thead><tbody>"
    )
    for r in reversed(rows[-200:]):
        body.append(
            f"<tr><td>{_when(r['at'])}</td><td>{e(r['from_state'] or '-')}</td><td>{e(r['to_state'])}</td>"
            f"<td>{e(r['reason'] or '')}</td></tr>"
        )
    body.append("</tbody></table>")
    return layout("Scheduler", "/scheduler", "".join(body), charts=have_plotly)


def _memory_link(tenant: str, user: str | None = None, **more: str) -> str:
    q = {"tenant": tenant, **({"user": user} if user else {}), **{k: v for k, v in more.items() if v}}
    return "/memory?" + urlencode(q)


def _memory_text(m: dict[str, Any]) -> str:
    """A memory's text as stored (redacted before it was stored); a forgotten one's text is erased."""
    return e(m["text"]) if m.get("text") else '<span class="erased">(erased: forgotten)</span>'


def _screen(m: dict[str, Any]) -> str:
    sc = m.get("screen") or {}
    reasons = "; ".join(str(r) for r in sc.get("reasons", [])[:3])
    return f'<div class="screen">quarantined, never injected: {e(reasons)}</div>' if sc else ""


def _forget(m: dict[str, Any], csrf: str, back_user: str | None) -> str:
    if m["status"] == "forgotten":
        return ""
    user = f'<input type="hidden" name="user" value="{e(back_user)}">' if back_user else ""
    return (
        f'<form method="post" action="/memory/{quote(m["id"], safe="")}/forget" class="inline">'
        f'<input type="hidden" name="csrf" value="{e(csrf)}"><input type="hidden" name="tenant" value="{e(m["tenant"])}">'
        f'{user}<button name="do" value="forget" data-memory="{e(m["id"])}">forget</button></form>'
    )


def memory_page(
    users: list[dict[str, Any]],
    rows: list[dict[str, Any]],
    *,
    tenant: str,
    user: str | None,
    query: str | None,
    status: str,
    csrf: str,
    notice: str | None = None,
    said: list[dict[str, Any]] | None = None,
) -> str:
    """Memories of one tenant (one user, or all of its users), listed by status or searched; for one user, what they
    said (their latest passages)."""
    body = [
        "<p>What each user told the agent in earlier sessions, kept across sessions. Text is redacted before it is "
        "stored; a quarantined memory reads as an instruction to the agent and is never injected.</p>"
    ]
    if users:
        body.append(
            "<table id=memory-users><thead><tr><th>tenant</th><th>user</th><th>memories</th><th>passages (what they "
            "said)</th></tr></thead><tbody>"
        )
        for u in users:
            counts = ", ".join(f"{k} {v}" for k, v in sorted(u["counts"].items()))
            passages = ", ".join(f"{k} {v}" for k, v in sorted(u.get("said", {}).items()))
            on = " class=on" if u["tenant"] == tenant and u["user"] == user else ""
            body.append(
                f'<tr{on} data-tenant="{e(u["tenant"])}" data-user="{e(u["user"])}"><td>'
                f'<a href="{e(_memory_link(u["tenant"]))}">{e(u["tenant"])}</a></td>'
                f'<td><a href="{e(_memory_link(u["tenant"], u["user"]))}">{e(u["user"])}</a></td>'
                f"<td>{e(counts)}</td><td>{e(passages)}</td></tr>"
            )
        body.append("</tbody></table>")
    keep = f'<input type="hidden" name="tenant" value="{e(tenant)}">' + (
        f'<input type="hidden" name="user" value="{e(user)}">' if user else ""
    )
    body.append(
        f'<form method="get" action="/memory" id=memory-search>{keep}'
        f'<input type="search" name="q" value="{e(query or "")}" placeholder="search active memories">'
        "<button>search</button></form>"
    )
    filters = " · ".join(
        f"<b>{s}</b>" if s == status and not query else f'<a href="{e(_memory_link(tenant, user, status=s))}">{s}</a>'
        for s in MEMORY_STATUSES
    )
    body.append(f"<p class=filters>{filters}</p>")
    who = f"tenant {e(tenant)}" + (f", user {e(user)}" if user else ", every user")
    what = f"active memories matching {e(repr(query))}" if query else f"{e(status)} memories"
    body.append(f"<p>{len(rows)} {what} of {who}.</p>")
    if rows:
        body.append(
            "<table id=memories><thead><tr><th>kind</th><th>status</th><th>memory</th><th>user</th><th>said</th>"
            "<th>source</th><th></th></tr></thead><tbody>"
        )
        for m in rows:
            link = f"/memory/{quote(m['id'], safe='')}?tenant={quote(m['tenant'], safe='')}"
            src = m.get("source") or {}
            body.append(
                f'<tr data-memory="{e(m["id"])}"><td>{e(m["kind"])}{" (standing)" if m.get("standing") else ""}</td>'
                f'<td class="status st-{e(m["status"])}">{e(m["status"])}</td>'
                f"<td class=text>{_memory_text(m)}{_screen(m)}</td><td>{e(m['user'])}</td>"
                f"<td>{_when(m.get('valid_from'))}</td><td>{e(src.get('session_id') or src.get('extractor') or '')}</td>"
                f'<td class=actions><a href="{e(link)}">history</a>{_forget(m, csrf, user)}</td></tr>'
            )
        body.append("</tbody></table>")
    if said:
        body.append(
            f"<h2>What {e(user or '')} said</h2><p>The latest {len(said)} passages (each of the user's turns, kept "
            "whole beside what was distilled from it, recalled by relevance; forgetting takes them out too).</p>"
            "<table id=passages><thead><tr><th>said</th><th>status</th><th>text</th><th>session</th></tr></thead><tbody>"
        )
        for p in said:
            body.append(
                f'<tr data-passage="{e(p["id"])}"><td>{_when(p.get("at"))}</td>'
                f'<td class="status st-{e(p["status"])}">{e(p["status"])}</td><td class=text>{e(p["text"])}</td>'
                f"<td>{e(p.get('session_id') or '')}</td></tr>"
            )
        body.append("</tbody></table>")
    return layout("Memory", "/memory", "".join(body), notice=notice)


def memory_detail_page(m: dict[str, Any], csrf: str) -> str:
    src = m.get("source") or {}
    facts = [
        ("tenant", m["tenant"]),
        ("user", m["user"]),
        ("kind", m["kind"] + (" (standing: on every main turn)" if m.get("standing") else "")),
        ("status", m["status"]),
        ("subject", m["subject"]),
        ("valid", f"{_when(m.get('valid_from'))} to {_when(m.get('valid_to')) if m.get('valid_to') else 'now'}"),
        ("superseded by", m.get("superseded_by") or "-"),
        ("from", f"session {src.get('session_id') or '-'}, extractor {src.get('extractor') or '-'}"),
    ]
    body = [
        f'<p class=text id=memory-text data-status="{e(m["status"])}">{_memory_text(m)}</p>{_screen(m)}',
        "<table id=memory-facts><tbody>"
        + "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in facts)
        + "</tbody></table>",
        f'<p><a href="{e(_memory_link(m["tenant"], m["user"]))}">all memories of this user</a> '
        f"{_forget(m, csrf, m['user'])}</p>",
        "<h2>History</h2><table id=history><thead><tr><th>when</th><th>what</th><th>text</th><th>detail</th></tr>"
        "</thead><tbody>",
    ]
    for h in m.get("history", []):
        text = e(h["text"]) if h.get("text") else '<span class="erased">(erased)</span>'
        detail = json.dumps(h["detail"], ensure_ascii=False) if h.get("detail") else ""
        body.append(f"<tr><td>{_when(h['at'])}</td><td>{e(h['action'])}</td><td>{text}</td><td>{e(detail)}</td></tr>")
    body.append("</tbody></table>")
    return layout(f"Memory {m['id']}", "/memory", "".join(body))


def _no_plotly() -> str:
    return "<p class=notice>Charts need plotly: pip install 'metaclaw-plugin[dashboard]'.</p>"
