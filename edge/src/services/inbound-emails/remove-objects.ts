// Removing a message's bytes from R2 after its record is gone: best-effort,
// since nothing can reach them any more; a failure is logged, never raised.

/** R2 deletes at most this many keys per call. */
const DELETE_BATCH = 1000;

/**
 * Deletes every object under `prefix`, and `rawKey` wherever it is. Returns
 * whether everything was removed.
 *
 * @param label names the message in the log line (never its content)
 */
export async function removeStoredObjects(store: R2Bucket, prefix: string, rawKey: string | null, label: string): Promise<boolean> {
  try {
    // A prefix without its slash would also match a longer spool id that starts with this one.
    const dir = prefix.endsWith('/') ? prefix : `${prefix}/`;
    const keys = rawKey && !rawKey.startsWith(dir) ? [rawKey] : [];
    // List everything first: deleting between pages could move what a cursor points at.
    let cursor: string | undefined;
    do {
      const listed = await store.list({ prefix: dir, cursor });
      keys.push(...listed.objects.map((o) => o.key));
      cursor = listed.truncated ? listed.cursor : undefined;
    } while (cursor);
    for (let i = 0; i < keys.length; i += DELETE_BATCH) await store.delete(keys.slice(i, i + DELETE_BATCH));
    return true;
  } catch (e) {
    console.error(`${label}: stored objects not removed: ${e instanceof Error ? e.message : String(e)}`);
    return false;
  }
}
