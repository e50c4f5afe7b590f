// A minimal MCP host on the official TypeScript SDK client (what IDE hosts embed): connect to
// papercode, list its tools, call every one, and check each answer against the tool's outputSchema.
//
//   node host.mjs stdio [--env KEY=VALUE ...] -- COMMAND [ARGS ...]
//   node host.mjs sse URL            (e.g. http://127.0.0.1:PORT/sse)
//   node host.mjs http URL           (streamable HTTP, e.g. http://127.0.0.1:PORT/mcp)
//
// Prints one JSON line (the summary tests/test_real_clients.py asserts on) and exits 0 only if
// every check passed. The SDK client itself rejects structuredContent that does not match the
// tool's outputSchema (draft-07 Ajv); each answer is also validated here with Ajv's JSON Schema
// 2020-12 dialect (the MCP default), after checking the schema itself against the meta-schema.

import { isDeepStrictEqual, parseArgs } from "node:util";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

// Sensible arguments for every papercode tool (the bundled records). A tool the server lists but
// this table lacks is a failure, so a new tool cannot go unchecked.
const CALLS = {
  get_harvested_code_for_paper: { arxiv_id: "1902.04094", limit: 3 },
  list_samples_by_status: { status: "ran_honours" },
  search_papers: { query: "bert generative" },
  get_paper: { paper: "2406.04823" },
  find_papers_for_repo: { repo: "https://github.com/nyu-dl/bert-gen" },
  get_code: { code_sha256: "2a890c3f8ff19f47" },
  corpus_stats: {},
  get_leaderboard: { task: "Language Modelling", dataset: "Penn Treebank" },
  describe: { kind: "dataset", name: "Penn Treebank" },
};
// The tools that also take a list, called with one too: their answers to a list are checked the same way, under
// "<tool>[]" in the summary.
const LIST_CALLS = {
  get_paper: { paper: ["1902.04094", "/paper/berts-are-generative-in-context-learners", "9999.99999"] },
  get_code: { code_sha256: ["2a890c3f8ff19f47", "013a68b0ac4716fe", "deadbeef"] },
};
const REQUEST_TIMEOUT_MS = 20_000;

function transportFor(kind, rest, env) {
  if (kind === "stdio") {
    const [command, ...args] = rest;
    if (!command) throw new Error("stdio needs a server command after --");
    return new StdioClientTransport({ command, args, env: { ...getDefaultEnvironment(), ...env }, stderr: "inherit" });
  }
  const [url] = rest;
  if (!url) throw new Error(`${kind} needs the server URL`);
  if (kind === "sse") return new SSEClientTransport(new URL(url));
  if (kind === "http") return new StreamableHTTPClientTransport(new URL(url));
  throw new Error(`unknown transport ${JSON.stringify(kind)}: use stdio, sse or http`);
}

function parseEnv(pairs) {
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf("=");
      if (at < 1) throw new Error(`--env wants KEY=VALUE, got ${JSON.stringify(pair)}`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

function isJsonOf(text, value) {
  try {
    return isDeepStrictEqual(JSON.parse(text), value);
  } catch {
    return false; // not JSON (an error message, say)
  }
}

async function check(client, summary) {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT_MS });
  summary.tools = tools.map((tool) => tool.name).sort();
  for (const name of Object.keys(CALLS)) {
    if (!summary.tools.includes(name)) summary.problems.push(`${name}: not listed by the server`);
  }
  for (const tool of tools) {
    const args = CALLS[tool.name];
    if (args === undefined) {
      summary.problems.push(`${tool.name}: no sample arguments; add it to CALLS in host.mjs`);
      continue;
    }
    const call = (summary.calls[tool.name] = { arguments: args });
    if (!tool.outputSchema) {
      summary.problems.push(`${tool.name}: no outputSchema`);
      continue;
    }
    if (!ajv.validateSchema(tool.outputSchema)) {
      summary.problems.push(`${tool.name}: outputSchema is not valid JSON Schema 2020-12: ${ajv.errorsText(ajv.errors)}`);
      continue;
    }
    const validate = ajv.compile(tool.outputSchema);
    call.rejectsEmptyObject = !validate({});
    await checkCall(client, summary, tool.name, tool.name, args, validate);
    if (LIST_CALLS[tool.name] !== undefined) {
      const listed = (summary.calls[`${tool.name}[]`] = { arguments: LIST_CALLS[tool.name], rejectsEmptyObject: call.rejectsEmptyObject });
      await checkCall(client, summary, tool.name, `${tool.name}[]`, listed.arguments, validate);
    }
  }
}

async function checkCall(client, summary, name, key, args, validate) {
  const call = summary.calls[key];
  const params = { name, arguments: args };
  // The raw answer, validated here; then the same call through callTool, which validates it too.
  const result = await client.request({ method: "tools/call", params }, CallToolResultSchema, { timeout: REQUEST_TIMEOUT_MS });
  call.isError = result.isError === true;
  call.structured = result.structuredContent;
  call.schemaValid = validate(result.structuredContent);
  if (!call.schemaValid) summary.problems.push(`${key}: structuredContent fails its outputSchema: ${validate.errors?.map((e) => `${e.instancePath} ${e.message}`).join("; ")}`);
  const text = result.content?.find((block) => block.type === "text")?.text;
  call.textMatchesStructured = text !== undefined && isJsonOf(text, result.structuredContent);
  try {
    await client.callTool(params, undefined, { timeout: REQUEST_TIMEOUT_MS });
    call.sdkAccepted = true;
  } catch (error) {
    call.sdkAccepted = false;
    call.clientError = String(error?.message ?? error);
    summary.problems.push(`${key}: the SDK client rejected the answer: ${call.clientError}`);
  }
  if (call.isError) summary.problems.push(`${key}: isError: ${text}`);
}

async function main() {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { env: { type: "string", multiple: true, default: [] } } });
  const [kind, ...rest] = positionals;
  const summary = { transport: kind, protocolVersion: null, server: null, tools: [], calls: {}, problems: [], ok: false };
  const transport = transportFor(kind, rest, parseEnv(values.env));
  // The SDK tells the transport the negotiated version (HTTP transports send it as a header); keep a copy.
  const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    summary.protocolVersion = version;
    setProtocolVersion?.(version);
  };
  const client = new Client({ name: "papercode-test-host", version: "1.0.0" });
  try {
    await client.connect(transport, { timeout: REQUEST_TIMEOUT_MS });
    summary.server = client.getServerVersion() ?? null;
    await check(client, summary);
  } catch (error) {
    summary.problems.push(`host: ${error?.stack ?? error}`);
  } finally {
    await client.close().catch((error) => summary.problems.push(`close: ${error}`));
  }
  summary.ok = summary.problems.length === 0;
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  process.exitCode = summary.ok ? 0 : 1;
}

await main();
