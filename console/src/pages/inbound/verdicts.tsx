import type { ApiSchemas } from '../../api/client';
import { StatusBadge } from '../emails/status-badge';

/** SPF, DKIM, DMARC results and whether DMARC alignment holds (the field to act on). */
export function AuthVerdicts({ auth }: { auth: ApiSchemas['InboundAuth'] }) {
  return (
    <span class="row-actions">
      <StatusBadge status={auth.spf} label={`SPF ${auth.spf}`} />
      <StatusBadge status={auth.dkim} label={`DKIM ${auth.dkim}`} />
      <StatusBadge status={auth.dmarc} label={`DMARC ${auth.dmarc}`} />
      <StatusBadge status={auth.aligned ? 'ok' : 'fail'} label={auth.aligned ? 'aligned' : 'not aligned'} />
    </span>
  );
}
