"""The workbench's pages: FastAPI, server-rendered HTML (Jinja2, escaped), one small script.

Every request needs the token ``sdckit ui`` printed: given once as ``?token=`` (the first URL), it is
kept in a cookie for this server's port (HttpOnly, SameSite=Strict, so another site cannot post with
it) and the address is reloaded without it; a request with neither, or addressed to another host
than 127.0.0.1/localhost on this port (DNS rebinding), is refused with 403. Pages change state only
through POST, answered with a redirect (so reloading never runs anything twice).

Routes: ``/describe`` (``POST /data``, ``/config/load``, ``/config``; ``GET /download/config.yaml``,
``/download/proposed.yaml``),
``/measure`` (``POST`` starts a run), ``/protect`` (``POST /protect/add|remove|clear|run``),
``/compare`` (``POST`` starts the evaluation; ``POST /keep``), ``/export`` (``GET
/releases/{id}/release.csv|recipe.json|summary.json``, ``/report.html``), ``GET /jobs/{id}`` (the
status of a run, polled by the page) and ``POST /jobs/{id}/cancel``.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

from sdckit._extras import missing_extra, require
from sdckit.errors import SdcError
from sdckit.evaluate.figure_names import figure_label
from sdckit.ui.charts import flatten, histogram_svg, ru_map_svg, threshold_caption
from sdckit.ui.forms import param_fields, parse_params
from sdckit.ui.jobs import DONE
from sdckit.ui.session import COMPARE_RISK, COMPARE_UTILITY, Session

try:  # an optional dependency: without it, one error naming the extra, not a traceback
    from fastapi import FastAPI, Request
    from fastapi.responses import FileResponse, HTMLResponse, PlainTextResponse, RedirectResponse, Response
    from starlette.concurrency import run_in_threadpool
except ImportError as error:
    raise missing_extra("ui", error, "the workbench") from error

HERE = Path(__file__).parent
STATIC = {"ui.js": "text/javascript", "ui.css": "text/css"}
REFUSED = (
    "403 Forbidden: this sdckit workbench needs its token. Open the address `sdckit ui` printed "
    "(http://127.0.0.1:PORT/?token=...).\n"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; "
    "script-src 'self'; frame-ancestors 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _templates() -> Any:
    require("ui", "jinja2", feature="the workbench's pages")
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    environment = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.globals["flatten"] = flatten
    environment.globals["figure_label"] = figure_label
    return environment


async def _form(request: Request) -> dict[str, list[str]]:
    """The fields of a urlencoded form body (every value of a repeated name)."""
    body = (await request.body()).decode("utf-8", errors="replace")
    fields: dict[str, list[str]] = {}
    for key, value in parse_qsl(body, keep_blank_values=True):
        fields.setdefault(key, []).append(value)
    return fields


def _one(fields: dict[str, list[str]]) -> dict[str, str]:
    return {key: values[-1] for key, values in fields.items()}


def _back(target: str | None, default: str) -> str:
    """A page of this server to return to (never another site)."""
    if target and target.startswith("/") and not target.startswith("//"):
        return target
    return default


def create_app(session: Session, token: str, port: int) -> FastAPI:
    """The workbench serving ``session``; ``token`` guards it; ``port`` names its cookie and hosts."""
    app = FastAPI(title="sdckit workbench", docs_url=None, redoc_url=None, openapi_url=None)
    templates = _templates()
    cookie = f"sdckit-ui-{port}"
    hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
    state: dict[str, Any] = {"notice": None, "measure": {}, "step": {}, "compare": None}

    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Response:
        if request.headers.get("host", "") not in hosts:
            return PlainTextResponse(REFUSED, status_code=403)
        given = request.query_params.get("token")
        if given is not None and hmac.compare_digest(given.encode(), token.encode()):
            rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
            target = request.url.path + (f"?{urlencode(rest)}" if rest else "")
            response: Response = RedirectResponse(target, status_code=303)
            response.set_cookie(cookie, token, httponly=True, samesite="strict", path="/")
        elif hmac.compare_digest(request.cookies.get(cookie, "").encode(), token.encode()):
            response = await call_next(request)
        else:
            response = PlainTextResponse(REFUSED, status_code=403)
        response.headers.update(SECURITY_HEADERS)
        return response

    def render(name: str, title: str, current: str, **context: Any) -> HTMLResponse:
        notice, state["notice"] = state["notice"], None
        text = templates.get_template(name).render(
            session=session, title=title, current=current, notice=notice, **context
        )
        return HTMLResponse(text)

    def go(path: str) -> RedirectResponse:
        return RedirectResponse(path, status_code=303)

    @app.get("/")
    def home() -> RedirectResponse:
        return go("/describe")

    @app.get("/static/{name}")
    def static(name: str) -> Response:
        if name not in STATIC:
            return PlainTextResponse("not found", status_code=404)
        return FileResponse(HERE / "static" / name, media_type=STATIC[name])

    _describe_routes(app, session, render, go)
    _measure_routes(app, session, state, render, go)
    _protect_routes(app, session, state, render, go)
    _job_routes(app, session, templates, go)
    _compare_routes(app, session, state, render, go)
    return app


def _describe_routes(
    app: FastAPI,
    session: Session,
    render: Callable[..., HTMLResponse],
    go: Callable[[str], RedirectResponse],
) -> None:
    """Describe: the data's columns, the roles proposed for them (``sdckit describe``), the
    attribute form, the configuration in and out."""
    from sdckit.ui.proposals import SAMPLE, Proposals

    proposals = Proposals()

    @app.get("/describe")
    def describe() -> HTMLResponse:
        from sdckit.table import Kind, Role

        choices = {"role": [r.value for r in Role], "kind": [k.value for k in Kind]}
        from sdckit.ui.forms import ATTRIBUTE_SETTINGS

        proposal = proposals.current(session)
        with session.lock:
            return render(
                "describe.html",
                "Describe the data",
                "/describe",
                settings=ATTRIBUTE_SETTINGS,
                choices=choices,
                proposal=proposal,
                proposal_sample=SAMPLE,
            )

    @app.post("/data")
    async def open_data(request: Request) -> RedirectResponse:
        fields = _one(await _form(request))
        await run_in_threadpool(session.open_data, fields.get("path", ""))
        await run_in_threadpool(proposals.refresh, session)
        return go("/describe")

    @app.post("/config/load")
    async def load_config(request: Request) -> RedirectResponse:
        fields = _one(await _form(request))
        await run_in_threadpool(session.load_config, fields.get("path", ""))
        return go("/describe")

    @app.post("/config")
    async def save_config(request: Request) -> RedirectResponse:
        fields = _one(await _form(request))
        await run_in_threadpool(session.update_config, fields)
        return go("/describe")

    @app.get("/download/proposed.yaml")
    def download_proposal() -> Response:
        from sdckit.describe import config_text

        proposal = proposals.current(session)
        if proposal is None:
            return PlainTextResponse("no data is open: open a data file first", status_code=404)
        return Response(
            config_text(proposal, command="sdckit ui"),
            media_type="application/yaml",
            headers={"Content-Disposition": 'attachment; filename="proposed.yaml"'},
        )

    @app.get("/download/config.yaml")
    def download_config() -> Response:
        with session.lock:
            text = session.config_text or "attributes: {}\n"
        return Response(
            text,
            media_type="application/yaml",
            headers={"Content-Disposition": 'attachment; filename="config.yaml"'},
        )


def _measure_routes(
    app: FastAPI,
    session: Session,
    state: dict[str, Any],
    render: Callable[..., HTMLResponse],
    go: Callable[[str], RedirectResponse],
) -> None:
    """Measure: the risk measures as jobs, their figures on the page."""

    def measure_forms() -> list[dict[str, Any]]:
        from sdckit.measures import measure_spec
        from sdckit.ui.params import ViolationParams

        submitted = state["measure"]
        groups = []
        for name, legend in (
            ("combined", "Combined record risk (sdckit risk combined)"),
            ("reidentification", "Re-identification (sdckit risk reidentification)"),
            ("check", "k-anonymity violations (sdckit check -k)"),
        ):
            params = ViolationParams if name == "check" else measure_spec(name).params
            help_text = (ViolationParams.__doc__ or "") if name == "check" else measure_spec(name).help
            values, errors = submitted.get(name, ({}, {}))
            groups.append(
                {
                    "name": name,
                    "legend": legend,
                    "help": " ".join(help_text.split()),
                    "prefix": f"{name}-",
                    "fields": param_fields(params),
                    "given": values,
                    "errors": errors,
                    "params": params,
                }
            )
        return groups

    @app.get("/measure")
    def measure_page() -> HTMLResponse:
        with session.lock:
            job = session.jobs.get(session.measure_job) if session.measure_job else None
            result = job.result() if job is not None else None
            histogram = caption = None
            if result and result.get("combined"):
                threshold = result["combined"].get("threshold")
                histogram = histogram_svg(result["histogram"], threshold)
                caption = threshold_caption(result["histogram"], threshold)
            return render(
                "measure.html",
                "Measure the risk",
                "/measure",
                forms=measure_forms(),
                job=job,
                result=result,
                histogram_svg=histogram,
                threshold_caption=caption,
                checked_k=(job.meta.get("k") if job is not None else None),
            )

    @app.post("/measure")
    async def run_measure(request: Request) -> RedirectResponse:
        fields = _one(await _form(request))
        chosen: dict[str, dict[str, Any]] = {}
        state["measure"] = {}
        failed = False
        for group in measure_forms():
            prefix = group["prefix"]
            values = {key[len(prefix) :]: value for key, value in fields.items() if key.startswith(prefix)}
            params, errors = parse_params(group["params"], values, group["name"])
            state["measure"][group["name"]] = (values, errors)
            if params is None:
                failed = True
                continue
            given = {key: value for key, value in values.items() if value.strip()}
            chosen[group["name"]] = params.to_recipe() if group["name"] == "check" else _given(params, given)
        if not failed:
            try:
                job = await run_in_threadpool(session.start_measure, chosen)
                job.meta["k"] = chosen["check"]["k"]
            except SdcError as error:
                state["notice"] = str(error)
        return go("/measure")


def _protect_routes(
    app: FastAPI,
    session: Session,
    state: dict[str, Any],
    render: Callable[..., HTMLResponse],
    go: Callable[[str], RedirectResponse],
) -> None:
    """Protect: the recipe's steps from the registry's forms, run as a job."""

    @app.get("/protect")
    def protect_page(method: str | None = None) -> HTMLResponse:
        from sdckit.anonymize import METHODS

        last = state["step"]
        name = method or last.get("method") or METHODS.names()[0]
        if name not in METHODS:
            state["notice"] = METHODS.unknown_message(name)
            name = METHODS.names()[0]
        spec = METHODS.get(name)
        values, errors = (
            (last.get("values", {}), last.get("errors", {})) if last.get("method") == name else ({}, {})
        )
        with session.lock:
            return render(
                "protect.html",
                "Protect",
                "/protect",
                methods=list(METHODS),
                method=spec,
                fields=param_fields(spec.params),
                values=values,
                errors=errors,
            )

    @app.post("/protect/add")
    async def add_step(request: Request) -> RedirectResponse:
        from sdckit.anonymize import METHODS

        fields = _one(await _form(request))
        name = fields.get("method", "")
        if name not in METHODS:
            state["notice"] = METHODS.unknown_message(name)
            return go("/protect")
        spec = METHODS.get(name)
        values = {key[2:]: value for key, value in fields.items() if key.startswith("p-")}
        params, errors = parse_params(spec.params, values, name)
        state["step"] = {"method": name, "values": values, "errors": errors}
        if params is not None:
            defaults = {f.name: f.default for f in param_fields(spec.params)}
            given = {k: v for k, v in values.items() if v.strip() and v.strip() != defaults.get(k)}
            label = name + "".join(f" {key}={value}" for key, value in given.items())
            with session.lock:
                session.steps.append({"method": name, "params": params.to_recipe(), "label": label})
            state["step"] = {"method": name}
        return go(f"/protect?method={name}")

    @app.post("/protect/remove")
    async def remove_step(request: Request) -> RedirectResponse:
        fields = _one(await _form(request))
        with session.lock:
            index = fields.get("index", "")
            if index.isdigit() and int(index) < len(session.steps):
                session.steps.pop(int(index))
        return go("/protect")

    @app.post("/protect/clear")
    def clear_steps() -> RedirectResponse:
        with session.lock:
            session.steps.clear()
        return go("/protect")

    @app.post("/protect/run")
    def run_recipe() -> RedirectResponse:
        with session.lock:
            if not session.steps:
                state["notice"] = "the recipe has no step: add one first"
            else:
                try:
                    session.start_protect()
                except SdcError as error:
                    state["notice"] = str(error)
        return go("/protect")


def _job_routes(
    app: FastAPI, session: Session, templates: Any, go: Callable[[str], RedirectResponse]
) -> None:
    """Jobs: a run's status (polled by the page) and its cancellation."""

    @app.get("/jobs/{identifier}")
    def job_status(identifier: str, back: str = "/") -> Response:
        job = session.jobs.get(identifier)
        if job is None:
            return PlainTextResponse("no such run", status_code=404)
        macros = templates.get_template("macros.html").module
        return HTMLResponse(str(macros.job_status(job, _back(back, "/"))))

    @app.post("/jobs/{identifier}/cancel")
    async def cancel_job(identifier: str, request: Request) -> RedirectResponse:
        fields = _one(await _form(request))
        job = session.jobs.get(identifier)
        if job is not None:
            await run_in_threadpool(session.jobs.cancel, job)
        return go(_back(fields.get("back"), "/"))


def _compare_routes(
    app: FastAPI,
    session: Session,
    state: dict[str, Any],
    render: Callable[..., HTMLResponse],
    go: Callable[[str], RedirectResponse],
) -> None:
    """Compare and export: the R-U map of the releases, the attacks on them, the one kept, its files."""
    attack_choices = _cached_attacks()

    def compare_options() -> dict[str, Any]:
        return state["compare"] or {
            "risk": list(COMPARE_RISK),
            "utility": list(COMPARE_UTILITY),
            "risk_axis": "linkage",
            "loss_axis": "tables",
            "weight": "0.5",
            "attacks": [],
            "max_risk": "",
        }

    @app.get("/compare")
    def compare_page() -> HTMLResponse:
        from sdckit.measures import RISK_MEASURES, UTILITY_MEASURES, _load

        _load("risk")
        _load("utility")
        with session.lock:
            job = session.jobs.get(session.compare_job) if session.compare_job else None
            evaluation = job.result() if job is not None else None
            ready = [release for release in session.releases if release.ready]
            return render(
                "compare.html",
                "Compare the releases",
                "/compare",
                job=job,
                evaluation=evaluation,
                ready_releases=ready,
                table=_release_rows(ready, evaluation),
                options=compare_options(),
                risk_names=RISK_MEASURES.names(),
                utility_names=UTILITY_MEASURES.names(),
                with_headline={
                    "risk": [s.name for s in RISK_MEASURES if s.headline],
                    "utility": [s.name for s in UTILITY_MEASURES if s.headline],
                },
                map_svg=ru_map_svg(
                    evaluation["points"], evaluation["ru_map"]["risk"], evaluation["ru_map"]["loss"]
                )
                if evaluation
                else None,
                attacks=_release_attacks(attack_choices()),
                attack_rows=_attack_rows(evaluation),
            )

    @app.post("/compare")
    async def run_compare(request: Request) -> RedirectResponse:
        fields = await _form(request)
        one = _one(fields)
        options: dict[str, Any] = {
            "risk": fields.get("risk", []),
            "utility": fields.get("utility", []),
            "risk_axis": one.get("risk-axis", "linkage"),
            "loss_axis": one.get("loss-axis", "tables"),
            "weight": one.get("weight", "0.5"),
            "attacks": fields.get("attack", []),
            "max_risk": one.get("attack-max-risk", "").strip(),
        }
        state["compare"] = options
        try:
            weight = float(options["weight"])
        except ValueError:
            state["notice"] = f"λ must be a number between 0 and 1, got {options['weight']!r}"
            return go("/compare")
        try:
            max_risk = _max_risk(options["max_risk"], options["attacks"])
            attacks = _attack_names(options["attacks"])
            chosen = {**options, "weight": weight, "attacks": attacks, "max_risk": max_risk}
            await run_in_threadpool(session.start_compare, chosen)
        except SdcError as error:
            state["notice"] = str(error)
        return go("/compare")

    @app.post("/keep")
    async def keep(request: Request) -> RedirectResponse:
        fields = _one(await _form(request))
        with session.lock:
            if session.release(fields.get("release", "")) is not None:
                session.kept = fields["release"]
        return go("/export")

    @app.get("/export")
    def export_page() -> HTMLResponse:
        with session.lock:
            job = session.jobs.get(session.compare_job) if session.compare_job else None
            return render(
                "export.html",
                "Export",
                "/export",
                kept=session.release(session.kept) if session.kept else None,
                ready_releases=[release for release in session.releases if release.ready],
                report=job is not None and job.state == DONE,
            )

    @app.get("/releases/{identifier}/{name}")
    def release_file(identifier: str, name: str) -> Response:
        release = session.release(identifier)
        kinds = {
            "release.csv": "text/csv",
            "recipe.json": "application/json",
            "summary.json": "application/json",
        }
        if release is None or not release.ready or name not in kinds:
            return PlainTextResponse("no such file", status_code=404)
        return FileResponse(release.path(name), media_type=kinds[name], filename=f"{identifier}-{name}")

    @app.get("/report.html")
    def report() -> Response:
        job = session.jobs.get(session.compare_job) if session.compare_job else None
        if job is None or job.state != DONE:
            return PlainTextResponse(
                "no report yet: place the releases on the R-U map first", status_code=404
            )
        return FileResponse(job.folder / "report.html", media_type="text/html", filename="report.html")


def _cached_attacks() -> Callable[[], list[Any]]:
    """The attacks on microdata releases, from the registry (their modules imported once, when the
    Compare page is first shown)."""
    found: list[Any] = []

    def choices() -> list[Any]:
        if not found:
            from sdckit.attack.base import ATTACKS

            found.extend(spec for spec in ATTACKS if spec.inputs == "microdata")
        return found

    return choices


def _release_attacks(specs: list[Any]) -> list[dict[str, str]]:
    """The Compare form's attack checkboxes: name, one-line help, the releases it is meant for."""
    return [{"name": spec.name, "help": spec.help, "releases": spec.releases} for spec in specs]


def _attack_names(chosen: list[str]) -> list[str] | str | None:
    """The attacks the form chose, as :func:`sdckit.evaluate.evaluate` takes them (``all`` alone, or
    names), refused at once as the command line refuses them (the evaluation is not started)."""
    from sdckit.evaluate.attacks import attack_plan

    attacks: list[str] | str | None = None
    if chosen:
        attacks = "all" if chosen == ["all"] else chosen
    attack_plan(attacks, None)
    return attacks


def _max_risk(text: str, attacks: list[str]) -> float | None:
    """The threshold every chosen attack is judged against (``--set NAME.max_risk``), or None."""
    if not text:
        return None
    if not attacks:
        raise SdcError(f"max risk {text} is the threshold of the attacks: choose at least one attack")
    try:
        value = float(text)
    except ValueError:
        raise SdcError(f"max risk must be a number between 0 and 1, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise SdcError(f"max risk must be a number between 0 and 1, got {text}")
    return value


def _attack_rows(evaluation: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One row per release and attack of the evaluation (its summary), and the attacks that did not
    apply to a release: ``{"release", "attack", ..., "skipped": reason or None}``."""
    rows: list[dict[str, Any]] = []
    for release in (evaluation or {}).get("releases", []):
        report = release.get("attacks")
        if report is None:
            continue
        for found in report["attacks"]:
            risk = found["risk"]
            rows.append(
                {
                    "release": release["name"],
                    "attack": found["attack"],
                    "assumes": found["assumes"],
                    "attack_rate": _rate(found["attack_rate"]),
                    "baseline": _rate(found["baseline_rate"]),
                    "control": _rate(found["control_rate"]),
                    "risk": "undefined" if risk is None else _interval(risk["value"], risk["ci"]),
                    "max_risk": "—" if found["max_risk"] is None else f"{found['max_risk']:g}",
                    "verdict": found["verdict"],
                    "skipped": None,
                }
            )
        rows += [
            {"release": release["name"], "attack": name, "skipped": why}
            for name, why in report["skipped"].items()
        ]
    return rows


def _rate(rate: dict[str, Any] | None) -> str:
    if rate is None:
        return "—"
    return f"{_interval(rate['value'], rate['ci'])} ({rate['successes']:,} of {rate['trials']:,})"


def _interval(value: float, ci: list[float]) -> str:
    return f"{value:.4f} [{ci[0]:.4f}, {ci[1]:.4f}]"


def _given(params: Any, given: dict[str, str]) -> dict[str, Any]:
    """The parameters the form gave, validated (the others keep the defaults the command line has,
    some of which come from the configuration)."""
    dumped = params.to_recipe()
    return {key: dumped[key] for key in given if key in dumped}


def _release_rows(releases: list[Any], evaluation: dict[str, Any] | None) -> list[dict[str, Any]]:
    """One row of the compare table per release: the protect figures, and the map's when measured."""
    placed = {p["name"]: p for p in (evaluation or {}).get("points", [])}
    rows = []
    for release in releases:
        result = release.job.result() or {}
        final = result.get("final", {})
        suppressed: dict[str, int] = {}
        levels: list[str] = []
        for step in result.get("steps", []):
            summary = step.get("summary", {})
            for name, count in (summary.get("suppressed_cells") or {}).get("per_attribute", {}).items():
                suppressed[name] = suppressed.get(name, 0) + int(count)
            levels += [f"{name} {level}" for name, level in (summary.get("levels") or {}).items()]
        point = placed.get(release.name, {})
        rows.append(
            {
                "id": release.id,
                "name": release.name,
                "records": f"{final.get('records', 0):,}",
                "classes": final.get("equivalence_classes"),
                "suppressed": ", ".join(f"{name} {count}" for name, count in suppressed.items()) or "—",
                "levels": ", ".join(levels) or "—",
                "ncp": "—" if final.get("ncp") is None else f"{final['ncp']:.4g}",
                "satisfied": "yes" if result.get("satisfied") else f"no: {result.get('violation')}",
                "risk": _number(point.get("risk")),
                "loss": _number(point.get("loss")),
                "score": _number(point.get("score")),
                "front": "yes" if point.get("on_front") else ("—" if not point else "no"),
            }
        )
    return rows


def _number(value: Any) -> str:
    return "—" if value is None else f"{value:.4g}"
