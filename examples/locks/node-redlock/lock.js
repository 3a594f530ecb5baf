#!/usr/bin/env node
// npm's redlock 4.2.0 (mike-marcacci/node-redlock) over locklab's process
// protocol, on Redlock's independent masters.
//
//   npm ci --prefix examples/locks/node-redlock
//   locklab run --store redlock --lock "exec:node examples/locks/node-redlock/lock.js"
//
// The lab gives it LOCKLAB_REDIS, its client's own link to each of the five
// masters (host:port, comma-separated), LOCKLAB_LOCK (the key) and
// LOCKLAB_TTL (seconds). Redlock sets the key with one random value on every
// master and holds the lock when a majority took it within the TTL, less the
// time that took and a drift allowance; it tries again every 50 ms until it
// is granted. Its release deletes the key on every master where it still
// holds the value. It renews nothing and gives no fencing token.
'use strict';
const readline = require('readline');
const Redis = require('ioredis');
const Redlock = require('redlock');

const TTL = Math.round(parseFloat(process.env.LOCKLAB_TTL) * 1000); // ms
const KEY = process.env.LOCKLAB_LOCK;
// One client per master, each through its own link. A command that gets no
// answer (a cut link) fails after half a TTL, as a vote against, so that
// one master cut off does not stop the others' majority.
const clients = process.env.LOCKLAB_REDIS.split(',').map(addr => {
  const [host, port] = addr.split(':');
  return new Redis({ host, port: Number(port), commandTimeout: TTL / 2, maxRetriesPerRequest: 0,
    enableOfflineQueue: false, retryStrategy: () => 50 });
});
const redlock = new Redlock(clients, { driftFactor: 0.01, retryCount: -1, retryDelay: 50, retryJitter: 10 });
// A master that does not answer is a vote against; the count tells a
// release refused by masters that answered from one left in doubt.
let unanswered = 0;
redlock.on('clientError', () => { unanswered++; });
let held = null; // the Lock that holds, once granted

// Asked again while it holds, it asks the masters, not its memory: extend
// succeeds only where a majority still hold its value; if they do not, the
// grant is gone and it takes the lock anew.
async function acquire() {
  if (held) {
    try {
      held = await held.extend(TTL);
      return `granted key=${KEY} value=${held.value}`;
    } catch (e) {
      if (!(e instanceof Redlock.LockError)) throw e;
      held = null;
    }
  }
  held = await redlock.lock(KEY, TTL);
  return `granted key=${KEY} value=${held.value}`;
}

async function release() {
  if (!held) return 'error not-held nothing to release';
  const lock = held;
  held = null;
  const before = unanswered;
  try {
    await lock.unlock();
  } catch (e) {
    if (!(e instanceof Redlock.LockError)) throw e;
    // Refused by masters that all answered: none held the value any more.
    // With a master silent, the release may have taken effect there.
    if (unanswered === before) return `error not-held ${e.message}`;
    return `error unavailable ${e.message} (${unanswered - before} master(s) did not answer)`;
  }
  return 'released';
}

async function main() {
  const lines = readline.createInterface({ input: process.stdin, terminal: false });
  // Up: the lab takes the silence from now on for waiting, not start-up.
  process.stdout.write('# ready\n');
  for await (const line of lines) {
    const cmd = line.trim();
    let answer;
    try {
      if (cmd === 'acquire') answer = await acquire();
      else if (cmd === 'release') answer = await release();
      else continue;
    } catch (e) {
      answer = `error ${e.name}: ${e.message}`;
    }
    process.stdout.write(answer.replace(/\n/g, ' ') + '\n');
  }
  // Standard input closed: give up what is held, and leave.
  if (held) await held.unlock().catch(() => {});
  clients.forEach(c => c.disconnect());
}

// SIGTERM: stop waiting, give up a lock held, and leave.
process.on('SIGTERM', async () => {
  if (held) await held.unlock().catch(() => {});
  process.exit(0);
});

main().catch(e => { process.stderr.write(`${e.stack}\n`); process.exit(1); });
