// An independent MCP client for toolgate's MCP server tests: the official
// TypeScript SDK. It connects over Streamable HTTP with a bearer token,
// runs the scenario named in argv[3], and prints one JSON object of what it
// observed on stdout. The Go test asserts on that object.
//
// usage: node tsclient.mjs URL SCENARIO   (TOKEN and NODE_MODULES in env)
const [url, scenario] = process.argv.slice(2);
const base = process.env.NODE_MODULES + "/@modelcontextprotocol/sdk/dist/esm";
const { Client } = await import(base + "/client/index.js");
const { StreamableHTTPClientTransport } = await import(base + "/client/streamableHttp.js");

const out = { scenario };
let changed = 0;
let resolveChanged;
let changedPromise = new Promise((r) => (resolveChanged = r));
const client = new Client(
  { name: "toolgate-test-client", version: "1.0.0" },
  {
    listChanged: {
      tools: {
        debounceMs: 0,
        onChanged: (err, tools) => {
          if (err) return;
          changed++;
          out.changedTools = tools.map((t) => t.name).sort();
          resolveChanged();
        },
      },
    },
  },
);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: "Bearer " + process.env.TOKEN } },
});
const text = (res) => res.content.map((c) => c.text).join("");
const withTimeout = (p, ms) => Promise.race([p, new Promise((_, rej) => setTimeout(() => rej(new Error("timeout")), ms))]);

try {
  await client.connect(transport);
  out.initialTools = (await client.listTools()).tools.map((t) => t.name).sort();
  const found = await client.callTool({ name: "find_tools", arguments: { query: process.env.QUERY } });
  out.found = JSON.parse(text(found)).tools.map((t) => t.name);
  if (scenario === "full") {
    await withTimeout(changedPromise, 10000);
    out.listChangedSeen = changed > 0;
    const res = await client.callTool({ name: "call_tool", arguments: { name: process.env.CALL, arguments: JSON.parse(process.env.ARGS), step: 1 } });
    out.call = JSON.parse(text(res));
    const again = await client.callTool({ name: "call_tool", arguments: { name: process.env.CALL, arguments: JSON.parse(process.env.ARGS), step: 1 } });
    out.retry = JSON.parse(text(again));
    const direct = await client.callTool({ name: process.env.FIRSTCLASS, arguments: JSON.parse(process.env.ARGS) });
    out.direct = JSON.parse(text(direct));
  }
  const denied = await client.callTool({ name: "call_tool", arguments: { name: process.env.FORBIDDEN, arguments: JSON.parse(process.env.FORBIDDEN_ARGS) } });
  out.forbiddenIsError = denied.isError === true;
  out.forbidden = JSON.parse(text(denied));
  const sel = await client.callTool({ name: "find_tools", arguments: { query: "select:" + process.env.FORBIDDEN } });
  out.forbiddenSelect = JSON.parse(text(sel)).tools.map((t) => t.name);
  out.finalTools = (await client.listTools()).tools.map((t) => t.name).sort();
  await client.close();
  out.ok = true;
} catch (e) {
  out.ok = false;
  out.error = String(e && e.stack ? e.stack : e);
}
console.log(JSON.stringify(out));
process.exit(0);
