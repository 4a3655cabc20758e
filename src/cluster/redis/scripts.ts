/**
 * The Lua scripts that make the shared limits exact: each runs atomically on the Redis server, so
 * two nodes can never both take the last slot. Keys of other nodes are reached through the
 * `nodes` set (a single Redis server or a primary with replicas; not Redis Cluster sharding).
 */

/**
 * A sliding-window hit. KEYS[1] the key's sorted set (score: the admitted request's time).
 * ARGV: now, longest window, a unique member, the number of windows, then limit and window size
 * of each. Returns {1 admitted | 0 refused, [member, time, …] admitted within the longest window
 * before this one}; a refused request is not recorded.
 */
export const SLIDING_WINDOW = `
local key = KEYS[1]
local now = tonumber(ARGV[1])
local longest = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - longest)
local allowed = 1
for i = 0, tonumber(ARGV[4]) - 1 do
  local limit = tonumber(ARGV[5 + 2 * i])
  local w = tonumber(ARGV[6 + 2 * i])
  if redis.call('ZCOUNT', key, '(' .. (now - w), '+inf') >= limit then allowed = 0 end
end
local times = redis.call('ZRANGEBYSCORE', key, '(' .. (now - longest), '+inf', 'WITHSCORES')
if allowed == 1 then redis.call('ZADD', key, now, ARGV[3]) end
redis.call('PEXPIRE', key, longest)
return {allowed, times}
`;

/** Sums a field over the live nodes' count hashes, dropping the slots of dead ones. */
const COUNT_LIVE = `
local function count_live(p, self, fa, ft)
  local a, t = 0, 0
  for _, n in ipairs(redis.call('SMEMBERS', p .. 'nodes')) do
    if n == self or redis.call('EXISTS', p .. 'node:' .. n .. ':alive') == 1 then
      local c = p .. 'node:' .. n .. ':count'
      a = a + tonumber(redis.call('HGET', c, fa) or '0')
      t = t + tonumber(redis.call('HGET', c, ft) or '0')
    else
      redis.call('DEL', p .. 'node:' .. n .. ':leases', p .. 'node:' .. n .. ':count')
      redis.call('SREM', p .. 'nodes', n)
    end
  end
  return a, t
end
`;

/**
 * Takes a live-call slot. ARGV: prefix, node id, lease id, account, trunk, max per account, max
 * per trunk. Returns 'ok', 'account' or 'trunk'. Taking a lease this node already holds (a
 * resync wrote it first) takes nothing more.
 */
export const ACQUIRE = `${COUNT_LIVE}
local p, self, lease, acct, trunk = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local leases = p .. 'node:' .. self .. ':leases'
if redis.call('HEXISTS', leases, lease) == 1 then return 'ok' end
local a, t = count_live(p, self, 'a:' .. acct, 't:' .. trunk)
if a >= tonumber(ARGV[6]) then return 'account' end
if t >= tonumber(ARGV[7]) then return 'trunk' end
redis.call('SADD', p .. 'nodes', self)
redis.call('HSET', leases, lease, acct .. '\\n' .. trunk)
local c = p .. 'node:' .. self .. ':count'
redis.call('HINCRBY', c, 'a:' .. acct, 1)
redis.call('HINCRBY', c, 't:' .. trunk, 1)
return 'ok'
`;

/** Releases a slot. ARGV: prefix, node id, lease id. Returns 1 when it was held. */
export const RELEASE = `
local p, self, lease = ARGV[1], ARGV[2], ARGV[3]
local leases = p .. 'node:' .. self .. ':leases'
local v = redis.call('HGET', leases, lease)
if not v then return 0 end
redis.call('HDEL', leases, lease)
local nl = string.find(v, '\\n', 1, true)
local c = p .. 'node:' .. self .. ':count'
for _, f in ipairs({'a:' .. string.sub(v, 1, nl - 1), 't:' .. string.sub(v, nl + 1)}) do
  if redis.call('HINCRBY', c, f, -1) <= 0 then redis.call('HDEL', c, f) end
end
return 1
`;

/** Slots held by live nodes. ARGV: prefix, node id, account, trunk. Returns {account, trunk}. */
export const COUNTS = `${COUNT_LIVE}
local a, t = count_live(ARGV[1], ARGV[2], 'a:' .. ARGV[3], 't:' .. ARGV[4])
return {a, t}
`;

/**
 * The node's beat: its alive key for another lease time. When the key had lapsed (the node was
 * taken for dead and its slots dropped), when Redis came back, or when told to ('force'), the
 * node's slots are rewritten from what it holds (ARGV from 5: lease, account, trunk triples).
 * ARGV: prefix, node id, lease ms, 'force' or '', then the triples. Returns 1 when it rewrote.
 */
export const BEAT = `
local p, self = ARGV[1], ARGV[2]
local alive = p .. 'node:' .. self .. ':alive'
local was = redis.call('EXISTS', alive)
redis.call('SET', alive, '1', 'PX', ARGV[3])
redis.call('SADD', p .. 'nodes', self)
if was == 1 and ARGV[4] ~= 'force' then return 0 end
local leases, c = p .. 'node:' .. self .. ':leases', p .. 'node:' .. self .. ':count'
redis.call('DEL', leases, c)
for i = 5, #ARGV, 3 do
  redis.call('HSET', leases, ARGV[i], ARGV[i + 1] .. '\\n' .. ARGV[i + 2])
  redis.call('HINCRBY', c, 'a:' .. ARGV[i + 1], 1)
  redis.call('HINCRBY', c, 't:' .. ARGV[i + 2], 1)
end
return 1
`;

/** A node leaving for good: its slots and its alive key go at once. ARGV: prefix, node id. */
export const LEAVE = `
local p, self = ARGV[1], ARGV[2]
redis.call('DEL', p .. 'node:' .. self .. ':alive', p .. 'node:' .. self .. ':leases', p .. 'node:' .. self .. ':count')
redis.call('SREM', p .. 'nodes', self)
return 1
`;

/**
 * New-call token buckets (src/call/call-rate-limit.ts's rule), taken together: a call takes a
 * token from each bucket or from none. KEYS: the buckets (trunk first). ARGV: now (ms), then
 * per second and burst of each bucket. Returns {0, 0} when taken, else {which bucket (1-based),
 * ms until it has a token}; the longest wait wins, the trunk's on a tie.
 */
export const TOKEN_BUCKETS = `
local now = tonumber(ARGV[1])
local state = {}
local wait, which = 0, 0
for i, k in ipairs(KEYS) do
  local rate, burst = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  local v = redis.call('HMGET', k, 'tokens', 'at')
  local tokens, at = tonumber(v[1]) or burst, tonumber(v[2]) or now
  if now > at then
    tokens = math.min(burst, tokens + (now - at) * rate / 1000)
    at = now
  end
  state[i] = {tokens, at, math.ceil(burst * 1000 / rate) + 1000}
  if tokens < 1 then
    local w = math.ceil((1 - tokens) * 1000 / rate)
    if w > wait then wait, which = w, i end
  end
end
if wait > 0 then return {which, wait} end
for i, k in ipairs(KEYS) do
  redis.call('HSET', k, 'tokens', tostring(state[i][1] - 1), 'at', tostring(state[i][2]))
  redis.call('PEXPIRE', k, state[i][3])
end
return {0, 0}
`;
