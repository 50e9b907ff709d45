// The server launched exactly as the extension launches it (out/serverCommand.js with the
// extension's settings defaults and interpreter resolution), spoken to with the protocol library
// that vscode-languageclient wraps. Needs `npm run compile` and `npm run bundle` first.
//   PALLAS_TEST_PYTHON      interpreter for the bundled server (default: python3 on PATH, as the extension)
//   PALLAS_TEST_ENV_PYTHON  an interpreter with pallas-lsp installed, for importStrategy=fromEnvironment
//   PALLAS_TEST_OLD_PYTHON  a Python < 3.10, to check the bundled launcher's refusal
//   PALLAS_CI=1             skips become failures (except the optional old-Python check)
const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { spawn } = require("node:child_process");
const { pathToFileURL } = require("node:url");
const rpc = require("vscode-languageserver-protocol/node");
const { TextDocument } = require("vscode-languageserver-textdocument");
const { DEFAULTS } = require("../../out/settings");
const { resolveInterpreter } = require("../../out/interpreter");
const { serverCommand } = require("../../out/serverCommand");

const EXT = path.resolve(__dirname, "../..");
const REPO = path.resolve(EXT, "..");
const EXAMPLE = path.join(REPO, "examples", "collective_matmul.py");
const FIX_TITLE = "pallas (PLS001): Add collective=True to the TMEM allocation";
const NOQA_TITLE = "pallas (PLS001): Disable for this line";
const CI = process.env.PALLAS_CI === "1";

function skipUnless(ok, why) {
  if (ok) return false;
  if (CI) throw new Error(`PALLAS_CI=1 but ${why}`);
  return why;
}
const bundled = fs.existsSync(path.join(EXT, "bundled", "libs", "pallas_lsp"));

/** Start the server as the extension does, initialize it like VS Code would (push diagnostics). */
async function startServer(settings, interpreterSetting) {
  const interp = await resolveInterpreter({ setting: interpreterSetting });
  const cmd = serverCommand(settings, interp.command, EXT);
  const proc = spawn(cmd.command, cmd.args, { cwd: REPO, env: cmd.env, stdio: "pipe" });
  let stderr = "";
  proc.stderr.on("data", (b) => (stderr += b));
  const exited = new Promise((res) => proc.on("exit", (code) => res(code)));
  const conn = rpc.createProtocolConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
  const diagnostics = new Map();
  const waiters = [];
  conn.onNotification(rpc.PublishDiagnosticsNotification.type, (p) => {
    diagnostics.set(p.uri, p.diagnostics);
    for (const w of waiters.splice(0)) w();
  });
  conn.onRequest(rpc.ConfigurationRequest.type, (p) => p.items.map((i) => (i.section === "pallas" ? settings.server : null)));
  conn.onRequest(() => null); // client/registerCapability, window/workDoneProgress/create, ...
  conn.listen();
  const init = await conn.sendRequest(rpc.InitializeRequest.type, {
    processId: process.pid,
    rootUri: pathToFileURL(REPO).href,
    workspaceFolders: [{ uri: pathToFileURL(REPO).href, name: "repo" }],
    initializationOptions: { settings: settings.server },
    capabilities: {
      workspace: { configuration: true, workspaceEdit: { documentChanges: true }, didChangeConfiguration: { dynamicRegistration: true } },
      textDocument: {
        publishDiagnostics: { relatedInformation: true, versionSupport: true, codeDescriptionSupport: true, dataSupport: true },
        codeAction: {
          codeActionLiteralSupport: { codeActionKind: { valueSet: ["quickfix", "source", "source.fixAll"] } },
          isPreferredSupport: true, dataSupport: true, resolveSupport: { properties: ["edit"] },
        },
        synchronization: { didSave: true },
      },
    },
  });
  await conn.sendNotification(rpc.InitializedNotification.type, {});
  async function waitFor(uri, pred, ms = 20000) {
    const deadline = Date.now() + ms;
    while (!(diagnostics.has(uri) && pred(diagnostics.get(uri)))) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching diagnostics for ${uri} in ${ms} ms; got ${JSON.stringify(diagnostics.get(uri))}\nserver stderr:\n${stderr}`);
      await new Promise((res) => { waiters.push(res); setTimeout(res, Math.min(left, 200)); });
    }
    return diagnostics.get(uri);
  }
  async function stop() {
    await conn.sendRequest(rpc.ShutdownRequest.type);
    await conn.sendNotification(rpc.ExitNotification.type);
    const code = await Promise.race([exited, new Promise((res) => setTimeout(() => res("timeout"), 5000))]);
    if (code === "timeout") proc.kill();
    conn.dispose();
    return code;
  }
  return { conn, init, waitFor, stop, stderr: () => stderr, interp };
}

function applyEdit(uri, text, edit) {
  let edits = [];
  if (edit.documentChanges) {
    for (const dc of edit.documentChanges) if (dc.textDocument && dc.textDocument.uri === uri) edits.push(...dc.edits);
  } else if (edit.changes) edits = edit.changes[uri] || [];
  return TextDocument.applyEdits(TextDocument.create(uri, "python", 1, text), edits);
}

async function diagnoseAndFix(settings, interpreterSetting) {
  const s = await startServer(settings, interpreterSetting);
  try {
    assert.ok(s.init.capabilities.codeActionProvider, "server offers code actions");
    const uri = pathToFileURL(EXAMPLE).href;
    const text = fs.readFileSync(EXAMPLE, "utf8");
    await s.conn.sendNotification(rpc.DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: "python", version: 1, text } });
    const diags = await s.waitFor(uri, (ds) => ds.some((d) => d.code === "PLS001"));
    const d = diags.find((x) => x.code === "PLS001");
    assert.equal(d.source, "pallas");
    // flake8 reports examples/collective_matmul.py:25:13: 0-based line 24, character 12
    assert.deepEqual(d.range.start, { line: 24, character: 12 });
    let actions = await s.conn.sendRequest(rpc.CodeActionRequest.type, {
      textDocument: { uri }, range: d.range, context: { diagnostics: [d], only: ["quickfix"] },
    });
    const titles = actions.map((a) => a.title);
    assert.ok(titles.includes(FIX_TITLE) && titles.includes(NOQA_TITLE), `code actions: ${JSON.stringify(titles)}`);
    let fix = actions.find((a) => a.title === FIX_TITLE);
    assert.equal(fix.isPreferred, true);
    if (!fix.edit) fix = await s.conn.sendRequest(rpc.CodeActionResolveRequest.type, fix);
    const fixed = applyEdit(uri, text, fix.edit);
    const line35 = fixed.split("\n")[34];
    assert.match(line35, /acc_tmem=plgpu\.TMEM\(.*collective=True.*\)/, `line 35 after the fix: ${line35}`);
    // the fixed text, sent as a change, is clean of PLS001
    await s.conn.sendNotification(rpc.DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: 2 }, contentChanges: [{ text: fixed }],
    });
    await s.waitFor(uri, (ds) => !ds.some((x) => x.code === "PLS001"));
    assert.equal(await s.stop(), 0, "server exits 0 after shutdown/exit");
    return s.stderr();
  } catch (e) {
    await s.stop().catch(() => {});
    throw e;
  }
}

const interpreterSetting = process.env.PALLAS_TEST_PYTHON ? [process.env.PALLAS_TEST_PYTHON] : [];

test("bundled server (importStrategy useBundled, the default): PLS001 and its quick fix",
  { timeout: 60000, skip: skipUnless(bundled, "bundled/libs is missing: run `npm run bundle`") }, async () => {
    const stderr = await diagnoseAndFix(DEFAULTS, interpreterSetting);
    assert.match(stderr, new RegExp(`server from ${path.join(EXT, "bundled", "libs", "pallas_lsp").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(importStrategy useBundled`));
  });

const envPython = process.env.PALLAS_TEST_ENV_PYTHON;
test("importStrategy fromEnvironment: the environment's pallas-lsp wins",
  { timeout: 60000, skip: skipUnless(envPython && bundled, "set PALLAS_TEST_ENV_PYTHON to a Python with pallas-lsp installed") }, async () => {
    const stderr = await diagnoseAndFix({ ...DEFAULTS, importStrategy: "fromEnvironment" }, [envPython]);
    const m = /server from (.*) \(importStrategy fromEnvironment/.exec(stderr);
    assert.ok(m, stderr);
    assert.ok(!m[1].startsWith(path.join(EXT, "bundled")), `loaded ${m[1]}`);
  });

const oldPython = process.env.PALLAS_TEST_OLD_PYTHON;
test("the bundled launcher refuses Python < 3.10 with a message",
  { timeout: 30000, skip: oldPython ? false : "set PALLAS_TEST_OLD_PYTHON to a Python older than 3.10 (optional, also in CI)" }, async () => {
    const cmd = serverCommand(DEFAULTS, [oldPython], EXT);
    const proc = spawn(cmd.command, cmd.args, { env: cmd.env, stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    proc.stderr.on("data", (b) => (err += b));
    const code = await new Promise((res) => proc.on("exit", res));
    assert.equal(code, 2);
    assert.match(err, /the server needs Python 3\.10 or newer; .* is Python 3\.\d\./);
  });
