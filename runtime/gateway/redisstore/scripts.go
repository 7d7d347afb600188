package redisstore

import (
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Times reach the scripts as 20-digit, zero-padded Unix nanoseconds, so
// that Lua (whose numbers are doubles) compares them exactly as strings.
// Every script reads and writes only what its arguments name, and runs
// atomically: Redis executes one script at a time.

// claimScript: KEYS record, fencing counter, record expiry index, key index
// of the request's key, the slot's record under the layout before the slot
// held its principal (see legacyRecKey). ARGV now, lease, expires, principal, key,
// fingerprint, takeover (1/0), tenant, session, step, tool, ttl ms, expiry
// score (ms), key-index prefix, now in microseconds. Returns {status,
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
    'lease', ARGV[2], 'reason', '', 'attempts', 1, 'created', ARGV[1], 'updated', ARGV[1], 'expires', ARGV[3])
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
  'updated', ARGV[1], 'reason', '')
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
// completeScript's, then KEYS audit sorted set, sequence counter and ARGV
// time, JSON.
var completeAuditScript = redis.NewScript(fence + complete + appendAudit(3, 9) + "return 1\n")

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

// grantScript: KEYS approval. ARGV approver, now. Returns {code, hash}:
// code 0 not found, 1 granted, 2 wrong state.
var grantScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'granted', 'expires')
if not cur[2] then return {0, {}} end
if cur[1] == '1' or cur[2] <= ARGV[2] then return {2, {}} end
redis.call('HSET', KEYS[1], 'granted', '1', 'approver', ARGV[1], 'granted_at', ARGV[2])
return {1, redis.call('HGETALL', KEYS[1])}
`)

// auditScript: KEYS audit sorted set, sequence counter. ARGV time, JSON.
// Members are "time:seq:json" at score 0, so the set's lexical order is
// the log's order: by time, then by insertion.
var auditScript = redis.NewScript(appendAudit(1, 1) + "return 1\n")

// appendAudit is the Lua that appends an audit entry with its sorted set
// and sequence counter at KEYS[k] and KEYS[k+1], its time and JSON at
// ARGV[a] and ARGV[a+1].
func appendAudit(k, a int) string {
	return fmt.Sprintf(`
local seq = redis.call('INCR', KEYS[%d])
redis.call('ZADD', KEYS[%d], 0, ARGV[%d] .. ':' .. string.format('%%020d', seq) .. ':' .. ARGV[%d])
`, k+1, k, a, a+1)
}

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

// purgeScript: KEYS record expiry index, approval expiry index, audit set.
// ARGV now, now score (ms), audit bound (empty keeps all), key-index prefix,
// purge records (1/0), purge approvals (1/0). Returns {records, approvals,
// audit}.
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
  n[3] = redis.call('ZREMRANGEBYLEX', KEYS[3], '-', '(' .. ARGV[3])
end
return n
`)
