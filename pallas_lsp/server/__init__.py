"""The pallas-lsp language server (pygls 2): `python -m pallas_lsp`, `pallas-lsp`, or
`pallas-lint server`. Speaks LSP on stdio by default, or on `--tcp HOST:PORT`."""

from __future__ import annotations

import argparse
import logging
import sys

from pallas_lsp import __version__


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pallas-lsp", description=__doc__)
    parser.add_argument("--stdio", action="store_true", help="speak LSP on stdin/stdout (the default)")
    parser.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP port instead")
    parser.add_argument("--log-level", default="warning", choices=["error", "warning", "info", "debug"],
                        help="what goes to stderr (the editor's log gets window/logMessage)")
    parser.add_argument("--version", action="version", version=f"pallas-lsp {__version__}")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper(),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("pygls").setLevel(logging.WARNING)

    from .server import create_server  # noqa: PLC0415 - pygls loads only when a server is wanted

    server = create_server()
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not port.isdigit():
            parser.error("--tcp wants HOST:PORT")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    # The specification's exit code: 0 after a shutdown request, 1 otherwise. pygls computes
    # it but raises SystemExit inside an asyncio callback, where it is lost.
    return 0 if getattr(server.protocol, "_shutdown", False) else 1


__all__ = ["main"]
