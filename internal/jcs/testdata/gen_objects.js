// Generates testdata/output/*.json from testdata/input/*.json, and
// testdata/objects.txt (pairs of lines: a random JSON text, then its canonical
// form), with the reference algorithm RFC 8785 gives in ECMAScript: JSON.parse,
// Object.keys().sort() (UTF-16 code unit order) and JSON.stringify for leaves.
// Run from internal/jcs: node testdata/gen_objects.js
const fs = require("fs");
function canonicalize(o) {
  if (o === null || typeof o !== "object") return JSON.stringify(o);
  if (Array.isArray(o)) return "[" + o.map(canonicalize).join(",") + "]";
  return "{" + Object.keys(o).sort().map(k => JSON.stringify(k) + ":" + canonicalize(o[k])).join(",") + "}";
}
fs.mkdirSync("testdata/output", { recursive: true });
for (const f of fs.readdirSync("testdata/input")) {
  const v = JSON.parse(fs.readFileSync("testdata/input/" + f, "utf8"));
  fs.writeFileSync("testdata/output/" + f, canonicalize(v));
}
let seed = 12345;
function rnd(n) { seed = (seed * 1103515245 + 12345) % 2147483648; return Math.floor(seed / 65536) % n; }
const alphabet = ["a", "b", "Z", "1", "_", " ", "é", "ö", "€", "\u0000", "\u001f", "\n", "\"", "\\", "/", "\u007f",
  "\u2028", "\ufb33", "\uffff", "\ud83d\ude00", "\ud800\udc00", "\udbff\udfff", "\ue000", "日本"];
function str() { let s = ""; for (let i = rnd(6); i > 0; i--) s += alphabet[rnd(alphabet.length)]; return s; }
function num() {
  switch (rnd(5)) {
    case 0: return rnd(1000000) - 500000;
    case 1: return (rnd(1000000) - 500000) / 100;
    case 2: return Math.pow(10, rnd(60) - 30) * (rnd(1000) + 1) / 7;
    case 3: return rnd(2) ? 1e21 : 1e-7;
    default: return (rnd(2000000000) / 3) * Math.pow(2, rnd(100) - 50);
  }
}
function value(d) {
  switch (d > 3 ? rnd(4) : rnd(6)) {
    case 0: return str();
    case 1: return num();
    case 2: return [null, true, false][rnd(3)];
    case 3: return rnd(2) ? num() : str();
    case 4: { const a = []; for (let i = rnd(4); i > 0; i--) a.push(value(d + 1)); return a; }
    default: { const o = {}; for (let i = rnd(5); i > 0; i--) o[str()] = value(d + 1); return o; }
  }
}
const lines = [];
for (let i = 0; i < 300; i++) {
  const v = {}; for (let j = rnd(6) + 1; j > 0; j--) v[str()] = value(0);
  lines.push(JSON.stringify(v, null, rnd(2) ? 1 : 0).replace(/\n/g, " "), canonicalize(v));
}
fs.writeFileSync("testdata/objects.txt", lines.join("\n") + "\n");
