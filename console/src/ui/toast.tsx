// Short notes after an action ("Key revoked"), announced politely and gone
// after a few seconds. One provider at the top of the app; `useToast()` anywhere.
import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useState } from 'preact/hooks';

type Tone = 'info' | 'success' | 'error';
interface Note { id: number; text: string; tone: Tone }

const ToastContext = createContext<(text: string, tone?: Tone) => void>(() => {});

let next = 1;

export function ToastProvider({ children }: { children: ComponentChildren }) {
  const [notes, setNotes] = useState<Note[]>([]);
  const show = useCallback((text: string, tone: Tone = 'success') => {
    const id = next++;
    setNotes((n) => [...n, { id, text, tone }]);
    setTimeout(() => setNotes((n) => n.filter((x) => x.id !== id)), tone === 'error' ? 8000 : 4000);
  }, []);
  return (
    <ToastContext.Provider value={show}>
      {children}
      <div class="toasts" role="status" aria-live="polite">
        {notes.map((n) => <div key={n.id} class={`toast toast-${n.tone}`}>{n.text}</div>)}
      </div>
    </ToastContext.Provider>
  );
}

/** `const toast = useToast(); toast('Domain added')`, or `toast(message, 'error')`. */
export function useToast() {
  return useContext(ToastContext);
}
