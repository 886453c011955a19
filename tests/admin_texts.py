"""The administrator's letter texts the tests use: the shipped sections of
each language with the required texts (rules of the letter, docs/letter.md)
written in, as an administrator's letter_<lang>.toml files would have them.
`write_admin_texts(folder)` writes them; conftest points
DIFERIDA_WEB_TEXTS_DIR at such a folder for the whole run, so that every
test app may issue letters, and a test that needs them empty points it
elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

from diferida.i18n import LANGS, catalog

ADMIN = {
    "es": {"address": ["Edificio del Sistema de Retiro, piso 3", "Ave. Ponce de León 437",
                       "San Juan, PR 00918"],
           "telephone": "(787) 555-0100",
           "hours": "lunes a viernes, de 8:00 a. m. a 4:30 p. m.",
           "reconsideration": "Tiene 30 días, contados desde la fecha en que se le notifica "
                              "esta determinación, para pedir por escrito su reconsideración."},
    "en": {"address": ["Retirement System Building, 3rd floor", "437 Ponce de León Ave.",
                       "San Juan, PR 00918"],
           "telephone": "(787) 555-0100",
           "hours": "Monday to Friday, 8:00 a.m. to 4:30 p.m.",
           "reconsideration": "You have 30 days from the date you are notified of this "
                              "determination to ask in writing for its reconsideration."},
}


def _toml(value) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_toml(x) for x in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def admin_sections(lang: str) -> dict[str, dict]:
    office = dict(catalog(lang)["letter_office"])
    nxt = dict(catalog(lang)["letter_next"])
    a = ADMIN[lang]
    office.update(address=a["address"], telephone=a["telephone"], hours=a["hours"])
    nxt["reconsideration"] = a["reconsideration"]
    return {"letter_office": office, "letter_next": nxt}


def write_admin_texts(folder: Path, langs=LANGS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for lang in langs:
        lines = []
        for section, values in admin_sections(lang).items():
            lines.append(f"[{section}]")
            lines += [f"{k} = {_toml(v)}" for k, v in values.items()]
            lines.append("")
        (folder / f"letter_{lang}.toml").write_text("\n".join(lines), "utf-8")
    return folder
