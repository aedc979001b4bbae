"""The dashboard's HTML, drawn on the server. Every value that comes from a skill, a session or the database is
escaped here (skill text is untrusted: it may come from an evolver fed by user messages). Charts are Plotly
figures written as JSON into ``<script type="application/json">`` (``<`` escaped), drawn by static/dashboard.js
with the plotly.js bundle that the ``plotly`` package ships; no inline script, no CDN."""

from __future__ import annotations

import json
import time
from html import escape
from typing import Any
from urllib.parse import quote

from ..text import message_text
from .data import SkillRow, windows

NAV = [("/", "Skills"), ("/sessions", "Sessions"), ("/training", "Training"), ("/scheduler", "Scheduler")]


def e(v: Any) -> str:
    return escape("" if v is None else str(v), quote=True)


def _num(v: float | None, fmt: str = "{:+.2f}") -> str:
    return "-" if v is None else fmt.format(v)


def _when(ts: float | None) -> str:
    return "-" if not ts else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


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


def training_page(steps: list[dict[str, Any]], have_plotly: bool) -> str:
    if not steps:
        return layout(
            "Training",
            "/training",
            "<p>No training steps yet. The slow loop writes one row per step (loss, reward, success, samples) "
            "when a trainer runs in an idle window.</p>",
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


def _no_plotly() -> str:
    return "<p class=notice>Charts need plotly: pip install 'metaclaw-plugin[dashboard]'.</p>"
