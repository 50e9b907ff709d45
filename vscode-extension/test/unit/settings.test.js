// Unit tests for settings resolution (compiled out/settings.js; run `npm run compile` first).
const { test } = require("node:test");
const assert = require("node:assert/strict");
const path = require("node:path");
const { readSettings, readServerSettings, resolveVariables, needsRestart, shouldNotify, DEFAULTS } = require("../../out/settings");

/** A stand-in for vscode.WorkspaceConfiguration: dotted keys, as VS Code's get() takes them. */
const config = (values) => ({ get: (key) => values[key] });

test("defaults when nothing is set", () => {
  assert.deepEqual(readSettings(config({})), DEFAULTS);
  assert.deepEqual(DEFAULTS.server, { select: [], ignore: [], lint: { run: "onType", debounce: 250 }, logLevel: "warning" });
});

test("every setting is read", () => {
  const s = readSettings(config({
    args: ["--log-file", "x.log"], path: [], interpreter: ["/opt/py/bin/python3"], importStrategy: "fromEnvironment",
    showNotifications: "onWarning", select: ["pls001"], ignore: ["PLS002"], "lint.run": "onSave", "lint.debounce": 500,
    logLevel: "debug",
  }));
  assert.deepEqual(s, {
    args: ["--log-file", "x.log"], path: [], interpreter: ["/opt/py/bin/python3"], importStrategy: "fromEnvironment",
    showNotifications: "onWarning",
    server: { select: ["PLS001"], ignore: ["PLS002"], lint: { run: "onSave", debounce: 500 }, logLevel: "debug" },
  });
});

test("invalid values fall back to the defaults", () => {
  const s = readSettings(config({
    importStrategy: "bundled", showNotifications: true, "lint.run": "onChange", "lint.debounce": -3, logLevel: "trace",
    args: "--one", interpreter: [1, "", " ", "py"], select: null,
  }));
  assert.equal(s.importStrategy, "useBundled");
  assert.equal(s.showNotifications, "off");
  assert.deepEqual(s.server, DEFAULTS.server);
  assert.deepEqual(s.args, ["--one"]); // a plain string is taken as one argument
  assert.deepEqual(s.interpreter, ["py"]);
});

test("server settings alone, as answered to workspace/configuration", () => {
  assert.deepEqual(readServerSettings(config({ select: ["PLS"], "lint.debounce": 12.6 })),
    { select: ["PLS"], ignore: [], lint: { run: "onType", debounce: 13 }, logLevel: "warning" });
});

test("variables in path-like settings", () => {
  const vars = { workspaceFolder: "/ws", userHome: "/home/u", env: { VENV: "/venvs/a" } };
  assert.equal(resolveVariables("${workspaceFolder}/.venv/bin/python", vars), "/ws/.venv/bin/python");
  assert.equal(resolveVariables("${userHome}/py", vars), "/home/u/py");
  assert.equal(resolveVariables("~/py", vars), path.join("/home/u", "py"));
  assert.equal(resolveVariables("${env:VENV}/bin/python", vars), "/venvs/a/bin/python");
  assert.equal(resolveVariables("${env:NOPE}x", vars), "x");
  assert.equal(resolveVariables("a~b", vars), "a~b");
  // no folder open: left as is, so the error message shows what was configured
  assert.equal(resolveVariables("${workspaceFolder}/py", {}), "${workspaceFolder}/py");
  const s = readSettings(config({ interpreter: ["${workspaceFolder}/.venv/bin/python"], path: ["~/bin/pallas-lsp"], args: ["${env:VENV}"] }), vars);
  assert.deepEqual([s.interpreter, s.path, s.args], [["/ws/.venv/bin/python"], [path.join("/home/u", "bin/pallas-lsp")], ["/venvs/a"]]);
});

test("which changes restart the server", () => {
  const affects = (changed) => (section) => changed.some((c) => c === section || c.startsWith(section + "."));
  for (const key of ["args", "path", "interpreter", "importStrategy"]) assert.ok(needsRestart(affects([`pallas.${key}`])), key);
  for (const key of ["select", "ignore", "lint.run", "lint.debounce", "logLevel", "showNotifications", "trace.server"])
    assert.ok(!needsRestart(affects([`pallas.${key}`])), key);
  assert.ok(!needsRestart(affects(["python.defaultInterpreterPath"])));
});

test("showNotifications thresholds (LSP MessageType: 1 error, 2 warning, 3 info, 4 log)", () => {
  const table = { off: [], onError: [1], onWarning: [1, 2], always: [1, 2, 3] };
  for (const [setting, levels] of Object.entries(table))
    assert.deepEqual([1, 2, 3, 4].filter((l) => shouldNotify(setting, l)), levels, setting);
});
