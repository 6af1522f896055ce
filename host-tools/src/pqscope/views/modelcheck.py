"""The view of `pqscope model-check`: each micro-benchmark's cycles on the board beside what the
timing model prices it at and what silicon was published to take."""

from rich.console import Console
from rich.table import Table as RichTable

from ..results.documents.model_check import ModelCheck, Sequence
from .page import Page, Section, Table

HEADINGS = ("sequence", "cycles", "model", "published on silicon", "against the model")


def _verdict(sequence: Sequence) -> str:
    verdict = "as modelled" if sequence.as_modelled else "NOT as modelled"
    if sequence.silicon is not None and sequence.silicon != sequence.cycles:
        verdict += f"; published {sequence.silicon - sequence.cycles:+d}"
    return verdict


def _rows(document: ModelCheck) -> list[list[str]]:
    return [[s.name, str(s.cycles), s.model_text, "-" if s.silicon is None else str(s.silicon), _verdict(s)]
            for s in document.sequences]


def _summary(document: ModelCheck) -> list[str]:
    sequences, departures = document.sequences, document.departures
    lines = [f"{document.board}: {len(sequences) - len(departures)} of {len(sequences)} sequences take what the "
             f"model prices them at" + (f"; not: {', '.join(s.name for s in departures)}" if departures else "")]
    against = document.model_against_published
    if against:
        lines.append(f"the model departs from published measurements on silicon for {len(against)}: "
                     + ", ".join(f"{s.name} ({s.model_text} against {s.silicon})" for s in against))
    return lines


def page(document: ModelCheck, _data=None) -> Page:
    return Page(f"pqscope model-check on {document.board}", _summary(document),
                [Section("Sequences", [f"Each sequence between two reads of the cycle counter, less the empty "
                                       f"measurement ({document.empty_cycles} cycles).", Table(HEADINGS, _rows(document))])])


def show(console: Console, document: ModelCheck) -> None:
    table = RichTable(*HEADINGS[:4], "", box=None)
    for row in _rows(document):
        verdict = row[-1].replace("NOT as modelled", "[bold red]NOT as modelled[/]")
        table.add_row(*row[:-1], verdict)
    console.print(table)
    for line in _summary(document):
        console.print(line)
