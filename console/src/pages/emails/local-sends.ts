// Sends made from the Send page, told at once to every open email log of
// this console (this tab, and other tabs through a BroadcastChannel): `queued`
// is not an event of the stream (docs/console.md), so without this a log would
// first see the row when it is sent. Ids only: no content crosses.
const NAME = 'edgemail-sends';
const bus = new EventTarget();
const channel = typeof BroadcastChannel === 'undefined' ? undefined : new BroadcastChannel(NAME);
channel?.addEventListener('message', (e: MessageEvent<unknown>) => {
  if (Array.isArray(e.data) && e.data.every((x) => typeof x === 'string')) bus.dispatchEvent(new CustomEvent('sent', { detail: e.data }));
});

export function announceSent(emailIds: string[]): void {
  bus.dispatchEvent(new CustomEvent('sent', { detail: emailIds }));
  channel?.postMessage(emailIds);
}

export function onLocalSend(handler: (emailIds: string[]) => void): () => void {
  const listener = (e: Event) => handler((e as CustomEvent<string[]>).detail);
  bus.addEventListener('sent', listener);
  return () => bus.removeEventListener('sent', listener);
}
