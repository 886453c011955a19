"""The analyst's workbench: web pages over the workflow
(`diferida.service.workflow`), which does every action; the pages only
read forms, call it and show what it returns.

    GET  /analista                        the work queue (`?lista=drafts|returned|awaiting|
                                          issued`, `&pagina=`)
    GET  /analista/entrar                 sign in;  POST it: name and password
    POST /analista/salir                  sign out
    POST /analista/buscar                 search by case number or participant id
    GET  /analista/nuevo                  open a case from an application
    POST /analista/nuevo                  "preview" (the engine's answer, nothing saved) or "save"
    POST /analista/importar               many drafts from a CSV or .xlsx
    GET  /analista/casos/{case_id}        the case page (a version)
    POST /analista/casos/{case_id}/enviar     submit
    GET  /analista/casos/{case_id}/aprobar    "Revise y confirme": the decision, the facts
                                          relied on and the warnings, before approving
    POST /analista/casos/{case_id}/aprobar    approve (the letter is stored): only with
                                          that page's `confirmado`; otherwise 303 to it
    POST /analista/casos/{case_id}/devolver   return, with a reason
    GET  /analista/casos/{case_id}/corregir   the correction form; POST it: preview or save
    GET  /analista/casos/{case_id}/carta      the draft letter (HTML)
    GET  /analista/casos/{case_id}/carta.pdf  the letter as PDF (the stored one once approved)
    GET  /analista/auditoria              the audit trail with filters, the chains verified
    GET  /analista/auditoria/exportar     the exports (one of the auditor's tabs)
    GET  /analista/auditoria/exportar/{kind}.{fmt}   cases, events or summary as csv or xlsx
    GET  /analista/sesion                 how long the session has left (nothing renewed)
    POST /analista/sesion                 keep the session going (the warning before it ends)

`?lang=en` (or the hidden `lang` field of a form) for English. Every form
is a plain POST answered by a redirect (or by the page with its messages):
nothing needs JavaScript. A participant's details travel only in posted
forms, never in an address. Sessions and CSRF: session.py.

Nothing typed is lost: an application form posted after its session ended
is kept for the same user through the sign-in (`_keep`, `_give_back`), and
so is the text typed for an action (a return's reason, the note saying the
warnings were checked), given back on the page its form was on with the
action not done (`_action_given_back`); the
language switch of a page with a form posts that form (`idioma`), and on a
page reached by any other post it is a link to a page that answers GET
(`_here`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from diferida.headers import SECURITY_HEADERS
from diferida.i18n import LANGS
from diferida.service import workflow
from diferida.service.auth import audit_anonymous, store_of
from diferida.service.store import NewEvent, User
from diferida.service.throttle import client_of
from diferida.service.workflow import names

from .. import lenient
from ..labels import choose_lang, labels, next_lang, plural
from ..routes import env
from . import trail, view
from .session import CSRF_FIELD, Kept, Session, Sessions, fingerprint


async def _close_form(request: Request) -> AsyncIterator[None]:
    """A posted form is read by the page itself (`request.form()`), so its
    uploaded files (temporary files) are closed here, when the request ends,
    whatever the page answered (a refusal before the file is read included)."""
    try:
        yield
    finally:
        await request.close()


router = APIRouter(include_in_schema=False, dependencies=[Depends(_close_form)])
BASE = "/analista"
MAX_FIELD_CHARS = 2000
MAX_ID = 2**63 - 1
ROLE_NAMES = ("analyst", "supervisor", "auditor")
EXPORT_KINDS = ("cases", "events", "summary")
EXPORT_TYPES = {"csv": "text/csv; charset=utf-8",
                "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}
DONE = ("created", "corrected", "submitted", "approved", "returned")

env.globals.update(ast_time=view.ast_time, day=view.day, money=view.money, plural=plural)


def sessions_of(request: Request) -> Sessions:
    state = request.app.state
    found = getattr(state, "workbench_sessions", None)
    if found is None:
        found = state.workbench_sessions = Sessions()
    return found


def user_fingerprint(user: User, password_hash: str | None) -> str:
    """What ends a session when it changes: the user's name, role, state and
    password (`diferida users passwd` signs the user out everywhere)."""
    return fingerprint(user.id, user.name, user.role, user.disabled_at, password_hash)


def _user(store, sessions: Sessions, session: Session) -> tuple[User | None, str | None]:
    """The active user of a session not signed out, and their current
    password hash."""
    if sessions.signed_out(store, session):
        return None, None
    user = store.user(session.user_id)
    if user is None or user.disabled_at is not None:
        return None, None
    return store.sign_in_record(user.name)


@dataclass
class Ctx:
    """One request of a signed-in user."""

    request: Request
    lang: str
    session: Session
    user: User
    csrf: str
    name: str = ""  # the user as pages name people: their full name (`names.full_names`)

    @property
    def store(self):
        return store_of(self.request)


def href(path: str, lang: str, **params: Any) -> str:
    """A workbench address, in the page's language; no personal data goes in one."""
    query = {k: v for k, v in params.items() if v not in (None, "")}
    if lang != "es":
        query["lang"] = lang
    return path + ("?" + urlencode(query) if query else "")


# the field of the header's language switch, when it posts the page's form
SWITCH_FIELD = "idioma"
# the forms kept when posted after their session ended (an application,
# a correction), and where the rest of the posts go back to as GET
KEPT_PATHS = re.compile(rf"{BASE}/(nuevo|casos/[0-9]{{1,19}}/corregir)")
# the actions whose typed text is kept when posted after their session ended,
# and the field that text is in: given back on the page the form was on (the
# case, or the confirmation page for an approval), the action never done
KEPT_ACTIONS = re.compile(rf"{BASE}/casos/([0-9]{{1,19}})/(enviar|aprobar|devolver)")
ACTION_TEXT = {"enviar": "acknowledgement", "aprobar": "acknowledgement", "devolver": "reason"}
GET_OF_POST = ((re.compile(rf"({BASE}/casos/[0-9]{{1,19}})/(enviar|aprobar|devolver)"), r"\1"),
               (re.compile(rf"{BASE}/buscar"), BASE),
               (re.compile(rf"{BASE}/importar"), f"{BASE}/nuevo"),
               (re.compile(rf"{BASE}/(salir|sesion)"), f"{BASE}/entrar"))


def _lang_of(request: Request, form: Mapping[str, Any] | None = None) -> str:
    switch = form.get(SWITCH_FIELD) if form is not None else None
    if isinstance(switch, str) and switch in LANGS:
        return switch  # the header's switch, posting the page's form
    raw = form.get("lang") if form is not None else None
    return choose_lang(raw if isinstance(raw, str) else request.query_params.get("lang"))


def _switching(form: Mapping[str, Any]) -> bool:
    return isinstance(form.get(SWITCH_FIELD), str) and form.get(SWITCH_FIELD) in LANGS


def _see(path: str) -> RedirectResponse:
    return RedirectResponse(path, status_code=303, headers=SECURITY_HEADERS)


def _render(request: Request, template: str, lang: str, status: int = 200,
            ctx: Ctx | None = None, **values: Any) -> HTMLResponse:
    w = view.words(lang)
    sessions = sessions_of(request)
    timing = {}
    if ctx is not None:  # for the warning before the session ends (workbench.js)
        left = sessions.seconds_left(ctx.session)
        timing = {"session_left": int(left), "session_warn": sessions.warn_seconds(),
                  "session_extendable": left >= sessions.idle}
    values.setdefault("switch_form", None)
    # the language link's page: this one, or the one a page given back stands for
    here = values.pop("here", None) or _here(request)
    html = env.get_template(template).render(
        lang=lang, other_lang=next_lang(lang), w=w, ctx=ctx, user=ctx.user if ctx else None,
        csrf=ctx.csrf if ctx else values.pop("csrf", ""), csrf_field=CSRF_FIELD,
        href=lambda path, **p: href(path, lang, **p), base=BASE, switch_field=SWITCH_FIELD,
        here=here, user_name=(ctx.name or ctx.user.name) if ctx else "",
        tabs=view.tabs(ctx.user.role, lang, lambda path, **p: href(path, lang, **p), BASE)
        if ctx else [], **timing, **values)
    response = HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)
    if ctx is not None:
        sessions.put(response, request, ctx.session)  # renewed: idle expiry
    return response


def _here(request: Request) -> str:
    """This page's address for the language switch: the list and page kept,
    nothing else (no value typed by anyone ends up in a link). A page
    reached by a post (a refusal after "aprobar", the results of a search)
    links to the page that answers GET for it (the case, the queue): a link
    never repeats an action, and never meets a "method not allowed"."""
    path = request.url.path
    if request.method != "GET":
        for pattern, target in GET_OF_POST:
            if pattern.fullmatch(path):
                path = pattern.sub(target, path)
                break
    keep = ("lista", "pagina", "aviso", "volver") if path == f"{BASE}/entrar" else (
        "lista", "pagina")
    params = {k: v for k, v in request.query_params.items() if k in keep}
    return path + ("?" + urlencode(params) if params else "")


async def _signed_in(request: Request, lang: str) -> Ctx | Response:
    """The signed-in user, or a redirect to the sign-in page."""
    sessions = sessions_of(request)
    session = sessions.read(request)
    user = hashed = None
    if session is not None:
        user, hashed = await run_in_threadpool(_user, store_of(request), sessions, session)
    if (user is None or session is None
            or user_fingerprint(user, hashed) != session.fingerprint):
        notice = None
        if request.cookies.get("diferida_wb"):  # said on the sign-in page: why
            why = sessions.ended_by_time(request) if session is None else None
            notice = f"expired_{why}" if why else "expired"
        # where the sign-in leads back to: the page asked for, or the page
        # that answers GET for a post (the case of an action): never the action
        back = _back(_here(request))
        response = _see(href(f"{BASE}/entrar", lang, aviso=notice, volver=back))
        if session is not None or request.cookies.get("diferida_wb"):
            sessions.clear(response, request)
        return response
    called = await run_in_threadpool(names.full_names, store_of(request), [user.name])
    return Ctx(request, lang, session, user, sessions.csrf_token(session),
               called.get(user.name, user.name))


async def _page_ctx(request: Request) -> Ctx | Response:
    return await _signed_in(request, _lang_of(request))


async def _posted(request: Request, *, keep: bool = False
                  ) -> tuple[Ctx | Response, dict[str, Any]]:
    """A posted form of a signed-in user whose CSRF token verifies. With
    `keep`, a form posted after its session ended is kept (`_keep`)."""
    form = await request.form()
    items: dict[str, Any] = dict(form.items())
    lang = _lang_of(request, items)
    ctx = await _signed_in(request, lang)
    if isinstance(ctx, Response):
        if keep:
            kept = await _keep(request, items, lang)
            if kept is not None:
                return kept, items
        return ctx, items
    token = items.get(CSRF_FIELD)
    if not sessions_of(request).check_csrf(ctx.session, token if isinstance(token, str) else None):
        return _refusal(ctx, view.words(lang)["page"]["csrf"], 403), items
    return ctx, items


def _refusal(ctx: Ctx, message: str, status: int) -> HTMLResponse:
    return _render(ctx.request, "wb_message.html", ctx.lang, status, ctx=ctx,
                   title=view.words(ctx.lang)["page"]["refused_title"], message=message)


def _refused(ctx: Ctx, exc: workflow.Refused) -> HTMLResponse:
    return _refusal(ctx, _refused_text(exc, ctx.lang), exc.status)


def _refused_text(exc: workflow.Refused, lang: str) -> str:
    try:
        text = exc.message(lang)
        # what to correct, each naming its field (a letter's addressee, say)
        said = [str(p["message"]) for p in exc.problems if p.get("message")]
        return " ".join([text, *said]) if said else text
    except NotImplementedError:  # the workflow's catalog not written yet
        return exc.code
    except Exception:  # a message that cannot be formatted is still a refusal, not a 500
        return exc.code


def _texts(items: Mapping[str, Any]) -> dict[str, str]:
    return {k: v for k, v in items.items() if isinstance(v, str)}


# --- sign in, sign out --------------------------------------------------------------

@router.get(f"{BASE}/entrar", response_class=HTMLResponse)
async def signin_page(request: Request) -> Response:
    # shown even to a signed-in browser: signing in again (as someone else)
    # makes a new session, never continues the one the browser brought
    return _signin(request, _lang_of(request), notice=request.query_params.get("aviso"),
                   back=_back(request.query_params.get("volver")))


# where a sign-in may lead back to: a workbench page's own address (its path
# and its list and page), never another site's (no open redirect)
BACK = re.compile(rf"{BASE}(/[a-z0-9]+)*(\?(lista|pagina)=[a-z0-9]+(&(lista|pagina)=[a-z0-9]+)?)?")


def _back(raw: Any) -> str | None:
    if not isinstance(raw, str) or len(raw) > 200 or not BACK.fullmatch(raw):
        return None
    return None if raw.startswith(f"{BASE}/entrar") or raw.startswith(f"{BASE}/salir") else raw


NOTICES = ("expired", "expired_idle", "expired_length", "signed_out", "kept_idle",
           "kept_length", "kept_action_idle", "kept_action_length")


def _signin(request: Request, lang: str, *, notice: str | None = None,
            error: str | None = None, status: int = 200, kept: str | None = None,
            name: str = "", back: str | None = None) -> HTMLResponse:
    sessions = sessions_of(request)
    w = view.words(lang)["signin"]
    # a fresh pre-session value for each sign-in form: the form's token is tied to it
    value = sessions.new_pre_session()
    response = _render(request, "wb_signin.html", lang, status,
                       notice=w.get(notice) if notice in NOTICES else None,
                       notice_kind=notice, error=error, csrf=sessions.pre_csrf_token(value),
                       kept=kept, name=name[:200], back=back,
                       # with a kept form the switch posts the sign-in form, which carries it
                       switch_form="signin-form" if kept else None)
    sessions.put_pre_session(response, request, value)
    return response


async def _keep(request: Request, items: Mapping[str, Any], lang: str) -> HTMLResponse | None:
    """A form posted after its session ended: kept in a signed envelope that
    the sign-in page carries, and the page saying why one must sign in
    again. Only a form to one of the forms that take an application
    (KEPT_PATHS), from a session that ended by time alone: its CSRF token
    verifies against the session's cookie (from that session's own page),
    the session was not signed out, and its user is active with the same
    name, role and password (a sign-out, a disabled user or a new password
    ends a session for good: such a post is refused as before). An action's
    post (KEPT_ACTIONS) keeps only its text, when one was typed; nothing else
    of it, and the action is never done from the envelope."""
    action = KEPT_ACTIONS.fullmatch(request.url.path)
    if not KEPT_PATHS.fullmatch(request.url.path) and action is None:
        return None
    if action is not None and not str(items.get(ACTION_TEXT[action.group(2)], "")).strip():
        return None  # nothing typed: the sign-in leads back to the case, as for a page
    sessions = sessions_of(request)
    token = items.get(CSRF_FIELD)
    lapsed = sessions.lapsed(request, token if isinstance(token, str) else None)
    if lapsed is None:
        return None
    user, hashed = await run_in_threadpool(_user, store_of(request), sessions, lapsed.session)
    if user is None or user_fingerprint(user, hashed) != lapsed.session.fingerprint:
        return None
    values = {k: v for k, v in _texts(items).items()
              if k not in (CSRF_FIELD, SWITCH_FIELD, "action")}
    if action is not None:  # the typed text only
        values = {k: v for k, v in values.items() if k == ACTION_TEXT[action.group(2)]}
    envelope = sessions.keep(lapsed, request.url.path, values)
    if envelope is None:
        return None
    response = _signin(request, lang, kept=envelope,
                       notice=f"kept_action_{lapsed.reason}" if action else f"kept_{lapsed.reason}",
                       # whoever else signs in on that page is led to the case, without it
                       back=_back(_here(request)) if action else None)
    sessions.clear(response, request)
    return response


async def _give_back(request: Request, ctx: Ctx, kept: Kept) -> Response | None:
    """The form kept for this user, shown again with every value (once)."""
    store = ctx.store
    action = KEPT_ACTIONS.fullmatch(kept.path)
    if kept.user_id != ctx.user.id or not (KEPT_PATHS.fullmatch(kept.path) or (
            action is not None and _case_id(action.group(1)) is not None)):
        return None  # another user's: never shown, and left unspent
    if await run_in_threadpool(sessions_of(request).spent, store, kept):
        return None
    await run_in_threadpool(sessions_of(request).spend, store, kept)
    if action is not None:
        return await _action_given_back(ctx, int(action.group(1)), action.group(2), kept)
    values = dict(kept.values)
    values.pop("lang", None)
    reason = values.pop("reason", "")
    lenient.split_whole(values, DATE_FIELDS)  # a whole date shown in its boxes
    app = Application(values=values, errors={}, reason=reason[:MAX_FIELD_CHARS])
    if kept.path == f"{BASE}/nuevo":
        if (refused := _not_preparer(ctx)) is not None:
            return refused
        return _form_page(ctx, app, None, restored=True)
    case = await _correctable(ctx, kept.path.split("/")[3])
    if isinstance(case, Response):
        return case
    return _form_page(ctx, app, case, restored=True)


async def _action_given_back(ctx: Ctx, case_id: int, action: str, kept: Kept) -> Response:
    """The text typed for an action posted after its session ended, back in
    its box on the page its form was on (the case page; the confirmation page
    for an approval), with a line saying it was kept and the action was not
    done: the action is never done from a kept envelope, the user checks and
    sends it again. The page's language link leads to that page by GET."""
    name = ACTION_TEXT[action]
    given = {"field": name, "text": kept.values.get(name, "")}
    here = f"{BASE}/casos/{case_id}" + ("/aprobar" if action == "aprobar" else "")
    if action == "aprobar":
        return await _confirm_page(ctx, case_id, note=given["text"], kept=given, here=here)
    if action == "devolver":
        return await _case_page(ctx, case_id, typed_reason=given["text"], kept=given,
                                here=here)
    return await _case_page(ctx, case_id, note=given["text"], kept=given, here=here)


@router.post(f"{BASE}/entrar", response_class=HTMLResponse)
async def signin(request: Request) -> Response:
    form = _texts(await request.form())
    lang = _lang_of(request, form)
    sessions = sessions_of(request)
    w = view.words(lang)
    kept = form.get("conservado") or None
    back = _back(form.get("volver"))
    if _switching(form):  # the language switch: the same page, nothing tried
        notice = form.get("aviso")
        return _signin(request, lang, kept=kept, name=form.get("name", ""),
                       notice=notice if notice in NOTICES else None, back=back)
    if not sessions.check_pre_csrf(sessions.pre_session(request), form.get(CSRF_FIELD)):
        return _signin(request, lang, error=w["page"]["csrf"], status=403, kept=kept)
    limiter = request.app.state.limiter
    client = client_of(request.scope)
    retry = limiter.auth_blocked(client)
    if retry is not None:
        await audit_anonymous(request, NewEvent(
            "auth.rate_limited", "POST", request.url.path, 429,
            detail="too many failed attempts from this client"))
        response = _signin(request, lang, error=w["signin"]["too_many"].format(retry=retry),
                           status=429, kept=kept)
        response.headers["Retry-After"] = str(retry)
        return response
    name = form.get("name", "")[:200]
    password = form.get("password", "")[:1000]
    store = store_of(request)
    user = None
    if name.strip() and password:
        user = await run_in_threadpool(workflow.authenticate, store, name.strip(), password)
    if user is None:
        limiter.hit_auth_failure(client)
        # neither the name typed nor the password goes into the trail or a log
        await audit_anonymous(request, NewEvent(
            "auth.unauthorized", "POST", request.url.path, 401,
            detail="workbench sign-in refused"))
        return _signin(request, lang, error=w["signin"]["failed"], status=401, kept=kept)
    # a new session, whatever cookie the browser brought (no fixation)
    _, hashed = await run_in_threadpool(store.sign_in_record, user.name)
    session = sessions.start(user.id, user_fingerprint(user, hashed))
    opened = sessions.open_kept(kept)
    given = None
    if opened is not None:
        called = await run_in_threadpool(names.full_names, store, [user.name])
        given = await _give_back(request, Ctx(request, lang, session, user,
                                              sessions.csrf_token(session),
                                              called.get(user.name, user.name)), opened)
    await run_in_threadpool(store.audit, NewEvent(
        "auth.signin", "POST", request.url.path, 303, user=user,
        detail="workbench; the form kept at the session's end shown again" if given
        else "workbench"))
    if given is not None:
        return given  # the session's cookie is set by the page itself
    if back is not None:  # the page that asked for the sign-in, in this language
        response = _see(back + ("" if lang == "es" else ("&" if "?" in back else "?")
                                + "lang=" + lang))
    else:
        response = _see(href(BASE, lang))
    sessions.put(response, request, session)
    return response


@router.get(f"{BASE}/sesion")
async def session_left(request: Request) -> Response:
    """How long the session has left, without renewing it: the warning asks
    before it opens and before it says the session ended, since another tab
    may have kept the session going. `{"seconds": …, "extendable": …}`, or
    401 `{"ended": true}`."""
    sessions = sessions_of(request)
    session = sessions.read(request)
    user = hashed = None
    if session is not None:
        user, hashed = await run_in_threadpool(_user, store_of(request), sessions, session)
    headers = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
    if user is None or session is None or user_fingerprint(user, hashed) != session.fingerprint:
        return JSONResponse({"ended": True}, status_code=401, headers=headers)
    left = sessions.seconds_left_now(request, session)
    return JSONResponse({"seconds": int(left),
                         "extendable": session.signed_in + sessions.max - sessions.clock()
                         > sessions.idle}, headers=headers)


@router.post(f"{BASE}/sesion")
async def extend_session(request: Request) -> Response:
    """"Seguir trabajando" in the warning before the session ends: the
    session renewed (a new idle time, never past its absolute lifetime);
    JSON for workbench.js, `{"seconds": …, "extendable": …}`, or 401
    `{"ended": true}` when it had already ended."""
    sessions = sessions_of(request)
    form = _texts(await request.form())
    lang = _lang_of(request, form)
    ctx = await _signed_in(request, lang)
    headers = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
    if isinstance(ctx, Response):
        return JSONResponse({"ended": True}, status_code=401, headers=headers)
    if not sessions.check_csrf(ctx.session, form.get(CSRF_FIELD)):
        return JSONResponse({"refused": "csrf"}, status_code=403, headers=headers)
    left = sessions.seconds_left(ctx.session)
    response = JSONResponse({"seconds": int(left), "extendable": left >= sessions.idle},
                            headers=headers)
    sessions.put(response, request, ctx.session)
    return response


# Addresses that are only posted to: a GET (a bookmark, the address copied
# from a page reached by a post) goes to the page that answers GET for it,
# in its language, never to a bare "405" (as the calculator's do); nothing
# is done. Without a session, to the sign-in page first.
@router.get(BASE + "/casos/{case_id}/enviar")
@router.get(BASE + "/casos/{case_id}/devolver")
@router.get(f"{BASE}/buscar")
@router.get(f"{BASE}/importar")
@router.get(f"{BASE}/salir")
async def posted_only(request: Request) -> Response:
    lang = _lang_of(request)
    ctx = await _signed_in(request, lang)
    if isinstance(ctx, Response):
        return ctx
    path = BASE
    for pattern, target in GET_OF_POST:
        if pattern.fullmatch(request.url.path):
            path = pattern.sub(target, request.url.path)
            break
    if path == f"{BASE}/entrar":  # "salir" by GET signs no one out
        path = BASE
    return _see(href(path, lang))


@router.post(f"{BASE}/salir")
async def signout(request: Request) -> Response:
    ctx, _ = await _posted(request)
    if isinstance(ctx, Response):
        return ctx
    sessions = sessions_of(request)
    # in the database: a copy of the cookie is refused by every process, restarts included
    await run_in_threadpool(sessions.end, ctx.store, ctx.session)
    await run_in_threadpool(ctx.store.audit, NewEvent(
        "auth.signout", "POST", request.url.path, 303, user=ctx.user, detail="workbench"))
    response = _see(href(f"{BASE}/entrar", ctx.lang, aviso="signed_out"))
    sessions.clear(response, request)
    return response


# --- the work queue and search ------------------------------------------------------

def _page_number(raw: Any) -> int:
    try:
        n = int(str(raw))
    except (TypeError, ValueError):
        return 1
    return n if 1 <= n <= 1_000_000 else 1


@router.get(BASE, response_class=HTMLResponse)
async def queue_page(request: Request) -> Response:
    ctx = await _page_ctx(request)
    if isinstance(ctx, Response):
        return ctx
    kind = request.query_params.get("lista")
    if kind not in view.queues_of(ctx.user.role):
        kind = "issued" if ctx.user.role == "auditor" else (
            "awaiting" if ctx.user.role == "supervisor" else "drafts")
    page = _page_number(request.query_params.get("pagina"))
    try:
        listing = await run_in_threadpool(workflow.queue, ctx.store, ctx.user, kind, page=page)
        refusal = None
    except workflow.Refused as exc:
        listing, refusal = None, _refused_text(exc, ctx.lang)
    return _render(request, "wb_queue.html", ctx.lang, ctx=ctx, kind=kind, listing=listing,
                   kind_title=view.queue_title(kind, ctx.user.role, ctx.lang),
                   changes=await _changes(ctx, listing.items if listing else []),
                   refusal=refusal, search=None, search_values={}, search_errors={},
                   done=request.query_params.get("hecho"))


async def _changes(ctx: Ctx, items: list[Any]) -> dict[int, names.LastChange]:
    """Who made the last change of each case listed (the approval of an
    issued case, by its approver), as pages name people."""
    return await run_in_threadpool(names.last_changes, ctx.store,
                                   [c.case_id for c in items])


@router.post(f"{BASE}/buscar", response_class=HTMLResponse)
async def search_page(request: Request) -> Response:
    ctx, items = await _posted(request)
    if isinstance(ctx, Response):
        return ctx
    form = _texts(items)
    w = view.words(ctx.lang)["queue"]
    number_text = form.get("caso", "").strip()[:40]
    participant = form.get("participante", "").strip()[:200]
    errors: dict[str, str] = {}
    number = None
    if number_text:
        if re.fullmatch(r"[0-9]{1,19}", number_text) and 1 <= int(number_text) <= MAX_ID:
            number = int(number_text)
        else:
            errors["caso"] = w["bad_case_number"]
    if not number_text and not participant:
        errors["caso"] = w["search_nothing"]
    results, refusal = None, None
    if not errors:
        try:
            results = await run_in_threadpool(
                workflow.search, ctx.store, ctx.user, case_id=number,
                participant_id=participant or None, page=_page_number(form.get("pagina")))
        except workflow.Refused as exc:
            refusal = _refused_text(exc, ctx.lang)
    return _render(request, "wb_queue.html", ctx.lang, 422 if errors else 200, ctx=ctx,
                   kind=None, listing=None, refusal=refusal, search=results,
                   changes=await _changes(ctx, results.items if results else []),
                   search_values={"caso": number_text, "participante": participant},
                   search_errors=errors, done=None,
                   # the results' language switch posts the search again
                   switch_form="search-form")


# --- opening and correcting a case --------------------------------------------------

@dataclass
class Application:
    values: dict[str, str]
    errors: dict[str, list[str]]
    answer: Any = None  # the engine's Determination (preview)
    reason: str = ""
    # a date's boxes in error, the one its message names first (web/lenient.py)
    boxes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # the month-first guard's dates of two readings, asked before any answer
    # or save: (month first, as the boxes say) (web/lenient.py)
    questions: dict[str, tuple[str, str]] = field(default_factory=dict)


# the application's dates, each typed in three boxes (web/lenient.py):
# "birth_date-day", "birth_date-month", "birth_date-year", …
DATE_FIELDS = tuple(n for n in view.FORM_FIELDS if n in lenient.ALL_DATE_FIELDS)
DATE_BOXES = lenient.box_names(DATE_FIELDS)
env.globals.update(wb_date_fields=DATE_FIELDS,
                   date_words=lambda lang: labels(lang)["lenient"])


def _read_application(form: Mapping[str, str], lang: str) -> tuple[
        dict[str, str], dict[str, list[str]], dict[str, Any], dict[str, tuple[str, ...]],
        dict[str, tuple[str, str]]]:
    """What was typed, the messages for what cannot be read, the application
    as the workflow takes it, the date boxes in error and the dates the
    month-first guard asks. Numbers and dates are read as the calculator
    reads them (web/lenient.py: "$30,000", "22 años y 5 meses", a date in its
    three boxes), with its messages; what it cannot read is named; a date
    asked is not in the application."""
    t = labels(lang)
    w = view.words(lang)["application"]
    values = {k: form.get(k, "") for k in view.FORM_FIELDS if k in form or k not in DATE_FIELDS}
    values.update({k: form[k] for k in DATE_BOXES if k in form})
    errors: dict[str, list[str]] = {}
    boxes: dict[str, tuple[str, ...]] = {}
    for name, value in list(values.items()):
        if len(value) > MAX_FIELD_CHARS:
            shown = name
            if name in DATE_BOXES:  # the date's message, naming its box
                shown, _, part = name.rpartition("-")
                boxes[shown] = (*boxes.get(shown, ()), part)
            errors.setdefault(shown, []).append(w["too_long"].format(limit=MAX_FIELD_CHARS))
    # a date posted whole with one reading goes into its boxes
    lenient.split_whole(values, DATE_FIELDS, t["lenient"])
    # a date chosen at the month-first guard's question: its boxes written
    # with the month by its name (web/lenient.py)
    lenient.choose(values, form.get(lenient.CHOICE, "")[:MAX_FIELD_CHARS], t["lenient"])
    typed = {k: v.strip() for k, v in values.items()
             if v.strip() and k not in errors and k not in DATE_BOXES}
    typed.update({n: text for n in DATE_FIELDS if n not in errors
                  and (text := lenient.typed_date(values, n))})
    reading = lenient.read(values, t, [n for n in (*view.FACT_FIELDS, *view.CASE_FIELDS)
                                       if n in typed and (n in view.FACT_FIELDS
                                                          or n in DATE_FIELDS)])
    application = {k: v for k, v in {**typed, **reading.values}.items()
                   if k not in reading.questions}
    for name, message in reading.errors.items():
        errors.setdefault(name, []).append(message)
    boxes.update(reading.boxes)
    # a value the page cannot read goes to the workflow as typed, so that it
    # names every other problem too (its message for that field is not shown);
    # an application date it cannot read is not sent at all (the workflow
    # takes it as a date only)
    if "application_date" in errors:
        application.pop("application_date", None)
    return values, errors, application, boxes, reading.questions


def _problems(exc: workflow.Refused) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for p in exc.problems:
        out.setdefault(p.get("field") or "participant_id", []).append(str(p.get("message", "")))
    return out


async def _application_step(ctx: Ctx, form: dict[str, str], *,
                            case: workflow.CaseView | None) -> Response:
    """Preview or save an application (a new case, or a correction of `case`)."""
    w = view.words(ctx.lang)
    if _switching(form):
        # the header's language switch posted the form: the same form, every
        # value as typed, in the other language; nothing read, nothing saved
        kept = {k: v for k, v in form.items()
                if k not in (CSRF_FIELD, SWITCH_FIELD, "action", "lang", "reason")}
        lenient.split_whole(kept, DATE_FIELDS)  # a whole date shown in its boxes
        return _form_page(ctx, Application(values=kept, errors={},
                                           reason=form.get("reason", "")[:MAX_FIELD_CHARS]),
                          case)
    values, errors, application, boxes, questions = _read_application(form, ctx.lang)
    action = form.get("action", "preview")
    reason = form.get("reason", "").strip()[:MAX_FIELD_CHARS + 1]  # longer: refused
    if case is not None and action == "save" and not reason:
        errors.setdefault("reason", []).append(w["application"]["reason_missing"])
    app = Application(values=values, errors=errors, reason=reason, boxes=boxes,
                      questions=questions)
    if questions:
        # the month-first guard: nothing saved and no answer until the date
        # meant is chosen; the other fields' problems are named meanwhile
        answer = await run_in_threadpool(workflow.preview, application, lang=ctx.lang)
        if isinstance(answer, workflow.Refused):
            for name, messages in _problems(answer).items():
                if name not in errors and name not in questions:
                    app.errors.setdefault(name, []).extend(messages)
    elif not errors or action != "save":
        if action == "save":
            try:
                if case is None:
                    saved = await run_in_threadpool(workflow.open_draft, ctx.store, ctx.user,
                                                    application, lang=ctx.lang)
                    done = "created"
                else:
                    saved = await run_in_threadpool(workflow.correct, ctx.store, ctx.user,
                                                    case.case_id, application, reason=reason,
                                                    lang=ctx.lang)
                    done = "corrected"
                return _see(href(f"{BASE}/casos/{saved.case_id}", ctx.lang, hecho=done))
            except workflow.Refused as exc:
                if exc.code != "invalid":
                    return _refused(ctx, exc)
                app.errors = _problems(exc)
        else:
            answer = await run_in_threadpool(workflow.preview, application, lang=ctx.lang)
            if isinstance(answer, workflow.Refused):
                for name, messages in _problems(answer).items():
                    if name not in errors:  # the page's own message is the one shown
                        app.errors.setdefault(name, []).extend(messages)
            elif not errors:
                app.answer = answer
    return _form_page(ctx, app, case, 422 if app.errors else 200)


def _form_page(ctx: Ctx, app: Application, case: workflow.CaseView | None,
               status: int = 200, *, restored: bool = False) -> HTMLResponse:
    result = app.answer.to_dict() if app.answer is not None else None
    fields = view.words(ctx.lang)["application"]["fields"]
    asked = lenient.asked(app.questions, labels(ctx.lang)["lenient"], ctx.lang,
                          {n: fields[n][0] for n in app.questions})
    return _render(ctx.request, "wb_application.html", ctx.lang, status, ctx=ctx, app=app,
                   case=case, answer=result, asked=asked,
                   answer_sections=view.sections(result) if result else None,
                   fields=view, import_result=None, import_error=None, restored=restored,
                   switch_form="application-form")


def _not_preparer(ctx: Ctx) -> HTMLResponse | None:
    """The refusal for a user whose role does not prepare cases (an auditor);
    the workflow refuses their actions too, this only spares them the form."""
    if ctx.user.role in workflow.PREPARERS:
        return None
    w = view.words(ctx.lang)
    return _refusal(ctx, w["page"]["forbidden"].format(
        role=w["roles"].get(ctx.user.role, ctx.user.role)), 403)


@router.get(f"{BASE}/nuevo", response_class=HTMLResponse)
async def new_case_page(request: Request) -> Response:
    ctx = await _page_ctx(request)
    if isinstance(ctx, Response):
        return ctx
    if (refused := _not_preparer(ctx)) is not None:
        return refused
    return _form_page(ctx, Application(values={}, errors={}), None)


@router.post(f"{BASE}/nuevo", response_class=HTMLResponse)
async def new_case(request: Request) -> Response:
    ctx, items = await _posted(request, keep=True)
    if isinstance(ctx, Response):
        return ctx
    if (refused := _not_preparer(ctx)) is not None:
        return refused
    return await _application_step(ctx, _texts(items), case=None)


@router.post(f"{BASE}/importar", response_class=HTMLResponse)
async def import_page(request: Request) -> Response:
    ctx, items = await _posted(request)
    if isinstance(ctx, Response):
        return ctx
    w = view.words(ctx.lang)["import"]
    upload = items.get("archivo")
    result, error, status = None, None, 200
    settings = request.app.state.settings
    limit = settings.max_upload_bytes
    if not isinstance(upload, UploadFile) or not upload.filename:
        error, status = w["no_file"], 422
    elif len(data := await upload.read(limit + 1)) > limit:
        # bounded as an upload to /api/v1/batches is (its bytes, then what it holds)
        error, status = w["too_large"].format(limit=f"{limit:,}"), 413
    else:
        try:
            result = await run_in_threadpool(functools.partial(
                workflow.import_applications, ctx.store, ctx.user, data, upload.filename,
                lang=ctx.lang, limits=settings.file_limits()))
        except workflow.Refused as exc:
            if exc.code not in ("invalid", "too_large"):
                return _refused(ctx, exc)
            error = "; ".join(str(p.get("message", "")) for p in exc.problems) or exc.code
            if exc.code == "too_large":  # what to do, then which limit
                error = f"{_refused_text(exc, ctx.lang)} {error}"
            status = exc.status
    return _render(request, "wb_application.html", ctx.lang, status, ctx=ctx,
                   app=Application(values={}, errors={}), case=None, answer=None,
                   answer_sections=None, fields=view, import_result=result, import_error=error,
                   changes=await _changes(ctx, result.created if result else []))


# --- the case page and its actions --------------------------------------------------

def _case_id(raw: str) -> int | None:
    return int(raw) if re.fullmatch(r"[0-9]{1,19}", raw) and 1 <= int(raw) <= MAX_ID else None


async def _case_page(ctx: Ctx, case_id: int, *, status: int = 200, refusal: str | None = None,
                     done: str | None = None, reason_error: str | None = None,
                     ack_error: str | None = None, note: str | Mapping[str, str] = "",
                     typed_reason: str = "", kept: Mapping[str, str] | None = None,
                     here: str | None = None, ack_field: str = "acknowledgement",
                     change: str | None = None) -> Response:
    w = view.words(ctx.lang)
    try:
        shown = await run_in_threadpool(workflow.view, ctx.store, ctx.user, case_id)
        story = await run_in_threadpool(workflow.history, ctx.store, ctx.user, case_id,
                                        lang=ctx.lang)
    except workflow.Refused as exc:
        if exc.code == "not_found":
            return _refusal(ctx, w["page"]["not_found"], 404)
        return _refused(ctx, exc)
    again = await run_in_threadpool(workflow.reproduce, ctx.store, ctx.user, shown.case_id)
    letter = await run_in_threadpool(view.letter_rows, shown, ctx.lang)
    stops = await run_in_threadpool(_contradictions, shown, ctx.lang)
    if change and not typed_reason and "return" in shown.can and letter:
        # "Cambiar" on the confirmation page: the return's reason names the fact
        label = next((r["label"] for r in letter["facts"] if r.get("field") == change), None)
        if label:
            typed_reason = w["change"]["reason"].format(label=label)
    sending = await run_in_threadpool(_sending, ctx, shown) if "submit" in shown.can else []
    return _render(ctx.request, "wb_case.html", ctx.lang, status, ctx=ctx, case=shown,
                   sending=sending, rules_title=view.rules_title(shown.rules_name),
                   contradictions=stops, check_words=_check_words(shown, ctx.lang),
                   story=story, sections=view.sections(shown.result), reproduced=again,
                   refusal=refusal, done=done if done in DONE else None,
                   reason_error=reason_error, letter=letter, ack_error=ack_error, note=note,
                   ack_field=ack_field,
                   typed_reason=typed_reason, kept=kept, here=here,
                   barred=view.barred_text(shown.barred, ctx.lang) if shown.barred else None,
                   checks=workflow.check_names(shown.checks, ctx.lang))


# the application's fields whose absence keeps a draft from being sent (the
# letter's addressee), each fixed in the correction form at that field
ADDRESSEE_FIELDS = ("name", "address", "letter_lang")


def _sending(ctx: Ctx, shown: workflow.CaseView) -> list[dict[str, str]]:
    """Why "Enviar para aprobación" cannot be used yet: what the letter still
    needs (`letters.requirements`, which a submission is refused for), each
    in words, with the link that fixes it where the analyst can (the
    correction form, at the field)."""
    from diferida.service.workflow.letters import requirements

    s = view.words(ctx.lang)["sending"]
    out = []
    for p in requirements(ctx.store, shown, ctx.lang):
        name = str(p.get("field") or "")
        item = {"message": str(p.get("message", "")), "field": name}
        if name in ADDRESSEE_FIELDS and "correct" in shown.can:
            anchor = "f-" + name
            item.update(href=href(f"{BASE}/casos/{shown.case_id}/corregir", ctx.lang)
                        + "#" + anchor, fix=s.get(f"fix_{name}", s["fix_other"]))
        out.append(item)
    return out


def _contradictions(shown: workflow.CaseView, lang: str) -> list[str]:
    """Why the version cannot be sent or approved: the checks its own facts
    contradict, in the determination's words (empty when none)."""
    return [str(p["message"]) for p in workflow.contradicted(
        shown.result, shown.inputs, shown.as_of, lang)]


def _check_words(shown: workflow.CaseView, lang: str) -> dict[str, str]:
    """Each warning asking for a check, named in words (a box per warning)."""
    return {c: workflow.check_names((c,), lang) for c in shown.checks}


def _ack_error(exc: workflow.Refused, field: str = "acknowledgement") -> str | None:
    """The message of a refusal about the notes saying what was checked
    (any `acknowledgement` or `acknowledgement.<warning>` field; or about
    another text typed for an action, `field`), or None for any other
    refusal."""
    if exc.code != "invalid":
        return None
    found = [p for p in exc.problems if p.get("field") == field or (
        field == "acknowledgement" and str(p.get("field") or "").startswith(field + "."))]
    return str(found[0].get("message", "")) if found else None


def _ack_field(exc: workflow.Refused) -> str:
    """The note's field a refusal names (its box gets the message)."""
    for p in exc.problems:
        if str(p.get("field") or "").startswith("acknowledgement"):
            return str(p["field"])
    return "acknowledgement"


@router.get(BASE + "/casos/{case_id}", response_class=HTMLResponse)
async def case_page(request: Request, case_id: str) -> Response:
    ctx = await _page_ctx(request)
    if isinstance(ctx, Response):
        return ctx
    number = _case_id(case_id)
    if number is None:
        return _refusal(ctx, view.words(ctx.lang)["page"]["not_found"], 404)
    return await _case_page(ctx, number, done=request.query_params.get("hecho"),
                            change=request.query_params.get("cambiar"))


async def _act(request: Request, case_id: str, action: str) -> Response:
    # after the session's end its typed text is kept (`_keep`), never acted on
    ctx, items = await _posted(request, keep=True)
    if isinstance(ctx, Response):
        return ctx
    w = view.words(ctx.lang)
    number = _case_id(case_id)
    if number is None:
        return _refusal(ctx, w["page"]["not_found"], 404)
    form = _texts(items)
    # one character past the limit, so that the workflow refuses a longer text
    # (naming the field) rather than keeping a cut one
    reason = form.get("reason", "").strip()[:MAX_FIELD_CHARS + 1]
    # no box on the page (a version without warnings asking for a check): no note
    typed = form.get("acknowledgement")
    note: str | dict[str, str] | None = None if typed is None else typed[:MAX_FIELD_CHARS + 1]
    # a version with several warnings asking for a check: a box per warning
    each = {k.split(".", 1)[1]: v[:MAX_FIELD_CHARS + 1] for k, v in form.items()
            if k.startswith("acknowledgement.")}
    if each:
        note = each
    if action == "return" and not reason:
        return await _case_page(ctx, number, status=422,
                                reason_error=w["case"]["return_reason_missing"])
    if action == "approve" and form.get("confirmado") != "1" \
            and ctx.user.role in workflow.APPROVERS:
        # approval is made only from the confirmation page's form: any other
        # post (an old page's button) is shown that page first (a role that
        # may not approve is refused by the workflow, as before)
        return _see(href(f"{BASE}/casos/{number}/aprobar", ctx.lang))
    try:
        if action == "submit":
            done = await run_in_threadpool(functools.partial(
                workflow.submit, ctx.store, ctx.user, number, acknowledgement=note,
                lang=ctx.lang))
        elif action == "approve":
            done = await run_in_threadpool(functools.partial(
                workflow.approve, ctx.store, ctx.user, number, lang=ctx.lang,
                acknowledgement=note))
        else:
            done = await run_in_threadpool(functools.partial(
                workflow.return_case, ctx.store, ctx.user, number, reason=reason,
                lang=ctx.lang))
    except workflow.Refused as exc:
        if exc.code == "not_found":
            return _refusal(ctx, w["page"]["not_found"], 404)
        ack = _ack_error(exc)
        if ack is not None and action == "approve":
            return await _confirm_page(ctx, number, status=exc.status, ack_error=ack,
                                       note=note or "", ack_field=_ack_field(exc))
        if ack is not None:
            return await _case_page(ctx, number, status=exc.status, ack_error=ack,
                                    note=note or "", ack_field=_ack_field(exc))
        why = _ack_error(exc, "reason") if action == "return" else None
        if why is not None:  # the reason refused: said by its box, as typed
            return await _case_page(ctx, number, status=exc.status, reason_error=why,
                                    typed_reason=reason)
        # the refusal on the case's own page, with everything else on it
        return await _case_page(ctx, number, status=exc.status,
                                refusal=_refused_text(exc, ctx.lang))
    word = {"submit": "submitted", "approve": "approved", "return": "returned"}[action]
    return _see(href(f"{BASE}/casos/{done.case_id}", ctx.lang, hecho=word))


@router.post(BASE + "/casos/{case_id}/enviar")
async def submit_case(request: Request, case_id: str) -> Response:
    return await _act(request, case_id, "submit")


async def _confirm_page(ctx: Ctx, case_id: int, *, status: int = 200,
                        ack_error: str | None = None, note: str | Mapping[str, str] = "",
                        kept: Mapping[str, str] | None = None,
                        here: str | None = None,
                        ack_field: str = "acknowledgement") -> Response:
    """"Revise y confirme": the decision and the facts relied on, as the
    letter states them, the warnings and the note saying they were checked,
    then the one form that approves (irreversible). A version the user may
    not approve is shown its case page, which says why."""
    w = view.words(ctx.lang)
    try:
        shown = await run_in_threadpool(workflow.view, ctx.store, ctx.user, case_id)
    except workflow.Refused as exc:
        if exc.code == "not_found":
            return _refusal(ctx, w["page"]["not_found"], 404)
        return _refused(ctx, exc)
    if "approve" not in shown.can:
        why = (view.barred_text(shown.barred, ctx.lang) if shown.barred
               else w["case"]["no_approve"])
        # a note kept for an approval no longer possible is shown there, said
        return await _case_page(ctx, shown.case_id, status=403, refusal=why, kept=kept,
                                here=f"{BASE}/casos/{shown.case_id}" if kept else None)
    letter = await run_in_threadpool(view.letter_rows, shown, ctx.lang)
    stops = await run_in_threadpool(_contradictions, shown, ctx.lang)
    return _render(ctx.request, "wb_confirm.html", ctx.lang, status, ctx=ctx, case=shown,
                   contradictions=stops, check_words=_check_words(shown, ctx.lang),
                   sections=view.sections(shown.result), letter=letter, ack_error=ack_error,
                   note=note, checks=workflow.check_names(shown.checks, ctx.lang),
                   ack_field=ack_field,
                   kept=kept, here=here)


@router.get(BASE + "/casos/{case_id}/aprobar", response_class=HTMLResponse)
async def confirm_page(request: Request, case_id: str) -> Response:
    ctx = await _page_ctx(request)
    if isinstance(ctx, Response):
        return ctx
    number = _case_id(case_id)
    if number is None:
        return _refusal(ctx, view.words(ctx.lang)["page"]["not_found"], 404)
    return await _confirm_page(ctx, number)


@router.post(BASE + "/casos/{case_id}/aprobar")
async def approve_case(request: Request, case_id: str) -> Response:
    return await _act(request, case_id, "approve")


@router.post(BASE + "/casos/{case_id}/devolver")
async def return_case(request: Request, case_id: str) -> Response:
    return await _act(request, case_id, "return")


def _application_of(case: workflow.CaseView, lang: str) -> dict[str, str]:
    """The stored application as the form shows it, for a correction."""
    values = {k: "" if v is None else str(v).lower() if isinstance(v, bool) else str(v)
              for k, v in case.inputs.items()}
    values.update({"name": case.name or "", "address": case.address or "",
                   "application_date": case.application_date.isoformat()
                   if case.application_date else "", "note": case.note or "",
                   "letter_lang": case.letter_lang or ""})
    values["rules"] = case.rules_name or ""  # corrected under the rules set it was decided by
    # each stored date (YYYY-MM-DD) into its three boxes (on a page that
    # writes the month first, by its name where the boxes could be read two ways)
    lenient.split_whole(values, DATE_FIELDS, labels(lang)["lenient"])
    return values


async def _correctable(ctx: Ctx, case_id: str) -> workflow.CaseView | Response:
    number = _case_id(case_id)
    if number is None:
        return _refusal(ctx, view.words(ctx.lang)["page"]["not_found"], 404)
    try:
        return await run_in_threadpool(workflow.view, ctx.store, ctx.user, number)
    except workflow.Refused as exc:
        if exc.code == "not_found":
            return _refusal(ctx, view.words(ctx.lang)["page"]["not_found"], 404)
        return _refused(ctx, exc)


@router.get(BASE + "/casos/{case_id}/corregir", response_class=HTMLResponse)
async def correct_page(request: Request, case_id: str) -> Response:
    ctx = await _page_ctx(request)
    if isinstance(ctx, Response):
        return ctx
    case = await _correctable(ctx, case_id)
    if isinstance(case, Response):
        return case
    if "correct" not in case.can:
        return await _case_page(ctx, case.case_id, status=403, refusal=view.words(
            ctx.lang)["case"]["no_actions"])
    return _form_page(ctx, Application(values=_application_of(case, ctx.lang), errors={}), case)


@router.post(BASE + "/casos/{case_id}/corregir", response_class=HTMLResponse)
async def correct_case(request: Request, case_id: str) -> Response:
    ctx, items = await _posted(request, keep=True)
    if isinstance(ctx, Response):
        return ctx
    if (refused := _not_preparer(ctx)) is not None:
        return refused
    case = await _correctable(ctx, case_id)
    if isinstance(case, Response):
        return case
    return await _application_step(ctx, _texts(items), case=case)


@router.get(BASE + "/casos/{case_id}/carta", response_class=HTMLResponse)
async def letter_html_page(request: Request, case_id: str) -> Response:
    ctx = await _page_ctx(request)
    if isinstance(ctx, Response):
        return ctx
    case = await _correctable(ctx, case_id)
    if isinstance(case, Response):
        return case
    from diferida.letter import style_source

    try:
        html = await run_in_threadpool(functools.partial(
            workflow.letter_html, ctx.store, ctx.user, case.case_id, lang=ctx.lang,
            asked_lang=request.query_params.get("lang"),
            back=href(f"{BASE}/casos/{case.case_id}", ctx.lang)))
    except workflow.Refused as exc:  # a letter that cannot be written: said, never a 500
        return _refusal(ctx, _refused_text(exc, ctx.lang), exc.status)
    # one self-contained document: its one style block allowed by its hash
    csp = SECURITY_HEADERS["Content-Security-Policy"].replace(
        "style-src 'self'", f"style-src {style_source(html)}")
    return HTMLResponse(html, headers={**SECURITY_HEADERS, "Content-Security-Policy": csp})


@router.get(BASE + "/casos/{case_id}/carta.pdf")
async def letter_pdf(request: Request, case_id: str) -> Response:
    ctx = await _page_ctx(request)
    if isinstance(ctx, Response):
        return ctx
    number = _case_id(case_id)
    if number is None:
        return _refusal(ctx, view.words(ctx.lang)["page"]["not_found"], 404)
    try:
        case = await run_in_threadpool(workflow.view, ctx.store, ctx.user, number)
        pdf = await run_in_threadpool(workflow.letter, ctx.store, ctx.user, number,
                                      lang=None if case.state == "approved"
                                      or case.letter_lang else ctx.lang)
    except workflow.Refused as exc:
        if exc.code == "not_found":
            return _refusal(ctx, view.words(ctx.lang)["page"]["not_found"], 404)
        return _refused(ctx, exc)
    name = f"caso-{case.number}-v{case.version}{'' if case.state == 'approved' else '-borrador'}"
    return Response(pdf, media_type="application/pdf", headers={
        "Content-Disposition": f'attachment; filename="{name}.pdf"',
        "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"})


# --- the auditor's view --------------------------------------------------------------

# the form's filters and the workflow's names for them
AUDIT_FILTERS = {"quien": "who", "accion": "action", "caso": "case_id", "desde": "since",
                 "hasta": "until"}
# the days a date filter may name: whole days of the years the workflow takes
FIRST_DAY = date(workflow.AUDIT_YEARS[0], 1, 1)
LAST_DAY = date(workflow.AUDIT_YEARS[1] - 1, 12, 31)


def _filter_message(lang: str, key: str, code: str, **values: Any) -> str:
    """A refused filter in words, naming it as the form does."""
    a = view.words(lang)["audit"]
    return a[code].format(label=a[f"name_{key}"], **values)


def _day(key: str, text: str, lang: str) -> date | None | str:
    """A typed day: the date, None for nothing typed, or the message."""
    text = text.strip()
    if not text:
        return None
    m = labels(lang)["lenient"]
    iso, _error = lenient.read_date(text, m)
    if iso is None:
        return view.words(lang)["audit"]["bad_date"]
    both = lenient.date_choices(text, m)
    if both:  # day and month could be swapped: asked back, never guessed
        return m["date_ask"].format(value=text, first=both[0][1], second=both[1][1])
    day = date.fromisoformat(iso)
    if not FIRST_DAY <= day <= LAST_DAY:  # "hasta 31/12/9999" has no next day to stop at
        return _filter_message(lang, key, "filter_range", first=FIRST_DAY.year,
                               last=LAST_DAY.year)
    return day


def _case_filter(text: str, lang: str) -> int | None | str:
    """A typed case number: the number, None for nothing typed, or the message."""
    text = text.strip()
    if not text:
        return None
    number = _case_id(text)
    if number is None:
        return _filter_message(lang, "caso", "filter_case", max=workflow.MAX_DB_ID)
    return number


def _audit_filters(q: Mapping[str, Any], lang: str
                   ) -> tuple[dict[str, str], dict[str, str], Any, Any, Any]:
    """The trail's filters as typed, the errors of those that cannot be read
    (by field), and the dates and case number read (a text where not)."""
    filters = {k: q.get(k) or "" for k in AUDIT_FILTERS}
    errors: dict[str, str] = {}
    since = _day("desde", filters["desde"], lang)
    until = _day("hasta", filters["hasta"], lang)
    case_number = _case_filter(filters["caso"], lang)
    for key, value in (("desde", since), ("hasta", until), ("caso", case_number)):
        if isinstance(value, str):
            errors[key] = value
    return filters, errors, since, until, case_number


@router.api_route(f"{BASE}/auditoria", methods=["GET", "POST"], response_class=HTMLResponse)
async def audit_page(request: Request) -> Response:
    """GET: the newest events and the last verification recorded; POST: the
    filters typed (posted, so that what was typed is never in an address)
    and their pages, or "verify now" (`verificar`). The chains are read
    again only when asked: with many cases that takes seconds."""
    if request.method == "POST":
        ctx, items = await _posted(request)
        q: Mapping[str, Any] = _texts(items)
    else:
        ctx, q = await _page_ctx(request), {}
    if isinstance(ctx, Response):
        return ctx
    if ctx.user.role not in workflow.AUDITORS:
        # the workflow refuses it (and records the refusal): before any filter is read
        try:
            await run_in_threadpool(workflow.audit_view, ctx.store, ctx.user)
        except workflow.Refused as exc:
            return _refused(ctx, exc)
    lang = ctx.lang
    just = None
    if request.method == "POST" and q.get("verificar"):
        try:
            just = await run_in_threadpool(workflow.verify_now, ctx.store, ctx.user)
        except workflow.Refused as exc:
            return _refused(ctx, exc)
        q = {}  # the form of the filters is shown empty, with the newest events
    filters, errors, since, until, case_number = _audit_filters(q, lang)
    who = filters["quien"].strip() or None
    action = filters["accion"].strip() or None
    # the reads are folded into a count per case unless asked for ("mostrar
    # consultas") or filtered for by name
    show_reads = q.get("consultas") == "1"
    entries = None
    if errors:
        # the texts too, so that every filter to correct is said at once
        for p in workflow.audit_filter_problems(lang, who=who, action=action):
            errors.setdefault(_form_key(p["field"]), _problem_words(lang, p))
    else:
        start = (datetime.combine(since, time(), tzinfo=view.AST).astimezone(UTC)
                 if isinstance(since, date) else None)
        end = (datetime.combine(until + timedelta(days=1), time(), tzinfo=view.AST)
               .astimezone(UTC) if isinstance(until, date) else None)
        if who is not None and not workflow.audit_filter_problems(lang, who=who):
            # the trail names people by their full names: one typed is found too
            who = await run_in_threadpool(names.sign_in_name, ctx.store, who)
        try:
            entries = await run_in_threadpool(functools.partial(
                workflow.audit_view, ctx.store, ctx.user, who=who, action=action,
                case_id=case_number, since=start, until=end,
                page=_page_number(q.get("pagina")), lang=lang, fold_reads=not show_reads))
        except workflow.Refused as exc:
            if exc.code != "invalid":
                return _refused(ctx, exc)
            for p in exc.problems:
                errors.setdefault(_form_key(p["field"]), _problem_words(lang, p))
    try:
        last = just or await run_in_threadpool(workflow.last_verification, ctx.store, ctx.user)
    except workflow.Refused as exc:
        return _refused(ctx, exc)
    shown = entries.items if entries is not None else []
    # people by the names pages give them; the users the user events are about
    people = await run_in_threadpool(names.full_names, ctx.store,
                                     [e.user for e in shown] + [last.user if last else None])
    subjects = await run_in_threadpool(names.trail_subjects, ctx.store,
                                       [e.id for e in shown if e.action.startswith("user.")])

    def said(e: workflow.AuditEntry) -> trail.Said:
        return trail.detail_words(e.action, e.detail, lang, event_id=e.id, subjects=subjects,
                                  when=lambda at: _recorded_time(at, lang))

    return _render(request, "wb_audit.html", lang, 422 if errors else 200, ctx=ctx,
                   filters={k: v[:MAX_FIELD_CHARS] for k, v in filters.items()},
                   errors=errors, entries=entries, last=last, just=just,
                   show_reads=show_reads, event_name=view.event_name,
                   outcome=view.outcome, detail=said, people=people,
                   actions=view.audit_actions(lang, filters["accion"].strip()))


def _recorded_time(text: str, lang: str) -> str:
    """A time the trail's detail records (ISO), as the page says times."""
    try:
        return view.ast_time(datetime.fromisoformat(text), lang)
    except ValueError:
        return text


def _form_key(name: Any) -> str:
    found = [k for k, v in AUDIT_FILTERS.items() if v == name]
    return found[0] if found else "quien"


def _problem_words(lang: str, p: Mapping[str, Any]) -> str:
    """A problem of the workflow's audit_filter_problems, in the page's words."""
    values = {k: p[k] for k in ("limit", "max") if k in p}
    if p.get("code") == "filter_range":  # said as the page's days
        values.update(first=FIRST_DAY.year, last=LAST_DAY.year)
    try:
        return _filter_message(lang, _form_key(p.get("field")), str(p.get("code")), **values)
    except KeyError:  # a problem the page has no words of its own for
        return str(p.get("message", ""))


@router.get(BASE + "/auditoria/exportar", response_class=HTMLResponse)
async def exports_page(request: Request) -> Response:
    """The exports (cases, events, summary; CSV or .xlsx), one of the
    auditor's tabs; for the roles that may export (EXPORTERS)."""
    ctx = await _page_ctx(request)
    if isinstance(ctx, Response):
        return ctx
    if ctx.user.role not in workflow.EXPORTERS:
        w = view.words(ctx.lang)
        return _refusal(ctx, w["page"]["forbidden"].format(
            role=w["roles"].get(ctx.user.role, ctx.user.role)), 403)
    return _render(request, "wb_exports.html", ctx.lang, ctx=ctx, kinds=EXPORT_KINDS,
                   formats=tuple(EXPORT_TYPES))


@router.get(BASE + "/auditoria/exportar/{name}")
async def export_file(request: Request, name: str) -> Response:
    ctx = await _page_ctx(request)
    if isinstance(ctx, Response):
        return ctx
    kind, _, fmt = name.partition(".")
    if kind not in EXPORT_KINDS or fmt not in EXPORT_TYPES:
        return _refusal(ctx, view.words(ctx.lang)["page"]["not_found"], 404)
    try:
        data = await run_in_threadpool(workflow.export, ctx.store, ctx.user, kind, fmt)
    except workflow.Refused as exc:
        return _refused(ctx, exc)
    stamp = datetime.now(view.AST).strftime("%Y%m%d-%H%M")
    return Response(data, media_type=EXPORT_TYPES[fmt], headers={
        "Content-Disposition": f'attachment; filename="diferida-{kind}-{stamp}.{fmt}"',
        "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"})
