import { useState } from 'preact/hooks';
import { Button } from './button';

/** Copies `value` to the clipboard and says so (to screen readers too). */
export function CopyButton({ value, label = 'Copy', what }: { value: string; label?: string; /** For the accessible name: "Copy token". */ what?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setState('copied');
    } catch {
      setState('failed');
    }
    setTimeout(() => setState('idle'), 2000);
  };
  return (
    <span class="copy">
      <Button variant="ghost" onClick={copy} aria-label={what ? `${label} ${what}` : undefined}>
        {state === 'copied' ? 'Copied' : label}
      </Button>
      <span class="visually-hidden" role="status">{state === 'copied' ? 'Copied to the clipboard' : state === 'failed' ? 'Copying failed: select the text and copy it' : ''}</span>
    </span>
  );
}
