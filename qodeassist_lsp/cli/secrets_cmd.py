"""``qodeassist-lsp secrets set | delete | status``: API keys without putting them in TOML."""

from __future__ import annotations

import argparse
import getpass
import shlex
import sys
from typing import Any

from qodeassist_lsp.cli.common import EXIT_OK, CliError, load, provider_named, secrets_for
from qodeassist_lsp.config.client_apis import key_is_optional
from qodeassist_lsp.config.configuration import Configuration
from qodeassist_lsp.config.providers import ProviderInstance
from qodeassist_lsp.config.secrets import SecretStoreError


def register(commands: Any, shared: argparse.ArgumentParser) -> None:
    """Add the ``secrets`` command group to the top-level subparsers."""
    secrets = commands.add_parser("secrets", help="store, remove or locate provider API keys")
    sub = secrets.add_subparsers(dest="secrets_command", metavar="ACTION", required=True)
    set_cmd = sub.add_parser(
        "set", parents=[shared], help="store a provider's key in the OS keyring"
    )
    set_cmd.add_argument("provider", metavar="PROVIDER", help="provider instance name")
    set_cmd.set_defaults(handler=set_secret)
    delete = sub.add_parser(
        "delete", parents=[shared], help="remove a provider's key from the OS keyring"
    )
    delete.add_argument("provider", metavar="PROVIDER")
    delete.set_defaults(handler=delete_secret)
    status = sub.add_parser(
        "status", parents=[shared], help="say where each provider's key comes from"
    )
    status.add_argument("provider", nargs="?", metavar="PROVIDER")
    status.set_defaults(handler=secret_status)


def _provider(config: Configuration, name: str) -> ProviderInstance:
    provider = config.providers[provider_named(config, name)]
    if not provider.api_key_ref:
        raise CliError(
            f"provider {provider.name!r} has no api_key_ref; it does not use a stored key"
        )
    return provider


def set_secret(args: argparse.Namespace) -> int:
    """Read a key from the terminal (hidden) or stdin and store it in the keyring."""
    config = load(args)
    provider = _provider(config, args.provider)
    if sys.stdin.isatty():
        value = getpass.getpass(f"API key for {provider.name}: ")
    else:
        value = sys.stdin.readline()
    value = value.strip()
    if not value:
        raise CliError("no key given; nothing was stored")
    try:
        secrets_for(config).set(provider.api_key_ref, value)
    except SecretStoreError as exc:
        hint = (
            f" For {provider.name}: export {provider.api_key_env}=…" if provider.api_key_env else ""
        )
        raise CliError(f"{exc}{hint}") from exc
    print(f"stored the key for {provider.name} in the OS keyring")
    return EXIT_OK


def delete_secret(args: argparse.Namespace) -> int:
    """Remove a provider's key from the keyring."""
    config = load(args)
    provider = _provider(config, args.provider)
    try:
        secrets_for(config).delete(provider.api_key_ref)
    except SecretStoreError as exc:
        raise CliError(str(exc)) from exc
    print(f"removed the key for {provider.name} from the OS keyring")
    return EXIT_OK


def secret_status(args: argparse.Namespace) -> int:
    """Print, per provider, where its key would come from (never the key itself)."""
    config = load(args)
    store = secrets_for(config)
    providers = (
        [_provider(config, args.provider)]
        if args.provider
        else [p for p in config.providers.values() if p.api_key_ref or p.api_key_env]
    )
    for provider in providers:
        ref, env = provider.api_key_ref, provider.api_key_env or None
        if key_is_optional(provider.api, provider.url) and store.get(ref, env) is None:
            where = f"set {env} or " if env else ""
            command = f"qodeassist-lsp secrets set {shlex.quote(provider.name)}"
            print(
                f"{provider.name}: no key needed (a local server; only if you switched its "
                f"authentication on: {where}run `{command}`)"
            )
            continue
        slots = provider.key_slots
        if len(slots) < 2:
            print(f"{provider.name}: {store.describe(ref, env)}")
            continue
        for index, (slot_ref, slot_env) in enumerate(slots, 1):
            where = store.describe(slot_ref, slot_env or None)
            print(f"{provider.name} key {index}/{len(slots)}: {where}")
    return EXIT_OK
