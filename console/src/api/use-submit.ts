// A form's submit: runs the call, keeps it from running twice, and turns an
// API error into the message next to each field the API named plus one for
// the form (shown above the button).
import { useCallback, useRef, useState } from 'preact/hooks';
import { ApiError, messageOf } from './errors';

export interface Submit<A extends unknown[]> {
  run: (...args: A) => Promise<boolean>;
  busy: boolean;
  /** Field name (the API's dotted path) → the problem. */
  fields: Record<string, string>;
  /** A message for the whole form: the API's `error` when no field it names is on the form, or a network failure. */
  error: string | undefined;
  /** The last failure, for callers that read more of the body (`two_factor_required`). */
  failure: unknown;
  reset: () => void;
}

/**
 * @param shownFields the fields this form shows; an error naming only others is shown as the form's error.
 * @example
 * const save = useSubmit(async (name: string) => { await ok(api.POST('/api/v1/domains', { body: { name } })); }, ['name']);
 * <form onSubmit={(e) => { e.preventDefault(); void save.run(name); }}>
 *   <Field label="Domain" name="name" error={save.fields.name} … />
 */
export function useSubmit<A extends unknown[]>(action: (...args: A) => Promise<unknown>, shownFields: readonly string[] = []): Submit<A> {
  const [busy, setBusy] = useState(false);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | undefined>();
  const [failure, setFailure] = useState<unknown>();
  const running = useRef(false);
  const reset = useCallback(() => { setFields({}); setError(undefined); setFailure(undefined); }, []);
  const run = useCallback(async (...args: A) => {
    if (running.current) return false;
    running.current = true;
    setBusy(true);
    reset();
    try {
      await action(...args);
      return true;
    } catch (e) {
      setFailure(e);
      const named = e instanceof ApiError ? e.fields : {};
      const onForm = Object.keys(named).filter((f) => shownFields.includes(f));
      setFields(named);
      // A message the fields already carry is not repeated above the button.
      setError(onForm.length ? undefined : messageOf(e));
      return false;
    } finally {
      running.current = false;
      setBusy(false);
    }
  }, [action, reset, shownFields.join('\n')]);
  return { run, busy, fields, error, failure, reset };
}
