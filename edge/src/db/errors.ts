// Postgres error codes that map to a client error. drizzle wraps the driver's
// error, so the code may sit on `cause`.
const codeOf = (e: unknown): string | undefined => {
  const err = e as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = err?.code ?? err?.cause?.code;
  return typeof code === 'string' ? code : undefined;
};

export const isUniqueViolation = (e: unknown) => codeOf(e) === '23505';
export const isForeignKeyViolation = (e: unknown) => codeOf(e) === '23503';
