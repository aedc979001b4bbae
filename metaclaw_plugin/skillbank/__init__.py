"""The skill library: SKILL.md storage, retrieval and the injected block."""

from .bank import Injection, SkillBank, bundled_skills_dir
from .files import SkillStore
from .skillmd import SkillFormatError, parse_skill_md, render_skill_md

__all__ = [
    "Injection",
    "SkillBank",
    "SkillFormatError",
    "SkillStore",
    "bundled_skills_dir",
    "parse_skill_md",
    "render_skill_md",
]
