// Waits for the driver's "menu-open" file, then screenshots the chromium page over the DevTools
// protocol (node >= 22 has WebSocket built in) and writes "shot-done".
//   node screenshot.js <devtools port> <out dir> <png path>
const fs = require("fs");
const path = require("path");
const [port, outDir, png] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const deadline = Date.now() + 150000;
  while (!fs.existsSync(path.join(outDir, "menu-open"))) {
    if (Date.now() > deadline || fs.existsSync(path.join(outDir, "result.json"))) throw new Error("the driver never opened the menu");
    await sleep(100);
  }
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const page = targets.find((t) => t.type === "page" && /127\.0\.0\.1/.test(t.url));
  if (!page) throw new Error(`no workbench page among ${JSON.stringify(targets.map((t) => t.url))}`);
  const ws = new WebSocket(page.webSocketDebuggerUrl);
  await new Promise((res, rej) => { ws.onopen = res; ws.onerror = () => rej(new Error("devtools websocket failed")); });
  const data = await new Promise((res, rej) => {
    ws.onmessage = (ev) => {
      const msg = JSON.parse(ev.data);
      if (msg.id !== 1) return;
      msg.error ? rej(new Error(JSON.stringify(msg.error))) : res(msg.result.data);
    };
    ws.send(JSON.stringify({ id: 1, method: "Page.captureScreenshot", params: { format: "png" } }));
  });
  ws.close();
  fs.mkdirSync(path.dirname(png), { recursive: true });
  fs.writeFileSync(png, Buffer.from(data, "base64"));
  console.log(`screenshot: ${png} (${Buffer.from(data, "base64").length} bytes)`);
}

main()
  .catch((e) => { console.error(`screenshot: ${e.message}`); process.exitCode = 1; })
  .finally(() => fs.writeFileSync(path.join(outDir, "shot-done"), ""));
