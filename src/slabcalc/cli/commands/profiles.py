"""``slabcalc profiles`` and ``profiles show``."""

from __future__ import annotations

import click

from slabcalc.cli import output
from slabcalc.cli.errors import Refusal
from slabcalc.cli.group import cli
from slabcalc.cli.options import format_option
from slabcalc.cli.tables import PROFILE_COLUMNS


@cli.group(invoke_without_command=True)
@format_option(command="profiles")
@click.pass_context
def profiles(ctx, fmt):
    """List the bundled release profiles: which releases each covers.

    One row per run of releases that share every rule, with the rules that
    change where the run starts.  `slabcalc profiles show RELEASE` prints the
    rules of one release as YAML (a starting point for a user profile).

    \b
    Python: bundled_segments(), resolved_rules(RELEASE)
    """
    if ctx.invoked_subcommand is not None:
        return
    from slabcalc.model.profile import bundled_segments

    records = [{"profile": s.profile, "first": s.first, "last": s.last,
                "changes": ", ".join(s.changed) if fmt != "json" else list(s.changed)}
               for s in bundled_segments()]
    if fmt == "json":
        click.echo(output.render_json({"profiles": records}))
    else:
        click.echo(output.render_rows(records, PROFILE_COLUMNS, fmt, wrap="changes"))


@profiles.command("show")
@click.argument("release", metavar="RELEASE|FILE")
def profiles_show(release):
    """Print the resolved rules of RELEASE (or of a user profile FILE) as YAML."""
    import yaml

    from slabcalc.model.profile import ProfileError, resolved_rules

    try:
        rules = resolved_rules(release)
    except ProfileError as exc:
        raise Refusal(str(exc)) from None
    click.echo(yaml.safe_dump(rules, sort_keys=False, width=output.width() - 10, allow_unicode=True), nl=False)
