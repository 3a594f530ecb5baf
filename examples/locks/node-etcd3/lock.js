#!/usr/bin/env node
// npm's etcd3 1.1.2 (microsoft/etcd3) Lock over locklab's process protocol.
//
//   npm ci --prefix examples/locks/node-etcd3
//   locklab run --lock "exec:node examples/locks/node-etcd3/lock.js"
//
// etcd3's Lock.acquire tries once: it grants a new lease (kept alive by the
// library, a third of its TTL apart), puts the key with a Txn if the key is
// absent, and when the key is there it revokes the lease and throws
// EtcdLockFailedError. release() revokes the lease, which deletes the key.
// The adapter waits between tries as the library's users do: it watches
// the key for a change, a TTL at most.
'use strict';
const readline = require('readline');
const { Etcd3, EtcdLockFailedError, EtcdLeaseInvalidError, GRPCConnectFailedError, GRPCUnavailableError,
  GRPCDeadlineExceededError } = require('etcd3');

const ENDPOINT = process.env.LOCKLAB_ENDPOINTS; // the client's own link to the cluster
const TTL = parseInt(process.env.LOCKLAB_TTL, 10); // lease seconds
const KEY = process.env.LOCKLAB_LOCK + '/lock'; // under the lab's prefix, as the lab asks
const client = new Etcd3({ hosts: ENDPOINT });
let held = null; // the Lock that holds, once granted

// changed resolves once the key changes, or after a TTL.
async function changed() {
  const watcher = await client.watch().key(KEY).create();
  await new Promise(resolve => {
    const timer = setTimeout(resolve, TTL * 1000);
    const done = () => { clearTimeout(timer); resolve(); };
    watcher.on('delete', done).on('put', done);
  });
  await watcher.cancel();
}

async function acquire() {
  if (held) {
    // Asked again while holding (the lab's answer was lost): the lock held
    // is the answer.
    return `granted key=${KEY} lease=${await held.leaseId()}`;
  }
  for (;;) {
    const lock = client.lock(KEY).ttl(TTL);
    try {
      await lock.acquire();
      held = lock;
      return `granted key=${KEY} lease=${await lock.leaseId()}`;
    } catch (e) {
      if (!(e instanceof EtcdLockFailedError)) throw e;
    }
    await changed();
  }
}

async function release() {
  if (!held) return 'error not-held nothing to release';
  const lock = held;
  held = null;
  await lock.release();
  return 'released';
}

// answerFor turns an error into the protocol's error answer.
function answerFor(e) {
  if (e instanceof EtcdLeaseInvalidError) return `error expired ${e.message}`;
  if (e instanceof GRPCConnectFailedError || e instanceof GRPCUnavailableError || e instanceof GRPCDeadlineExceededError) {
    return `error unavailable ${e.message}`;
  }
  return `error ${e.name}: ${e.message}`;
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
      else answer = `error unknown command: ${cmd}`;
    } catch (e) {
      answer = answerFor(e);
    }
    process.stdout.write(answer + '\n');
  }
  // Standard input closed: give up what is held, and leave.
  if (held) await held.release().catch(() => undefined);
  client.close();
}

// SIGTERM: give up what is held (the lab kills what is left 3 s later).
process.on('SIGTERM', async () => {
  if (held) await held.release().catch(() => undefined);
  process.exit(0);
});
main().catch(e => { console.error(e); process.exit(1); });
