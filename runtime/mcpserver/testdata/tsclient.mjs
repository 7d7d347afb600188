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

// "approve": a client that answers elicitations. The held refund is asked
// for in-band; on the elicitation the requester tries to grant it itself
// (refused), the approver grants it with its own token, and the client
// accepts; the call then completes.
const newTransport = () =>
  new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: "Bearer " + process.env.TOKEN } },
  });
const text = (res) => res.content.map((c) => c.text).join("");

// report runs a scenario, prints what it observed and exits.
const report = async (scenarioFn) => {
  try {
    await scenarioFn();
    out.ok = true;
  } catch (e) {
    out.ok = false;
    out.error = String(e && e.stack ? e.stack : e);
  }
  console.log(JSON.stringify(out));
  process.exit(0);
};

if (scenario === "approve") {
  await report(async () => {
    const { ElicitRequestSchema } = await import(base + "/types.js");
    const client = new Client({ name: "toolgate-test-client", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    const grant = async (id, token) =>
      (await fetch(new URL("/v1/approvals/" + id, url), { method: "POST", headers: { Authorization: "Bearer " + token } })).status;
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      const id = (req.params.message.match(/apr_[A-Za-z0-9_-]+/) || [""])[0];
      out.asked = (out.asked || 0) + 1;
      out.selfGrant = await grant(id, process.env.TOKEN);
      out.approverGrant = await grant(id, process.env.APPROVER_TOKEN);
      return { action: "accept", content: {} };
    });
    await client.connect(newTransport());
    const res = await client.callTool({ name: "call_tool", arguments: { name: process.env.CALL, arguments: JSON.parse(process.env.ARGS) } });
    out.call = JSON.parse(text(res));
    await client.close();
  });
}

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
const withTimeout = (p, ms) => Promise.race([p, new Promise((_, rej) => setTimeout(() => rej(new Error("timeout")), ms))]);

await report(async () => {
  await client.connect(newTransport());
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
});
