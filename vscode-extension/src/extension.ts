import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  LogMessageNotification,
  MessageType,
  RevealOutputChannelOn,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";
import { InterpreterError, PythonEnvironments, checkVersion, probeVersion, resolveInterpreter } from "./interpreter";
import { serverCommand } from "./serverCommand";
import { Settings, needsRestart, readServerSettings, readSettings, shouldNotify } from "./settings";

const NAME = "Pallas";
let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel;
let restartTimer: NodeJS.Timeout | undefined;
let restarting: Promise<void> = Promise.resolve();
let lastError: string | undefined;

/** What activate() returns: the server's state, for scripts and tests. */
export interface PallasApi {
  status(): { running: boolean; error?: string };
}

function firstFolder(): vscode.WorkspaceFolder | undefined {
  return vscode.workspace.workspaceFolders?.[0];
}

function currentSettings(): Settings {
  const folder = firstFolder();
  return readSettings(vscode.workspace.getConfiguration("pallas", folder?.uri), { workspaceFolder: folder?.uri.fsPath });
}

async function pythonEnvironments(): Promise<PythonEnvironments | undefined> {
  const ext = vscode.extensions.getExtension("ms-python.python");
  if (!ext) return undefined;
  try {
    const api = ext.isActive ? ext.exports : await ext.activate();
    return api?.environments as PythonEnvironments | undefined;
  } catch (e) {
    output.warn(`Python extension API unavailable: ${e}`);
    return undefined;
  }
}

/** Problems starting the server are always shown, whatever pallas.showNotifications says. */
function startupError(message: string): void {
  lastError = message;
  output.error(message);
  void vscode.window.showErrorMessage(message, "Open Settings", "Show Logs").then((choice) => {
    if (choice === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "pallas.interpreter");
    if (choice === "Show Logs") output.show();
  });
}

async function start(context: vscode.ExtensionContext): Promise<void> {
  lastError = undefined;
  const settings = currentSettings();
  const folder = firstFolder();
  let interpreter: string[] | undefined;
  if (settings.path.length === 0) {
    try {
      const found = await resolveInterpreter({
        setting: settings.interpreter,
        python: await pythonEnvironments(),
        resource: folder?.uri,
      });
      const version = await probeVersion(found.command);
      const tooOld = checkVersion(version, found.command, found.source);
      if (tooOld) return startupError(tooOld);
      output.info(`Python ${version.major}.${version.minor}.${version.micro}: ${found.command.join(" ")} (from ${found.source})`);
      interpreter = found.command;
    } catch (e) {
      return startupError(e instanceof InterpreterError ? e.message : `pallas: ${e}`);
    }
  }
  const cmd = serverCommand(settings, interpreter, context.extensionPath);
  output.info(`Server command: ${[cmd.command, ...cmd.args].join(" ")} (importStrategy ${settings.importStrategy})`);
  const serverOptions: ServerOptions = {
    command: cmd.command,
    args: cmd.args,
    transport: TransportKind.stdio,
    options: { cwd: folder?.uri.fsPath, env: cmd.env },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "python" },
      { scheme: "untitled", language: "python" },
      { scheme: "vscode-notebook-cell", language: "python" },
    ],
    outputChannel: output,
    traceOutputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    initializationOptions: { settings: settings.server },
    synchronize: { configurationSection: "pallas" },
    middleware: {
      workspace: {
        // Answer workspace/configuration for section "pallas" with the normalised server settings.
        configuration: async (params, token, next) => {
          const result = await next(params, token);
          if (!Array.isArray(result)) return result;
          return params.items.map((item, i) => {
            if (item.section !== "pallas") return result[i];
            const scope = item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined;
            return readServerSettings(vscode.workspace.getConfiguration("pallas", scope));
          });
        },
      },
    },
  };
  const c = new LanguageClient("pallas", NAME, serverOptions, clientOptions);
  c.onNotification(LogMessageNotification.type, ({ type, message }) => {
    const line = message.replace(/\s+$/, "");
    if (type === MessageType.Error) output.error(line);
    else if (type === MessageType.Warning) output.warn(line);
    // The server already filters by pallas.logLevel: its Log (debug) messages are shown at info
    // level, since the channel's own level (Info by default) would hide them.
    else output.info(line);
    if (!shouldNotify(currentSettings().showNotifications, type)) return;
    if (type === MessageType.Error) void vscode.window.showErrorMessage(line);
    else if (type === MessageType.Warning) void vscode.window.showWarningMessage(line);
    else void vscode.window.showInformationMessage(line);
  });
  client = c;
  try {
    await c.start();
    output.info(`Server started: ${c.initializeResult?.serverInfo?.name ?? "?"} ${c.initializeResult?.serverInfo?.version ?? ""}`);
  } catch (e) {
    startupError(`pallas: the server failed to start: ${e}. See the ${NAME} output channel.`);
  }
}

async function stop(): Promise<void> {
  const c = client;
  client = undefined;
  if (!c) return;
  try {
    await c.stop(2000);
  } catch (e) {
    output.warn(`Stopping the server: ${e}`);
  }
}

function restart(context: vscode.ExtensionContext, why: string): Promise<void> {
  restarting = restarting.then(async () => {
    output.info(`Restarting the server: ${why}`);
    await stop();
    await start(context);
  });
  return restarting;
}

function restartSoon(context: vscode.ExtensionContext, why: string): void {
  if (restartTimer) clearTimeout(restartTimer);
  restartTimer = setTimeout(() => void restart(context, why), 300);
}

export async function activate(context: vscode.ExtensionContext): Promise<PallasApi> {
  output = vscode.window.createOutputChannel(NAME, { log: true });
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand("pallas.restart", () => restart(context, "pallas.restart")),
    vscode.commands.registerCommand("pallas.showLogs", () => output.show()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      // Launch settings restart the server; the others reach it through workspace/didChangeConfiguration.
      if (needsRestart((s) => e.affectsConfiguration(s))) restartSoon(context, "settings changed");
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => restartSoon(context, "workspace folders changed")),
  );
  const python = await pythonEnvironments();
  const onEnv = (python as { onDidChangeActiveEnvironmentPath?: vscode.Event<unknown> } | undefined)?.onDidChangeActiveEnvironmentPath;
  if (onEnv) {
    context.subscriptions.push(
      onEnv(() => {
        if (currentSettings().interpreter.length === 0 && currentSettings().path.length === 0) restartSoon(context, "Python environment changed");
      }),
    );
  }
  restarting = start(context);
  await restarting;
  return { status: () => ({ running: client?.isRunning() ?? false, error: lastError }) };
}

export async function deactivate(): Promise<void> {
  if (restartTimer) clearTimeout(restartTimer);
  await stop();
}
