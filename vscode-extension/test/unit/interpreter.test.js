// Unit tests for interpreter resolution (compiled out/interpreter.js and out/serverCommand.js).
const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { resolveInterpreter, probeVersion, checkVersion, findOnPath, InterpreterError } = require("../../out/interpreter");
const { serverCommand, bundledServerScript } = require("../../out/serverCommand");

const posix = process.platform !== "win32";

/** A directory with a fake `python3` that reports the given version. */
function fakePython(version) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pallas-py-"));
  const exe = path.join(dir, "python3");
  fs.writeFileSync(exe, `#!/bin/sh\necho ${version}\n`, { mode: 0o755 });
  return { dir, exe };
}

/** A fake ms-python.python `environments` API. */
function pythonApi(active, resolved) {
  const calls = [];
  return {
    calls,
    getActiveEnvironmentPath(resource) { calls.push(["active", resource]); return active === undefined ? undefined : { path: active }; },
    async resolveEnvironment(env) {
      calls.push(["resolve", env.path]);
      if (resolved instanceof Error) throw resolved;
      return resolved === undefined ? undefined : { executable: { uri: resolved ? { fsPath: resolved } : undefined } };
    },
  };
}

test("the pallas.interpreter setting wins", async () => {
  const api = pythonApi("/envs/a/bin/python", "/envs/a/bin/python");
  const got = await resolveInterpreter({ setting: ["/opt/py/bin/python", "-X", "utf8"], python: api, env: { PATH: "" } });
  assert.deepEqual(got, { command: ["/opt/py/bin/python", "-X", "utf8"], source: "pallas.interpreter" });
  assert.deepEqual(api.calls, []);
});

test("else the Python extension's active environment, for the resource", async () => {
  const api = pythonApi("/envs/a", "/envs/a/bin/python");
  const got = await resolveInterpreter({ setting: [], python: api, resource: "file:///ws", env: { PATH: "" } });
  assert.deepEqual(got, { command: ["/envs/a/bin/python"], source: "Python extension" });
  assert.deepEqual(api.calls, [["active", "file:///ws"], ["resolve", "/envs/a"]]);
});

test("else python3 on PATH (no Python extension, or it has nothing usable)", { skip: !posix }, async () => {
  const { dir, exe } = fakePython("3.12.1");
  const env = { PATH: ["/nonexistent", dir].join(path.delimiter) };
  for (const python of [undefined, pythonApi(undefined), pythonApi("/envs/x", undefined), pythonApi("/envs/x", ""),
                        pythonApi("/envs/x", new Error("broken"))]) {
    assert.deepEqual(await resolveInterpreter({ setting: [], python, env }), { command: [exe], source: "PATH" });
  }
  assert.equal(findOnPath("python3", { PATH: "" }), undefined);
});

test("no interpreter anywhere: a clear error", async () => {
  await assert.rejects(resolveInterpreter({ setting: [], env: { PATH: "" } }),
    (e) => e instanceof InterpreterError && /no Python interpreter found.*pallas\.interpreter/.test(e.message));
});

test("version probe and the 3.10 minimum", { skip: !posix }, async () => {
  const old = fakePython("3.9.18");
  const v = await probeVersion([old.exe]);
  assert.deepEqual(v, { major: 3, minor: 9, micro: 18 });
  const msg = checkVersion(v, [old.exe], "PATH");
  assert.match(msg, /Python 3\.9\.18 .* is too old: the pallas server needs Python 3\.10 or newer/);
  assert.ok(msg.includes(old.exe) && msg.includes("from PATH"));
  for (const ok of [[3, 10, 0], [3, 13, 1], [4, 0, 0]])
    assert.equal(checkVersion({ major: ok[0], minor: ok[1], micro: ok[2] }, ["py"], "PATH"), undefined);
  assert.match(checkVersion({ major: 2, minor: 7, micro: 18 }, ["py"], "pallas.interpreter"), /Change pallas\.interpreter\.$/);
  assert.match(msg, /Select another interpreter or set pallas\.interpreter\.$/);
});

test("a real interpreter is probed (this machine's python3)", { skip: !findOnPath("python3") && "no python3 on PATH" }, async () => {
  const v = await probeVersion([findOnPath("python3")]);
  assert.equal(v.major, 3);
});

test("an interpreter that does not run: a clear error", async () => {
  await assert.rejects(probeVersion(["/nonexistent/python3"]),
    (e) => e instanceof InterpreterError && /cannot run the Python interpreter \/nonexistent\/python3: not found/.test(e.message));
});

test("server command: interpreter + bundled script + pallas.args, import strategy in the environment", () => {
  const s = { args: ["-v"], path: [], interpreter: [], importStrategy: "fromEnvironment" };
  const cmd = serverCommand(s, ["/py/bin/python", "-X", "utf8"], "/ext", { HOME: "/h" });
  assert.equal(cmd.command, "/py/bin/python");
  assert.deepEqual(cmd.args, ["-X", "utf8", path.join("/ext", "bundled", "tool", "lsp_server.py"), "-v"]);
  assert.equal(cmd.env.LS_IMPORT_STRATEGY, "fromEnvironment");
  assert.equal(cmd.env.HOME, "/h");
  assert.equal(bundledServerScript("/ext"), path.join("/ext", "bundled", "tool", "lsp_server.py"));
});

test("server command: pallas.path replaces interpreter and script", () => {
  const s = { args: ["--x"], path: ["/venv/bin/python", "-m", "pallas_lsp"], interpreter: ["/ignored"], importStrategy: "useBundled" };
  const cmd = serverCommand(s, undefined, "/ext", {});
  assert.deepEqual([cmd.command, ...cmd.args], ["/venv/bin/python", "-m", "pallas_lsp", "--x"]);
  assert.throws(() => serverCommand({ ...s, path: [] }, undefined, "/ext", {}), /no interpreter/);
});
