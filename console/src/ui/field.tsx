// A labelled input with its hint and the API's error for it right below
// (aria-describedby, aria-invalid): the place a person looks.
import type { ComponentChildren, JSX } from 'preact';
import { useUniqueId } from './unique-id';

type InputProps = Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'id' | 'name' | 'label'>;

export interface FieldProps extends InputProps {
  label: string;
  /** The request field's name (the API names it in `fields`). */
  name: string;
  error?: string | undefined;
  hint?: ComponentChildren;
  /** Render a control of your own (select, textarea): it receives the id and aria props to spread. */
  children?: (control: ControlProps) => ComponentChildren;
}

export interface ControlProps {
  id: string;
  name: string;
  'aria-invalid': boolean | undefined;
  'aria-describedby': string | undefined;
}

export function Field({ label, name, error, hint, children, ...input }: FieldProps) {
  const id = useUniqueId('field');
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const control: ControlProps = {
    id,
    name,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': [hintId, errorId].filter(Boolean).join(' ') || undefined,
  };
  return (
    <div class={`field${error ? ' field-invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children ? children(control) : <input {...input} {...control} />}
      {hint && <p class="field-hint" id={hintId}>{hint}</p>}
      {error && <p class="field-error" id={errorId}>{error}</p>}
    </div>
  );
}

/** The form's own error (one the fields do not carry), announced when it appears. */
export function FormError({ message }: { message: string | undefined }) {
  return message ? <p class="form-error" role="alert">{message}</p> : null;
}
