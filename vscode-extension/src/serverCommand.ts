// The command line that starts the server: shared by the extension and the node LSP client test.
import * as path from "path";
import { LaunchSettings } from "./settings";

export interface ServerCommand {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

export function bundledServerScript(extensionRoot: string): string {
  return path.join(extensionRoot, "bundled", "tool", "lsp_server.py");
}

/**
 * pallas.path, when set, is the whole command (plus pallas.args). Otherwise the interpreter runs
 * bundled/tool/lsp_server.py, which puts bundled/libs first on sys.path (useBundled) or last
 * (fromEnvironment: the environment's pallas-lsp wins, the bundled one is the fallback).
 */
export function serverCommand(
  s: LaunchSettings,
  interpreter: string[] | undefined,
  extensionRoot: string,
  env: NodeJS.ProcessEnv = process.env,
): ServerCommand {
  const childEnv: NodeJS.ProcessEnv = { ...env, PYTHONUNBUFFERED: "1", LS_IMPORT_STRATEGY: s.importStrategy };
  if (s.path.length > 0) {
    return { command: s.path[0], args: [...s.path.slice(1), ...s.args], env: childEnv };
  }
  if (!interpreter || interpreter.length === 0) throw new Error("serverCommand: no interpreter");
  return {
    command: interpreter[0],
    args: [...interpreter.slice(1), bundledServerScript(extensionRoot), ...s.args],
    env: childEnv,
  };
}
