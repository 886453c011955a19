"""Hardening, round four (issue 42): a note made of nothing is no note.

The text a person writes for an action (the note saying a version's
warnings were checked, at submission and at approval; a reason) must carry
letters or digits a reader can see: read in NFKC form, format characters
(zero-width space, BOM, word joiner, bidirectional controls), controls,
marks, spaces, the Hangul fillers and the Braille blank never count, nor
does punctuation; a note of what was checked needs at least
`workflow.MIN_VISIBLE["acknowledgement"]` of them. The fifteen notes a
security tester tried (eight of them once accepted) are refused by the
API (422, the field named) and by the pages (the page again, the message
by the box, in the page's language, the note given back as typed), on
SQLite and PostgreSQL. A real sentence is accepted in Spanish and English
and stored exactly as typed, a zero-width space in it included. A note
given for a version without warnings that ask for a check is refused, too
long or not (never dropped without a word)."""

from __future__ import annotations

import re
from html import unescape

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from diferida.service import workflow
from diferida.service.store import WorkflowEvent

from .workbench_helpers import APPLICATION, csrf_of, sign_in, signer, workbench_app

W = "/api/v1/workbench"
# rules §8 example 1 separated in 2020: the Act 3-2013 warning asks for a check
CHECKED = {**APPLICATION, "separation_date": "2020-06-30", "creditable_service_years": "25"}

# the tester's fifteen: the eight accepted before this round, then seven more
# that show nothing either
INVISIBLE = {
    "zero_width_space": "\u200b",
    "bom": "\ufeff",
    "word_joiner": "\u2060",
    "right_to_left_override": "\u202e",
    "lone_combining_acute": "\u0301",
    "hangul_filler": "\u3164",
    "braille_blank": "\u2800",
    "one_dot": ".",
    "zero_width_non_joiner": "\u200c",
    "zero_width_joiner": "\u200d",
    "no_break_space": "\u00a0",
    "mongolian_vowel_separator": "\u180e",
    "invisible_times": "\u2062",
    "tab": "\t",
    "three_dots": "...",
}
assert len(INVISIBLE) == 15
# and what else shows nothing: the other fillers, the tester's pairs, mixes
MORE_INVISIBLE = ["\u2060\u200b", "\ufeff\ufeff", "\u115f", "\u1160", "\uffa0",
                  "\u3164" * 20, " \u200b \u2060 \u00a0 ", ".\u202e.", "\u0301" * 12,
                  "\u2800" * 40, "-- ... --", "\ufe0f" * 10, "\U000e0041" * 10]
FIELD_WORDS = {"es": "La nota de verificación", "en": "The note of what was checked"}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def site(request, tmp_path_factory):
    """The application on a fresh store, the workbench's users, two API
    tokens, and two versions whose warning asks for a check: `draft` (to be
    submitted) and `sent` (submitted with a note, to be approved)."""
    with workbench_app(request.param, tmp_path_factory.mktemp("notes")) as (app, c):
        store = app.state.store
        tokens = {role: store.add_user(f"api-{role}", role, **signer(f"api-{role}"))[1]
                  for role in ("analyst", "supervisor")}
        ana = store.sign_in_record("ana")[0]
        draft = workflow.open_draft(store, ana, {**CHECKED, "participant_id": "N4-0001"},
                                    lang="es")
        sent = workflow.open_draft(store, ana, {**CHECKED, "participant_id": "N4-0002"},
                                   lang="es")
        assert draft.checks == sent.checks == ("act_3_2013_accruals_frozen",)
        workflow.submit(store, ana, sent.case_id,
                        acknowledgement="Certificación de servicios revisada hasta 2013")
        yield {"app": app, "client": c, "tokens": tokens, "draft": draft.case_id,
               "sent": sent.case_id}


def _api(site, role: str, lang: str = "en") -> dict[str, str]:
    return {"Authorization": f"Bearer {site['tokens'][role]}", "Accept-Language": lang}


def _page_client(app, name: str, lang: str) -> tuple[TestClient, str]:
    c = TestClient(app)
    sign_in(c, name, lang=lang)
    return c, csrf_of(c.get("/analista" + ("?lang=en" if lang == "en" else "")).text)


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


def _error_by_box(html: str) -> str:
    found = re.search(r'<p class="error" id="e-acknowledgement">(.*?)</p>', html, re.S)
    assert found, "no message by the note's box"
    return _text(found.group(1)).removeprefix("✗ ")


def _box(html: str, ident: str = "f-acknowledgement") -> str:
    found = re.search(rf'<textarea id="{ident}"[^>]*>(.*?)</textarea>', html, re.S)
    assert found, f"no box {ident}"
    return unescape(found.group(1))


def _state(site, case_id: int) -> str:
    store = site["app"].state.store
    return workflow.view(store, store.sign_in_record("aud")[0], case_id).state


def _refused_by_api(site, path: str, role: str, note: str, lang: str) -> dict:
    r = site["client"].post(f"{W}/cases/{path}", json={"acknowledgement": note},
                            headers=_api(site, role, lang))
    assert r.status_code == 422, (repr(note), r.status_code, r.text[:300])
    errors = r.json()["errors"]
    assert [e["field"] for e in errors] == ["acknowledgement"], errors
    return errors[0]


@pytest.mark.parametrize("name", list(INVISIBLE))
def test_a_note_made_of_nothing_is_refused_by_the_api_and_by_the_pages(site, name):
    note = INVISIBLE[name]
    draft, sent = site["draft"], site["sent"]
    said = {}
    for lang in ("es", "en"):
        submit = _refused_by_api(site, f"{draft}/submit", "analyst", note, lang)
        approve = _refused_by_api(site, f"{sent}/approve", "supervisor", note, lang)
        # spaces alone are trimmed away: the note is missing; anything else is
        # a note without a letter or digit to read, said naming the field
        blank = note.strip() == ""
        assert submit["code"] == approve["code"] == (
            "acknowledgement_required" if blank else "invisible_text")
        if not blank:
            assert submit["message"].startswith(FIELD_WORDS[lang]), submit["message"]
        said[lang] = submit["message"], approve["message"]
    assert said["es"] != said["en"]
    # the pages: the same message by the box, in the page's language; the
    # note given back in its box as typed; nothing moves
    for lang in ("es", "en"):
        ana, t = _page_client(site["app"], "ana", lang)
        r = ana.post(f"/analista/casos/{draft}/enviar",
                     data={"csrf_token": t, "acknowledgement": note, "lang": lang})
        assert r.status_code == 422, (repr(note), r.status_code)
        assert _error_by_box(r.text) == said[lang][0]
        assert _box(r.text) == note
        sol, t = _page_client(site["app"], "sol", lang)
        r = sol.post(f"/analista/casos/{sent}/aprobar",
                     data={"csrf_token": t, "confirmado": "1", "acknowledgement": note,
                           "lang": lang})
        assert r.status_code == 422, (repr(note), r.status_code)
        assert 'id="confirm-approve"' in r.text or 'id="irreversible"' in r.text
        assert _error_by_box(r.text) == said[lang][1]
        assert _box(r.text) == note
    assert _state(site, draft) == "draft" and _state(site, sent) == "submitted"


def test_the_testers_steps_are_refused_and_no_letter_is_issued(site):
    """Submitted with U+2060 U+200B, approved with U+FEFF: each refused."""
    draft, sent = site["draft"], site["sent"]
    assert _refused_by_api(site, f"{draft}/submit", "analyst", "\u2060\u200b",
                           "es")["code"] == "invisible_text"
    assert _refused_by_api(site, f"{sent}/approve", "supervisor", "\ufeff",
                           "es")["code"] == "invisible_text"
    for note in MORE_INVISIBLE:
        assert _refused_by_api(site, f"{draft}/submit", "analyst", note,
                               "en")["code"] == "invisible_text", repr(note)
    r = site["client"].get(f"{W}/cases/{sent}", headers=_api(site, "supervisor"))
    assert r.json()["state"] == "submitted" and r.json()["letter_sha256"] is None


def test_a_note_needs_the_letters_a_sentence_needs(site):
    minimum = workflow.MIN_VISIBLE["acknowledgement"]
    assert minimum == 10
    draft = site["draft"]
    for note, count in (("Revisado", 8), ("Revisadas", 9), ("\u200bOK\u200b.", 2),
                        ("ｏｋ ｏｋ", 4)):  # full-width letters read as the letters they show
        for lang, words in (("es", f"al menos {minimum} letras o cifras (tiene {count})"),
                            ("en", f"at least {minimum} letters or digits (it has {count})")):
            e = _refused_by_api(site, f"{draft}/submit", "analyst", note, lang)
            assert e["code"] == "too_short" and words in e["message"], e
            assert e["message"].startswith(FIELD_WORDS[lang])
    ana, t = _page_client(site["app"], "ana", "en")
    r = ana.post(f"/analista/casos/{draft}/enviar",
                 data={"csrf_token": t, "acknowledgement": "Revisado", "lang": "en"})
    assert r.status_code == 422 and "at least 10 letters or digits" in _error_by_box(r.text)
    assert _box(r.text) == "Revisado"
    assert _state(site, draft) == "draft"


def test_a_real_sentence_is_accepted_in_both_languages_and_kept_as_typed(site):
    app, c = site["app"], site["client"]
    store = app.state.store
    ana = store.sign_in_record("ana")[0]
    spanish = "Verificado: la certificación de servicios llega al 30/06/2013"
    # visible words with a zero-width space between two of them (pasted text)
    english = "Checked the\u200b service certificate against the 2013 payroll"
    one = workflow.open_draft(store, ana, {**CHECKED, "participant_id": "N4-0010"},
                              lang="es").case_id
    # Spanish through the page, English through the API
    page, t = _page_client(app, "ana", "es")
    r = page.post(f"/analista/casos/{one}/enviar",
                  data={"csrf_token": t, "acknowledgement": spanish}, follow_redirects=False)
    assert r.status_code == 303, _text(r.text)[:500]
    r = c.post(f"{W}/cases/{one}/approve", json={"acknowledgement": english},
               headers=_api(site, "supervisor"))
    assert r.status_code == 200, r.text[:500]
    assert [a["note"] for a in r.json()["acknowledgements"]] == [spanish, english]
    # ten letters or digits are enough
    two = workflow.open_draft(store, ana, {**CHECKED, "participant_id": "N4-0011"},
                              lang="es").case_id
    r = c.post(f"{W}/cases/{two}/submit", json={"acknowledgement": "Verificado"},
               headers=_api(site, "analyst"))
    assert r.status_code == 200, r.text[:500]
    # the chain holds the notes exactly as typed, the zero-width space included
    with store.reading() as session:
        notes = session.scalars(select(WorkflowEvent.reason).where(
            WorkflowEvent.case_id.in_((one, two)), WorkflowEvent.action == "acknowledged")
            .order_by(WorkflowEvent.id)).all()
    assert notes == [spanish, english, "Verificado"]
    assert "\u200b" in notes[1]


def test_a_note_for_a_version_without_such_a_warning_is_refused_never_dropped(site):
    app, c = site["app"], site["client"]
    store = app.state.store
    ana = store.sign_in_record("ana")[0]
    plain = workflow.open_draft(store, ana, {**APPLICATION, "participant_id": "N4-0020"},
                                lang="es").case_id
    limit = workflow.LIMITS["reason"]
    for note, code in (("x" * (limit + 1), "too_long"), ("\u200b", "invisible_text"),
                       ("Nada que verificar en esta versión", "acknowledgement_not_asked"),
                       ("", "acknowledgement_not_asked"), (5, "acknowledgement_not_asked")):
        e = _refused_by_api(site, f"{plain}/submit", "analyst", note, "es")
        assert e["code"] == code, (repr(note)[:40], e)
    # the same over-long note is refused the same way on a version with the warning
    assert _refused_by_api(site, f"{site['draft']}/submit", "analyst", "x" * (limit + 1),
                           "es")["code"] == "too_long"
    assert _state(site, plain) == "draft"
    # no note (no body, or null) is what such a version takes
    r = c.post(f"{W}/cases/{plain}/submit", json={"acknowledgement": None},
               headers=_api(site, "analyst"))
    assert r.status_code == 200 and r.json()["acknowledgements"] == []
    # the page of such a version has no box, and its form sends none
    other = workflow.open_draft(store, ana, {**APPLICATION, "participant_id": "N4-0021"},
                                lang="es").case_id
    page, t = _page_client(app, "ana", "es")
    assert 'id="f-acknowledgement"' not in page.get(f"/analista/casos/{other}").text
    r = page.post(f"/analista/casos/{other}/enviar", data={"csrf_token": t},
                  follow_redirects=False)
    assert r.status_code == 303


def test_a_reason_made_of_nothing_is_refused_too(site):
    app, c = site["app"], site["client"]
    sent = site["sent"]
    for reason in ("\u200b", ".", "\u3164", "\u2060\u200b"):
        r = c.post(f"{W}/cases/{sent}/return", json={"reason": reason},
                   headers=_api(site, "supervisor", "es"))
        assert r.status_code == 422, r.text[:300]
        e = r.json()["errors"]
        assert [(p["field"], p["code"]) for p in e] == [("reason", "invisible_text")]
        assert e[0]["message"].startswith("El motivo")
    # the page: the message by the reason's box, in the page's language, the reason kept
    sol, t = _page_client(app, "sol", "en")
    r = sol.post(f"/analista/casos/{sent}/devolver",
                 data={"csrf_token": t, "reason": "\u200b.\u200b", "lang": "en"})
    assert r.status_code == 422
    found = re.search(r'<p class="error" id="e-return-reason">(.*?)</p>', r.text, re.S)
    assert found and _text(found.group(1)).removeprefix("✗ ").startswith("The reason has no")
    assert _box(r.text, "f-return-reason") == "\u200b.\u200b"
    # a correction's reason is held to the same rule
    r = c.post(f"{W}/cases/{site['draft']}/corrections",
               json={**CHECKED, "reason": "\ufeff"}, headers=_api(site, "analyst"))
    assert r.status_code == 422
    assert [(p["field"], p["code"]) for p in r.json()["errors"]] == [
        ("reason", "invisible_text")]
    assert _state(site, sent) == "submitted"
