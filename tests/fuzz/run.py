"""The long fuzzing run: mutants of real kernels through the core, the flake8 plugin, the CLI
and the server; prints the counts that go into the README.

    python tests/fuzz/run.py --inputs 100000 [--seed 1] [--targets core,flake8,cli,server]
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz import mutations, targets  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inputs", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--targets", default="core,flake8,cli,server")
    parser.add_argument("--server-every", type=int, default=20, help="send one input in N to the server")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    chosen = args.targets.split(",")
    server = targets.Server() if "server" in chosen else None
    runners = {"core": targets.core, "flake8": targets.flake8_plugin, "cli": targets.cli}
    counts: collections.Counter = collections.Counter()
    crashes = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as directory:
        for index, (name, data) in enumerate(mutations.mutants(rng, args.inputs)):
            for target in chosen:
                if target == "server" and index % args.server_every:
                    continue
                runner = server if target == "server" else runners[target]
                try:
                    result = runner(data, directory)
                except Exception:  # noqa: BLE001 - that is what we count
                    crashes.append((target, name, traceback.format_exc(limit=3)))
                    counts[f"{target} crashes"] += 1
                    continue
                counts[f"{target} inputs"] += 1
                if target == "core":
                    error = result.error or ""
                    counts["core: budget hits"] += "budget" in error
                    counts["core: not parsable or decodable"] += error.startswith(("syntax", "cannot decode"))
                    counts["core: findings"] += len(result.findings)
            if index and index % 1000 == 0:
                print(f"{index} inputs, {sum(v for k, v in counts.items() if 'crashes' in k)} crashes, "
                      f"{time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    if server is not None:
        server.close()
    print(f"inputs: {args.inputs} (seed {args.seed}) in {time.monotonic() - started:.0f} s")
    for key in sorted(counts):
        print(f"{key}: {counts[key]}")
    for target, name, trace in crashes[:10]:
        print(f"--- crash in {target} ({name}):\n{trace}")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
