// record.mjs lists an MCP server's tools over stdio with the official
// TypeScript SDK client and writes them as a tools/list result.
//
//   SDK=/path/to/node_modules node record.mjs OUT.json COMMAND [ARGS...]
//
// The dummy credentials below only let servers that check for a key at
// start-up list their tools; nothing is called.
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const sdk = process.env.SDK || path.resolve("node_modules");
const load = (p) => import(pathToFileURL(path.join(sdk, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");

const [, , out, cmd, ...args] = process.argv;
const env = {
  ...process.env,
  BRAVE_API_KEY: "dummy", GOOGLE_MAPS_API_KEY: "dummy", FIRECRAWL_API_KEY: "fc-dummy",
  TAVILY_API_KEY: "tvly-dummy", EXA_API_KEY: "dummy", NOTION_TOKEN: "ntn_dummy",
};
const client = new Client({ name: "heldout-recorder", version: "1" });
await client.connect(new StdioClientTransport({ command: cmd, args, env, stderr: "ignore" }));
const tools = [];
let cursor;
do {
  const r = await client.listTools(cursor ? { cursor } : {});
  tools.push(...r.tools);
  cursor = r.nextCursor;
} while (cursor);
fs.writeFileSync(out, JSON.stringify({ tools }, null, 1) + "\n");
const v = client.getServerVersion();
console.log(out, tools.length, v?.name, v?.version);
await client.close();
process.exit(0);
