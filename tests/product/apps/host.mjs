// A test host for papercode's MCP Apps views: the official TypeScript SDK client over stdio to `papercode serve`, the
// view read from its ui:// resource, rendered in a sandboxed iframe in headless Chromium under the restrictive
// Content-Security-Policy a host gives a view that declares no origin, with ext-apps' AppBridge forwarding the view's
// tools/call to the real server. tests/product/test_app_views.py runs it and asserts on what it reports.
//
//   node host.mjs SPEC.json
//
// SPEC: {"server": {"command", "args", "env"}, "chromium": PATH, "out": DIR, "views": [{"name", "tool", "arguments",
// "steps": [...]}]}. A step is one of {"facts": LABEL} (what the view's DOM shows, under LABEL), {"screenshot": FILE}
// (of the view, into DIR), {"context": {...}} (a host context change: theme, containerDimensions), {"select":
// [SELECTOR, VALUE]} or {"click": SELECTOR} (in the view); after each, the host waits until the view is idle: no
// tools/call in flight and nothing marked loading. Prints one JSON line: per view, the resource, the tools/call the
// view made (arguments and answers), the links it asked to open, the facts, and any request, console error or page
// error; exits 1 when something failed outright.

import { readFileSync } from "node:fs";
import { join } from "node:path";

import { Client } from "@modelcontextprotocol/client";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import * as esbuild from "esbuild";
import puppeteer from "puppeteer-core";

const HERE = import.meta.dirname;
const HOST_URL = "http://host.test/";
const VIEW_URL = "http://view.test/";
const APPS_EXTENSION = "io.modelcontextprotocol/ui";
const APP_MIME_TYPE = "text/html;profile=mcp-app";
// The policy of MCP Apps (specification 2026-01-26) for a view whose resource declares no CSP.
const RESTRICTIVE_CSP =
  "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'self'";
const IDLE_TIMEOUT_MS = 30_000;
const IDLE_POLL_MS = 50;

async function hostPage() {
  const built = await esbuild.build({ entryPoints: [join(HERE, "page.js")], bundle: true, format: "iife", platform: "browser", write: false, logLevel: "error" });
  const script = built.outputFiles[0].text.replaceAll("</script", "<\\/script");
  return `<!doctype html><html><head><meta charset="utf-8"><style>
body { margin: 0; padding: 16px; background: #ececec; } body.dark { background: #0b0c0e; }
iframe { display: block; border: 0; background: transparent; }
</style></head><body><div id="frame"></div><script>${script}</script></body></html>`;
}

// What the view shows, read from its DOM (run inside the view's frame).
function readFacts() {
  const doc = document;
  const text = (node) => (node ? node.textContent.replace(/\s+/g, " ").trim() : null);
  return {
    theme: doc.documentElement.dataset.theme ?? null,
    colorScheme: getComputedStyle(doc.documentElement).colorScheme,
    background: getComputedStyle(doc.body).backgroundColor,
    color: getComputedStyle(doc.body).color,
    width: doc.documentElement.clientWidth,
    scrollWidth: doc.documentElement.scrollWidth,
    heading: text(doc.querySelector("h1")),
    text: text(doc.getElementById("view")), // what the view shows: the body's text would hold its script's too
    loading: doc.querySelectorAll(".loading").length,
    errors: [...doc.querySelectorAll(".error")].map(text),
    elements: Object.fromEntries(["img", "b", "iframe", "object", "embed", "link", "script"].map((tag) => [tag, doc.getElementsByTagName(tag).length])),
    pwned: doc.documentElement.dataset.pwned ?? null,
    points: [...doc.querySelectorAll("svg.chart circle.pt")].map((c) => ({
      row: Number(c.dataset.row),
      kind: c.dataset.kind,
      cx: Number(c.getAttribute("cx")),
      cy: Number(c.getAttribute("cy")),
      sota: c.classList.contains("sota"),
      title: text(c.querySelector("title")),
    })),
    sotaPath: doc.querySelector("svg.chart path.sota-line")?.getAttribute("d") ?? null,
    metric: doc.querySelector("#metric")?.value ?? null,
    hasCode: doc.querySelector('.segmented button[aria-pressed="true"]')?.dataset.hasCode ?? null,
    statusLine: text(doc.querySelector(".status-line")),
    rows: [...doc.querySelectorAll("tr[data-row]")].map((tr) => ({
      row: Number(tr.dataset.row),
      cells: [...tr.cells].map(text),
      kind: tr.querySelector(".mark")?.classList[1] ?? null,
    })),
    benchmarks: [...doc.querySelectorAll("tr[data-dataset]")].map((tr) => tr.dataset.dataset),
    samples: [...doc.querySelectorAll("li.sample")].map((li) => ({
      sha: li.dataset.sha,
      status: li.dataset.status,
      badge: text(li.querySelector(".badge")),
      badgeClass: li.querySelector(".badge")?.className ?? null,
      badgeTitle: li.querySelector(".badge")?.getAttribute("title") ?? null,
      pointerOnly: li.dataset.pointerOnly === "true",
      codeButton: Boolean(li.querySelector("button[data-sha]")),
      panel: text(li.querySelector(".code-panel")),
      code: li.querySelector(".code-panel pre code")?.textContent ?? null,
    })),
    groups: [...doc.querySelectorAll(".group")].map((group) => ({ repo: group.dataset.repo, files: [...group.querySelectorAll(".file-path")].map(text) })),
    legend: [...doc.querySelectorAll(".legend-list dt")].map((dt) => [text(dt), text(dt.nextElementSibling)]),
    repositories: [...doc.querySelectorAll("li.repo")].map((li) => ({ name: text(li.querySelector(".repo-name")), tags: [...li.querySelectorAll(".badge")].map(text) })),
  };
}

function idleCheck() {
  return document.querySelectorAll(".loading").length === 0;
}

async function runView(browser, client, tools, html, spec, out) {
  const report = { calls: [], links: [], logs: [], requests: [], console: [], pageErrors: [], facts: {}, screenshots: [] };
  const tool = tools.find((t) => t.name === spec.tool);
  const resourceUri = tool?._meta?.ui?.resourceUri;
  if (!resourceUri) throw new Error(`${spec.tool} names no view in _meta.ui.resourceUri`);
  const { contents } = await client.readResource({ uri: resourceUri });
  const [content] = contents;
  Object.assign(report, { resourceUri, mimeType: content.mimeType, resourceMeta: content._meta ?? null, resourceBytes: Buffer.byteLength(content.text) });
  const result = await client.callTool({ name: spec.tool, arguments: spec.arguments });

  const page = await browser.newPage();
  let inFlight = 0;
  await page.exposeFunction("hostCallTool", async (params) => {
    inFlight++;
    try {
      const answer = await client.callTool({ name: params.name, arguments: params.arguments });
      report.calls.push({ name: params.name, arguments: params.arguments, result: answer });
      return answer;
    } finally {
      inFlight--;
    }
  });
  await page.exposeFunction("hostOpenLink", async (url) => report.links.push(url));
  await page.exposeFunction("hostLog", async (line) => report.logs.push(line));
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warn") report.console.push(`${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => report.pageErrors.push(String(error)));
  await page.setRequestInterception(true);
  page.on("request", (request) => {
    const url = request.url();
    if (url === HOST_URL) return request.respond({ status: 200, contentType: "text/html; charset=utf-8", body: html });
    if (url === `${HOST_URL}favicon.ico`) return request.respond({ status: 204, body: "" }); // the host page's, not the view's
    if (url === VIEW_URL) return request.respond({ status: 200, contentType: "text/html; charset=utf-8", headers: { "Content-Security-Policy": RESTRICTIVE_CSP }, body: content.text });
    report.requests.push(url); // nothing else may be asked for: the views load nothing
    return request.abort();
  });
  const width = spec.width ?? 1000;
  await page.setViewport({ width: width + 32, height: 900, deviceScaleFactor: 1 });
  await page.goto(HOST_URL);
  const hostContext = { theme: spec.theme ?? "light", locale: "en-US", displayMode: "inline", platform: "desktop", containerDimensions: { width, maxHeight: 6000 } };
  await page.evaluate((args) => window.showView(args), { viewUrl: VIEW_URL, args: spec.arguments, result, hostContext });
  const frame = await (await page.$("iframe")).contentFrame();

  const idle = async () => {
    const deadline = Date.now() + IDLE_TIMEOUT_MS;
    let quiet = 0;
    while (Date.now() < deadline) {
      quiet = inFlight === 0 && (await frame.evaluate(idleCheck)) ? quiet + 1 : 0;
      if (quiet >= 3) return; // three polls in a row with nothing in flight and nothing loading
      await new Promise((resolve) => setTimeout(resolve, IDLE_POLL_MS));
    }
    throw new Error(`${spec.name}: the view was still busy after ${IDLE_TIMEOUT_MS} ms`);
  };
  await idle();
  for (const step of spec.steps) {
    if (step.facts) report.facts[step.facts] = await frame.evaluate(readFacts);
    if (step.screenshot) {
      // The whole view in the viewport: Chromium paints an out-of-process frame only where the viewport reaches.
      const iframe = await page.$("iframe");
      const box = await iframe.boundingBox();
      await page.setViewport({ width: Math.ceil(box.x + box.width + 16), height: Math.ceil(box.y + box.height + 16), deviceScaleFactor: 1 });
      const path = join(out, step.screenshot);
      await iframe.screenshot({ path });
      report.screenshots.push(path);
    }
    if (step.context) await page.evaluate((changes) => window.changeContext(changes), step.context);
    if (step.select) await frame.select(step.select[0], step.select[1]);
    if (step.click) await frame.click(step.click);
    if (step.context || step.select || step.click) await idle();
    if (step.mark) report[step.mark] = report.calls.length; // where the calls after an action begin
  }
  await page.close();
  return report;
}

async function main() {
  const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
  const client = new Client({ name: "papercode-apps-test-host", version: "1.0.0" }, { capabilities: { extensions: { [APPS_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } } } });
  const transport = new StdioClientTransport({ command: spec.server.command, args: spec.server.args, env: { ...getDefaultEnvironment(), ...spec.server.env }, stderr: "inherit" });
  await client.connect(transport);
  const summary = { serverExtensions: client.getServerCapabilities()?.extensions ?? null, views: {} };
  const browser = await puppeteer.launch({ executablePath: spec.chromium, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars"] });
  let failed = false;
  try {
    const { tools } = await client.listTools();
    summary.tools = tools.map((t) => ({ name: t.name, meta: t._meta ?? null }));
    const html = await hostPage();
    for (const view of spec.views) {
      try {
        summary.views[view.name] = await runView(browser, client, tools, html, view, spec.out);
      } catch (error) {
        failed = true;
        summary.views[view.name] = { failure: String(error?.stack || error) };
      }
    }
  } finally {
    await browser.close();
    await client.close();
  }
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  process.exitCode = failed ? 1 : 0;
}

await main();
