// Confirms an SNS subscription by fetching its SubscribeURL (already checked
// by sns-urls.ts), as AWS asks of an HTTP(S) endpoint.
import { unavailable } from '../errors.js';

const TIMEOUT_MS = 10_000;

/** Throws `unavailable` (502-class: SNS sends the confirmation again) when SNS does not answer 200. */
export async function confirmSubscription(url: URL): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (e) {
    throw unavailable(`SubscribeURL could not be fetched (${e instanceof Error ? e.message : String(e)})`);
  }
  await res.body?.cancel();
  if (res.status !== 200) throw unavailable(`SubscribeURL answered ${res.status}; the subscription is not confirmed`);
}
