"""The view of `pqscope model-check`: each micro-benchmark's cycles on the board beside what the
timing model prices it at and what silicon was published to take."""

from rich.console import Console
from rich.table import Table as RichTable

from .page import Page, Section, Table

HEADINGS = ("sequence", "cycles", "model", "published on silicon", "against the model")


def _verdict(sequence: dict) -> str:
    verdict = "as modelled" if sequence["as_modelled"] else "NOT as modelled"
    if sequence["silicon"] is not None and sequence["silicon"] != sequence["cycles"]:
        verdict += f"; published {sequence['silicon'] - sequence['cycles']:+d}"
    return verdict


def _model_text(sequence: dict) -> str:
    low, high = sequence["model_low"], sequence["model_high"]
    return str(low) if low == high else f"{low}..{high}"


def _rows(document: dict) -> list[list[str]]:
    return [[s["name"], str(s["cycles"]), _model_text(s), "-" if s["silicon"] is None else str(s["silicon"]),
             _verdict(s)] for s in document["sequences"]]


def _summary(document: dict) -> list[str]:
    sequences, departures = document["sequences"], document["departures"]
    lines = [f"{document['board']}: {len(sequences) - len(departures)} of {len(sequences)} sequences take what the "
             f"model prices them at" + (f"; not: {', '.join(departures)}" if departures else "")]
    against = [s for s in sequences if s["name"] in document["model_against_published"]]
    if against:
        lines.append(f"the model departs from published measurements on silicon for {len(against)}: "
                     + ", ".join(f"{s['name']} ({_model_text(s)} against {s['silicon']})" for s in against))
    return lines


def page(document: dict, _data=None) -> Page:
    return Page(f"pqscope model-check on {document['board']}", _summary(document),
                [Section("Sequences", [f"Each sequence between two reads of the cycle counter, less the empty "
                                       f"measurement ({document['empty_cycles']} cycles).", Table(HEADINGS, _rows(document))])])


def show(console: Console, document: dict) -> None:
    table = RichTable(*HEADINGS[:4], "", box=None)
    for row in _rows(document):
        verdict = row[-1].replace("NOT as modelled", "[bold red]NOT as modelled[/]")
        table.add_row(*row[:-1], verdict)
    console.print(table)
    for line in _summary(document):
        console.print(line)
