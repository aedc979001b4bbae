"""Inferred conventions (issue 44): a learned skill stored without ``metadata.kind`` (another evolver, a SKILL.md by
hand, MCP, the dashboard) whose text states a standing rule reaches its tenant's work requests, never a line of chat
and never another tenant; and the hybrid gate is not opened for chat by learned skills in other languages or of
other tenants."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from metaclaw_plugin import Settings, TurnContext
from metaclaw_plugin.skillbank.bank import SkillBank, bundled_skills_dir
from metaclaw_plugin.skillbank.files import SkillStore
from metaclaw_plugin.skillbank.rulekind import standing_rule
from metaclaw_plugin.skillbank.skillmd import parse_skill_md, render_skill_md
from metaclaw_plugin.types import Skill

DATA = Path(__file__).resolve().parents[1] / "data"
WORK = (
    "Add a loyalty discount to checkout in src/checkout/loyalty.ts: customers with 10 or more orders get 5 percent "
    "off, capped at 25 euros, not combined with voucher codes. Add tests for the cap and commit the change."
)
# Lessons as other evolvers or people write them: no kind, varied wording and languages.
RULES = {
    "money-cents": ("Never represent money as a float; keep amounts as integer cents with a currency code.", ""),
    "commit-format": ("Commit messages must follow Conventional Commits: type(scope): summary.", ""),
    "ui-sie": ("Texte der Oberfläche immer auf Deutsch in der Sie-Form schreiben, nie duzen.", ""),
    "pnpm": ("Prefer pnpm over npm and yarn for installing packages and running scripts.", ""),
    "dates-fr": ("Dans les documents clients, toujours écrire les dates en toutes lettres.", ""),
    "openapi-es": ("Cuando añadas un endpoint a la API, documéntalo en api/openapi.yaml en el mismo commit.", ""),
    "bak-copy": ("When you edit an existing file, first copy it to <name>.bak next to it.", ""),
    "release-notes": (
        "Release notes format",
        "# Release notes\n- every entry references its ticket\n- group entries under Added, Changed, Fixed\n"
        "- always say whether users need to update",
    ),
    "zh-rule": ("提交代码前必须运行全部测试。", ""),
    # a description that opens with a quantifier over the work, like a bullet that does
    "every-migration": ("Every database migration ships with a down step and a note in MIGRATIONS.md.", ""),
    "nie-de": ("Nie direkt auf main pushen; Änderungen kommen über einen Merge-Request.", ""),
    "ne-pas-fr": ("Ne modifiez pas les fichiers du dossier vendor/, ils sont écrasés à chaque mise à jour.", ""),
    # bare imperatives: how the output is presented, or a habit over the reader's own work
    "ticket-prefix": ("Prefix commit messages with the client ticket ID in square brackets.", ""),
    "sql-caps": ("Keep SQL keywords in upper case in every query you write for us.", ""),
    "dates-de": ("Dates in German letters as 5. März 2025, never 05.03.25.", ""),
    # a title over bullets that say what is not used
    "lint-setup": ("Linting", "- ruff for Python, no flake8\n- no per-file ignores\n- line length 120"),
    "docs-es": ("Documentación de clientes", "- sin nombres reales en los ejemplos\n- nada de capturas con datos"),
}
TECHNIQUES = {
    "helpdesk-pagination": (
        "The helpdesk API returns 50 tickets per page and a next_cursor; page through all of them.",
        "Call it again with ?cursor=<next_cursor> until next_cursor is null.",
    ),
    "prometheus-step": ("Prometheus query_range over more than a day needs step=5m or coarser.", ""),
    "helm-rollback": (
        "Rolling back the payments release is done with helm history and helm rollback, not kubectl edit.",
        "1. helm history payments\n2. helm rollback payments <revision>\n3. watch kubectl rollout status",
    ),
    "ios-ui-tests": ("iOS UI tests on CI need a clean simulator before fastlane scan.", "1. xcrun simctl erase all"),
    "psql-copy": ("COPY reads files on the database server; psql \\copy works with no server access.", ""),
    # imperatives that do a thing, even with a contrast or over the task at hand
    "n43": ("Reconcile bank accounts from the bank's Norma 43 (.n43) file, not from the PDF statement.", ""),
    "purge": ("Purge the CDN for all pages you touched in the last deploy.", ""),
    "csv-export": ("CSV export", "1. open the report\n2. choose Export, no filters\n3. save as UTF-8"),
}


def lesson(name: str, text: tuple[str, str], tenant: str | None = "lumen", origin: str = "evolved") -> Skill:
    return Skill(name=name, description=text[0], body=text[1] or text[0], origin=origin, tenant=tenant)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(RULES))
def test_a_rule_in_any_wording_is_an_inferred_convention(name: str):
    s = parse_skill_md(render_skill_md(lesson(name, RULES[name])))
    assert (s.kind, s.kind_from) == ("convention", "inferred"), standing_rule(*RULES[name])


@pytest.mark.parametrize("name", sorted(TECHNIQUES))
def test_a_technique_stays_a_procedure(name: str):
    s = parse_skill_md(render_skill_md(lesson(name, TECHNIQUES[name])))
    assert (s.kind, s.kind_from) == ("procedure", "default")


def test_explicit_metadata_and_starter_skills_are_never_inferred():
    text = render_skill_md(lesson("pnpm", RULES["pnpm"]))
    assert "kind" not in yaml.safe_load(text.split("---")[1])["metadata"]  # an inferred kind is not written
    explicit = text.replace("metadata:\n", "metadata:\n  kind: procedure\n")
    assert parse_skill_md(explicit).kind == "procedure"
    builtin = render_skill_md(lesson("pnpm", RULES["pnpm"], tenant=None, origin="builtin"))
    assert parse_skill_md(builtin).kind == "procedure"
    starters = SkillStore(bundled_skills_dir()).load().skills
    assert starters and all(s.kind == "procedure" for s in starters.values())


def test_set_kind_overrides_an_inferred_convention(tmp_path: Path):
    store = SkillStore(tmp_path / "skills")
    store.add_batch([lesson("pnpm", RULES["pnpm"])], actor="test")
    assert store.read("pnpm").kind_from == "inferred"
    store.set_kind("pnpm", "procedure", actor="test")
    assert (store.read("pnpm").kind, store.read("pnpm").kind_from) == ("procedure", "metadata")


def library(home: Path, skills: list[Skill], mode: str = "keyword") -> SkillBank:
    """The starter skills plus ``skills``, written by hand into the skills folder as a person or tool would."""
    shutil.copytree(bundled_skills_dir(), home / "skills")
    for s in skills:
        (home / "skills" / s.name).mkdir()
        (home / "skills" / s.name / "SKILL.md").write_text(render_skill_md(s), encoding="utf-8")
    bank = SkillBank(Settings(home=home, retrieval={"mode": mode}))
    bank.refresh(force=True)
    return bank


def names(bank: SkillBank, tenant: str, text: str) -> list[str]:
    ctx = TurnContext("s", tenant=tenant)
    return bank.injection(ctx, [{"role": "user", "content": text}]).names


def test_an_unmarked_rule_reaches_its_tenants_work_requests_only(tmp_path: Path):
    bank = library(tmp_path, [lesson("money-cents", RULES["money-cents"]), lesson("pnpm", RULES["pnpm"])])
    got = names(bank, "lumen", WORK)
    assert {"money-cents", "pnpm"} <= set(got)  # neither is named by the request (on main: by relevance only)
    assert not {"money-cents", "pnpm"} & set(names(bank, "other-team", WORK))  # never another tenant's
    assert names(bank, "lumen", "What's a good name for a golden retriever puppy?") == []  # chat: no block
    status = bank.conventions_status()
    assert set(status["inferred"]) == {"money-cents", "pnpm"} and "rule" in status["inferred"]["pnpm"]


def test_short_chat_gets_no_block_with_learned_lessons_in_the_library(tmp_path: Path):
    """Lessons in German, French and Spanish in the library: the short sets (the calibration set and the held-out
    one, in twelve languages) get a block for at most 5% of requests, for the lessons' tenant and another. On main
    a Spanish and a German lesson gave 7 of the 24 held-out requests a block of starter skills (wordllama reads
    text in other languages as alike), for every tenant (the gate looked at skills the tenant could not see). The
    default retrieval (hybrid); keyword retrieval gives 4.5% of the calibration set a block with the starter
    skills alone (docs/request-path.md)."""
    pytest.importorskip("wordllama")
    bank = library(tmp_path, [lesson(n, t) for n, t in {**RULES, **TECHNIQUES}.items()], "hybrid")
    held_out = yaml.safe_load((DATA / "short_requests_heldout.yaml").read_text(encoding="utf-8"))
    calibration = yaml.safe_load((DATA / "short_requests.yaml").read_text(encoding="utf-8"))["ungoverned"]
    for tenant in ("lumen", "other-team"):
        for requests in (held_out, calibration):
            blocked = [q for q in requests if names(bank, tenant, q)]
            assert len(blocked) <= 0.05 * len(requests), (tenant, blocked)


def test_chat_after_a_work_turn_gets_no_block(tmp_path: Path):
    """The held-out check of issue 44's chat flood (tests/data/chat_after_work_heldout.yaml, written before the
    tuning and not tuned on): a one-line question asked right after a work request that learned lessons govern. On
    main 5 of the 20 got a block (a Spanish line got five lessons of its language by the static model's similarity);
    now 4, where the goal is at most 1. Two meet a starter skill on their very topic ("why are floats bad for
    money", "what time zone for meetings between Berlin and New York": similarity 0.37 and 0.55, 3 and 5 shared
    words); "is npm slower than pnpm" gets the pnpm rule (0.58); "merge commit vs squash merge" gets a German rule on
    merge requests (one shared word, similarity 0.29 across languages); that one no longer does (an English request
    is not backed by the similarity of a skill written in another language): 3. Asked alone, the same."""
    pytest.importorskip("wordllama")
    bank = library(tmp_path, [lesson(n, t) for n, t in {**RULES, **TECHNIQUES}.items()], "hybrid")
    chat = yaml.safe_load((DATA / "chat_after_work_heldout.yaml").read_text(encoding="utf-8"))
    before = [{"role": "user", "content": WORK}, {"role": "assistant", "content": "Done: the discount is in."}]
    got = {}
    for q in chat:
        block = bank.injection(TurnContext("s", tenant="lumen"), [*before, {"role": "user", "content": q}]).names
        if block:
            got[q] = block
    assert len(got) <= 3, got  # measured 3 (4 before); the goal is 1 (docs/request-path.md)


def test_a_short_line_after_a_work_turn_is_judged_on_its_own_words(tmp_path: Path):
    """The conversation's context does not carry the last work turn's lessons to a line of chat after it, and a chat
    line in another language is not opened by the static model's similarity to lessons in that language (issue 44;
    on main both got lessons)."""
    pytest.importorskip("wordllama")
    bank = library(tmp_path, [lesson(n, t) for n, t in {**RULES, **TECHNIQUES}.items()], "hybrid")
    before = [{"role": "user", "content": WORK}, {"role": "assistant", "content": "Done: the discount is in."}]
    for q in (
        "¿Qué opinas de usar una hoja de cálculo para los clientes pequeños?",
        "¿Cuántos clientes nuevos suele tener una tienda online pequeña al mes?",
        "Wie viele Kunden braucht ein kleiner Onlineshop ungefähr im Monat?",
        "and how long does a typical checkout page take to load for you?",
    ):
        for msgs in ([{"role": "user", "content": q}], [*before, {"role": "user", "content": q}]):
            assert bank.injection(TurnContext("s", tenant="lumen"), msgs).names == [], q


# A lesson as an evolver writes it from a correction: the description is the correction's first sentence (often the
# complaint), the body every sentence as a bullet.
CORRECTIONS = {
    "email-style": (
        "Way too long and too technical, the client does not know what a CDN is",
        "- Way too long and too technical, the client does not know what a CDN is.\n- Client emails: at most five "
        "short sentences, no jargon, one next step with a date.\n- Sign off with the studio's name.",
    ),
    "webp": (
        "Those photos are 6 MB each, the page weighs 40 MB now",
        "- Those photos are 6 MB each, the page weighs 40 MB now.\n- Any image that goes on a site is converted to "
        "WebP, at most 1920 px wide.\n- Add width and height attributes to the img tag too.",
    ),
    "ticket-prefix": (
        "ugh, no. every commit message starts with the client's ticket id in square brackets",
        "- ugh, no.\n- every commit message starts with the client's ticket id in square brackets.\n- I bill from the "
        "git log, a commit without the id is work I cannot invoice.\n- Without a ticket, use [KORN-0].",
    ),
}


def test_an_english_request_is_not_backed_by_a_skill_in_another_language(tmp_path: Path):
    """The static model's similarity across languages means little: "merge commit vs squash merge" shared one word
    with a German rule on merge requests, and its similarity (0.29) backed the match (issue 44)."""
    pytest.importorskip("wordllama")
    bank = library(tmp_path, [lesson("nie-de", RULES["nie-de"])], "hybrid")
    q = "Quick one: what's the difference between a merge commit and a squash merge on GitHub, in plain words?"
    assert "nie-de" not in names(bank, "lumen", q)
    assert "nie-de" in names(bank, "lumen", "Kann ich direkt auf main pushen oder brauche ich einen Merge-Request?")


@pytest.mark.parametrize("name", sorted(CORRECTIONS))
def test_a_correction_with_the_rule_after_the_complaint_is_a_rule(name: str):
    """On main only a title over bullets was read for rules, at half of them: a lesson written from a correction
    (the complaint first, the rule and its reason after) stayed a procedure (issue 44)."""
    s = parse_skill_md(render_skill_md(lesson(name, CORRECTIONS[name])))
    assert (s.kind, s.kind_from) == ("convention", "inferred"), standing_rule(*CORRECTIONS[name])


def test_numbered_steps_under_a_sentence_stay_a_technique():
    text = (
        "Rolling back the payments release after a bad deploy on the cluster",
        "1. helm history payments\n2. never kubectl edit the deployment\n3. helm rollback payments <revision>",
    )
    assert standing_rule(*text) is None


def test_held_out_lessons_are_read_as_written():
    """tests/data/lessons_heldout.yaml, written before the bullet rule changed and not tuned on: 11 of its 12 rules
    are read as rules (2 on main, 8 before the imperatives; its misses were read when those were built, so it is no
    longer held out for them) and none of its 8 techniques. Missed: a terse spec ("Screenshots in docs at 2x, PNG,
    ..."). tests/data/imperative_lessons_heldout.yaml, written before the imperatives were built: 6 of 8 rules (0
    before), none of 6 techniques worded as imperatives."""
    for name, want in (("lessons_heldout.yaml", 11), ("imperative_lessons_heldout.yaml", 6)):
        data = yaml.safe_load((DATA / name).read_text(encoding="utf-8"))
        rules = [x["description"] for x in data["rules"] if standing_rule(x["description"], x["body"])]
        techniques = [x["description"] for x in data["techniques"] if standing_rule(x["description"], x["body"])]
        assert len(rules) >= want and techniques == [], (name, rules, techniques)


def test_a_variant_of_a_starter_skill_is_judged_by_its_lesson():
    """A lesson close to a starter skill becomes the tenant's variant of it, whose description opens with the
    starter's (a technique's): on main the variant was never an inferred rule (issue 44)."""
    from metaclaw_plugin.learning.evolution import compose_variant

    starter = SkillStore(bundled_skills_dir()).load().skills["keep-secrets-out-of-git"]
    rule = lesson("keys", ("Do not put API keys, tokens or passwords in source files or commits.", "Use .env."))
    variant = parse_skill_md(render_skill_md(compose_variant(starter, rule)))
    assert (variant.kind, variant.kind_from) == ("convention", "inferred")
    technique = lesson("rotate", TECHNIQUES["helm-rollback"])
    assert parse_skill_md(render_skill_md(compose_variant(starter, technique))).kind == "procedure"
