import { EdgemailAdminResources } from './generated/admin.js';
import { EdgemailResources } from './generated/api.js';
import { Transport, type ClientOptions, type RequestSpec } from './transport.js';

/** The project API, with a project key (`myk_…`): `new Edgemail({ apiKey, baseUrl })`. */
export class Edgemail extends EdgemailResources {
  constructor(options: ClientOptions) {
    super(new Transport(options));
  }

  /** Any request by hand (a route newer than this client): resolves with the raw `Response` of a 2xx answer. */
  request(spec: RequestSpec): Promise<Response> {
    return this.transport.send(spec, 'application/json');
  }
}

/** The platform operator's API under /api/v1/admin, with a platform credential (`mya_…`). */
export class EdgemailAdmin extends EdgemailAdminResources {
  constructor(options: ClientOptions) {
    super(new Transport(options));
  }

  request(spec: RequestSpec): Promise<Response> {
    return this.transport.send(spec, 'application/json');
  }
}
