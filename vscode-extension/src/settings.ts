// Settings resolution, kept free of the `vscode` module so it can be unit-tested with node --test.
import * as os from "os";
import * as path from "path";

export type ImportStrategy = "useBundled" | "fromEnvironment";
export type Notifications = "off" | "onError" | "onWarning" | "always";
export type LintRun = "onType" | "onSave";
export type LogLevel = "error" | "warning" | "info" | "debug";

/** Settings that decide how the server process is started: changing one restarts the server. */
export interface LaunchSettings {
  args: string[];
  path: string[];
  interpreter: string[];
  importStrategy: ImportStrategy;
}

/** Settings the server reads itself (initializationOptions.settings and workspace/configuration). */
export interface ServerSettings {
  select: string[];
  ignore: string[];
  lint: { run: LintRun; debounce: number };
  logLevel: LogLevel;
}

export interface Settings extends LaunchSettings {
  showNotifications: Notifications;
  server: ServerSettings;
}

/** The part of vscode.WorkspaceConfiguration that we use (section "pallas"). */
export interface ConfigReader {
  get<T>(key: string): T | undefined;
}

/** Values for ${workspaceFolder}, ${userHome}, ${env:NAME} and ~ in path-like settings. */
export interface Variables {
  workspaceFolder?: string;
  userHome?: string;
  env?: NodeJS.ProcessEnv;
}

export const LAUNCH_KEYS = ["args", "path", "interpreter", "importStrategy"] as const;

export const DEFAULTS: Settings = {
  args: [],
  path: [],
  interpreter: [],
  importStrategy: "useBundled",
  showNotifications: "off",
  server: { select: [], ignore: [], lint: { run: "onType", debounce: 250 }, logLevel: "warning" },
};

function oneOf<T extends string>(value: unknown, allowed: readonly T[], fallback: T): T {
  return typeof value === "string" && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
}

function strings(value: unknown): string[] {
  if (typeof value === "string") return value.trim() ? [value] : []; // tolerate a plain string
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string" && v.trim() !== "") : [];
}

/** Substitute ${workspaceFolder}, ${userHome}, ${env:NAME} and a leading ~ (as the Python tool extensions do). */
export function resolveVariables(value: string, vars: Variables): string {
  const home = vars.userHome ?? os.homedir();
  const env = vars.env ?? process.env;
  let out = value.replace(/\$\{(workspaceFolder|userHome|env:([^}]+))\}/g, (whole, name: string, envName?: string) => {
    if (envName !== undefined) return env[envName] ?? "";
    if (name === "userHome") return home;
    return vars.workspaceFolder ?? whole;
  });
  if (out === "~" || out.startsWith("~/") || out.startsWith("~\\")) out = path.join(home, out.slice(1));
  return out;
}

function codes(value: unknown): string[] {
  return strings(value).map((c) => c.trim().toUpperCase());
}

export function readServerSettings(cfg: ConfigReader): ServerSettings {
  const d = DEFAULTS.server;
  const debounce = cfg.get<number>("lint.debounce");
  return {
    select: codes(cfg.get("select")),
    ignore: codes(cfg.get("ignore")),
    lint: {
      run: oneOf(cfg.get("lint.run"), ["onType", "onSave"] as const, d.lint.run),
      debounce: typeof debounce === "number" && Number.isFinite(debounce) && debounce >= 0 ? Math.round(debounce) : d.lint.debounce,
    },
    logLevel: oneOf(cfg.get("logLevel"), ["error", "warning", "info", "debug"] as const, d.logLevel),
  };
}

export function readSettings(cfg: ConfigReader, vars: Variables = {}): Settings {
  const sub = (xs: string[]) => xs.map((x) => resolveVariables(x, vars));
  return {
    args: sub(strings(cfg.get("args"))),
    path: sub(strings(cfg.get("path"))),
    interpreter: sub(strings(cfg.get("interpreter"))),
    importStrategy: oneOf(cfg.get("importStrategy"), ["useBundled", "fromEnvironment"] as const, DEFAULTS.importStrategy),
    showNotifications: oneOf(cfg.get("showNotifications"), ["off", "onError", "onWarning", "always"] as const, DEFAULTS.showNotifications),
    server: readServerSettings(cfg),
  };
}

/** True when a configuration change needs a server restart (given e.affectsConfiguration). */
export function needsRestart(affects: (section: string) => boolean): boolean {
  return LAUNCH_KEYS.some((k) => affects(`pallas.${k}`));
}

/** Whether a server log message of `level` (1 error .. 4 log, as LSP MessageType) pops up. */
export function shouldNotify(setting: Notifications, level: number): boolean {
  switch (setting) {
    case "always":
      return level <= 3;
    case "onWarning":
      return level <= 2;
    case "onError":
      return level <= 1;
    default:
      return false;
  }
}
