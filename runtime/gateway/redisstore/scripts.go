package redisstore

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/toolgate/toolgate/runtime/gateway/auditchain"
)

// Times reach the scripts as 20-digit, zero-padded Unix nanoseconds, so
// that Lua (whose numbers are doubles) compares them exactly as strings.
// Every script reads and writes only what its arguments name, and runs
// atomically: Redis executes one script at a time.

// claimScript: KEYS record, fencing counter, record expiry index, key index
// of the request's key, the slot's record under the layout before the slot
// held its principal (see legacyRecKey). ARGV now, lease, expires, principal, key,
// fingerprint, takeover (1/0), tenant, session, step, tool, ttl ms, expiry
// score (ms), key-index prefix, now in microseconds, owner. Returns {status,
// previous state, record}, where a fresh record is only its token: the
// caller knows the rest, and the reply stays small.
//
// A missing fencing counter (a new store, or a Redis that lost its data) is
// seeded with the caller's time in microseconds, so tokens handed out after
// a data loss still exceed every token handed out before it (unless claims
// ran faster than one per microsecond), and a late owner from before the
// loss stays fenced. Tokens are formatted with %d: Lua's default number
// formatting switches to exponents above 1e14.
var claimScript = redis.NewScript(`
local function next_token()
  -- INCR creates a missing counter at 1; seeding it then gives seed + 1,
  -- what SET seed and INCR gave, one command fewer when it exists.
  local t = redis.call('INCR', KEYS[2])
  if t == 1 then t = redis.call('INCRBY', KEYS[2], ARGV[15]) end
  return string.format('%d', t)
end
local rec = KEYS[1]
-- Every record has its key field (the HSETs below write it), so a missing
-- key is a missing record.
local cur = redis.call('HMGET', rec, 'key', 'state', 'lease', 'expires')
-- A record written before the slot held its principal moves to its
-- principal's slot the first time that principal claims the slot again.
if not cur[1] and redis.call('HGET', KEYS[5], 'principal') == ARGV[4] then
  local k = redis.call('HGET', KEYS[5], 'key')
  local sc = redis.call('ZSCORE', KEYS[3], KEYS[5])
  redis.call('RENAME', KEYS[5], rec)
  redis.call('ZREM', KEYS[3], KEYS[5])
  if sc then redis.call('ZADD', KEYS[3], sc, rec) end
  if k and redis.call('GET', ARGV[14] .. k) == KEYS[5] then redis.call('SET', ARGV[14] .. k, rec, 'KEEPTTL') end
  cur = redis.call('HMGET', rec, 'key', 'state', 'lease', 'expires')
end
if cur[1] and cur[4] <= ARGV[1] then
  redis.call('DEL', rec, ARGV[14] .. cur[1])
  redis.call('ZREM', KEYS[3], rec)
  cur[1] = false
end
if not cur[1] then
  local tok = next_token()
  redis.call('HSET', rec, 'tenant', ARGV[8], 'session', ARGV[9], 'step', ARGV[10], 'tool', ARGV[11],
    'principal', ARGV[4], 'key', ARGV[5], 'fp', ARGV[6], 'state', 'in_progress', 'token', tok,
    'lease', ARGV[2], 'reason', '', 'attempts', 1, 'created', ARGV[1], 'updated', ARGV[1], 'expires', ARGV[3],
    'owner', ARGV[16])
  redis.call('PEXPIRE', rec, ARGV[12])
  redis.call('SET', KEYS[4], rec, 'PX', ARGV[12])
  redis.call('ZADD', KEYS[3], ARGV[13], rec)
  return {1, '', tok}
end
if cur[1] ~= ARGV[5] then return {5, '', redis.call('HGETALL', rec)} end
if cur[2] == 'done' then return {3, '', redis.call('HGETALL', rec)} end
if cur[2] == 'in_progress' and cur[3] > ARGV[1] then return {2, '', redis.call('HGETALL', rec)} end
if ARGV[7] ~= '1' then return {4, '', redis.call('HGETALL', rec)} end
local tok = next_token()
redis.call('HDEL', rec, 'value', 'derr')
redis.call('HSET', rec, 'state', 'in_progress', 'token', tok, 'lease', ARGV[2], 'expires', ARGV[3],
  'updated', ARGV[1], 'reason', '', 'owner', ARGV[16])
redis.call('HINCRBY', rec, 'attempts', 1)
redis.call('PEXPIRE', rec, ARGV[12])
redis.call('SET', KEYS[4], rec, 'PX', ARGV[12])
redis.call('ZADD', KEYS[3], ARGV[13], rec)
return {1, cur[2], redis.call('HGETALL', rec)}
`)

// fence is the check shared by Complete, MarkUncertain and Release: the
// record is in progress, held by ARGV[1]'s token, with a lease past ARGV[2].
const fence = `
local cur = redis.call('HMGET', KEYS[1], 'state', 'token', 'lease', 'key')
if cur[1] ~= 'in_progress' or cur[2] ~= ARGV[1] or cur[3] <= ARGV[2] then return 0 end
`

// completeScript: KEYS record, record expiry index, key index prefix (as
// ARGV). ARGV token, now, expires, ttl ms, expiry score, kind (value,
// derr or none), payload, key-index prefix.
var completeScript = redis.NewScript(fence + complete + "return 1\n")

// complete writes the outcome of a record the fence found in progress. An
// in-progress record holds no value or derr field: a fresh claim writes a
// new hash, and a takeover deletes both (every version of claimScript
// has), so nothing of an earlier outcome needs deleting here.
const complete = `
if ARGV[6] == 'none' then
  redis.call('HSET', KEYS[1], 'state', 'done', 'reason', '', 'updated', ARGV[2], 'expires', ARGV[3])
else
  redis.call('HSET', KEYS[1], 'state', 'done', 'reason', '', 'updated', ARGV[2], 'expires', ARGV[3], ARGV[6], ARGV[7])
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', ARGV[8] .. cur[4], ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[5], KEYS[1])
`

// completeAuditScript is completeScript and, when the completion is not
// fenced, auditScript, in one script (CompleteAudited): KEYS and ARGV as
// completeScript's, then auditScript's KEYS and ARGV.
var completeAuditScript = redis.NewScript(sha256Lua + fence + complete + appendAudit(3, 9) + "return 1\n")

// uncertainScript: KEYS record, record expiry index. ARGV token, now,
// expires, ttl ms, expiry score, reason, key-index prefix.
var uncertainScript = redis.NewScript(fence + `
redis.call('HSET', KEYS[1], 'state', 'uncertain', 'reason', ARGV[6], 'updated', ARGV[2], 'expires', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', ARGV[7] .. cur[4], ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[5], KEYS[1])
return 1
`)

// releaseScript: KEYS record, record expiry index. ARGV token, now,
// key-index prefix.
var releaseScript = redis.NewScript(fence + `
redis.call('DEL', KEYS[1], ARGV[3] .. cur[4])
redis.call('ZREM', KEYS[2], KEYS[1])
return 1
`)

// createApprovalScript: KEYS approval, approval expiry index. ARGV created,
// expires, body (JSON of the immutable fields), granted (1/0), approver,
// granted_at, ttl ms, expiry score. Returns {created (1/0), hash}.
var createApprovalScript = redis.NewScript(`
local exp = redis.call('HGET', KEYS[1], 'expires')
if exp and exp > ARGV[1] then return {0, redis.call('HGETALL', KEYS[1])} end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'body', ARGV[3], 'created', ARGV[1], 'expires', ARGV[2], 'granted', ARGV[4],
  'approver', ARGV[5], 'granted_at', ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[7])
redis.call('ZADD', KEYS[2], ARGV[8], KEYS[1])
return {1, redis.call('HGETALL', KEYS[1])}
`)

// decideScript: KEYS approval. ARGV approver, now, granted ("1" a grant,
// "0" a denial: the approver set without a grant). Returns {code, hash}:
// code 0 not found, 1 decided, 2 wrong state (decided already, or
// expired).
var decideScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'granted', 'expires', 'approver')
if not cur[2] then return {0, {}} end
if cur[1] == '1' or (cur[3] and cur[3] ~= '') or cur[2] <= ARGV[2] then return {2, {}} end
redis.call('HSET', KEYS[1], 'granted', ARGV[3], 'approver', ARGV[1], 'granted_at', ARGV[2])
return {1, redis.call('HGETALL', KEYS[1])}
`)

// auditScript: KEYS audit sorted set, sequence counter, chain sorted set,
// chain head, chain anchor. ARGV time, JSON (without the chain fields),
// the entry's [auditchain.Digest]. Members are "time:seq:json" in the audit
// set at score 0, so the set's lexical order is the log's order by time,
// then by insertion, and the same in the chain set at score seq, the
// chain's order. The script chains the entry after the head (the head,
// missing, starts at the sequence counter's value: entries from before the
// chain are behind the anchor), computing [auditchain.Hash] in Lua: Redis
// runs one script at a time, so the appends of every client are chained
// one after another.
var auditScript = redis.NewScript(sha256Lua + appendAudit(1, 1) + "return 1\n")

// appendAudit is the Lua that appends an audit entry with the KEYS of
// auditScript from KEYS[k] and its ARGV from ARGV[a].
func appendAudit(k, a int) string {
	return fmt.Sprintf(`
local audit, seqkey, chain, head, anchor = KEYS[%d], KEYS[%d], KEYS[%d], KEYS[%d], KEYS[%d]
local h = redis.call('HMGET', head, 'seq', 'hash')
local seq, prev
if h[1] then
  seq, prev = tonumber(h[1]), h[2]
else
  seq, prev = tonumber(redis.call('GET', seqkey) or '0'), '%s'
  redis.call('HSET', anchor, 'seq', string.format('%%d', seq), 'hash', prev, 'legacy', string.format('%%d', seq))
end
seq = seq + 1
local s = string.format('%%d', seq)
local hash = sha256hex('toolgate-audit/%d\n' .. s .. '\n' .. prev .. '\n' .. ARGV[%d])
redis.call('HSET', head, 'seq', s, 'hash', hash)
redis.call('SET', seqkey, s)
local js = string.sub(ARGV[%d], 1, -2) .. ',"seq":' .. s .. ',"prev":"' .. prev .. '","hash":"' .. hash .. '","v":%d}'
local m = ARGV[%d] .. ':' .. string.format('%%020d', seq) .. ':' .. js
redis.call('ZADD', audit, 0, m)
redis.call('ZADD', chain, seq, m)
`, k, k+1, k+2, k+3, k+4, auditchain.Genesis, auditchain.Version, a+2, a+1, auditchain.Version, a)
}

// sha256Lua defines sha256hex(msg), SHA-256 as lowercase hex, with the
// bit library every Redis has (LuaBitOp: 32-bit operations on numbers).
// Sums of a few 32-bit words are exact in Lua's doubles; bit.tobit wraps
// them.
const sha256Lua = `
local function sha256hex(msg)
  local K = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2}
  local H = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}
  local band, bor, bxor, ror, rshift, lshift, tobit = bit.band, bit.bor, bit.bxor, bit.ror, bit.rshift, bit.lshift, bit.tobit
  local ml = #msg
  local bits = ml * 8
  msg = msg .. '\128' .. string.rep('\0', (55 - ml) % 64) ..
    string.char(0, 0, 0, math.floor(bits / 4294967296) % 256,
      math.floor(bits / 16777216) % 256, math.floor(bits / 65536) % 256, math.floor(bits / 256) % 256, bits % 256)
  local w = {}
  for p = 1, #msg, 64 do
    for i = 0, 15 do
      local b1, b2, b3, b4 = string.byte(msg, p + 4 * i, p + 4 * i + 3)
      w[i] = bor(lshift(b1, 24), lshift(b2, 16), lshift(b3, 8), b4)
    end
    for i = 16, 63 do
      local x, y = w[i - 15], w[i - 2]
      w[i] = tobit(w[i - 16] + bxor(ror(x, 7), ror(x, 18), rshift(x, 3)) + w[i - 7] + bxor(ror(y, 17), ror(y, 19), rshift(y, 10)))
    end
    local a, b, c, d, e, f, g, h = H[1], H[2], H[3], H[4], H[5], H[6], H[7], H[8]
    for i = 0, 63 do
      -- ch(e,f,g) = g ^ (e & (f ^ g)); maj(a,b,c) = (a & b) | (c & (a | b)): fewer calls.
      local t1 = h + bxor(ror(e, 6), ror(e, 11), ror(e, 25)) + bxor(g, band(e, bxor(f, g))) + K[i + 1] + w[i]
      local t2 = bxor(ror(a, 2), ror(a, 13), ror(a, 22)) + bor(band(a, b), band(c, bor(a, b)))
      h, g, f, e, d, c, b, a = g, f, e, tobit(d + t1), c, b, a, tobit(t1 + t2)
    end
    H[1], H[2], H[3], H[4] = tobit(H[1] + a), tobit(H[2] + b), tobit(H[3] + c), tobit(H[4] + d)
    H[5], H[6], H[7], H[8] = tobit(H[5] + e), tobit(H[6] + f), tobit(H[7] + g), tobit(H[8] + h)
  end
  local out = {}
  for i = 1, 8 do out[i] = bit.tohex(H[i], 8) end
  return table.concat(out)
end
`

// takeScript: KEYS bucket. ARGV rate, burst, now seconds, now nanoseconds.
// Times are split in seconds and nanoseconds so the elapsed time is exact
// in doubles. Returns {ok (1/0), tokens after, as a string}.
var takeScript = redis.NewScript(`
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local sec, nsec = tonumber(ARGV[3]), tonumber(ARGV[4])
local cur = redis.call('HMGET', KEYS[1], 'tokens', 'sec', 'nsec')
local tokens, lsec, lnsec = burst, sec, nsec
if cur[1] then tokens, lsec, lnsec = tonumber(cur[1]), tonumber(cur[2]), tonumber(cur[3]) end
if sec > lsec or (sec == lsec and nsec > lnsec) then
  tokens = math.min(burst, tokens + ((sec - lsec) + (nsec - lnsec) / 1e9) * rate)
  lsec, lnsec = sec, nsec
end
local ok = 0
if tokens >= 1 then tokens = tokens - 1; ok = 1 end
local t = string.format('%.17g', tokens)
redis.call('HSET', KEYS[1], 'tokens', t, 'sec', string.format('%d', lsec), 'nsec', string.format('%d', lnsec))
-- A bucket that would be full again is equivalent to no bucket: let Redis
-- drop it a minute after that (the slack absorbs clock drift).
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 60000)
return {ok, t}
`)

// purgeScript: KEYS record expiry index, approval expiry index, audit set,
// chain set, chain anchor, checkpoints. ARGV now, now score (ms), audit
// bound (empty keeps all), key-index prefix, purge records (1/0), purge
// approvals (1/0). Returns {records, approvals, audit}. The audit entries
// go in the chain's order while older than the bound; the last one becomes
// the anchor, and the checkpoints at or before it go too. Entries from
// before the chain (at or below the anchor's "legacy" number) go by time.
var purgeScript = redis.NewScript(`
local n = {0, 0, 0}
for _, rec in ipairs(ARGV[5] == '1' and redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2]) or {}) do
  local cur = redis.call('HMGET', rec, 'expires', 'key')
  if not cur[1] then
    redis.call('ZREM', KEYS[1], rec)
  elseif cur[1] <= ARGV[1] then
    redis.call('DEL', rec, ARGV[4] .. cur[2])
    redis.call('ZREM', KEYS[1], rec)
    n[1] = n[1] + 1
  end
end
for _, apr in ipairs(ARGV[6] == '1' and redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[2]) or {}) do
  local exp = redis.call('HGET', apr, 'expires')
  if not exp then
    redis.call('ZREM', KEYS[2], apr)
  elseif exp <= ARGV[1] then
    redis.call('DEL', apr)
    redis.call('ZREM', KEYS[2], apr)
    n[2] = n[2] + 1
  end
end
if ARGV[3] ~= '' then
  local last
  local stop = false
  while not stop do
    local page = redis.call('ZRANGE', KEYS[4], 0, 99)
    if #page == 0 then break end
    for _, m in ipairs(page) do
      if string.sub(m, 1, 20) >= ARGV[3] then stop = true; break end
      redis.call('ZREM', KEYS[4], m)
      redis.call('ZREM', KEYS[3], m)
      n[3] = n[3] + 1
      last = m
    end
  end
  if last then
    local e = cjson.decode(string.sub(last, 43))
    redis.call('HSET', KEYS[5], 'seq', string.format('%d', e.seq), 'hash', e.hash)
    for _, f in ipairs(redis.call('HKEYS', KEYS[6])) do
      if tonumber(f) <= e.seq then redis.call('HDEL', KEYS[6], f) end
    end
  end
  local legacy = tonumber(redis.call('HGET', KEYS[5], 'legacy') or '0')
  if legacy > 0 then
    for _, m in ipairs(redis.call('ZRANGEBYLEX', KEYS[3], '-', '(' .. ARGV[3])) do
      if tonumber(string.sub(m, 22, 41)) <= legacy then
        redis.call('ZREM', KEYS[3], m)
        n[3] = n[3] + 1
      end
    end
  end
end
return n
`)
