// Generates testdata/numbers.txt: "<IEEE 754 bits as hex> <ECMAScript Number::toString>"
// for RFC 8785 Appendix B's samples plus pseudo-random doubles, using V8 (node) as the
// ECMAScript reference. Run: node testdata/gen_numbers.js > testdata/numbers.txt
const appendixB = [
  "0000000000000000", "8000000000000000", "0000000000000001", "8000000000000001",
  "7fefffffffffffff", "ffefffffffffffff", "4340000000000000", "c340000000000000",
  "4430000000000000", "44b52d02c7e14af5", "44b52d02c7e14af6", "44b52d02c7e14af7",
  "444b1ae4d6e2ef4e", "444b1ae4d6e2ef4f", "444b1ae4d6e2ef50", "3eb0c6f7a0b5ed8c",
  "3eb0c6f7a0b5ed8d", "41b3de4355555553", "41b3de4355555554", "41b3de4355555555",
  "41b3de4355555556", "41b3de4355555557", "becbf647612f3696", "43143ff3c1cb0959",
];
const buf = new DataView(new ArrayBuffer(8));
function fromHex(h) { buf.setBigUint64(0, BigInt("0x" + h)); return buf.getFloat64(0); }
function toHex(x) { buf.setFloat64(0, x); return buf.getBigUint64(0).toString(16).padStart(16, "0"); }
let seed = 0x2545F4914F6CDD1Dn;
function next() { // xorshift64
  seed ^= (seed << 13n) & 0xffffffffffffffffn; seed ^= seed >> 7n; seed ^= (seed << 17n) & 0xffffffffffffffffn;
  return seed;
}
const lines = appendixB.map(h => h + " " + String(fromHex(h)));
for (let i = 0; i < 3000; i++) {
  let h = next().toString(16).padStart(16, "0");
  const x = fromHex(h);
  if (!isFinite(x)) continue;
  lines.push(h + " " + String(x));
}
// Integers, decimals with few digits (money), and the plain/exponent borders.
for (const x of [1, -1, 0.1, 0.2, 0.3, 100.1, 1000.01, 999999.99, 1e20, 1e21, 1e-6, 1e-7, 123e-9, 1.5e300,
  2 ** 53, 2 ** 53 + 2, 0.000001234, 12345678901234567890, 4.5, 0.002, 1e30, 1e-27, 333333333.33333329]) {
  lines.push(toHex(x) + " " + String(x));
}
console.log(lines.join("\n"));
