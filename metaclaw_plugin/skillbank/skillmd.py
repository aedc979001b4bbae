"""SKILL.md parsing and rendering (Agent Skills format: YAML front matter, then Markdown).

Parsing is strict and explains itself: a file that is not UTF-8, too large, lacks front matter,
or has a bad name raises :class:`SkillFormatError` with the reason, so the store can skip it with a
warning instead of crashing the host.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import replace
from typing import Any

import yaml

from ..types import MAX_TASK_TYPE, KindFrom, Skill
from .rulekind import standing_rule

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_FILE_BYTES = 64 * 1024
STATUSES = ("active", "quarantined", "retired")
ORIGINS = ("builtin", "user", "evolved")
KINDS = ("convention", "procedure")
_OWN_METADATA = ("origin", "generation", "status", "source_sessions", "created_at", "tenant", "kind")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
TASK_TYPES_KEY = "task_types"  # metadata: the host task types a convention was learned from (empty: every turn)


class SkillFormatError(ValueError):
    """A SKILL.md that cannot be used, and why."""


class _Loader(_Base):
    """The safe loader, refusing a key given twice in one mapping (YAML would let the last one win silently,
    so what a person reads in the file is not what is served)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:
                continue  # an unhashable key: the base constructor refuses it with its own message
            seen[key] = key_node.start_mark.line
            if first is not None:
                raise SkillFormatError(
                    f"front matter: key {str(key)[:60]!r} is given twice (lines {first + 2} and "
                    f"{key_node.start_mark.line + 2}); keep one"
                )
        return super().construct_mapping(node, deep=deep)


def check_name(name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise SkillFormatError("name is missing or not a string")
    if len(name) > MAX_NAME:
        raise SkillFormatError(f"name is longer than {MAX_NAME} characters")
    if not NAME_RE.match(name):
        raise SkillFormatError(f"name {name!r} must be lowercase letters, digits and single hyphens")
    return name


def clean_description(desc: Any) -> str:
    if not isinstance(desc, str) or not desc.strip():
        raise SkillFormatError("description is missing or empty")
    # One line: a newline in a description is how front matter gets smuggled into a file.
    desc = " ".join(desc.split())
    if len(desc) > MAX_DESCRIPTION:
        raise SkillFormatError(f"description is longer than {MAX_DESCRIPTION} characters")
    if _CONTROL.search(desc):
        raise SkillFormatError("description contains control characters")
    return desc


def _shown(value: Any) -> str:
    return repr(value)[:40]


def metadata_text(skill: Skill) -> str:
    """Every key and value of a skill's metadata as lines of text, nested values included: what a secret
    check reads besides the body, description and category (a key under ``metadata:`` is in the file too)."""
    out: list[str] = []

    def walk(value: Any, at: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{at}.{k}" if at else str(k))
        elif isinstance(value, (list, tuple, set)):
            for i, v in enumerate(value):
                walk(v, f"{at}[{i}]")
        else:
            out.append(f"{at}: {value}")

    walk(
        {
            **skill.extra_metadata,
            "tenant": skill.tenant,
            "source_sessions": list(skill.source_sessions),
            "created_at": skill.created_at,
        },
        "",
    )
    return "\n".join(out)


def parse_skill_md(data: bytes | str, *, expected_name: str | None = None) -> Skill:
    if isinstance(data, bytes):
        if len(data) > MAX_FILE_BYTES:
            raise SkillFormatError(f"file is larger than {MAX_FILE_BYTES} bytes")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise SkillFormatError(f"not UTF-8 (bad byte at offset {e.start})") from None
    else:
        text = data
        if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
            raise SkillFormatError(f"file is larger than {MAX_FILE_BYTES} bytes")
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    if "\x00" in text:
        raise SkillFormatError("file contains NUL bytes")
    if not text.startswith("---\n"):
        raise SkillFormatError("no YAML front matter (the file must start with a '---' line)")
    end = text.find("\n---\n", 3)
    if end < 0:
        if text.endswith("\n---"):
            end = len(text) - 4
        else:
            raise SkillFormatError("front matter is not closed by a '---' line")
    front, body = text[4 : end + 1], text[end + 5 :]
    try:
        meta = yaml.load(front, Loader=_Loader)  # safe loader (C version when available)
    except yaml.YAMLError as e:
        raise SkillFormatError(f"front matter is not valid YAML: {getattr(e, 'problem', e)}") from None
    if not isinstance(meta, dict):
        raise SkillFormatError("front matter must be a mapping")
    name = check_name(meta.get("name"))
    if expected_name is not None and name != expected_name:
        raise SkillFormatError(f"name {name!r} does not match its folder {expected_name!r}")
    description = clean_description(meta.get("description"))
    md = meta.get("metadata") or {}
    if not isinstance(md, dict):
        raise SkillFormatError("metadata must be a mapping")
    status = md.get("status", "active")
    if status not in STATUSES:
        raise SkillFormatError(f"metadata.status must be one of {', '.join(STATUSES)}")
    origin = md.get("origin", "user")
    if origin not in ORIGINS:
        raise SkillFormatError(f"metadata.origin must be one of {', '.join(ORIGINS)}")
    generation = md.get("generation", 0)
    if isinstance(generation, bool) or not isinstance(generation, int):
        raise SkillFormatError(f"metadata.generation must be an integer (got {_shown(generation)})")
    sources = md.get("source_sessions") or []
    if not isinstance(sources, list):
        raise SkillFormatError("metadata.source_sessions must be a list")
    version = md.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise SkillFormatError(f"metadata.version must be an integer from 1 (got {_shown(version)})")
    if any(not isinstance(s, (str, int)) or isinstance(s, bool) for s in sources):
        raise SkillFormatError("metadata.source_sessions must be a list of session ids")
    always = meta.get("always", False)
    if not isinstance(always, bool):
        raise SkillFormatError(f"always must be true or false (got {_shown(always)})")
    created = md.get("created_at", "")
    if not isinstance(created, (str, datetime.date)):
        raise SkillFormatError(f"metadata.created_at must be a date or a string (got {_shown(created)})")
    category = meta.get("category", "general")
    if not isinstance(category, str) or not category.strip():
        raise SkillFormatError("category must be a string")
    tenant = md.get("tenant")
    if tenant is not None and (isinstance(tenant, bool) or not isinstance(tenant, (str, int))):
        raise SkillFormatError(f"metadata.tenant must be a string (got {_shown(tenant)})")
    kind = md.get("kind", "procedure")
    if kind not in KINDS:
        raise SkillFormatError(f"metadata.kind must be one of {', '.join(KINDS)}")
    kind_from: KindFrom = "metadata" if "kind" in md else "default"
    scope = md.get(TASK_TYPES_KEY)
    if scope is not None and (
        not isinstance(scope, list)
        or any(isinstance(t, bool) or not isinstance(t, (str, int)) or not str(t).strip() for t in scope)
        or any(len(str(t)) > MAX_TASK_TYPE for t in scope)
    ):
        raise SkillFormatError(
            f"metadata.{TASK_TYPES_KEY} must be a list of task type names of 1 to {MAX_TASK_TYPE} characters "
            f"(got {_shown(scope)})"
        )
    return inferred_kind(
        Skill(
            name=name,
            description=description,
            body=body.strip("\n"),
            category=category.strip(),
            origin=origin,
            generation=max(0, generation),
            status=status,
            source_sessions=[str(s) for s in sources],
            created_at=str(created),
            always=always,
            tenant=str(tenant) if tenant is not None else None,
            kind=kind,
            kind_from=kind_from,
            extra_metadata={
                k: ([str(t) for t in v] if k == TASK_TYPES_KEY else v) for k, v in md.items() if k not in _OWN_METADATA
            },
        )
    )


def inferred_kind(skill: Skill) -> Skill:
    """A learned skill (not a bundled starter skill) whose kind nobody said and whose text states a standing rule
    (:func:`~metaclaw_plugin.skillbank.rulekind.standing_rule`) as an inferred convention; any other skill as it is."""
    if skill.kind_from != "default" or skill.kind != "procedure" or skill.origin == "builtin":
        return skill
    if standing_rule(skill.description, skill.body) is None:
        return skill
    return replace(skill, kind="convention", kind_from="inferred")


def kind_reason(skill: Skill) -> str | None:
    """Why an inferred convention is one (for ``skills show`` and ``status``); None for any other kind."""
    return standing_rule(skill.description, skill.body) if skill.kind_from == "inferred" else None


def task_scope(skill: Skill) -> frozenset[str]:
    """The task types a convention reaches (``metadata.task_types``); empty: every turn of its tenant."""
    return frozenset(skill.extra_metadata.get(TASK_TYPES_KEY) or ())


def render_skill_md(skill: Skill) -> str:
    check_name(skill.name)
    metadata: dict[str, Any] = dict(skill.extra_metadata)
    metadata.update(
        origin=skill.origin,
        generation=int(skill.generation),
        status=skill.status,
        source_sessions=list(skill.source_sessions),
        created_at=skill.created_at,
    )
    if skill.tenant is not None:
        metadata["tenant"] = skill.tenant
    if skill.kind_from == "metadata" or (skill.kind != "procedure" and skill.kind_from == "default"):
        metadata["kind"] = skill.kind  # an inferred kind stays inferred: the text decides it again on each read
    front: dict[str, Any] = {
        "name": skill.name,
        "description": clean_description(skill.description),
        "category": skill.category,
    }
    if skill.always:
        front["always"] = True
    front["metadata"] = metadata
    dumped = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=10_000)
    # A body line that is exactly '---' would end the front matter on re-read; indent it by one space.
    body = "\n".join(
        " ---" if line.rstrip() == "---" else line for line in skill.body.replace("\r\n", "\n").split("\n")
    )
    return f"---\n{dumped}---\n{body.strip(chr(10))}\n"
