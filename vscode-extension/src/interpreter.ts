// Interpreter resolution: the pallas.interpreter setting, else the Python extension's active
// environment, else python3 on PATH. Free of the `vscode` module for unit tests.
import { execFile } from "child_process";
import * as fs from "fs";
import * as path from "path";

export const MIN_PYTHON: [number, number] = [3, 10];

export type InterpreterSource = "pallas.interpreter" | "Python extension" | "PATH";

export interface Interpreter {
  command: string[];
  source: InterpreterSource;
}

/** The subset of the ms-python.python extension API (`environments`) that we use. */
export interface PythonEnvironments {
  getActiveEnvironmentPath(resource?: unknown): { path: string } | undefined;
  resolveEnvironment(env: { path: string } | string): Promise<{ executable: { uri?: { fsPath: string } } } | undefined>;
}

export class InterpreterError extends Error {}

/** Look `name` up on PATH like a shell would; undefined when it is not there. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const exts = process.platform === "win32" ? (env.PATHEXT ?? ".EXE").split(";") : [""];
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        if (fs.statSync(candidate).isFile()) return candidate;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

export async function resolveInterpreter(opts: {
  setting: string[];
  python?: PythonEnvironments;
  resource?: unknown;
  env?: NodeJS.ProcessEnv;
}): Promise<Interpreter> {
  if (opts.setting.length > 0) return { command: opts.setting, source: "pallas.interpreter" };
  if (opts.python) {
    try {
      const active = opts.python.getActiveEnvironmentPath(opts.resource);
      if (active?.path) {
        const resolved = await opts.python.resolveEnvironment(active);
        const exe = resolved?.executable.uri?.fsPath;
        if (exe) return { command: [exe], source: "Python extension" };
      }
    } catch {
      // fall through to PATH: a broken environment in the Python extension must not block us
    }
  }
  const names = process.platform === "win32" ? ["python3", "python"] : ["python3"];
  for (const name of names) {
    const found = findOnPath(name, opts.env);
    if (found) return { command: [found], source: "PATH" };
  }
  throw new InterpreterError(
    "pallas: no Python interpreter found. Install Python 3.10 or newer, select an interpreter with the Python " +
      "extension, or set pallas.interpreter.",
  );
}

export interface PythonVersion {
  major: number;
  minor: number;
  micro: number;
}

/** Runs the interpreter once to learn its version. */
export function probeVersion(command: string[], env: NodeJS.ProcessEnv = process.env): Promise<PythonVersion> {
  const code = "import sys; print('%d.%d.%d' % sys.version_info[:3])";
  return new Promise((resolve, reject) => {
    execFile(command[0], [...command.slice(1), "-c", code], { env, timeout: 15000 }, (err, stdout, stderr) => {
      const m = /^(\d+)\.(\d+)\.(\d+)\s*$/m.exec(stdout ?? "");
      if (err || !m) {
        const why = err ? (err as NodeJS.ErrnoException).code === "ENOENT" ? "not found" : err.message : "no version printed";
        reject(new InterpreterError(`pallas: cannot run the Python interpreter ${command.join(" ")}: ${why}${stderr ? `\n${stderr}` : ""}`));
        return;
      }
      resolve({ major: +m[1], minor: +m[2], micro: +m[3] });
    });
  });
}

/** A message for the user when the version is too old, else undefined. */
export function checkVersion(v: PythonVersion, command: string[], source: InterpreterSource): string | undefined {
  const [maj, min] = MIN_PYTHON;
  if (v.major > maj || (v.major === maj && v.minor >= min)) return undefined;
  return (
    `pallas: Python ${v.major}.${v.minor}.${v.micro} (${command.join(" ")}, from ${source}) is too old: ` +
    `the pallas server needs Python ${maj}.${min} or newer. ` +
    (source === "pallas.interpreter" ? "Change pallas.interpreter." : "Select another interpreter or set pallas.interpreter.")
  );
}
