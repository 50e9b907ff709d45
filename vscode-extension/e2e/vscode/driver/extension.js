// Test-only extension: runs inside the real VS Code extension host (code-server) next to the
// installed pallas .vsix, goes through the PLS001 quick fix as a user would, and writes what
// happened to $PALLAS_E2E_OUT/result.json. The runner (run.sh) checks the file on disk as well.
const vscode = require("vscode");
const fs = require("fs");
const path = require("path");

const OUT = process.env.PALLAS_E2E_OUT;
const FIX = "pallas (PLS001): Add collective=True to the TMEM allocation";
const NOQA = "pallas (PLS001): Disable for this line";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const codeOf = (d) => (d.code && typeof d.code === "object" ? d.code.value : d.code);

async function until(pred, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await pred();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(100);
  }
}

exports.activate = async function () {
  if (!OUT) return;
  const t0 = Date.now();
  const steps = [];
  const log = (m) => steps.push(`${Date.now() - t0}ms ${m}`);
  const done = (o) => fs.writeFileSync(path.join(OUT, "result.json"), JSON.stringify({ ...o, steps, vscode: vscode.version }, null, 1));
  try {
    const pallas = vscode.extensions.getExtension("pallas-lsp.pallas-lsp");
    log(`pallas extension ${pallas ? pallas.packageJSON.version : "MISSING"} active=${pallas && pallas.isActive}`);
    const uri = vscode.Uri.file(path.join(OUT, "ws", "kernel.py"));
    const doc = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(doc);
    await vscode.commands.executeCommand("workbench.action.closeSidebar");
    await vscode.commands.executeCommand("workbench.action.closePanel");
    log(`opened ${path.basename(uri.fsPath)} languageId=${doc.languageId}`);

    const pls001 = () => vscode.languages.getDiagnostics(uri).filter((d) => d.source === "pallas" && codeOf(d) === "PLS001");
    const [diag] = await until(() => pls001().length > 0 && pls001(), 60000, "the PLS001 diagnostic");
    log(`diagnostic ${codeOf(diag)} at ${diag.range.start.line + 1}:${diag.range.start.character + 1}: ${diag.message}`);

    const listed = await vscode.commands.executeCommand("vscode.executeCodeActionProvider", uri, diag.range, vscode.CodeActionKind.QuickFix.value);
    const titles = listed.map((a) => a.title);
    log(`quick fixes: ${JSON.stringify(titles)}`);

    // The user's way in: cursor on the squiggle, Ctrl+. opens the quick-fix menu.
    const pos = diag.range.start;
    editor.selection = new vscode.Selection(pos, pos);
    editor.revealRange(new vscode.Range(pos.line - 4, 0, pos.line + 12, 0), vscode.TextEditorRevealType.AtTop);
    await sleep(500);
    await vscode.commands.executeCommand("editor.action.quickFix");
    await sleep(1500); // let the menu render
    fs.writeFileSync(path.join(OUT, "menu-open"), "");
    log("quick-fix menu open");
    const shot = await until(() => fs.existsSync(path.join(OUT, "shot-done")), 30000, "the screenshot").catch(() => false);
    log(shot ? "screenshot taken" : "no screenshot (continuing)");
    // Enter in the menu: accept the highlighted item, which is the preferred fix. Were it the
    // noqa action, line 25 would change instead and the check below would fail.
    await vscode.commands.executeCommand("acceptSelectedCodeAction");
    await until(() => /collective=True/.test(doc.lineAt(34).text), 10000, "the quick fix's edit on line 35");
    log(`line 35 after the fix: ${doc.lineAt(34).text.trim()}`);
    await doc.save();
    const left = await until(() => pls001().length === 0 && [], 20000, "PLS001 to go away").catch(() => pls001());
    log(`saved; PLS001 left: ${left.length}`);

    // A setting the server reads itself reaches it live (workspace/didChangeConfiguration).
    const pls002 = () => vscode.languages.getDiagnostics(uri).filter((d) => d.source === "pallas" && codeOf(d) === "PLS002");
    await until(() => pls002().length > 0, 10000, "PLS002 (line 51)");
    const cfg = () => vscode.workspace.getConfiguration("pallas");
    await cfg().update("ignore", ["PLS002"], vscode.ConfigurationTarget.Global);
    const ignoreLive = await until(() => pls002().length === 0, 15000, "PLS002 to go with pallas.ignore").then(() => true, () => false);
    log(`pallas.ignore=["PLS002"] applied live: ${ignoreLive}`);
    await cfg().update("ignore", undefined, vscode.ConfigurationTarget.Global);
    const back = await until(() => pls002().length > 0, 15000, "PLS002 to come back").then(() => true, () => false);
    log(`pallas.ignore reset, PLS002 back: ${back}`);

    // Pallas: Restart Server, then the restarted server answers.
    await vscode.commands.executeCommand("pallas.restart");
    const after = await until(async () => {
      const d = pls002();
      if (!d.length) return false;
      const acts = await vscode.commands.executeCommand("vscode.executeCodeActionProvider", uri, d[0].range, vscode.CodeActionKind.QuickFix.value);
      return acts.some((a) => a.title.startsWith("pallas (PLS002)")) && acts.map((a) => a.title);
    }, 20000, "the restarted server").catch(() => false);
    log(`restarted; PLS002 quick fixes: ${JSON.stringify(after)}`);

    // An interpreter older than 3.10 gets an error message (the extension's status has it).
    let oldPython = "not tried (no PALLAS_TEST_OLD_PYTHON)";
    if (process.env.PALLAS_TEST_OLD_PYTHON) {
      await cfg().update("interpreter", [process.env.PALLAS_TEST_OLD_PYTHON], vscode.ConfigurationTarget.Global);
      oldPython = await until(() => { const e = pallas.exports.status().error; return e && /too old/.test(e) && e; }, 20000, "the too-old error")
        .catch(() => `no error: ${JSON.stringify(pallas.exports.status())}`);
      log(`interpreter ${process.env.PALLAS_TEST_OLD_PYTHON}: ${oldPython}`);
      await cfg().update("interpreter", undefined, vscode.ConfigurationTarget.Global);
      const running = await until(() => pallas.exports.status().running, 20000, "the server back").then(() => true, () => false);
      log(`interpreter reset; server running: ${running}`);
      if (!running) oldPython = `server not back: ${oldPython}`;
    }
    const oldPythonOk = !process.env.PALLAS_TEST_OLD_PYTHON || /^pallas: Python 3\.\d+\.\d+ .* too old/.test(oldPython) && !/not back/.test(oldPython);

    done({
      ok: oldPythonOk && titles.includes(FIX) && left.length === 0 && !doc.isDirty && ignoreLive && back && Boolean(after),
      ignoreLive,
      restartOk: Boolean(after),
      oldPython,
      diagnostic: { code: codeOf(diag), line: pos.line + 1, column: pos.character + 1, message: diag.message, source: diag.source },
      titles,
      hasNoqaAction: titles.includes(NOQA),
      screenshot: Boolean(shot),
      text: fs.readFileSync(uri.fsPath, "utf8"),
    });
  } catch (e) {
    log(`error: ${e && e.stack ? e.stack : e}`);
    done({ ok: false, error: String((e && e.message) || e) });
  }
};
