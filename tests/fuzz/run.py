"""The long fuzzing run: mutants of real kernels through the core, the flake8 plugin, the CLI
and the server; prints the counts that go into the README.

    python tests/fuzz/run.py --inputs 100000 [--seed 1] [--targets core,flake8,cli,server] [-j N]
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import os
import random
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fuzz import mutations, targets


CHUNK = 500


def run_chunk(job: tuple[int, int, list[str]]) -> tuple[collections.Counter, list]:
    """One worker's share: `count` mutants from its own seed through the in-process targets."""
    seed, count, chosen = job
    rng = random.Random(seed)
    runners = {"core": targets.core, "flake8": targets.flake8_plugin, "cli": targets.cli}
    counts: collections.Counter = collections.Counter()
    crashes = []
    with tempfile.TemporaryDirectory() as directory:
        for name, data in mutations.mutants(rng, count):
            for target in chosen:
                try:
                    result = runners[target](data, directory)
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
    return counts, crashes


def run_server(inputs: int, seed: int) -> tuple[collections.Counter, list]:
    counts: collections.Counter = collections.Counter()
    crashes = []
    server = targets.Server()
    try:
        for name, data in mutations.mutants(random.Random(seed), inputs):
            try:
                server(data, "")
                counts["server inputs"] += 1
            except Exception:  # noqa: BLE001, PERF203 - a crash is recorded, the fuzzing goes on
                crashes.append(("server", name, traceback.format_exc(limit=3)))
                counts["server crashes"] += 1
                server.close()
                server = targets.Server()
    finally:
        server.close()
    return counts, crashes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inputs", type=int, default=1000, help="mutants for the in-process targets")
    parser.add_argument("--server-inputs", type=int, default=None,
                        help="mutants sent to one server (default inputs/20)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--targets", default="core,flake8,cli,server")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    chosen = args.targets.split(",")
    local = [target for target in chosen if target != "server"]
    jobs = [(args.seed * 100_003 + index, min(CHUNK, args.inputs - start), local)
            for index, start in enumerate(range(0, args.inputs, CHUNK))]
    counts: collections.Counter = collections.Counter()
    crashes: list = []
    started = time.monotonic()
    done = 0
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        waiting = pool.imap_unordered(run_chunk, jobs) if local else iter(())
        if "server" in chosen:
            server_counts, server_crashes = run_server(args.server_inputs or max(1, args.inputs // 20), args.seed)
            counts.update(server_counts)
            crashes += server_crashes
        for chunk_counts, chunk_crashes in waiting:
            counts.update(chunk_counts)
            crashes += chunk_crashes
            done += 1
            print(f"{done}/{len(jobs)} chunks, {len(crashes)} crashes, {time.monotonic() - started:.0f} s",
                  file=sys.stderr, flush=True)
    print(f"inputs: {args.inputs} per in-process target, seed {args.seed}, "
          f"{time.monotonic() - started:.0f} s on {args.jobs} processes")
    for key in sorted(counts):
        print(f"{key}: {counts[key]}")
    for target, name, trace in crashes[:10]:
        print(f"--- crash in {target} ({name}):\n{trace}")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
