// A modal on the native <dialog>: the browser traps focus, Escape closes it,
// and focus returns to what opened it.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { useUniqueId } from './unique-id';

export interface DialogProps {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  /** Buttons at the bottom (the primary one last). */
  actions?: ComponentChildren;
}

export function Dialog({ open, title, onClose, children, actions }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useUniqueId('dialog');
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      const opener = document.activeElement as HTMLElement | null;
      dialog.showModal();
      return () => {
        if (dialog.open) dialog.close();
        opener?.focus?.();
      };
    }
    return undefined;
  }, [open]);
  if (!open) return null;
  return (
    <dialog ref={ref} class="dialog" aria-labelledby={titleId} onCancel={(e) => { e.preventDefault(); onClose(); }}>
      <h2 id={titleId}>{title}</h2>
      <div class="dialog-body">{children}</div>
      {actions && <div class="dialog-actions">{actions}</div>}
    </dialog>
  );
}
