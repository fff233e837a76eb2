import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { collectingLog, startInbound, type LogLine, type RunningInbound } from '../../test-support/inbound-harness.js';
import { sendMessage } from '../../test-support/smtp-client.js';
import { openRaw } from '../../test-support/smtp-raw.js';
import { createSpoolAdmission, freeSpaceFloor, type AdmissionCondition } from './admission.js';

const MESSAGE = 'From: a@sender.test\r\nTo: b@inbox.test\r\nSubject: floor\r\n\r\nHello.\r\n';
const BELOW_FLOOR = '452 4.3.1 Insufficient system storage: the spool is below its free-space floor, try again later';
/** More bytes than any disk here has free. */
const ABSURD_FLOOR = Number.MAX_SAFE_INTEGER;
const dir = mkdtempSync(join(tmpdir(), 'edgemail-admission-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('freeSpaceFloor (statfs of the real file system)', () => {
  it('stops mail below the floor, not above it, and never when the floor is 0', async () => {
    expect(await freeSpaceFloor({ dir, minFreeBytes: ABSURD_FLOOR })()).toBe('Insufficient system storage: the spool is below its free-space floor, try again later');
    expect(await freeSpaceFloor({ dir, minFreeBytes: 1 })()).toBeNull();
    expect(await freeSpaceFloor({ dir: join(dir, 'missing'), minFreeBytes: 0 })()).toBeNull();
  });
});

describe('createSpoolAdmission', () => {
  it('asks its conditions in order at most once per cacheMs, one check at a time', async () => {
    let asked = 0;
    const counting: AdmissionCondition = async () => (asked++, null);
    const admission = createSpoolAdmission({ conditions: [counting, async () => 'second says no', async () => 'never asked'], cacheMs: 100 });
    expect(await Promise.all([admission.refusal(), admission.refusal(), admission.refusal()])).toEqual(['second says no', 'second says no', 'second says no']);
    expect(await admission.refusal()).toBe('second says no');
    expect(asked).toBe(1);
    await new Promise((r) => setTimeout(r, 150));
    await admission.refusal();
    expect(asked).toBe(2);
  });

  it('stops mail when a condition cannot be checked, and logs why', async () => {
    const logs: LogLine[] = [];
    const admission = createSpoolAdmission({ conditions: [freeSpaceFloor({ dir: join(dir, 'missing'), minFreeBytes: 1 })], log: collectingLog(logs) });
    expect(await admission.refusal()).toBe('Cannot check the spool right now, try again later');
    expect(logs.find((l) => l.level === 'error')?.fields?.error).toMatch(/ENOENT/);
  });
});

describe('the free-space floor at the real listener', () => {
  let inbound: RunningInbound | undefined;
  afterEach(async () => {
    await inbound?.close();
    inbound = undefined;
  });

  /** A listener whose spool floor the test moves; the statfs answer is kept 50 ms. */
  async function listenerWithFloor(initial: number) {
    let floor = initial;
    const logs: LogLine[] = [];
    const admission = createSpoolAdmission({ conditions: [() => freeSpaceFloor({ dir, minFreeBytes: floor })()], cacheMs: 50, log: collectingLog(logs) });
    inbound = await startInbound({ deps: { admission: admission.refusal } });
    const settle = () => new Promise((r) => setTimeout(r, 80));
    return { inbound, logs, setFloor: async (bytes: number) => { floor = bytes; await settle(); } };
  }

  it('answers MAIL FROM 452 4.3.1 below the floor and 250 again once the floor is lowered', async () => {
    const { inbound: listener, logs, setFloor } = await listenerWithFloor(ABSURD_FLOOR);
    const refused = await sendMessage({ port: listener.port, from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE });
    expect(refused.error?.response).toBe(BELOW_FLOOR);
    expect(refused.error?.command).toBe('MAIL FROM');
    expect(listener.store.messages).toHaveLength(0);
    await setFloor(1);
    expect((await sendMessage({ port: listener.port, from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE })).response).toMatch(/^250 2\.6\.0 /);
    expect(listener.store.messages).toHaveLength(1);
    expect(logs.map((l) => l.message)).toEqual(expect.arrayContaining(['new mail refused (452 4.3.1) until the spool can take it', 'new mail accepted again']));
  });

  it('answers the data 452 4.3.1 when space went below the floor after MAIL FROM, and stores nothing', async () => {
    const { inbound: listener, setFloor } = await listenerWithFloor(1);
    const raw = await openRaw(listener.port);
    await raw.reply();
    await raw.command('EHLO client.test');
    expect(await raw.command('MAIL FROM:<a@sender.test>')).toMatch(/^250 /);
    expect(await raw.command('RCPT TO:<b@inbox.test>')).toMatch(/^250 /);
    await setFloor(ABSURD_FLOOR);
    expect(await raw.command('DATA')).toMatch(/^354 /);
    expect(await raw.command(`${MESSAGE}.`)).toBe(BELOW_FLOOR);
    expect(listener.store.messages).toHaveLength(0);
    // The session stays in step and is refused at its next MAIL FROM until space returns.
    expect(await raw.command('MAIL FROM:<a@sender.test>')).toBe(BELOW_FLOOR);
    await setFloor(1);
    expect(await raw.command('MAIL FROM:<a@sender.test>')).toMatch(/^250 /);
    raw.close();
  });
});
