"""``sdckit query DATASET --url URL --key KEY ...``: one query to a query server, its protected answer."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

import typer

from sdckit.cli import EXIT_NOT_MET
from sdckit.cli._common import console, errors, user_errors

_FILTER = re.compile(r"^\s*(?P<column>[^<>=!]+?)\s*(?P<op><=|>=|!=|=|<|>|\sin\s)\s*(?P<value>.*?)\s*$")


def query(
    dataset: Annotated[str, typer.Argument(help="The dataset's name on the server.", show_default=False)],
    url: Annotated[str, typer.Option(help="The server's address, e.g. http://127.0.0.1:8000.")],
    key: Annotated[
        str,
        typer.Option(envvar="SDCKIT_KEY", help="Your API key (or the environment variable SDCKIT_KEY)."),
    ],
    aggregate: Annotated[
        str, typer.Option(help="count, sum, mean, quantile or histogram.", show_default=False)
    ] = "count",
    column: Annotated[
        str | None, typer.Option(help="The attribute aggregated (all but count need one).")
    ] = None,
    filter_: Annotated[
        list[str] | None,
        typer.Option(
            "--filter",
            help="A condition COLUMN OP VALUE with OP one of = != < <= > >=, or 'COLUMN in A,B,C'; "
            "repeat for several (all must hold).",
        ),
    ] = None,
    group_by: Annotated[
        list[str] | None, typer.Option("--group-by", help="A categorical attribute to group by; repeatable.")
    ] = None,
    epsilon: Annotated[float | None, typer.Option(help="Privacy budget this query spends (dp).")] = None,
    delta: Annotated[
        float | None, typer.Option(help="delta of (epsilon, delta)-DP (Gaussian noise).")
    ] = None,
    quantile: Annotated[float | None, typer.Option(help="Which quantile, in (0, 1), for quantile.")] = None,
    bins: Annotated[int | None, typer.Option(help="Number of bins of a histogram.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the server's JSON answer as it is.")] = False,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the server.")] = 30.0,
) -> None:
    """Send one query to a query server (sdckit serve) and print its protected answer.

    Values of --filter are numbers for numeric attributes and text otherwise, as the dataset's
    schema on the server says. Exit statuses: 0 answered; 3 refused (the reason is printed: budget
    spent, query set too small, audit); 2 a bad query, an unknown dataset, a key the server does
    not accept or a server that cannot be reached.
    """
    from sdckit._extras import require

    with user_errors():
        require("server", "httpx", feature="sdckit query")
        from sdckit.query.client import Client, check_numbers
        from sdckit.query.errors import Refused

        optional = {"epsilon": epsilon, "delta": delta, "quantile": quantile, "bins": bins}
        check_numbers(optional)  # before anything is sent: exit 2 naming the option
        with Client(url, key, timeout=timeout) as client:
            kinds = _kinds(client.dataset(dataset)) if filter_ else {}
            body: dict[str, Any] = {
                "aggregate": aggregate,
                "column": column,
                "filters": [_condition(text, kinds) for text in filter_ or []],
                "group_by": list(group_by or []),
            }
            body.update({name: value for name, value in optional.items() if value is not None})
            try:
                answer = client.query(dataset, **body)
            except Refused as refusal:
                errors.print(f"[bold red]refused:[/] {refusal.message}", highlight=False)
                raise typer.Exit(EXIT_NOT_MET) from None
        if as_json:
            console.print_json(json.dumps(answer))
        else:
            _show(answer, aggregate, column)


def _condition(text: str, kinds: dict[str, str]) -> dict[str, Any]:
    """``"age>40"`` → ``{"column": "age", "op": ">", "value": 40}`` (typed by the schema)."""
    from sdckit.errors import ConfigError

    found = _FILTER.match(text)
    if not found or not found.group("column").strip():
        raise ConfigError(
            f"--filter must be COLUMN OP VALUE with OP one of = != < <= > >= (or 'COLUMN in A,B'), "
            f"got {text!r}"
        )
    name, op, raw = found.group("column").strip(), found.group("op").strip(), found.group("value")
    if op == "in":
        values = [_typed(part.strip(), kinds.get(name), text) for part in raw.split(",") if part.strip()]
        return {"column": name, "op": "in", "value": values}
    return {"column": name, "op": op, "value": _typed(raw, kinds.get(name), text)}


def _typed(raw: str, kind: str | None, text: str) -> Any:
    """A number for an attribute whose values are numbers (an error if it is not one), else the text."""
    from sdckit.errors import ConfigError

    if kind != "number":
        return raw
    try:
        number = float(raw)
    except ValueError:
        raise ConfigError(f"--filter {text!r}: {raw!r} is not a number") from None
    return int(number) if number.is_integer() and "." not in raw and "e" not in raw.lower() else number


def _kinds(description: dict[str, Any]) -> dict[str, str]:
    """Attribute name → the type of its values (``number``, ``string``, ...), from the dataset's
    description on the server."""
    return {
        str(entry["name"]): str(entry.get("type", ""))
        for entry in description.get("attributes", [])
        if isinstance(entry, dict) and "name" in entry
    }


def _show(answer: dict[str, Any], aggregate: str, column: str | None) -> None:
    from rich.table import Table as RichTable

    what = f"{aggregate}({column})" if column else aggregate
    spent = ""
    if "epsilon_spent" in answer:
        spent = f"  (epsilon spent {answer['epsilon_spent']:g}"
        left = answer.get("budget_left")
        spent += f", budget left {left:g})" if isinstance(left, int | float) else ")"
    if "groups" in answer:
        shown = RichTable(title=f"{what}{spent}", title_justify="left")
        keys = list(answer["groups"][0]["key"]) if answer["groups"] else []
        for name in [*keys, "value"]:
            shown.add_column(name, justify="right" if name == "value" else "left")
        for group in answer["groups"]:
            shown.add_row(*(str(group["key"][name]) for name in keys), _number(group))
        console.print(shown)
    else:
        console.print(f"{what} = {_number(answer)}{spent}", highlight=False)


def _number(answer: dict[str, Any]) -> str:
    if "lower" in answer and "upper" in answer and "value" not in answer:
        return f"[{_format(answer['lower'])}, {_format(answer['upper'])}]"
    return _format(answer.get("value"))


def _format(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.6g}" if abs(value) < 1e6 else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)
