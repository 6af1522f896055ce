"""pqscope report and tls-budget: what kept results say, read again."""

from pathlib import Path

import click
from rich.console import Console

from .. import views
from ..project.catalogue import load_catalogue
from ..project.console import stderr
from ..project.errors import PqscopeError
from ..project.paths import repo_root
from ..results.progress import unfinished
from ..results.store import stored_kind
from ..results.runs import find_runs, load_run, newest_measured_run
from ..results.tls import budget_rows, has_sign_and_verify, parse_assignments, resolve_assignment, signer_from_run
from .app import cli, print_json
from .options import JSON_OPTION, wide_console

TLS_WIDTH = 150  # a mixed assignment's name and every figure of the TLS budget on one line


@cli.command()
@click.argument("path", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--format", "fmt", type=click.Choice(views.FORMATS), default="table", show_default=True)
def report(path: Path, fmt: str) -> None:
    """Report any result directory again from what it keeps: a run or suite (from its samples), a
    constant-time test, an exact check, a Falcon comparison or a model check, as a table,
    Markdown, HTML, CSV (runs) or JSON."""
    console = wide_console()
    headline = unfinished(path)
    if headline and headline.kind != "run" and stored_kind(path) is None:  # a test's result comes at its end
        raise PqscopeError(f"{path} holds no {headline.kind} result yet: {headline}")
    if headline:  # first on the terminal's table, else on stderr beside the document (the pages show it too)
        (console if fmt == "table" else stderr()).print(str(headline), markup=False, highlight=False)
    text = views.render(path, fmt, console)
    if text is not None:
        click.echo(text, nl=False)


@cli.command("tls-budget")
@click.option("--run", "run_paths", multiple=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A run directory or suite; repeat for more (default: the newest under runs/).")
@click.option("--assign", "assignments", multiple=True, metavar="ROLE=SCHEME[/IMPL]",
              help="Give a role of a mixed handshake to an implementation; repeatable (see above).")
@click.option("--overhead", "overhead_bytes", default=0, show_default=True, type=click.IntRange(0),
              help="Bytes per handshake besides signatures and public keys (certificate fields, extensions).")
@JSON_OPTION
def tls_budget(run_paths: tuple[Path, ...], assignments: tuple[str, ...], overhead_bytes: int, as_json: bool) -> None:
    """Which signatures a TLS 1.3 handshake affords: its bytes and board cycles, from measured runs.

    A handshake carries six signatures and two public keys: the server's CertificateVerify and its
    leaf public key (role handshake), the two certificate-chain signatures and the intermediate
    public key (chain), an OCSP staple (ocsp) and two SCTs (sct). Bytes count these only (plus
    --overhead) against the 9 kB target and initial congestion windows of 10 and 30 segments of
    1460 bytes; extra round trips are ceil(bytes / window) - 1, ignoring slow start. The client
    verifies the six signatures (not the root's self-signature, which is never sent); the server
    signs CertificateVerify. Sizes are those the firmware reported, cycles the runs' medians,
    milliseconds at the run's clock.

    Each run gives a row with its implementation in every role. --assign adds a mixed row:

    \b
      --assign handshake=ml-dsa-44/m4f --assign chain=falcon-512/fpemu-m4 --assign ocsp+sct=ecdsa-p256

    ROLE is handshake, chain, ocsp or sct (join several with +); roles not given take the
    handshake's. SCHEME/IMPL must have a run among the runs; a bare SCHEME takes its run, or if it
    has none the catalogue's sizes, with its cycles unavailable.
    """
    assigned = parse_assignments(assignments)
    if run_paths:
        loaded = [load_run(run_path) for path in run_paths for run_path in find_runs(path)]
    else:
        path, loaded = newest_measured_run(repo_root() / "runs", has_sign_and_verify)
        stderr().print(f"runs from {path} (the newest with sign and verify samples; --run chooses others)")
    signers = [signer_from_run(run) for run in loaded]
    rows = budget_rows(signers, resolve_assignment(assigned, signers, lambda: load_catalogue(repo_root())),
                       overhead_bytes)
    if as_json:
        print_json({"rows": rows})
    else:
        views.runs.show_tls_budget(Console(width=max(Console().width, TLS_WIDTH)), rows)
