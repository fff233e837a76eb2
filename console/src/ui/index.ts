// The console's own components: every page builds from these, so tables,
// forms, errors and secrets look and behave the same everywhere.
export { Button, type ButtonProps } from './button';
export { Field, FormError, type FieldProps, type ControlProps } from './field';
export { Table, type Column, type TableProps } from './table';
export { EmptyState } from './empty-state';
export { Dialog, type DialogProps } from './dialog';
export { CopyButton } from './copy-button';
export { ShownOnce, type ShownOnceProps } from './shown-once';
export { ToastProvider, useToast } from './toast';
export { Page, type PageProps } from './page';
