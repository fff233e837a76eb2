// The audit type of a mutating route, derived from its method and path:
//   POST   /api/v1/api-keys                  → apikey.created
//   POST   /api/v1/api-keys/{id}/revoke      → apikey.revoke
//   POST   /api/v1/smtp-servers/{id}/test    → smtpserver.test
//   PUT|PATCH /api/v1/webhooks/{id}          → webhook.updated
//   DELETE /api/v1/api-keys/{id}             → apikey.deleted
//   POST   /api/v1/templates/{id}/versions   → template_version.created
// Reads have none.

const MUTATING = new Set(['post', 'put', 'patch', 'delete']);

const singular = (segment: string) => {
  const word = segment.replace(/-/g, '');
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('ses')) return word.slice(0, -2);
  return word.endsWith('s') ? word.slice(0, -1) : word;
};

export function auditType(method: string, path: string): string | null {
  const verb = method.toLowerCase();
  if (!MUTATING.has(verb)) return null;
  const segments = path.replace(/^\/api\/v1(\/admin)?\//, '').split('/').filter(Boolean);
  const isParam = (s: string) => s.startsWith('{');

  // A trailing verb after an id (`/{id}/revoke`, `/{id}/activate/{versionId}`) is the action;
  // a trailing plural (`/{id}/versions`) is a nested collection. A route whose
  // words defeat this rule declares its type (`auditType` in defineRoute).
  let action: string | null = null;
  const lastWord = [...segments].reverse().find((s) => !isParam(s));
  const lastWordIndex = lastWord ? segments.lastIndexOf(lastWord) : -1;
  if (lastWordIndex > 0 && isParam(segments[lastWordIndex - 1]!) && verb === 'post' && !lastWord!.endsWith('s')) {
    action = lastWord!.replace(/-/g, '_');
    segments.splice(lastWordIndex, 1);
  }
  const resources = segments.filter((s) => !isParam(s)).map(singular);
  const endsWithId = isParam(segments.at(-1) ?? '');
  action ??= verb === 'post' ? (endsWithId ? 'updated' : 'created')
    : verb === 'delete' ? 'deleted'
    : 'updated';
  return `${resources.join('_')}.${action}`;
}
