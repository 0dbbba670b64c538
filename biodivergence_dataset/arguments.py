"""The command-line vocabulary every layer's commands share: how a command names its release (``--release``), the
options a command takes from its pydantic config (:func:`add_config_arguments`, :func:`config_from_args`) and the
error a command's config raises for a refused setting. The ``biodivergence`` command itself lives in the top-level
package ``biodivergence_cli``; the modules that serve its subcommands, in every layer, import these.

Why not pydantic-settings' ``CliSettingsSource`` (which can fill an existing argparse parser): it reads lists as
``--x a,b`` or repeated ``--x a --x b``, not ``--x a b``; an old option spelling has to become a validation alias on
the config model itself, which a build config's YAML would then accept too; and it shows types (``{str,None}``),
not values, as metavars. The options here are one small walk over a model's fields.
"""

from __future__ import annotations

import argparse
import sys
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel

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


# ---------------------------------------------------------------------------------------------
# options from a pydantic config


def flag(name: str) -> str:
    """A field's option: ``--`` and its name with dashes (``min_chars`` → ``--min-chars``)."""
    return "--" + name.replace("_", "-")


def option_type(annotation: Any) -> tuple[str, Any, list[Any] | None] | None:
    """(kind, value type, choices) of a field's type on a command line: kind ``bool``, ``value`` or ``list``; None
    for a type a command line does not spell (a mapping, a nested model, a union of unlike types)."""
    origin, params = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        kinds = [k for k in map(option_type, (a for a in params if a is not type(None))) if k is not None]
        lists = [k for k in kinds if k[0] == "list"]
        if len(kinds) == 1 or (lists and all(k[1] == lists[0][1] for k in kinds)):  # X | None; str | list[str]
            return lists[0] if lists else kinds[0]
        return None
    if origin is Literal:
        return "value", type(params[0]), list(params)
    if origin in (list, tuple, set, frozenset):
        item = option_type(params[0]) if params else None
        if item is None or item[0] != "value" or (origin is tuple and params[1:] != (...,)):  # tuple[X, ...] only
            return None
        return "list", item[1], item[2]
    if annotation is bool:
        return "bool", bool, None
    if annotation in (int, float, str):
        return "value", annotation, None
    return None


class _FreshList(argparse.Action):
    """Collects a list option's values; its first use replaces the config's default (``initial``, shared by the
    option and its old one-value spelling) instead of adding to it."""

    def __init__(self, *args: Any, initial: Any = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.initial = self.default if initial is argparse.SUPPRESS else initial

    def __call__(self, parser, namespace, values, option_string=None):
        current = getattr(namespace, self.dest, None)
        items = [] if current is self.initial or not isinstance(current, list) else current
        setattr(namespace, self.dest, items + (list(values) if isinstance(values, list) else [values]))


def add_config_arguments(parser: argparse.ArgumentParser, config: type[BaseModel], *,
                         skip: Iterable[str] = (), aliases: Mapping[str, str | tuple[str, ...]] | None = None,
                         options: Mapping[str, Mapping[str, Any]] | None = None) -> None:
    """One option per field of ``config`` that a command line can spell: ``--kebab-name`` with the field's type,
    default (help shows it) and description; a bool as ``--name/--no-name``; a list as ``--name A B`` (its first
    use replaces the default); a ``Literal`` as choices. Fields of other types (mappings, nested models) are
    set in a build config only.

    ``skip``: fields the command sets itself; ``aliases``: older spellings of a field's option, still accepted (a
    list field's alias takes one value per use, as ``action="append"`` did); ``options``: argparse keywords that
    replace the generated ones for a field (``choices``, ``required``, ``help``, ``metavar``). The parsed values
    go back through :func:`config_from_args`."""
    aliases, options, skipped = aliases or {}, options or {}, set(skip)
    for name, field in config.model_fields.items():
        kind = option_type(field.annotation)
        if name in skipped or kind is None:
            continue
        default = field.get_default(call_default_factory=True)
        text = (field.description or "").replace("%", "%%")
        kwargs: dict[str, Any] = {"dest": name, "default": default, "help": text or None}
        if kind[0] == "bool":
            kwargs["action"] = argparse.BooleanOptionalAction
        else:
            kwargs.update(type=kind[1], metavar=name.upper())
            if kind[2] is not None:
                kwargs.update(choices=kind[2], metavar=None if kind[0] == "value" else kwargs["metavar"])
            if kind[0] == "list":
                kwargs.update(action=_FreshList, nargs="+")
        kwargs.update(options.get(name, {}))
        if "choices" in options.get(name, {}) and "metavar" not in options[name] and kind[0] == "value":
            kwargs["metavar"] = None  # usage lists the choices of a one-value option
        old = aliases.get(name, ())
        old = (old,) if isinstance(old, str) else tuple(old)
        if kind[0] == "list":  # an old list spelling keeps its one value per use
            parser.add_argument(flag(name), **kwargs)
            for alias in old:
                parser.add_argument(alias, **{**kwargs, "nargs": None, "default": argparse.SUPPRESS,
                                              "initial": default, "help": f"one value of {flag(name)} (repeatable)"})
        else:
            parser.add_argument(flag(name), *old, **kwargs)


def config_from_args(config: type[BaseModel], args: argparse.Namespace, **given: Any) -> Any:
    """``config`` from the parsed options of :func:`add_config_arguments` (every field the namespace holds) and the
    values the command sets itself (``given``), validated by the model: a bad value is its ValidationError, which
    the command line shows as the option typed."""
    values = {name: getattr(args, name) for name in config.model_fields if hasattr(args, name)}
    return config(**{**values, **given})
