"""The HTML side: the single page at ``/`` (static) and the encyclopedia at ``/kb`` and ``/kb/{id}`` (rendered here)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse
from jinja2 import Environment, FileSystemLoader, select_autoescape

from diagnose.encyclopedia.entries import SECTIONS, get_entry, load_entries
from diagnose.errors import KBError
from diagnose.web import guard
from diagnose.web.markdown import render_markdown, slug
from diagnose.web.state import app_state

HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"
SECURITY_HEADERS = guard.SECURITY_HEADERS
"""Also added to every response by the guard; set here too so a page served without it keeps them."""

router = APIRouter(include_in_schema=False)


@lru_cache(maxsize=1)
def _templates() -> Environment:
    return Environment(
        loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(["html"]), trim_blocks=True, lstrip_blocks=True
    )


def _html(name: str, status: int = 200, **context: object) -> HTMLResponse:
    body = _templates().get_template(name).render(active="kb", **context)
    return HTMLResponse(body, status_code=status, headers=SECURITY_HEADERS)


@router.get("/")
def index() -> FileResponse:
    """The page: paste a log, see what was masked, the diagnosis, and talk about it."""
    return FileResponse(STATIC / "index.html", media_type="text/html", headers=SECURITY_HEADERS)


@router.get("/kb")
def kb_index(request: Request) -> HTMLResponse:
    """Every encyclopedia entry, root causes first."""
    entries = load_entries(app_state(request).settings.kb_dir)
    groups = [(kind, [e for e in entries if e.kind == kind]) for kind in ("root-cause", "collateral")]
    return _html("kb_index.html", title="Encyclopedia", groups=[(k, g) for k, g in groups if g])


@router.get("/kb/{entry_id}")
def kb_entry(entry_id: str, request: Request) -> HTMLResponse:
    """One entry in the encyclopedia's section layout, with links to related entries."""
    directory = app_state(request).settings.kb_dir
    try:
        entry = get_entry(entry_id, directory)
    except KBError:
        return _html("not_found.html", status=404, title="No such entry", entry_id=entry_id)
    known = {e.id: e.title for e in load_entries(directory)}
    ordered = [name for name in SECTIONS if name in entry.sections]
    ordered += [name for name in entry.sections if name not in SECTIONS]
    sections = [(name, slug(name), render_markdown(entry.sections[name])) for name in ordered]
    related = [(rid, known.get(rid, rid)) for rid in entry.related]
    return _html("kb_entry.html", title=entry.title, entry=entry, sections=sections, related=related)
