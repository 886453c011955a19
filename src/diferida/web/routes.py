"""The web calculator's pages.

    GET  /                          the calculator (`?lang=en` for English; HEAD too)
    POST /calcular                  calculate (the path without JavaScript): the
                                    messages, or 303 to the answer's own page
    GET  /resultado/{token}         the calculator with that answer (Back and
                                    reload keep it; web/drafts.py)
    POST /calcular/fragmento        only the form and the answer, for the page's
                                    script to swap in without a reload
    POST /determinacion/imprimir    the printable estimate of the posted fields
                                    (303 to the one below)
    GET  /resultado/{token}/imprimir  the printable estimate of that answer
    POST /calcular/escenarios       the answer again, with one more date (typed)
                                    in the scenario panel: 303 to the answer's
                                    own page, which keeps that date and puts
                                    the focus on its row
    GET  /calcular, /calcular/…     (an address only posted to) 303 to the calculator
    GET  /glosario                  the glossary (`?lang=en`; /glossary in English)

A participant's details travel only in posted forms, never in a URL: URLs
are kept in access logs, browser history and Referer headers.
    GET  /web/static/{name}         the page's CSS and JavaScript (HEAD too)

The router is self-contained: the service includes it and needs nothing else.
Pages call the core directly (`diferida.evaluate`); no rule is written here.
"""

from __future__ import annotations

import hashlib
from datetime import date
from importlib import resources
from pathlib import Path

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse
from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.concurrency import run_in_threadpool

from diferida.headers import SECURITY_HEADERS
from diferida.rules import builtin_names, load_rules

from . import forms, guidance, lenient
from .drafts import DRAFTS, MAX_VALUE_CHARS
from .forms import FormState
from .labels import DEFAULT_LANG, choose_lang, labels, next_lang
from .view import carried, comparison_view, estimate_words, result_view

STATIC_DIR = Path(str(resources.files("diferida.web") / "static"))
_MEDIA = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}
# Only the files shipped in static/ are served: the name is looked up, never joined.
STATIC_FILES = {p.name: p for p in STATIC_DIR.iterdir() if p.suffix in _MEDIA}
# A short content hash in each asset URL, so a new version is never served stale.
ASSET_VERSION = {
    name: hashlib.sha256(p.read_bytes()).hexdigest()[:10] for name, p in STATIC_FILES.items()
}

router = APIRouter(include_in_schema=False)

env = Environment(
    loader=PackageLoader("diferida.web", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def _asset(name: str) -> str:
    return f"/web/static/{name}?v={ASSET_VERSION[name]}"


env.globals.update(asset=_asset, input_id=forms.input_id, radios=forms.RADIOS)
# a date's boxes written back in words, and the words the page's script
# writes them with; the month-first guard's choice (web/lenient.py)
env.globals.update(date_written_back=lenient.written_back,
                   date_script_words=lenient.script_words, choice_field=lenient.CHOICE)
env.globals.update(next_steps=guidance.next_steps, scenarios=guidance.scenarios,
                   glossary_href=guidance.glossary_href)
# The core's sentences on the public page call it an estimate, not a determination.
env.filters["estimate"] = estimate_words
# An administrator's texts (DIFERIDA_WEB_TEXTS_DIR) are checked when the
# service starts: a mistake in one is reported then, not on a visitor's page.
guidance.check_texts()


def _today() -> date:
    return date.today()


def _context(state: FormState, printable: bool) -> dict:
    lang = state.lang
    other = next_lang(lang)
    default = load_rules(forms.DEFAULT_RULES)
    return {
        "lang": lang,
        "other_lang": other,
        "printable": printable,
        "carry": carried(state),
        "other_carry": carried(state, other),
        "t": labels(lang, state.rules_name),
        "state": state,
        "v": state.values,
        "rule_names": [n for n in builtin_names() if forms.offered(n)],
        "default_rules_version": default.version,
        "default_rules_name": default.name,
        "deferred_right_cutoff": load_rules(state.rules_name).deferred_right_cutoff.isoformat(),
        "result": result_view(state, _today(), guidance.leaving_now(state),
                              guidance.leave_title(lang)) if state.determination else None,
        "comparison": comparison_view(state) if state.comparison else None,
    }


def _page(template: str, state: FormState, status: int = 200, **extra) -> HTMLResponse:
    html = env.get_template(template).render(**_context(state, template == "print.html"),
                                             **extra)
    return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)


async def _handle(request: Request) -> FormState:
    """Do what the posted form asks: calculate (also what Enter does), convert
    years and months, or switch the language keeping what was typed."""
    form = await request.form()
    items = {k: v for k, v in form.items() if isinstance(v, str)}
    action = items.get("action", "calculate")
    lang = choose_lang(items.get("lang"))
    if action.startswith("lang:"):
        lang = choose_lang(action.removeprefix("lang:"))
    state = forms.read_form(items, lang)
    if action.startswith("lang:"):
        # dates typed day first keep their reading on a page that would ask them
        forms.settle_dates(state, choose_lang(items.get("lang")))
    if action in ("calculate", "convert"):
        state.focus = action
    if action == "convert":
        return forms.convert(state)
    if action.startswith("lang:") and items.get("shown") != "result":
        # Before any answer, a language switch only translates the page.
        return state
    return await run_in_threadpool(forms.evaluate, state)


# The key under which a draft keeps the scenario panel's typed date, beside
# the form's inputs (it is not a field of the form).
SCENARIO_KEY = "scenario_date"


def _remember(state: FormState) -> str:
    """Keep what was typed under a new token (web/drafts.py), the scenario
    panel's typed date with it."""
    values = dict(state.values)
    if state.scenario_date:
        values[SCENARIO_KEY] = state.scenario_date
    return DRAFTS.put(values, state.lang)


def _see_other(path: str) -> RedirectResponse:
    return RedirectResponse(path, status_code=303, headers=SECURITY_HEADERS)


# HEAD too: link checkers and uptime monitors ask with HEAD (the server sends
# the headers of the GET, without the body).
@router.api_route("/", methods=["GET", "HEAD"], response_class=HTMLResponse)
async def calculator(request: Request) -> HTMLResponse:
    # only the language comes from the URL: a participant's details are posted
    state = FormState(lang=choose_lang(request.query_params.get("lang")))
    return _page("index.html", state)


@router.post("/calcular", response_class=HTMLResponse)
async def calculate(request: Request) -> HTMLResponse:
    state = await _handle(request)
    if state.determination is not None:
        # post/redirect/get: the answer is a page of its own, so Back and
        # reload keep it, and no detail of the person is in its address
        return _see_other(f"/resultado/{_remember(state)}")
    return _page("index.html", state, 422 if state.errors else 200)


@router.post("/calcular/fragmento", response_class=HTMLResponse)
async def calculate_fragment(request: Request) -> HTMLResponse:
    state = await _handle(request)
    if state.determination is not None:
        # the script puts this address in the history (replaceState)
        state.result_url = f"/resultado/{_remember(state)}"
    # 200 even with messages: the fragment is the page's answer either way.
    return _page("_app.html", state)


@router.post("/determinacion/imprimir", response_class=HTMLResponse)
async def printable(request: Request) -> HTMLResponse:
    form = await request.form()
    items = {k: v for k, v in form.items() if isinstance(v, str)}
    state = forms.read_form(items, choose_lang(items.get("lang")))
    state = await run_in_threadpool(forms.evaluate, state)
    if state.determination is not None:
        return _see_other(f"/resultado/{_remember(state)}/imprimir")
    if state.questions and not state.errors:
        # the month-first guard asks first: the calculator, with its question
        return _page("index.html", state)
    return _page("print.html", state, 422)


async def _remembered(token: str) -> FormState | None:
    draft = DRAFTS.get(token)
    if draft is None:
        return None
    values = dict(draft.values)
    typed = values.pop(SCENARIO_KEY, "")
    # with a typed scenario date the page opens at the panel (#escenarios),
    # not at the headline
    state = FormState(lang=draft.lang, values=values, scenario_date=typed,
                      focus=None if typed else "calculate")
    state = await run_in_threadpool(forms.evaluate, state)
    state.result_url = f"/resultado/{token}"
    return state


def _gone(request: Request) -> HTMLResponse:
    """A token this process does not know (expired, or made by another worker)."""
    state = FormState(lang=choose_lang(request.query_params.get("lang")))
    state.notice = labels(state.lang)["page"]["expired"]
    return _page("index.html", state, 404)


@router.get("/resultado/{token}", response_class=HTMLResponse)
async def result_page(request: Request, token: str) -> HTMLResponse:
    state = await _remembered(token)
    if state is None:
        return _gone(request)
    return _page("index.html", state)


@router.get("/resultado/{token}/imprimir", response_class=HTMLResponse)
async def result_printable(request: Request, token: str) -> HTMLResponse:
    state = await _remembered(token)
    if state is None:
        return _gone(request)
    return _page("print.html", state)


@router.post("/calcular/escenarios", response_class=HTMLResponse)
async def scenario_date(request: Request) -> HTMLResponse:
    """The answer of the posted fields, with the date typed in the scenario
    panel added to its tables (the panel's own small form): post, redirect,
    get, like the answer, so Back after Print never asks to post again and
    the printout of that page has the typed row too."""
    form = await request.form()
    items = {k: v for k, v in form.items() if isinstance(v, str)}
    state = forms.read_form(items, choose_lang(items.get("lang")))
    typed = items.get(SCENARIO_KEY, "")
    if len(typed) > MAX_VALUE_CHARS:
        typed = ""  # never kept; the panel then simply shows no typed row
    state.scenario_date = typed.strip()
    state = await run_in_threadpool(forms.evaluate, state)
    if state.determination is not None:
        # with a date typed, the address names its row (#fila-escrita): the
        # browser lands on the row itself, and the row, focusable, takes the
        # focus, with or without a script; a date with no row (its message is
        # in the panel) leaves that id to no element, and the panel's own
        # autofocus takes the focus; without a date, the address lands on
        # the panel
        where = "#fila-escrita" if state.scenario_date else "#escenarios"
        return _see_other(f"/resultado/{_remember(state)}{where}")
    return _page("index.html", state, 422 if state.errors else 200)


# Addresses that are only posted to: a GET (a bookmark, a reload of an old
# page, a link checker) goes to the calculator, never to a bare "405".
@router.api_route("/calcular", methods=["GET", "HEAD"])
@router.api_route("/calcular/escenarios", methods=["GET", "HEAD"])
@router.api_route("/calcular/fragmento", methods=["GET", "HEAD"])
@router.api_route("/determinacion/imprimir", methods=["GET", "HEAD"])
async def posted_only(request: Request) -> RedirectResponse:
    lang = choose_lang(request.query_params.get("lang"))
    return _see_other("/" if lang == DEFAULT_LANG else f"/?lang={lang}")


@router.get("/glosario", response_class=HTMLResponse)
async def glossary_page(request: Request) -> HTMLResponse:
    return _glossary(choose_lang(request.query_params.get("lang")))


@router.get("/glossary", response_class=HTMLResponse)
async def glossary_page_en(request: Request) -> HTMLResponse:
    return _glossary(choose_lang(request.query_params.get("lang", "en")))


def _glossary(lang: str) -> HTMLResponse:
    other = next_lang(lang)
    html = env.get_template("glossary.html").render(
        lang=lang, other_lang=other, t=labels(lang), g=guidance.glossary(lang),
        other_href=guidance.glossary_href(other))
    return HTMLResponse(html, headers=SECURITY_HEADERS)


@router.api_route("/web/static/{name}", methods=["GET", "HEAD"])
async def static(name: str) -> FileResponse:
    path = STATIC_FILES.get(name)
    if path is None:
        raise HTTPException(status_code=404)
    return FileResponse(path, media_type=_MEDIA[path.suffix],
                        headers={"Cache-Control": "public, max-age=86400",
                                 "X-Content-Type-Options": "nosniff"})
