import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultStateDir, nodeStateFile, NotEnrolledError, readNodeState, writeNodeState, type NodeState } from './index.js';

const STATE: NodeState = { edge_url: 'http://127.0.0.1:8787', node_id: '0190f000-0000-7000-8000-000000000001', name: 'mx1', token: 'myr_abcdefgh_secret', enrolled_at: '2026-11-26T00:00:00.000Z' };
let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('node state', () => {
  it('writes node.json 0600 in a 0700 directory, whole, and reads it back', async () => {
    root = mkdtempSync(join(tmpdir(), 'relay-state-'));
    const dir = join(root, 'a', 'relay-node');
    await writeNodeState(dir, STATE);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(nodeStateFile(dir)).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['node.json']); // no temp file left
    expect(await readNodeState(dir)).toEqual(STATE);
  });

  it('tightens a directory and a file that were left readable by others', async () => {
    root = mkdtempSync(join(tmpdir(), 'relay-state-'));
    chmodSync(root, 0o755);
    writeFileSync(nodeStateFile(root), JSON.stringify(STATE), { mode: 0o644 });
    chmodSync(nodeStateFile(root), 0o644);
    await readNodeState(root);
    expect(statSync(nodeStateFile(root)).mode & 0o777).toBe(0o600);
    await writeNodeState(root, { ...STATE, name: 'mx2' });
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect((await readNodeState(root)).name).toBe('mx2');
  });

  it('says how to enrol when there is no node.json, and refuses one without a token', async () => {
    root = mkdtempSync(join(tmpdir(), 'relay-state-'));
    await expect(readNodeState(root)).rejects.toBeInstanceOf(NotEnrolledError);
    await expect(readNodeState(root)).rejects.toThrow(/edgemail relay enroll/);
    writeFileSync(nodeStateFile(root), JSON.stringify({ ...STATE, token: '' }));
    await expect(readNodeState(root)).rejects.toThrow(/lacks token/);
  });

  it('defaults to relay-node/ under the local data directory', () => {
    expect(defaultStateDir({ EDGEMAIL_DATA_DIR: '/srv/edgemail' })).toBe('/srv/edgemail/relay-node');
    expect(defaultStateDir({})).toMatch(/\/\.data\/relay-node$/);
  });
});
