"""The command-line vocabulary every layer's commands share: how a command names its release (``--release``) and
the error a command's config raises for a refused setting. The ``biodivergence`` command itself lives in the
top-level package ``biodivergence_cli``; the modules that serve its subcommands, in every layer, import these."""

from __future__ import annotations

import argparse
import sys

RELEASE_HELP = "release: a local folder or a Hub dataset id ORG/NAME[@REVISION] (read offline from the HF cache)"
_LEGACY_RELEASE = "legacy_release_dir"


def add_release_argument(parser: argparse.ArgumentParser, help_text: str = RELEASE_HELP, *, required: bool = True,
                         legacy_positional: bool = False) -> None:
    """``--release`` (the one way to name a release); ``legacy_positional`` also accepts the old positional form."""
    action = parser.add_argument("--release", required=required and not legacy_positional, help=help_text)
    if legacy_positional:
        action.shown_required = True  # usage shows it as required; take_legacy_release enforces it
        parser.add_argument(_LEGACY_RELEASE, nargs="?", metavar="RELEASE_DIR", help=argparse.SUPPRESS)


def take_legacy_release(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Move a positional release folder to ``args.release`` with a deprecation note; insist on one release."""
    if not hasattr(args, _LEGACY_RELEASE):
        return
    legacy = vars(args).pop(_LEGACY_RELEASE)
    if legacy is not None and args.release is not None:
        parser.error("give the release once, as --release")
    if legacy is not None:
        print(f"{parser.prog}: the positional release folder is deprecated; use --release {legacy}", file=sys.stderr)
        args.release = legacy
    if args.release is None:
        parser.error("the following arguments are required: --release")


class OptionError(ValueError):
    """A setting refused by a command's config (``field``: its name there; ``message``: what is wrong with it),
    shown on the command line as the option the user typed."""

    def __init__(self, command: str, field: str, message: str):
        super().__init__(f"{command}: {field} {message}")
        self.field, self.message = field, message
