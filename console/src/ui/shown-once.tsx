// A secret the service shows once (an API key's token, a webhook secret,
// recovery codes). It lives only in the state of the component that got it
// from the answer: never in storage, a URL or a global. "Done" hands control
// back so the caller drops it, and it is gone from the page.
import { Button } from './button';
import { CopyButton } from './copy-button';

export interface ShownOnceProps {
  /** What it is: "API key token". */
  label: string;
  value: string;
  onDone: () => void;
}

export function ShownOnce({ label, value, onDone }: ShownOnceProps) {
  return (
    <div class="shown-once" role="group" aria-label={label}>
      <p class="shown-once-warning"><strong>Copy it now:</strong> this {label.toLowerCase()} is shown once and cannot be read again.</p>
      <div class="shown-once-value">
        <code tabIndex={0}>{value}</code>
        <CopyButton value={value} what={label.toLowerCase()} />
      </div>
      <Button variant="primary" onClick={onDone}>I have copied it</Button>
    </div>
  );
}
