import type { ComponentChildren, JSX } from 'preact';

export type ButtonProps = Omit<JSX.ButtonHTMLAttributes<HTMLButtonElement>, 'loading'> & {
  variant?: 'primary' | 'secondary' | 'danger' | 'ghost';
  /** Shows the button working and keeps it from being pressed again. */
  busy?: boolean;
  children: ComponentChildren;
};

/** A button; `type` defaults to "button" so a button inside a form submits only when asked to. */
export function Button({ variant = 'secondary', busy = false, type = 'button', disabled, children, class: cls, ...rest }: ButtonProps) {
  return (
    <button {...rest} type={type} class={`btn btn-${variant}${cls ? ` ${cls}` : ''}`} disabled={Boolean(disabled) || busy} aria-busy={busy || undefined}>
      {children}
    </button>
  );
}
